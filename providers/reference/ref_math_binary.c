/*
 * Binary operators of the math family (Add, Sub, Mul, Div, Pow, Mod, the
 * comparisons and logical and bitwise operators, BitShift, PRelu) and the
 * variadic Max, Min, Sum and Mean, all with multidirectional broadcasting.
 *
 * Types: float16 and bfloat16 compute in float and round once per result,
 * as numpy does; double in double; integers exactly in int64 (uint64 in
 * uint64), never through double. float32 Add/Sub/Mul/Div/Max/Min have
 * straight loops because the benchmark models spend their time there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_math.h"

enum bop {
    B_ADD,
    B_SUB,
    B_MUL,
    B_DIV,
    B_MOD,
    B_FMOD,
    B_POW,
    B_MAX,
    B_MIN,
    B_PRELU,
    B_AND,
    B_OR,
    B_XOR,
    B_EQ,
    B_LT,
    B_GT,
    B_LE,
    B_GE,
    B_BAND,
    B_BOR,
    B_BXOR,
    B_SHL,
    B_SHR
};

static bool bop_is_bool_out(int op) { return op >= B_AND && op <= B_GE; }

M_INLINE float bf32(int op, float a, float b) {
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_FMOD: return fmodf(a, b);
    case B_MOD: {
        /* numpy's mod: the result takes the divisor's sign. */
        float r = fmodf(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case B_POW: return (float)pow((double)a, (double)b);
    case B_MAX: return (a != a || b != b) ? NAN : (a > b ? a : b);
    case B_MIN: return (a != a || b != b) ? NAN : (a < b ? a : b);
    case B_PRELU: return a < 0 ? a * b : a;
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0) && (b != 0);
    case B_OR: return (a != 0) || (b != 0);
    case B_XOR: return (a != 0) != (b != 0);
    default: return NAN;
    }
}

M_INLINE double bf64(int op, double a, double b) {
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_FMOD: return fmod(a, b);
    case B_MOD: {
        double r = fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case B_POW: return pow(a, b);
    case B_MAX: return (a != a || b != b) ? NAN : (a > b ? a : b);
    case B_MIN: return (a != a || b != b) ? NAN : (a < b ? a : b);
    case B_PRELU: return a < 0 ? a * b : a;
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0) && (b != 0);
    case B_OR: return (a != 0) || (b != 0);
    case B_XOR: return (a != 0) != (b != 0);
    default: return NAN;
    }
}

/* Exact integer power by squaring; wraps like numpy's fixed-width ints.
 * A negative exponent gives the truncated 1/a^-b (0 unless |a| is 1). */
static uint64_t ipow_u(uint64_t a, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= a;
        a *= a;
        e >>= 1;
    }
    return r;
}
static int64_t ipow_i(int64_t a, int64_t e) {
    if (e < 0) {
        if (a == 1) return 1;
        if (a == -1) return (e & 1) ? -1 : 1;
        return 0;
    }
    return (int64_t)ipow_u((uint64_t)a, (uint64_t)e);
}

/* Signed arithmetic wraps through uint64: overflow in C's int64 is
 * undefined, in numpy's int types it wraps. */
M_INLINE int64_t bi64(int op, int64_t a, int64_t b) {
    switch (op) {
    case B_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case B_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case B_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case B_DIV:
        /* ONNX leaves x/0 undefined; 0 keeps the process alive. */
        if (b == 0) return 0;
        if (b == -1) return (int64_t)(0 - (uint64_t)a);
        return a / b; /* truncates toward zero, like C and ORT */
    case B_FMOD:
        if (b == 0 || b == -1) return 0;
        return a % b;
    case B_MOD: {
        if (b == 0 || b == -1) return 0;
        int64_t r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case B_POW: return ipow_i(a, b);
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    case B_PRELU: return a < 0 ? (int64_t)((uint64_t)a * (uint64_t)b) : a;
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0) && (b != 0);
    case B_OR: return (a != 0) || (b != 0);
    case B_XOR: return (a != 0) != (b != 0);
    case B_BAND: return a & b;
    case B_BOR: return a | b;
    case B_BXOR: return a ^ b;
    /* BitShift is defined on unsigned types only; shifting by the width or
     * more gives 0 instead of C's undefined behaviour. */
    case B_SHL: return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b);
    case B_SHR: return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a >> b);
    default: return 0;
    }
}

