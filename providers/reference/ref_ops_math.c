/*
 * Reference kernels, math family: elementwise unary and binary operators,
 * the variadic Max/Min/Sum/Mean, Where, Clip, Swish/SwiGLU and Det, and the
 * table that also names Cast/CastLike/BitCast (ref_math_cast.c), Einsum
 * (ref_math_einsum.c) and the reductions and softmaxes (ref_math_reduce.c).
 *
 * Types: float16 and bfloat16 compute in float and round once per result,
 * as numpy does; double in double; integers exactly in int64 (uint64 in
 * uint64), never through double. float32 Add/Sub/Mul/Div/Relu and friends
 * have straight loops because the benchmark models spend their time there.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_math.h"

#if defined(__GNUC__)
#define M_INLINE static inline __attribute__((always_inline))
#else
#define M_INLINE static inline
#endif

static bool str_eq(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* ======================================================================== */
/* Binary operators                                                          */

enum bop {
    B_ADD, B_SUB, B_MUL, B_DIV, B_MOD, B_FMOD, B_POW, B_MAX, B_MIN, B_PRELU,
    B_AND, B_OR, B_XOR, B_EQ, B_LT, B_GT, B_LE, B_GE,
    B_BAND, B_BOR, B_BXOR, B_SHL, B_SHR
};

static bool bop_is_bool_out(int op) {
    return op >= B_AND && op <= B_GE;
}

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
M_INLINE void f32_loop(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *o,
                       int64_t n) {
    switch (op) {
    case B_ADD: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] + b[i * sb]; break;
    case B_SUB: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] - b[i * sb]; break;
    case B_MUL: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] * b[i * sb]; break;
    case B_DIV: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] / b[i * sb]; break;
    default: for (int64_t i = 0; i < n; i++) o[i] = bf32(op, a[i * sa], b[i * sb]); break;
    }
}

static void f32_any(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *o,
                    int64_t n) {
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

/* Runs op over a and b broadcast to o's shape. `a` may be `o` itself (the
 * variadic ops fold into their output). Exponent of Pow may differ in type. */
static tsr_status *bin_exec(ref_ctx *c, int op, const tsr_tensor *a, const tsr_tensor *b,
                            tsr_tensor *o) {
    uint64_t n = ref_numel(o);
    if (n == 0) return NULL;
    int32_t ta = a->elem_type, tb = b->elem_type, to = o->elem_type;

    if (ta == TSR_FLOAT && tb == TSR_FLOAT && to == TSR_FLOAT) {
        const float *pa = a->data, *pb = b->data;
        float *po = o->data;
        uint64_t na = ref_numel(a), nb = ref_numel(b);
        if (na == n && nb == n) { f32_any(op, pa, 1, pb, 1, po, (int64_t)n); return NULL; }
        if (na == n && nb == 1) { f32_any(op, pa, 1, pb, 0, po, (int64_t)n); return NULL; }
        if (na == 1 && nb == n) { f32_any(op, pa, 0, pb, 1, po, (int64_t)n); return NULL; }
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
                m_sti(to, po, i, (int64_t)ipow_u((uint64_t)m_ldi(ta, pa, it.off[0]),
                                                 m_ldu(tb, pb, it.off[1])));
            break;
        }
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_sti(to, po, i, bi64(op, m_ldi(ta, pa, it.off[0]), m_ldi(tb, pb, it.off[1])));
        break;
    case MC_U64:
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
            m_stu(to, po, i, bu64(op, m_ldu(ta, pa, it.off[0]), m_ldu(tb, pb, it.off[1])));
        break;
    default:
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)ta);
    }
    return NULL;
}

static tsr_status *need_inputs(ref_ctx *c, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!ref_in(c, i))
            return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is required", i);
    return NULL;
}

static void fmt_shape(char *buf, size_t size, const tsr_tensor *t) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int32_t d = 0; d < t->rank && k < size; d++)
        k += (size_t)snprintf(buf + k, size - k, d ? ",%lld" : "%lld", (long long)t->dims[d]);
    if (k < size) snprintf(buf + k, size - k, "]");
}

static tsr_status *shape_err(ref_ctx *c, const tsr_tensor *a, const tsr_tensor *b) {
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
    tsr_status *st = need_inputs(c, 2);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0), *b = ref_in(c, 1);
    tsr_tensor bv = *b;
    int64_t bdims[REF_MAX_RANK];
    /* Before opset 7 broadcasting was opt-in (broadcast=1) and aligned B's
     * axes at `axis` of A rather than at the end. */
    bool legacy_axis = ref_opset(c) < 7 && ref_attr_int(c, "broadcast", 0) &&
                       ref_attr_has(c, "axis") && b->rank < a->rank;
    /* PRelu before opset 7 took a per-channel slope of shape [C], C being
     * axis 1 of X (what the PyTorch exporter emitted). */
    bool legacy_prelu = op == B_PRELU && ref_opset(c) < 7 && b->rank == 1 && a->rank >= 2 &&
                        b->dims[0] == a->dims[1] && b->dims[0] != 1;
    if (legacy_axis || legacy_prelu) {
        int64_t axis = 1;
        if (legacy_axis &&
            (!ref_axis(ref_attr_int(c, "axis", 0), a->rank, &axis) || axis + b->rank > a->rank))
            return ref_err(c, TSR_ERR_INVALID_MODEL, "legacy broadcast axis out of range");
        for (int32_t d = 0; d < a->rank; d++) bdims[d] = 1;
        for (int32_t d = 0; d < b->rank; d++) bdims[axis + d] = b->dims[d];
        bv.rank = a->rank;
        bv.dims = bdims;
    }
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    if (!ref_broadcast_shape(a->rank, a->dims, bv.rank, bv.dims, &rank, dims))
        return shape_err(c, a, b);
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

