/*
 * Shape rules for elementwise operators: unary maps and activations,
 * broadcasting binary and variadic operators, comparisons and logic (bool
 * results), Where, Clip, casts, and the quantize/dequantize pair.
 */
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* Same type and shape as input 0: every unary map and activation. */
static tsr_status *rule_unary(shape_ctx *c, const ir_node *n) { return shape_same_as_in(c, n, 0, 0); }

/* Identity passes any value on (a sequence or an optional too, opset 14
 * and 16): its output has exactly the input's type. */
static tsr_status *rule_identity(shape_ctx *c, const ir_node *n) {
    const ir_type *t = shape_in_type(c, n, 0);
    if (t && t->kind != IR_TYPE_TENSOR && t->kind != IR_TYPE_UNKNOWN) return shape_set_out_type(c, n, 0, t);
    return shape_same_as_in(c, n, 0, 0);
}

/* SwiGLU (opset 28): A and B have one shape (no broadcasting); Y is that
 * shape, of A's type. Each dim is whichever of A's and B's is known. */
static tsr_status *rule_swiglu(shape_ctx *c, const ir_node *n) {
    shape_dims a, b;
    shape_in_shape(c, n, 0, &a);
    shape_in_shape(c, n, 1, &b);
    int32_t elem = shape_in_elem(c, n, 0);
    if (!elem) elem = shape_in_elem(c, n, 1);
    if (a.rank < 0) a = b;
    if (a.rank >= 0 && b.rank >= 0) {
        if (a.rank != b.rank)
            return shape_err(n, "A has rank %d, B rank %d: they must have one shape", (int)a.rank, (int)b.rank);
        for (int32_t d = 0; d < a.rank; d++)
            if (!shape_dim_unify(a.dims[d], b.dims[d], &a.dims[d]))
                return shape_err(n, "A and B differ in dimension %d (%lld against %lld)", (int)d,
                                 (long long)a.dims[d].value, (long long)b.dims[d].value);
    }
    return shape_set_out(c, n, 0, elem, a.rank >= 0 ? &a : NULL);
}

/* Input 0's shape with a bool result (IsNaN, IsInf). */
static tsr_status *rule_unary_bool(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    return shape_set_out_ex(c, n, 0, TSR_BOOL, &s, SHAPE_ELEM_CERTAIN);
}

/* Broadcast of every present input; the element type of the first input. */
static tsr_status *broadcast_all(shape_ctx *c, const ir_node *n, size_t first, shape_dims *out) {
    bool any = false;
    for (size_t i = first; i < n->n_inputs; i++) {
        if (!shape_has_in(n, i)) continue;
        shape_dims s;
        shape_in_shape(c, n, i, &s);
        if (!any) {
            *out = s;
            any = true;
        } else {
            TSR_TRY(shape_broadcast(c, n, out, &s, out));
        }
    }
    if (!any) shape_dims_unknown(out);
    return NULL;
}

/* Add, Sub, Mul, Div, Pow, Mod, BitShift, Bitwise*, Sum, Max, Min,
 * Mean: the broadcast shape, typed as input 0 (Pow's exponent may differ). */
static tsr_status *rule_broadcast(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(broadcast_all(c, n, 0, &s));
    int32_t elem = shape_in_elem(c, n, 0);
    /* Only Pow lets inputs differ in type (its result is the base's); the
     * others share one type, so any input tells it. */
    for (size_t i = 1; i < n->n_inputs && !elem && strcmp(n->op_type, "Pow"); i++) elem = shape_in_elem(c, n, i);
    return shape_set_out(c, n, 0, elem, &s);
}

/* Comparisons and And/Or/Xor: the broadcast shape, bool. */
static tsr_status *rule_broadcast_bool(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(broadcast_all(c, n, 0, &s));
    return shape_set_out_ex(c, n, 0, TSR_BOOL, &s, SHAPE_ELEM_CERTAIN);
}

/* PRelu's slope broadcasts one way, to X: the result is X's shape. A slope
 * that can't broadcast is still an error. */
static tsr_status *rule_prelu(shape_ctx *c, const ir_node *n) {
    shape_dims x, slope, tmp;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &slope);
    /* Before opset 7 the slope went per channel (axis 1), not numpy-style. */
    if (shape_opset(n) < 7) return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x);
    TSR_TRY(shape_broadcast(c, n, &x, &slope, &tmp));
    if (x.rank < 0) x = tmp;
    /* A slope dim other than 1 pins X's dim to it. */
    for (int32_t i = 0; tmp.rank == x.rank && i < x.rank; i++)
        if (!shape_is_known(x.dims[i]) && shape_is_known(tmp.dims[i])) x.dims[i] = tmp.dims[i];
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x);
}

static tsr_status *rule_where(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(broadcast_all(c, n, 0, &s));
    int32_t elem = shape_in_elem(c, n, 1);
    if (!elem) elem = shape_in_elem(c, n, 2);
    return shape_set_out(c, n, 0, elem, &s);
}

static tsr_status *rule_cast(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    int64_t to = shape_attr_int(n, "to", 0);
    return shape_set_out_ex(c, n, 0, (int32_t)to, &s, to ? SHAPE_ELEM_CERTAIN : 0);
}

static tsr_status *rule_castlike(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    int32_t to = shape_in_elem(c, n, 1);
    return shape_set_out_ex(c, n, 0, to, &s, to ? SHAPE_ELEM_CERTAIN : 0);
}