M_INLINE uint64_t bu64(int op, uint64_t a, uint64_t b) {
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return b ? a / b : 0;
    case B_FMOD:
    case B_MOD: return b ? a % b : 0;
    case B_POW: return ipow_u(a, b);
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    case B_PRELU: return a;
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return (a != 0) && (b != 0);
    case B_OR: return (a != 0) || (b != 0);
    case B_XOR: return (a != 0) != (b != 0);
    case B_BAND: return a & b;
    case B_BOR: return a | b;
    case B_BXOR: return a ^ b;
    case B_SHL: return b >= 64 ? 0 : a << b;
    case B_SHR: return b >= 64 ? 0 : a >> b;
    default: return 0;
    }
}

/* float32 inner loop; sa/sb are 0 (broadcast) or 1 and get inlined as
 * constants so the common cases vectorise. */
M_INLINE void f32_loop(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *o, int64_t n) {
    switch (op) {
    case B_ADD:
        for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] + b[i * sb];
        break;
    case B_SUB:
        for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] - b[i * sb];
        break;
    case B_MUL:
        for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] * b[i * sb];
        break;
    case B_DIV:
        for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] / b[i * sb];
        break;
    case B_MAX: /* bf32's rule, as a loop of its own: tf2onnx's ReLU6 and variadic Max */
        for (int64_t i = 0; i < n; i++) {
            float x = a[i * sa], y = b[i * sb];
            o[i] = (x != x || y != y) ? NAN : (x > y ? x : y);
        }
        break;
    case B_MIN:
        for (int64_t i = 0; i < n; i++) {
            float x = a[i * sa], y = b[i * sb];
            o[i] = (x != x || y != y) ? NAN : (x < y ? x : y);
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++) o[i] = bf32(op, a[i * sa], b[i * sb]);
        break;
    }
}

static void f32_any(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *o, int64_t n) {
    /* x^2 is how exported LayerNorms compute the variance; pow() is slow. */
    if (op == B_POW && sb == 0 && b[0] == 2.0f) {
        for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] * a[i * sa];
        return;
    }
    if (sa == 1 && sb == 1) f32_loop(op, a, 1, b, 1, o, n);
    else if (sa == 1 && sb == 0) f32_loop(op, a, 1, b, 0, o, n);
    else if (sa == 0 && sb == 1) f32_loop(op, a, 0, b, 1, o, n);
    else f32_loop(op, a, sa, b, sb, o, n);
}

/* Comparisons and logical operators into bool, one typed loop per type;
 * sa/sb are 0 or 1 and inlined as constants by cmp_any. Same results as
 * bf32/bf64/bi64/bu64 on the values (native comparisons, NaN unordered). */
#define CMP_LOOPS(T)                                                                                                   \
    M_INLINE void cmp_loop_##T(int op, const T *a, int64_t sa, const T *b, int64_t sb, uint8_t *o, int64_t n) {        \
        switch (op) {                                                                                                  \
        case B_EQ:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] == b[i * sb];                                             \
            break;                                                                                                     \
        case B_LT:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] < b[i * sb];                                              \
            break;                                                                                                     \
        case B_GT:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] > b[i * sb];                                              \
            break;                                                                                                     \
        case B_LE:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] <= b[i * sb];                                             \
            break;                                                                                                     \
        case B_GE:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] >= b[i * sb];                                             \
            break;                                                                                                     \
        case B_AND:                                                                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = (a[i * sa] != 0) & (b[i * sb] != 0);                                \
            break;                                                                                                     \
        case B_OR:                                                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = (a[i * sa] != 0) | (b[i * sb] != 0);                                \
            break;                                                                                                     \
        case B_XOR:                                                                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = (a[i * sa] != 0) ^ (b[i * sb] != 0);                                \
            break;                                                                                                     \
        }                                                                                                              \
    }                                                                                                                  \
    static void cmp_any_##T(int op, const void *pa, int64_t sa, const void *pb, int64_t sb, uint8_t *o, int64_t n) {   \
        const T *a = pa, *b = pb;                                                                                      \
        if (sa == 1 && sb == 1) cmp_loop_##T(op, a, 1, b, 1, o, n);                                                    \
        else if (sa == 1 && sb == 0) cmp_loop_##T(op, a, 1, b, 0, o, n);                                               \
        else if (sa == 0 && sb == 1) cmp_loop_##T(op, a, 0, b, 1, o, n);                                               \
        else cmp_loop_##T(op, a, sa, b, sb, o, n);                                                                     \
    }
CMP_LOOPS(float)
CMP_LOOPS(double)
CMP_LOOPS(int64_t)
CMP_LOOPS(int32_t)
CMP_LOOPS(uint8_t)