/* Sum and Mean of float32/float16/bfloat16 inputs (more than two, or a
 * Mean): summed in double and rounded once, so the result does not depend
 * on the order of the inputs (docs/conformance.md, "Precision"). */
static tsr_status *sum_wide(ref_ctx *c, size_t n, bool mean, tsr_tensor *o) {
    uint64_t cnt = ref_numel(o);
    double *acc = calloc((size_t)cnt, sizeof *acc);
    if (!acc) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; k < n; k++) {
        const tsr_tensor *ins[1] = {ref_in(c, k)};
        m_iter it;
        m_iter_init(&it, o->rank, o->dims, 1, ins);
        for (uint64_t i = 0; i < cnt; i++, m_iter_next(&it))
            acc[i] += m_ldd(ins[0]->elem_type, ins[0]->data, (size_t)it.off[0]);
    }
    for (uint64_t i = 0; i < cnt; i++)
        m_std(o->elem_type, o->data, (size_t)i, mean ? acc[i] / (double)n : acc[i]);
    free(acc);
    return NULL;
}

/* Max, Min, Sum, Mean: any number of inputs, broadcast together; folds
 * left to right into the output as numpy's reduce over a list does. */
static tsr_status *variadic(ref_ctx *c, int op, bool mean) {
    size_t n = c->n_in;
    if (n == 0) return ref_err(c, TSR_ERR_INVALID_MODEL, "needs at least one input");
    tsr_status *st = need_inputs(c, n);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0);
    int32_t rank = a->rank;
    int64_t dims[REF_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) dims[d] = a->dims[d];
    for (size_t k = 1; k < n; k++) {
        const tsr_tensor *b = ref_in(c, k);
        int64_t nd[REF_MAX_RANK];
        int32_t nr;
        if (!ref_broadcast_shape(rank, dims, b->rank, b->dims, &nr, nd)) return shape_err(c, a, b);
        rank = nr;
        memcpy(dims, nd, sizeof(int64_t) * (size_t)nr);
    }
    if (m_class(a->elem_type) == MC_NONE)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported",
                       (int)a->elem_type);
    tsr_tensor *o;
    st = ref_out(c, 0, a->elem_type, rank, dims, &o);
    if (st) return st;
    if (ref_numel(o) == 0) return NULL;
    if (op == B_ADD && (n > 2 || mean) && m_class(o->elem_type) == MC_F32)
        return sum_wide(c, n, mean, o);
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

#define BIN_KERNEL(name, op) \
    static tsr_status *name(ref_ctx *c) { return binary(c, op); }
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

static tsr_status *ref_math_mod(ref_ctx *c) {
    return binary(c, ref_attr_int(c, "fmod", 0) ? B_FMOD : B_MOD);
}

static tsr_status *ref_math_bitshift(ref_ctx *c) {
    const char *dir = ref_attr_str(c, "direction", "");
    if (str_eq(dir, "LEFT")) return binary(c, B_SHL);
    if (str_eq(dir, "RIGHT")) return binary(c, B_SHR);
    return ref_err(c, TSR_ERR_INVALID_MODEL, "direction must be LEFT or RIGHT, not '%s'", dir);
}

static tsr_status *ref_math_max(ref_ctx *c) { return variadic(c, B_MAX, false); }
static tsr_status *ref_math_min(ref_ctx *c) { return variadic(c, B_MIN, false); }
static tsr_status *ref_math_sum(ref_ctx *c) { return variadic(c, B_ADD, false); }
static tsr_status *ref_math_mean(ref_ctx *c) { return variadic(c, B_ADD, true); }

/* ======================================================================== */
/* Unary operators                                                           */

enum uop {
    U_ABS, U_NEG, U_FLOOR, U_CEIL, U_ROUND, U_SQRT, U_RECIP, U_EXP, U_LOG, U_SIN, U_COS,
    U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH, U_TANH,
    U_SIGMOID, U_RELU, U_LEAKY, U_ELU, U_SELU, U_CELU, U_SOFTPLUS, U_SOFTSIGN, U_HSIGMOID,
    U_HSWISH, U_MISH, U_GELU, U_GELU_TANH, U_ERF, U_SIGN, U_ISNAN, U_ISINF, U_NOT, U_BNOT,
    U_TRELU, U_SHRINK, U_SWISH
};

