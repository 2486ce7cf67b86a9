/*
 * Claim-time checks of the math family: decline, with a reason the user
 * sees, the element types a kernel does not implement.
 */
#include <stdio.h>

#include "ref_math.h"

enum {
    T_F = 1 << 0,  /* float, double, float16, bfloat16 */
    T_SI = 1 << 1, /* signed integers */
    T_UI = 1 << 2, /* unsigned integers */
    T_B = 1 << 3,  /* bool */
    T_S = 1 << 4   /* string */
};
#define T_NUM (T_F | T_SI | T_UI)
#define T_INT (T_SI | T_UI)

static int type_bit(int32_t t) {
    switch (t) {
    case TSR_FLOAT:
    case TSR_DOUBLE:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return T_F;
    case TSR_INT8:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64: return T_SI;
    case TSR_UINT8:
    case TSR_UINT16:
    case TSR_UINT32:
    case TSR_UINT64: return T_UI;
    case TSR_BOOL: return T_B;
    case TSR_STRING: return T_S;
    default: return 0;
    }
}

static const char *type_name(int32_t t) {
    static const char *names[] = {
        "undefined", "float",      "uint8",      "int8",         "uint16",         "int16",      "int32",
        "int64",     "string",     "bool",       "float16",      "double",         "uint32",     "uint64",
        "complex64", "complex128", "bfloat16",   "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
        "uint4",     "int4",       "float4e2m1", "float8e8m0",   "uint2",          "int2"};
    if (t >= 0 && (size_t)t < sizeof names / sizeof names[0]) return names[t];
    return "unknown";
}

/* Which element types input 0 (and, for `all`, every input) may have. */
typedef struct type_rule {
    const char *op;
    int mask;
    bool all; /* every input, not only the first, must be in mask */
} type_rule;

static const type_rule type_rules[] = {{"Abs", T_NUM, false},
                                       {"Neg", T_F | T_SI, false},
                                       {"Sign", T_NUM, false},
                                       {"Relu", T_F | T_SI, false},
                                       {"Not", T_B, false},
                                       {"BitwiseNot", T_INT, false},
                                       {"Shrink", T_NUM, false},
                                       {"IsNaN", T_F, false},
                                       {"IsInf", T_F, false},
                                       {"Add", T_NUM, true},
                                       {"Sub", T_NUM, true},
                                       {"Mul", T_NUM, true},
                                       {"Div", T_NUM, true},
                                       {"Mod", T_NUM, true},
                                       {"Pow", T_NUM, true},
                                       {"Max", T_NUM, true},
                                       {"Min", T_NUM, true},
                                       {"Sum", T_NUM, true},
                                       {"Mean", T_NUM, true},
                                       {"PRelu", T_NUM, true},
                                       {"And", T_B, true},
                                       {"Or", T_B, true},
                                       {"Xor", T_B, true},
                                       {"Equal", T_NUM | T_B | T_S, true},
                                       {"Less", T_NUM | T_B, true},
                                       {"Greater", T_NUM | T_B, true},
                                       {"LessOrEqual", T_NUM | T_B, true},
                                       {"GreaterOrEqual", T_NUM | T_B, true},
                                       {"BitShift", T_UI, true},
                                       {"BitwiseAnd", T_INT, true},
                                       {"BitwiseOr", T_INT, true},
                                       {"BitwiseXor", T_INT, true},
                                       {"Clip", T_NUM, false},
                                       {"SwiGLU", T_F, true},
                                       {"Einsum", T_NUM, true},
                                       {"ReduceSum", T_NUM, false},
                                       {"ReduceMean", T_NUM, false},
                                       {"ReduceMax", T_NUM | T_B, false},
                                       {"ReduceMin", T_NUM | T_B, false},
                                       {"ReduceProd", T_NUM, false},
                                       {"ReduceL1", T_NUM, false},
                                       {"ReduceL2", T_NUM, false},
                                       {"ReduceLogSum", T_NUM, false},
                                       {"ReduceLogSumExp", T_NUM, false},
                                       {"ReduceSumSquare", T_NUM, false},
                                       {"ArgMax", T_NUM, false},
                                       {"ArgMin", T_NUM, false},
                                       {NULL, 0, false}};

int ref_math_check_types(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    const char *op = h->node_op_type(node);
    int mask = T_F; /* the float-only unary operators */
    bool all = false;
    for (const type_rule *r = type_rules; r->op; r++)
        if (m_str_eq(r->op, op)) {
            mask = r->mask;
            all = r->all;
            break;
        }
    size_t n = all ? h->node_input_count(node) : (h->node_input_count(node) > 0 ? 1 : 0);
    for (size_t i = 0; i < n; i++) {
        const tsr_value_info *v = h->node_input(node, i);
        if (!v) continue;
        int32_t t = h->value_elem_type(v);
        if (t == TSR_UNDEFINED) continue; /* known only at run time */
        if (!(type_bit(t) & mask)) {
            snprintf(why, why_size, "%s on %s input %zu is not implemented", op, type_name(t), i);
            return TSR_DECLINE_TYPE;
        }
    }
    return 0;
}

int ref_math_check_where(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    if (h->node_input_count(node) < 3) return 0;
    const tsr_value_info *v = h->node_input(node, 1);
    int32_t t = v ? h->value_elem_type(v) : 0;
    if (t != TSR_UNDEFINED && t != TSR_STRING && ref_elem_size(t) == 0) {
        snprintf(why, why_size, "Where on %s is not implemented", type_name(t));
        return TSR_DECLINE_TYPE;
    }
    return 0;
}