typedef void (*cmp_fn)(int op, const void *a, int64_t sa, const void *b, int64_t sb, uint8_t *o, int64_t n);

/* The typed loop for a comparison or logical operator on two inputs of
 * type t, or NULL (then the generic path). uint8 and bool share one: bool
 * bytes compare as their values, like m_ldi reads them. */
static cmp_fn cmp_for(int op, int32_t t) {
    if (!bop_is_bool_out(op)) return NULL;
    switch (t) {
    case TSR_FLOAT: return cmp_any_float;
    case TSR_DOUBLE: return cmp_any_double;
    case TSR_INT64: return cmp_any_int64_t;
    case TSR_INT32: return cmp_any_int32_t;
    case TSR_UINT8:
    case TSR_BOOL: return cmp_any_uint8_t;
    default: return NULL;
    }
}

/* Runs op over a and b broadcast to o's shape. `a` may be `o` itself (the
 * variadic ops fold into their output). Exponent of Pow may differ in type. */
static tsr_status *bin_exec(ref_ctx *c, int op, const tsr_tensor *a, const tsr_tensor *b, tsr_tensor *o) {
    uint64_t n = ref_numel(o);
    if (n == 0) return NULL;
    int32_t ta = a->elem_type, tb = b->elem_type, to = o->elem_type;

    if (ta == TSR_FLOAT && tb == TSR_FLOAT && to == TSR_FLOAT) {
        const float *pa = a->data, *pb = b->data;
        float *po = o->data;
        uint64_t na = ref_numel(a), nb = ref_numel(b);
        if (na == n && nb == n) {
            f32_any(op, pa, 1, pb, 1, po, (int64_t)n);
            return NULL;
        }
        if (na == n && nb == 1) {
            f32_any(op, pa, 1, pb, 0, po, (int64_t)n);
            return NULL;
        }
        if (na == 1 && nb == n) {
            f32_any(op, pa, 0, pb, 1, po, (int64_t)n);
            return NULL;
        }
        /* General broadcast: walk all but the last axis, run the last one
         * as an inner loop. */
        const tsr_tensor *ins[2] = {a, b};
        m_iter it;
        m_iter_init(&it, o->rank, o->dims, 2, ins);
        int64_t inner = o->dims[o->rank - 1];
        int64_t sa = it.st[0][o->rank - 1], sb = it.st[1][o->rank - 1];
        it.rank = o->rank - 1; /* step over rows */
        for (uint64_t r = 0; r < n / (uint64_t)inner; r++) {
            f32_any(op, pa + it.off[0], sa, pb + it.off[1], sb, po + r * (uint64_t)inner, inner);
            m_iter_next(&it);
        }
        return NULL;
    }

    cmp_fn cf = ta == tb && to == TSR_BOOL ? cmp_for(op, ta) : NULL;
    if (cf) {
        /* comparisons and masks (Equal/Less/.. into Where, And/Or of
         * masks): whole tensors when each input is full or one element,
         * else rows with the last axis inner */
        size_t es = ref_elem_size(ta);
        const char *pa = a->data, *pb = b->data;
        uint8_t *po = o->data;
        uint64_t na = ref_numel(a), nb = ref_numel(b);
        if ((na == n || na == 1) && (nb == n || nb == 1)) {
            cf(op, pa, na == n, pb, nb == n, po, (int64_t)n);
            return NULL;
        }
        const tsr_tensor *ins[2] = {a, b};
        m_iter it;
        m_iter_init(&it, o->rank, o->dims, 2, ins);
        int64_t inner = o->dims[o->rank - 1];
        int64_t sa = it.st[0][o->rank - 1], sb = it.st[1][o->rank - 1];
        it.rank = o->rank - 1;
        for (uint64_t r = 0; r < n / (uint64_t)inner; r++) {
            cf(op, pa + (size_t)it.off[0] * es, sa, pb + (size_t)it.off[1] * es, sb, po + r * (uint64_t)inner, inner);
            m_iter_next(&it);
        }
        return NULL;
    }

    if (ta == TSR_INT64 && tb == TSR_INT64 && to == TSR_INT64 && o->rank > 0) {
        /* index arithmetic (exporters' frame indices, shape maths): rows
         * with a typed inner loop instead of a load/store per element */
        const int64_t *pa = a->data, *pb = b->data;
        int64_t *po = o->data;
        const tsr_tensor *ins[2] = {a, b};
        m_iter it;
        m_iter_init(&it, o->rank, o->dims, 2, ins);
        int64_t inner = o->dims[o->rank - 1];
        int64_t sa = it.st[0][o->rank - 1], sb = it.st[1][o->rank - 1];
        it.rank = o->rank - 1;
        for (uint64_t r = 0; r < n / (uint64_t)inner; r++) {
            const int64_t *ra = pa + it.off[0], *rb = pb + it.off[1];
            int64_t *ro = po + r * (uint64_t)inner;
            for (int64_t i = 0; i < inner; i++) ro[i] = bi64(op, ra[i * sa], rb[i * sb]);
            m_iter_next(&it);
        }
        return NULL;
    }

    const tsr_tensor *ins[2] = {a, b};
    m_iter it;
    m_iter_init(&it, o->rank, o->dims, 2, ins);
    const void *pa = a->data, *pb = b->data;
    void *po = o->data;
    int cls = m_class(ta);
    int clsb = m_class(tb);
    if (op == B_POW && (cls == MC_I64 || cls == MC_U64) && (clsb == MC_F32 || clsb == MC_F64)) {
        /* Integer base, float exponent: numpy computes in double and the
         * result keeps the base's type. */
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_std(to, po, i, pow(m_ldd(ta, pa, it.off[0]), m_ldd(tb, pb, it.off[1])));
        return NULL;
    }
    switch (cls) {
    case MC_F32:
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_stf(to, po, i, bf32(op, m_ldf(ta, pa, it.off[0]), m_ldf(tb, pb, it.off[1])));
        break;
    case MC_F64:
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_std(to, po, i, bf64(op, m_ldd(ta, pa, it.off[0]), m_ldd(tb, pb, it.off[1])));
        break;
    case MC_I64:
        if (clsb == MC_U64 && op == B_POW) {
            for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
                m_sti(to, po, i, (int64_t)ipow_u((uint64_t)m_ldi(ta, pa, it.off[0]), m_ldu(tb, pb, it.off[1])));
            break;
        }
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_sti(to, po, i, bi64(op, m_ldi(ta, pa, it.off[0]), m_ldi(tb, pb, it.off[1])));
        break;
    case MC_U64:
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_stu(to, po, i, bu64(op, m_ldu(ta, pa, it.off[0]), m_ldu(tb, pb, it.off[1])));
        break;
    default: return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)ta);
    }
    return NULL;
}