typedef struct unp {
    int op;
    double alpha, beta, gamma;
    bool pos, neg; /* IsInf */
} unp;

static double softplus(double x) {
    /* log(1+e^x) without overflowing e^x for large x. */
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double un_d(const unp *p, double x) {
    switch (p->op) {
    case U_ABS: return fabs(x);
    case U_NEG: return -x;
    case U_FLOOR: return floor(x);
    case U_CEIL: return ceil(x);
    case U_ROUND: return nearbyint(x); /* default rounding: half to even */
    case U_SQRT: return sqrt(x);
    case U_RECIP: return 1.0 / x;
    case U_EXP: return exp(x);
    case U_LOG: return log(x);
    case U_SIN: return sin(x);
    case U_COS: return cos(x);
    case U_TAN: return tan(x);
    case U_ASIN: return asin(x);
    case U_ACOS: return acos(x);
    case U_ATAN: return atan(x);
    case U_SINH: return sinh(x);
    case U_COSH: return cosh(x);
    case U_ASINH: return asinh(x);
    case U_ACOSH: return acosh(x);
    case U_ATANH: return atanh(x);
    case U_TANH: return tanh(x);
    case U_SIGMOID:
        if (x >= 0) return 1.0 / (1.0 + exp(-x));
        else {
            double e = exp(x);
            return e / (1.0 + e);
        }
    case U_RELU: return (x > 0 || x != x) ? x : 0.0; /* keeps NaN a NaN */
    case U_LEAKY: return x < 0 ? p->alpha * x : x;
    case U_ELU: return x < 0 ? p->alpha * (exp(x) - 1.0) : x;
    case U_SELU: return x > 0 ? p->gamma * x : p->gamma * (p->alpha * exp(x) - p->alpha);
    case U_CELU: return fmax(0.0, x) + fmin(0.0, p->alpha * (exp(x / p->alpha) - 1.0));
    case U_SOFTPLUS: return softplus(x);
    case U_SOFTSIGN: return x / (1.0 + fabs(x));
    case U_HSIGMOID: return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
    case U_HSWISH: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case U_MISH: return x * tanh(softplus(x));
    case U_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case U_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x)));
    case U_ERF: return erf(x);
    case U_SIGN: return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); /* 0 and NaN stay */
    case U_ISNAN: return x != x;
    case U_ISINF: return (isinf(x) && ((x > 0 && p->pos) || (x < 0 && p->neg)));
    case U_NOT: return x == 0;
    case U_TRELU: return x > p->alpha ? x : 0.0;
    case U_SHRINK: return x < -p->alpha ? x + p->beta : (x > p->alpha ? x - p->beta : 0.0);
    case U_SWISH: {
        double ax = p->alpha * x;
        return x * (ax >= 0 ? 1.0 / (1.0 + exp(-ax)) : exp(ax) / (1.0 + exp(ax)));
    }
    default: return NAN;
    }
}

/* The operators that are defined on integers; the rest compute integers
 * through double (Shrink) or are declined at claim time. */
static bool un_int(const unp *p, int64_t x, int64_t *r) {
    switch (p->op) {
    case U_ABS: *r = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; return true;
    case U_NEG: *r = (int64_t)(0 - (uint64_t)x); return true;
    case U_SIGN: *r = (x > 0) - (x < 0); return true;
    case U_RELU: *r = x > 0 ? x : 0; return true;
    case U_BNOT: *r = ~x; return true;
    case U_NOT: *r = x == 0; return true;
    case U_FLOOR:
    case U_CEIL:
    case U_ROUND: *r = x; return true;
    default: return false;
    }
}