/* Dropout: output 0 like the input; the mask is bool from opset 10 on and the
 * input's type before. */
static tsr_status *rule_dropout(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    TSR_TRY(shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &s));
    if (shape_opset(n) >= 10) return shape_set_out_ex(c, n, 1, TSR_BOOL, &s, SHAPE_ELEM_CERTAIN);
    return shape_set_out(c, n, 1, shape_in_elem(c, n, 0), &s);
}

/* QuantizeLinear: x's shape, typed as the zero point (uint8 without one, or
 * the output_dtype attribute of opset 21). */
static tsr_status *rule_quantize(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    int32_t elem = shape_in_elem(c, n, 2);
    if (!elem) elem = (int32_t)shape_attr_int(n, "output_dtype", 0);
    if (!elem && !shape_has_in(n, 2)) elem = TSR_UINT8;
    return shape_set_out(c, n, 0, elem, &s);
}

/* DequantizeLinear: x's shape, typed as the scale (float before opset 19). */
static tsr_status *rule_dequantize(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    shape_in_shape(c, n, 0, &s);
    int32_t elem = shape_opset(n) >= 19 ? shape_in_elem(c, n, 1) : TSR_FLOAT;
    if (shape_opset(n) >= 23 && shape_attr_int(n, "output_dtype", 0))
        elem = (int32_t)shape_attr_int(n, "output_dtype", 0);
    return shape_set_out(c, n, 0, elem, &s);
}

/* Every rule here holds in all opsets that have the op (a `since` of 1 just
 * means "any"); Dropout checks the opset itself. */
const shape_op shape_ops_elementwise[] = {
    /* unary maps */
    {"Abs", 1, rule_unary},
    {"Neg", 1, rule_unary},
    {"Ceil", 1, rule_unary},
    {"Floor", 1, rule_unary},
    {"Round", 1, rule_unary},
    {"Sign", 1, rule_unary},
    {"Exp", 1, rule_unary},
    {"Log", 1, rule_unary},
    {"Sqrt", 1, rule_unary},
    {"Reciprocal", 1, rule_unary},
    {"Erf", 1, rule_unary},
    {"Sin", 1, rule_unary},
    {"Cos", 1, rule_unary},
    {"Tan", 1, rule_unary},
    {"Asin", 1, rule_unary},
    {"Acos", 1, rule_unary},
    {"Atan", 1, rule_unary},
    {"Sinh", 1, rule_unary},
    {"Cosh", 1, rule_unary},
    {"Asinh", 1, rule_unary},
    {"Acosh", 1, rule_unary},
    {"Atanh", 1, rule_unary},
    {"Not", 1, rule_unary},
    {"BitwiseNot", 1, rule_unary},
    {"Identity", 1, rule_identity},
    {"Clip", 1, rule_unary},
    /* activations */
    {"Relu", 1, rule_unary},
    {"LeakyRelu", 1, rule_unary},
    {"Elu", 1, rule_unary},
    {"Selu", 1, rule_unary},
    {"Celu", 1, rule_unary},
    {"Sigmoid", 1, rule_unary},
    {"HardSigmoid", 1, rule_unary},
    {"HardSwish", 1, rule_unary},
    {"Tanh", 1, rule_unary},
    {"Softplus", 1, rule_unary},
    {"Softsign", 1, rule_unary},
    {"ThresholdedRelu", 1, rule_unary},
    {"Gelu", 1, rule_unary},
    {"Mish", 1, rule_unary},
    {"Shrink", 1, rule_unary},
    {"Swish", 1, rule_unary},
    {"SwiGLU", 28, rule_swiglu},
    {"IsNaN", 1, rule_unary_bool},
    {"IsInf", 1, rule_unary_bool},
    /* broadcasting */
    {"Add", 1, rule_broadcast},
    {"Sub", 1, rule_broadcast},
    {"Mul", 1, rule_broadcast},
    {"Div", 1, rule_broadcast},
    {"Pow", 1, rule_broadcast},
    {"Mod", 1, rule_broadcast},
    {"PRelu", 1, rule_prelu},
    {"BitShift", 1, rule_broadcast},
    {"BitwiseAnd", 1, rule_broadcast},
    {"BitwiseOr", 1, rule_broadcast},
    {"BitwiseXor", 1, rule_broadcast},
    {"Sum", 1, rule_broadcast},
    {"Max", 1, rule_broadcast},
    {"Min", 1, rule_broadcast},
    {"Mean", 1, rule_broadcast},
    {"Equal", 1, rule_broadcast_bool},
    {"Greater", 1, rule_broadcast_bool},
    {"Less", 1, rule_broadcast_bool},
    {"GreaterOrEqual", 1, rule_broadcast_bool},
    {"LessOrEqual", 1, rule_broadcast_bool},
    {"And", 1, rule_broadcast_bool},
    {"Or", 1, rule_broadcast_bool},
    {"Xor", 1, rule_broadcast_bool},
    {"Where", 1, rule_where},
    /* types */
    {"Cast", 1, rule_cast},
    {"CastLike", 1, rule_castlike},
    {"Dropout", 1, rule_dropout},
    {"BitCast", 26, rule_cast}, /* the same width only, so the same shape */
    {"QuantizeLinear", 1, rule_quantize},
    {"DequantizeLinear", 1, rule_dequantize},
};
const size_t shape_ops_elementwise_count = sizeof shape_ops_elementwise / sizeof shape_ops_elementwise[0];