tsr_status *ref_math_need_inputs(ref_ctx *c, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!ref_in(c, i)) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is required", i);
    return NULL;
}

static void fmt_shape(char *buf, size_t size, const tsr_tensor *t) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int32_t d = 0; d < t->rank && k < size; d++)
        k += (size_t)snprintf(buf + k, size - k, d ? ",%lld" : "%lld", (long long)t->dims[d]);
    if (k < size) snprintf(buf + k, size - k, "]");
}

tsr_status *ref_math_shape_err(ref_ctx *c, const tsr_tensor *a, const tsr_tensor *b) {
    char sa[128], sb[128];
    fmt_shape(sa, sizeof sa, a);
    fmt_shape(sb, sizeof sb, b);
    return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shapes %s and %s do not broadcast", sa, sb);
}

static void equal_strings(const tsr_tensor *a, const tsr_tensor *b, tsr_tensor *o) {
    uint64_t n = ref_numel(o);
    const tsr_tensor *ins[2] = {a, b};
    m_iter it;
    m_iter_init(&it, o->rank, o->dims, 2, ins);
    const tsr_string *sa = a->data, *sb = b->data;
    uint8_t *po = o->data;
    for (uint64_t i = 0; i < n; i++, m_iter_next(&it)) {
        const tsr_string *x = &sa[it.off[0]], *y = &sb[it.off[1]];
        po[i] = x->size == y->size && (x->size == 0 || memcmp(x->data, y->data, x->size) == 0);
    }
}