static tsr_status *unary_p(ref_ctx *c, const unp *p) {
    tsr_status *st = need_inputs(c, 1);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0);
    int32_t t = x->elem_type;
    int32_t ot = (p->op == U_ISNAN || p->op == U_ISINF || p->op == U_NOT) ? TSR_BOOL : t;
    int cls = m_class(t);
    if (cls == MC_NONE)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    tsr_tensor *o;
    st = ref_out(c, 0, ot, x->rank, x->dims, &o);
    if (st) return st;
    uint64_t n = ref_numel(x);
    const void *pi = x->data;
    void *po = o->data;
    if (t == TSR_FLOAT && ot == TSR_FLOAT) {
        const float *a = pi;
        float *b = po;
        switch (p->op) {
        case U_RELU: for (uint64_t i = 0; i < n; i++) b[i] = (a[i] > 0 || a[i] != a[i]) ? a[i] : 0.0f; break;
        case U_NEG: for (uint64_t i = 0; i < n; i++) b[i] = -a[i]; break;
        case U_ABS: for (uint64_t i = 0; i < n; i++) b[i] = fabsf(a[i]); break;
        case U_SQRT: for (uint64_t i = 0; i < n; i++) b[i] = sqrtf(a[i]); break;
        case U_RECIP: for (uint64_t i = 0; i < n; i++) b[i] = 1.0f / a[i]; break;
        /* exp, tanh and erf go through double (the default case): glibc's
         * expf, tanhf and erff miss the correctly rounded float on 0.06%,
         * 2.7% and 0.4% of inputs in [-20, 20] (by 1-2 ULPs); the double
         * functions rounded once do not (rule 1 of docs/conformance.md,
         * "Precision"). */
        case U_LEAKY: {
            float al = (float)p->alpha;
            for (uint64_t i = 0; i < n; i++) b[i] = a[i] < 0 ? al * a[i] : a[i];
            break;
        }
        default: for (uint64_t i = 0; i < n; i++) b[i] = (float)un_d(p, a[i]); break;
        }
        return NULL;
    }
    if (cls == MC_F32 || cls == MC_F64) {
        for (uint64_t i = 0; i < n; i++) m_std(ot, po, i, un_d(p, m_ldd(t, pi, i)));
        return NULL;
    }
    int64_t r;
    if (cls == MC_U64) {
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = m_ldu(t, pi, i);
            uint64_t rv;
            switch (p->op) {
            case U_ABS: case U_RELU: case U_FLOOR: case U_CEIL: case U_ROUND: rv = v; break;
            case U_SIGN: rv = v != 0; break;
            case U_BNOT: rv = ~v; break;
            case U_NEG: rv = 0 - v; break;
            default: rv = m_d2u(un_d(p, (double)v)); break;
            }
            m_stu(ot, po, i, rv);
        }
        return NULL;
    }
    if (!un_int(p, 0, &r)) {
        for (uint64_t i = 0; i < n; i++) m_std(ot, po, i, un_d(p, m_ldd(t, pi, i)));
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++) {
        un_int(p, m_ldi(t, pi, i), &r);
        m_sti(ot, po, i, r);
    }
    return NULL;
}

static tsr_status *unary(ref_ctx *c, int op) {
    unp p = {op, 0, 0, 0, true, true};
    return unary_p(c, &p);
}

#define UN_KERNEL(name, op) \
    static tsr_status *name(ref_ctx *c) { return unary(c, op); }
UN_KERNEL(ref_math_abs, U_ABS)
UN_KERNEL(ref_math_neg, U_NEG)
UN_KERNEL(ref_math_floor, U_FLOOR)
UN_KERNEL(ref_math_ceil, U_CEIL)
UN_KERNEL(ref_math_round, U_ROUND)
UN_KERNEL(ref_math_sqrt, U_SQRT)
UN_KERNEL(ref_math_reciprocal, U_RECIP)
UN_KERNEL(ref_math_exp, U_EXP)
UN_KERNEL(ref_math_log, U_LOG)
UN_KERNEL(ref_math_sin, U_SIN)
UN_KERNEL(ref_math_cos, U_COS)
UN_KERNEL(ref_math_tan, U_TAN)
UN_KERNEL(ref_math_asin, U_ASIN)
UN_KERNEL(ref_math_acos, U_ACOS)
UN_KERNEL(ref_math_atan, U_ATAN)
UN_KERNEL(ref_math_sinh, U_SINH)
UN_KERNEL(ref_math_cosh, U_COSH)
UN_KERNEL(ref_math_asinh, U_ASINH)
UN_KERNEL(ref_math_acosh, U_ACOSH)
UN_KERNEL(ref_math_atanh, U_ATANH)
UN_KERNEL(ref_math_tanh, U_TANH)
UN_KERNEL(ref_math_sigmoid, U_SIGMOID)
UN_KERNEL(ref_math_relu, U_RELU)
UN_KERNEL(ref_math_softplus, U_SOFTPLUS)
UN_KERNEL(ref_math_softsign, U_SOFTSIGN)
UN_KERNEL(ref_math_hardswish, U_HSWISH)
UN_KERNEL(ref_math_mish, U_MISH)
UN_KERNEL(ref_math_erf, U_ERF)
UN_KERNEL(ref_math_sign, U_SIGN)
UN_KERNEL(ref_math_isnan, U_ISNAN)
UN_KERNEL(ref_math_not, U_NOT)
UN_KERNEL(ref_math_bitwise_not, U_BNOT)