static tsr_status *binary(ref_ctx *c, int op) {
    tsr_status *st = ref_math_need_inputs(c, 2);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0), *b = ref_in(c, 1);
    tsr_tensor bv = *b;
    int64_t bdims[REF_MAX_RANK];
    /* Before opset 7 broadcasting was opt-in (broadcast=1) and aligned B's
     * axes at `axis` of A rather than at the end. */
    bool legacy_axis =
        ref_opset(c) < 7 && ref_attr_int(c, "broadcast", 0) && ref_attr_has(c, "axis") && b->rank < a->rank;
    /* PRelu before opset 7 took a per-channel slope of shape [C], C being
     * axis 1 of X (what the PyTorch exporter emitted). */
    bool legacy_prelu = op == B_PRELU && ref_opset(c) < 7 && b->rank == 1 && a->rank >= 2 && b->dims[0] == a->dims[1] &&
        b->dims[0] != 1;
    if (legacy_axis || legacy_prelu) {
        int64_t axis = 1;
        if (legacy_axis && (!ref_axis(ref_attr_int(c, "axis", 0), a->rank, &axis) || axis + b->rank > a->rank))
            return ref_err(c, TSR_ERR_INVALID_MODEL, "legacy broadcast axis out of range");
        for (int32_t d = 0; d < a->rank; d++) bdims[d] = 1;
        for (int32_t d = 0; d < b->rank; d++) bdims[axis + d] = b->dims[d];
        bv.rank = a->rank;
        bv.dims = bdims;
    }
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    if (!ref_broadcast_shape(a->rank, a->dims, bv.rank, bv.dims, &rank, dims)) return ref_math_shape_err(c, a, b);
    int32_t ot = bop_is_bool_out(op) ? TSR_BOOL : a->elem_type;
    tsr_tensor *o;
    st = ref_out(c, 0, ot, rank, dims, &o);
    if (st) return st;
    if (a->elem_type == TSR_STRING) {
        if (op != B_EQ || b->elem_type != TSR_STRING)
            return ref_err(c, TSR_ERR_NOT_SUPPORTED, "string inputs are supported by Equal only");
        equal_strings(a, &bv, o);
        return NULL;
    }
    return bin_exec(c, op, a, &bv, o);
}

/* Copies `in` broadcast to o's shape (same element type). */
static void copy_bcast(const tsr_tensor *in, tsr_tensor *o) {
    uint64_t n = ref_numel(o);
    size_t es = ref_elem_size(o->elem_type);
    if (ref_numel(in) == n) {
        memcpy(o->data, in->data, n * es);
        return;
    }
    const tsr_tensor *ins[1] = {in};
    m_iter it;
    m_iter_init(&it, o->rank, o->dims, 1, ins);
    for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
        memcpy((char *)o->data + i * es, (const char *)in->data + (size_t)it.off[0] * es, es);
}

/* Adds one input, broadcast to o's shape, into acc. A float32 input of o's
 * own size or of one element (the common cases) skips the general
 * iterator and its per-element type switch: same sums, same order. */
static void sum_wide_add(double *acc, const tsr_tensor *in, const tsr_tensor *o, uint64_t cnt) {
    uint64_t in_n = ref_numel(in);
    if (in->elem_type == TSR_FLOAT && (in_n == cnt || in_n == 1)) {
        const float *p = in->data;
        if (in_n == 1) {
            for (uint64_t i = 0; i < cnt; i++) acc[i] += p[0];
        } else {
            for (uint64_t i = 0; i < cnt; i++) acc[i] += p[i];
        }
        return;
    }
    const tsr_tensor *ins[1] = {in};
    m_iter it;
    m_iter_init(&it, o->rank, o->dims, 1, ins);
    for (uint64_t i = 0; i < cnt; i++, m_iter_next(&it)) acc[i] += m_ldd(in->elem_type, in->data, (size_t)it.off[0]);
}

/* Sum and Mean of float32/float16/bfloat16 inputs (more than two, or a
 * Mean): summed in double and rounded once, so the result does not depend
 * on the order of the inputs (docs/conformance.md, "Precision"). */
static tsr_status *sum_wide(ref_ctx *c, size_t n, bool mean, tsr_tensor *o) {
    uint64_t cnt = ref_numel(o);
    double *acc = calloc((size_t)cnt, sizeof *acc);
    if (!acc) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; k < n; k++) sum_wide_add(acc, ref_in(c, k), o, cnt);
    if (mean)
        for (uint64_t i = 0; i < cnt; i++) acc[i] /= (double)n;
    if (o->elem_type == TSR_FLOAT) {
        float *q = o->data;
        for (uint64_t i = 0; i < cnt; i++) q[i] = (float)acc[i];
    } else {
        for (uint64_t i = 0; i < cnt; i++) m_std(o->elem_type, o->data, (size_t)i, acc[i]);
    }
    free(acc);
    return NULL;
}

/* Max, Min, Sum, Mean: any number of inputs, broadcast together; folds
 * left to right into the output as numpy's reduce over a list does. */