static tsr_status *ref_math_leaky_relu(ref_ctx *c) {
    unp p = {U_LEAKY, ref_attr_float(c, "alpha", 0.01f), 0, 0, false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_elu(ref_ctx *c) {
    unp p = {U_ELU, ref_attr_float(c, "alpha", 1.0f), 0, 0, false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_selu(ref_ctx *c) {
    unp p = {U_SELU, ref_attr_float(c, "alpha", 1.67326319217681884765625f), 0,
             ref_attr_float(c, "gamma", 1.05070102214813232421875f), false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_celu(ref_ctx *c) {
    unp p = {U_CELU, ref_attr_float(c, "alpha", 1.0f), 0, 0, false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_hard_sigmoid(ref_ctx *c) {
    unp p = {U_HSIGMOID, ref_attr_float(c, "alpha", 0.2f), ref_attr_float(c, "beta", 0.5f), 0,
             false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_thresholded_relu(ref_ctx *c) {
    unp p = {U_TRELU, ref_attr_float(c, "alpha", 1.0f), 0, 0, false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_shrink(ref_ctx *c) {
    unp p = {U_SHRINK, ref_attr_float(c, "lambd", 0.5f), ref_attr_float(c, "bias", 0.0f), 0,
             false, false};
    return unary_p(c, &p);
}
static tsr_status *ref_math_swish(ref_ctx *c) {
    unp p = {U_SWISH, ref_attr_float(c, "alpha", 1.0f), 0, 0, false, false};
    return unary_p(c, &p);
}
/* SwiGLU (opset 28): Swish(a, alpha) * b, broadcast. */
static tsr_status *ref_math_swiglu(ref_ctx *c) {
    tsr_status *st = need_inputs(c, 2);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0), *b = ref_in(c, 1);
    int cls = m_class(a->elem_type);
    if (cls != MC_F32 && cls != MC_F64)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported",
                       (int)a->elem_type);
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    if (!ref_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &rank, dims))
        return shape_err(c, a, b);
    tsr_tensor *o;
    st = ref_out(c, 0, a->elem_type, rank, dims, &o);
    if (st) return st;
    unp p = {U_SWISH, ref_attr_float(c, "alpha", 1.0f), 0, 0, false, false};
    uint64_t n = ref_numel(o);
    const tsr_tensor *ins[2] = {a, b};
    m_iter it;
    m_iter_init(&it, rank, dims, 2, ins);
    for (uint64_t i = 0; i < n; i++, m_iter_next(&it))
        m_std(o->elem_type, o->data, i,
              un_d(&p, m_ldd(a->elem_type, a->data, (size_t)it.off[0])) *
                  m_ldd(b->elem_type, b->data, (size_t)it.off[1]));
    return NULL;
}

static tsr_status *ref_math_isinf(ref_ctx *c) {
    unp p = {U_ISINF, 0, 0, 0, ref_attr_int(c, "detect_positive", 1) != 0,
             ref_attr_int(c, "detect_negative", 1) != 0};
    return unary_p(c, &p);
}
static tsr_status *ref_math_gelu(ref_ctx *c) {
    const char *approx = ref_attr_str(c, "approximate", "none");
    unp p = {U_GELU, 0, 0, 0, false, false};
    if (str_eq(approx, "tanh")) p.op = U_GELU_TANH;
    else if (!str_eq(approx, "none"))
        return ref_err(c, TSR_ERR_INVALID_MODEL, "approximate must be none or tanh, not '%s'",
                       approx);
    return unary_p(c, &p);
}

/* ======================================================================== */
/* Clip and Where                                                            */

/* A scalar bound: `t` holds one element (numel 0 means absent, which some
 * exporters emit for "no bound"). */
static bool bound_present(const tsr_tensor *t) { return t && ref_numel(t) > 0; }

static tsr_status *ref_math_clip(ref_ctx *c) {
    tsr_status *st = need_inputs(c, 1);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0);
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls == MC_NONE || t == TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    const tsr_tensor *tmin = NULL, *tmax = NULL;
    bool old = ref_opset(c) < 11;
    if (!old) {
        tmin = ref_in(c, 1);
        tmax = ref_in(c, 2);
        if (tmin && ref_numel(tmin) > 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "min must be a scalar");
        if (tmax && ref_numel(tmax) > 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "max must be a scalar");
    }
    tsr_tensor *o;
    st = ref_out(c, 0, t, x->rank, x->dims, &o);
    if (st) return st;
    uint64_t n = ref_numel(x);
    if (cls == MC_F32 || cls == MC_F64) {
        double lo = -INFINITY, hi = INFINITY;
        if (old) {
            lo = ref_attr_float(c, "min", -FLT_MAX);
            hi = ref_attr_float(c, "max", FLT_MAX);
        } else {
            if (bound_present(tmin)) lo = m_ldd(tmin->elem_type, tmin->data, 0);
            if (bound_present(tmax)) hi = m_ldd(tmax->elem_type, tmax->data, 0);
        }
        if (t == TSR_FLOAT) {
            const float *a = x->data;
            float *b = o->data;
            float flo = (float)lo, fhi = (float)hi;
            for (uint64_t i = 0; i < n; i++) {
                float v = a[i] < flo ? flo : a[i];
                b[i] = v > fhi ? fhi : v;
            }
            return NULL;
        }
        for (uint64_t i = 0; i < n; i++) {
            double v = m_ldd(t, x->data, i);
            v = v < lo ? lo : v;
            m_std(t, o->data, i, v > hi ? hi : v);
        }
        return NULL;
    }
    if (cls == MC_U64) {
        uint64_t lo = 0, hi = UINT64_MAX;
        if (bound_present(tmin)) lo = m_ldu(tmin->elem_type, tmin->data, 0);
        if (bound_present(tmax)) hi = m_ldu(tmax->elem_type, tmax->data, 0);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = m_ldu(t, x->data, i);
            v = v < lo ? lo : v;
            m_stu(t, o->data, i, v > hi ? hi : v);
        }
        return NULL;
    }
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (bound_present(tmin)) lo = m_ldi(tmin->elem_type, tmin->data, 0);
    if (bound_present(tmax)) hi = m_ldi(tmax->elem_type, tmax->data, 0);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = m_ldi(t, x->data, i);
        v = v < lo ? lo : v;
        m_sti(t, o->data, i, v > hi ? hi : v);
    }
    return NULL;
}

static tsr_status *ref_math_where(ref_ctx *c) {
    tsr_status *st = need_inputs(c, 3);
    if (st) return st;
    const tsr_tensor *cond = ref_in(c, 0), *x = ref_in(c, 1), *y = ref_in(c, 2);
    if (x->elem_type != y->elem_type)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "X and Y have different element types");
    if (cond->elem_type != TSR_BOOL) /* read a byte per element below */
        return ref_err(c, TSR_ERR_INVALID_MODEL, "condition has element type %d, not bool", (int)cond->elem_type);
    int32_t r1, rank;
    int64_t d1[REF_MAX_RANK], dims[REF_MAX_RANK];
    if (!ref_broadcast_shape(cond->rank, cond->dims, x->rank, x->dims, &r1, d1))
        return shape_err(c, cond, x);
    if (!ref_broadcast_shape(r1, d1, y->rank, y->dims, &rank, dims)) return shape_err(c, x, y);
    tsr_tensor *o;
    st = ref_out(c, 0, x->elem_type, rank, dims, &o);
    if (st) return st;
    uint64_t n = ref_numel(o);
    const tsr_tensor *ins[3] = {cond, x, y};
    m_iter it;
    m_iter_init(&it, rank, dims, 3, ins);
    const uint8_t *pc = cond->data;
    if (x->elem_type == TSR_STRING) {
        /* Strings are owned by the output tensor; the host copies them in. */
        const tsr_string *sx = x->data, *sy = y->data;
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it)) {
            const tsr_string *s = pc[it.off[0]] ? &sx[it.off[1]] : &sy[it.off[2]];
            st = c->host->tensor_set_string(o, i, s->data, s->size);
            if (st) return st;
        }
        return NULL;
    }
    size_t es = ref_elem_size(x->elem_type);
    if (es == 0)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported",
                       (int)x->elem_type);
    char *po = o->data;
    const char *px = x->data, *py = y->data;
    if (n == 0) return NULL;
    if (es == 4 && rank > 0) {
        /* by rows, the last axis an inner loop (an attention mask picks
         * among 200,000 scores a layer) */
        int64_t inner = dims[rank - 1];
        int64_t sc = it.st[0][rank - 1], sx = it.st[1][rank - 1], sy = it.st[2][rank - 1];
        it.rank = rank - 1;
        const uint32_t *wx = (const void *)px, *wy = (const void *)py;
        uint32_t *wo = (void *)po;
        for (uint64_t r = 0; r < n / (uint64_t)inner; r++) {
            const uint8_t *rc = pc + it.off[0];
            const uint32_t *rx = wx + it.off[1], *ry = wy + it.off[2];
            uint32_t *ro = wo + r * (uint64_t)inner;
            for (int64_t i = 0; i < inner; i++) ro[i] = rc[i * sc] ? rx[i * sx] : ry[i * sy];
            m_iter_next(&it);
        }
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++, m_iter_next(&it)) {
        const char *src = pc[it.off[0]] ? px + (size_t)it.off[1] * es : py + (size_t)it.off[2] * es;
        memcpy(po + i * es, src, es);
    }
    return NULL;
}

/* Det: determinant of each trailing [M, M] matrix, by Gaussian elimination
 * with partial pivoting in double. */
static tsr_status *ref_math_det(ref_ctx *c) {
    tsr_status *st = need_inputs(c, 1);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0);
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls != MC_F32 && cls != MC_F64)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be [..., M, M]");
    int64_t m = x->dims[x->rank - 1];
    tsr_tensor *o;
    st = ref_out(c, 0, t, x->rank - 2, x->dims, &o);
    if (st) return st;
    uint64_t batch = m_prod(x->rank - 2, x->dims);
    double *a = malloc(sizeof(double) * (size_t)(m > 0 ? m * m : 1));
    if (!a) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (uint64_t bi = 0; bi < batch; bi++) {
        size_t base = (size_t)(bi * (uint64_t)(m * m));
        for (int64_t i = 0; i < m * m; i++) a[i] = m_ldd(t, x->data, base + (size_t)i);
        double det = 1.0;
        for (int64_t k = 0; k < m && det != 0; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < m; i++)
                if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
            if (a[p * m + k] == 0) {
                det = 0;
                break;
            }
            if (p != k) {
                for (int64_t j = 0; j < m; j++) {
                    double tmp = a[k * m + j];
                    a[k * m + j] = a[p * m + j];
                    a[p * m + j] = tmp;
                }
                det = -det;
            }
            det *= a[k * m + k];
            for (int64_t i = k + 1; i < m; i++) {
                double f = a[i * m + k] / a[k * m + k];
                for (int64_t j = k; j < m; j++) a[i * m + j] -= f * a[k * m + j];
            }
        }
        m_std(t, o->data, (size_t)bi, det);
    }
    free(a);
    return NULL;
}