static tsr_status *variadic(ref_ctx *c, int op, bool mean) {
    size_t n = c->n_in;
    if (n == 0) return ref_err(c, TSR_ERR_INVALID_MODEL, "needs at least one input");
    tsr_status *st = ref_math_need_inputs(c, n);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0);
    int32_t rank = a->rank;
    int64_t dims[REF_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) dims[d] = a->dims[d];
    for (size_t k = 1; k < n; k++) {
        const tsr_tensor *b = ref_in(c, k);
        int64_t nd[REF_MAX_RANK];
        int32_t nr;
        if (!ref_broadcast_shape(rank, dims, b->rank, b->dims, &nr, nd)) return ref_math_shape_err(c, a, b);
        rank = nr;
        memcpy(dims, nd, sizeof(int64_t) * (size_t)nr);
    }
    if (m_class(a->elem_type) == MC_NONE)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)a->elem_type);
    tsr_tensor *o;
    st = ref_out(c, 0, a->elem_type, rank, dims, &o);
    if (st) return st;
    if (ref_numel(o) == 0) return NULL;
    if (op == B_ADD && (n > 2 || mean) && m_class(o->elem_type) == MC_F32) return sum_wide(c, n, mean, o);
    if (n == 1) {
        copy_bcast(a, o);
    } else {
        st = bin_exec(c, op, a, ref_in(c, 1), o);
        for (size_t k = 2; k < n && !st; k++) st = bin_exec(c, op, o, ref_in(c, k), o);
        if (st) return st;
    }
    if (mean) {
        uint64_t cnt = ref_numel(o);
        if (o->elem_type == TSR_FLOAT) {
            float *p = o->data;
            for (uint64_t i = 0; i < cnt; i++) p[i] /= (float)n;
        } else if (m_class(o->elem_type) == MC_F64 || m_class(o->elem_type) == MC_F32) {
            for (uint64_t i = 0; i < cnt; i++)
                m_std(o->elem_type, o->data, i, m_ldd(o->elem_type, o->data, i) / (double)n);
        } else {
            for (uint64_t i = 0; i < cnt; i++)
                m_sti(o->elem_type, o->data, i, m_ldi(o->elem_type, o->data, i) / (int64_t)n);
        }
    }
    return NULL;
}

#define BIN_KERNEL(name, op)                                                                                           \
    tsr_status *name(ref_ctx *c) { return binary(c, op); }
BIN_KERNEL(ref_math_add, B_ADD)
BIN_KERNEL(ref_math_sub, B_SUB)
BIN_KERNEL(ref_math_mul, B_MUL)
BIN_KERNEL(ref_math_div, B_DIV)
BIN_KERNEL(ref_math_pow, B_POW)
BIN_KERNEL(ref_math_and, B_AND)
BIN_KERNEL(ref_math_or, B_OR)
BIN_KERNEL(ref_math_xor, B_XOR)
BIN_KERNEL(ref_math_equal, B_EQ)
BIN_KERNEL(ref_math_less, B_LT)
BIN_KERNEL(ref_math_greater, B_GT)
BIN_KERNEL(ref_math_less_equal, B_LE)
BIN_KERNEL(ref_math_greater_equal, B_GE)
BIN_KERNEL(ref_math_bitwise_and, B_BAND)
BIN_KERNEL(ref_math_bitwise_or, B_BOR)
BIN_KERNEL(ref_math_bitwise_xor, B_BXOR)
BIN_KERNEL(ref_math_prelu, B_PRELU)

tsr_status *ref_math_mod(ref_ctx *c) { return binary(c, ref_attr_int(c, "fmod", 0) ? B_FMOD : B_MOD); }

tsr_status *ref_math_bitshift(ref_ctx *c) {
    const char *dir = ref_attr_str(c, "direction", "");
    if (m_str_eq(dir, "LEFT")) return binary(c, B_SHL);
    if (m_str_eq(dir, "RIGHT")) return binary(c, B_SHR);
    return ref_err(c, TSR_ERR_INVALID_MODEL, "direction must be LEFT or RIGHT, not '%s'", dir);
}

tsr_status *ref_math_max(ref_ctx *c) { return variadic(c, B_MAX, false); }
tsr_status *ref_math_min(ref_ctx *c) { return variadic(c, B_MIN, false); }
tsr_status *ref_math_sum(ref_ctx *c) { return variadic(c, B_ADD, false); }
tsr_status *ref_math_mean(ref_ctx *c) { return variadic(c, B_ADD, true); }