/* ======================================================================== */
/* Claim-time checks                                                         */

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
    case TSR_FLOAT: case TSR_DOUBLE: case TSR_FLOAT16: case TSR_BFLOAT16: return T_F;
    case TSR_INT8: case TSR_INT16: case TSR_INT32: case TSR_INT64: return T_SI;
    case TSR_UINT8: case TSR_UINT16: case TSR_UINT32: case TSR_UINT64: return T_UI;
    case TSR_BOOL: return T_B;
    case TSR_STRING: return T_S;
    default: return 0;
    }
}

static const char *type_name(int32_t t) {
    static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
                                  "int32", "int64", "string", "bool", "float16", "double",
                                  "uint32", "uint64", "complex64", "complex128", "bfloat16",
                                  "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
                                  "float8e5m2fnuz", "uint4", "int4", "float4e2m1",
                                  "float8e8m0", "uint2", "int2"};
    if (t >= 0 && (size_t)t < sizeof names / sizeof names[0]) return names[t];
    return "unknown";
}

/* Which element types input 0 (and, for `all`, every input) may have. */
typedef struct type_rule {
    const char *op;
    int mask;
    bool all; /* every input, not only the first, must be in mask */
} type_rule;

static const type_rule type_rules[] = {
    {"Abs", T_NUM, false}, {"Neg", T_F | T_SI, false}, {"Sign", T_NUM, false},
    {"Relu", T_F | T_SI, false}, {"Not", T_B, false}, {"BitwiseNot", T_INT, false},
    {"Shrink", T_NUM, false}, {"IsNaN", T_F, false}, {"IsInf", T_F, false},
    {"Add", T_NUM, true}, {"Sub", T_NUM, true}, {"Mul", T_NUM, true}, {"Div", T_NUM, true},
    {"Mod", T_NUM, true}, {"Pow", T_NUM, true}, {"Max", T_NUM, true}, {"Min", T_NUM, true},
    {"Sum", T_NUM, true}, {"Mean", T_NUM, true}, {"PRelu", T_NUM, true},
    {"And", T_B, true}, {"Or", T_B, true}, {"Xor", T_B, true},
    {"Equal", T_NUM | T_B | T_S, true}, {"Less", T_NUM | T_B, true},
    {"Greater", T_NUM | T_B, true}, {"LessOrEqual", T_NUM | T_B, true},
    {"GreaterOrEqual", T_NUM | T_B, true}, {"BitShift", T_UI, true},
    {"BitwiseAnd", T_INT, true}, {"BitwiseOr", T_INT, true}, {"BitwiseXor", T_INT, true},
    {"Clip", T_NUM, false}, {"SwiGLU", T_F, true}, {"Einsum", T_NUM, true},
    {"ReduceSum", T_NUM, false}, {"ReduceMean", T_NUM, false},
    {"ReduceMax", T_NUM | T_B, false}, {"ReduceMin", T_NUM | T_B, false},
    {"ReduceProd", T_NUM, false}, {"ReduceL1", T_NUM, false}, {"ReduceL2", T_NUM, false},
    {"ReduceLogSum", T_NUM, false}, {"ReduceLogSumExp", T_NUM, false},
    {"ReduceSumSquare", T_NUM, false}, {"ArgMax", T_NUM, false}, {"ArgMin", T_NUM, false},
    {NULL, 0, false}};

static int check_types(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    const char *op = h->node_op_type(node);
    int mask = T_F; /* the float-only unary operators */
    bool all = false;
    for (const type_rule *r = type_rules; r->op; r++)
        if (str_eq(r->op, op)) {
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

static int check_where(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    if (h->node_input_count(node) < 3) return 0;
    const tsr_value_info *v = h->node_input(node, 1);
    int32_t t = v ? h->value_elem_type(v) : 0;
    if (t != TSR_UNDEFINED && t != TSR_STRING && ref_elem_size(t) == 0) {
        snprintf(why, why_size, "Where on %s is not implemented", type_name(t));
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* ======================================================================== */
/* The table                                                                 */

#define OP(name, fn, chk) {"", name, 1, fn, chk}

const ref_op ref_ops_math[] = {
    OP("Abs", ref_math_abs, check_types),
    OP("Neg", ref_math_neg, check_types),
    OP("Floor", ref_math_floor, check_types),
    OP("Ceil", ref_math_ceil, check_types),
    OP("Round", ref_math_round, check_types),
    OP("Sqrt", ref_math_sqrt, check_types),
    OP("Reciprocal", ref_math_reciprocal, check_types),
    OP("Exp", ref_math_exp, check_types),
    OP("Log", ref_math_log, check_types),
    OP("Sin", ref_math_sin, check_types),
    OP("Cos", ref_math_cos, check_types),
    OP("Tan", ref_math_tan, check_types),
    OP("Asin", ref_math_asin, check_types),
    OP("Acos", ref_math_acos, check_types),
    OP("Atan", ref_math_atan, check_types),
    OP("Sinh", ref_math_sinh, check_types),
    OP("Cosh", ref_math_cosh, check_types),
    OP("Asinh", ref_math_asinh, check_types),
    OP("Acosh", ref_math_acosh, check_types),
    OP("Atanh", ref_math_atanh, check_types),
    OP("Tanh", ref_math_tanh, check_types),
    OP("Sigmoid", ref_math_sigmoid, check_types),
    OP("Relu", ref_math_relu, check_types),
    OP("LeakyRelu", ref_math_leaky_relu, check_types),
    OP("Elu", ref_math_elu, check_types),
    OP("Selu", ref_math_selu, check_types),
    OP("Celu", ref_math_celu, check_types),
    OP("Softplus", ref_math_softplus, check_types),
    OP("Softsign", ref_math_softsign, check_types),
    OP("HardSigmoid", ref_math_hard_sigmoid, check_types),
    OP("HardSwish", ref_math_hardswish, check_types),
    OP("Mish", ref_math_mish, check_types),
    OP("Gelu", ref_math_gelu, check_types),
    OP("Erf", ref_math_erf, check_types),
    OP("Sign", ref_math_sign, check_types),
    OP("IsNaN", ref_math_isnan, check_types),
    OP("IsInf", ref_math_isinf, check_types),
    OP("Not", ref_math_not, check_types),
    OP("BitwiseNot", ref_math_bitwise_not, check_types),
    OP("ThresholdedRelu", ref_math_thresholded_relu, check_types),
    OP("Shrink", ref_math_shrink, check_types),
    OP("Swish", ref_math_swish, check_types),
    OP("SwiGLU", ref_math_swiglu, check_types),
    OP("Det", ref_math_det, check_types),
    OP("Einsum", ref_math_einsum, check_types),

    OP("Add", ref_math_add, check_types),
    OP("Sub", ref_math_sub, check_types),
    OP("Mul", ref_math_mul, check_types),
    OP("Div", ref_math_div, check_types),
    OP("Pow", ref_math_pow, check_types),
    OP("Mod", ref_math_mod, check_types),
    OP("Max", ref_math_max, check_types),
    OP("Min", ref_math_min, check_types),
    OP("Sum", ref_math_sum, check_types),
    OP("Mean", ref_math_mean, check_types),
    OP("And", ref_math_and, check_types),
    OP("Or", ref_math_or, check_types),
    OP("Xor", ref_math_xor, check_types),
    OP("Equal", ref_math_equal, check_types),
    OP("Less", ref_math_less, check_types),
    OP("Greater", ref_math_greater, check_types),
    OP("LessOrEqual", ref_math_less_equal, check_types),
    OP("GreaterOrEqual", ref_math_greater_equal, check_types),
    OP("BitShift", ref_math_bitshift, check_types),
    OP("BitwiseAnd", ref_math_bitwise_and, check_types),
    OP("BitwiseOr", ref_math_bitwise_or, check_types),
    OP("BitwiseXor", ref_math_bitwise_xor, check_types),
    OP("PRelu", ref_math_prelu, check_types),

    OP("Clip", ref_math_clip, check_types),
    OP("Where", ref_math_where, check_where),

    OP("Cast", ref_math_cast, ref_math_cast_check),
    OP("CastLike", ref_math_castlike, ref_math_cast_check),
    OP("BitCast", ref_math_bitcast, ref_math_cast_check),

    OP("ReduceSum", ref_math_reduce_sum, check_types),
    OP("ReduceMean", ref_math_reduce_mean, check_types),
    OP("ReduceMax", ref_math_reduce_max, check_types),
    OP("ReduceMin", ref_math_reduce_min, check_types),
    OP("ReduceProd", ref_math_reduce_prod, check_types),
    OP("ReduceL1", ref_math_reduce_l1, check_types),
    OP("ReduceL2", ref_math_reduce_l2, check_types),
    OP("ReduceLogSum", ref_math_reduce_log_sum, check_types),
    OP("ReduceLogSumExp", ref_math_reduce_log_sum_exp, check_types),
    OP("ReduceSumSquare", ref_math_reduce_sum_square, check_types),
    OP("ArgMax", ref_math_argmax, check_types),
    OP("ArgMin", ref_math_argmin, check_types),
    OP("Softmax", ref_math_softmax, check_types),
    OP("LogSoftmax", ref_math_log_softmax, check_types),
    OP("Hardmax", ref_math_hardmax, check_types),

    {NULL, NULL, 0, NULL, NULL}};
