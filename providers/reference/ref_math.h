/*
 * The math family of the reference provider: its table is in
 * ref_ops_math.c, its kernels (ref_math_<op>) in ref_math_*.c, one file per
 * group of ops, and its claim-time checks in ref_math_check.c. This header
 * declares them all, so the compiler checks the table and the definitions
 * against one prototype, and holds what the kernels share: element access
 * by compute class and an n-ary broadcast iterator.
 *
 * Why our own loaders next to ref_load/ref_store: the math kernels need
 * exact int64 and uint64 arithmetic (a double holds only 53 bits) and a
 * float path that does not widen float32 to double per element; these are
 * small inline switches the compiler can hoist out of loops.
 */
#ifndef TESSERA_REF_MATH_H
#define TESSERA_REF_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref.h"

/* Forced inlining where a per-element switch must fold into its loop. */
#if defined(__GNUC__)
#define M_INLINE static inline __attribute__((always_inline))
#else
#define M_INLINE static inline
#endif

/* How elements are computed: float16/bfloat16 go through float as numpy
 * does; every integer type but uint64 fits int64 exactly; bool is 0/1. */
enum { MC_NONE = 0, MC_F32, MC_F64, MC_I64, MC_U64 };

static inline bool m_str_eq(const char *a, const char *b) { return strcmp(a, b) == 0; }

static inline int m_class(int32_t t) {
    switch (t) {
    case TSR_FLOAT:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return MC_F32;
    case TSR_DOUBLE: return MC_F64;
    case TSR_INT8:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
    case TSR_UINT8:
    case TSR_UINT16:
    case TSR_UINT32:
    case TSR_BOOL: return MC_I64;
    case TSR_UINT64: return MC_U64;
    default: return MC_NONE;
    }
}

/* Float to integer the way C casts do, but defined for NaN and values out
 * of range (a C cast of those is undefined behaviour): NaN gives 0, the
 * rest saturate to int64 before the caller narrows. */
static inline int64_t m_d2i(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
static inline uint64_t m_d2u(double v) {
    if (v != v) return 0;
    if (v < 0) return (uint64_t)m_d2i(v); /* wraps like numpy on x86 */
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    return (uint64_t)v;
}

static inline double m_ldd(int32_t t, const void *d, size_t i) {
    switch (t) {
    case TSR_FLOAT: return ((const float *)d)[i];
    case TSR_DOUBLE: return ((const double *)d)[i];
    case TSR_FLOAT16: return ref_half_to_float(((const uint16_t *)d)[i]);
    case TSR_BFLOAT16: return ref_bf16_to_float(((const uint16_t *)d)[i]);
    case TSR_INT8: return ((const int8_t *)d)[i];
    case TSR_INT16: return ((const int16_t *)d)[i];
    case TSR_INT32: return ((const int32_t *)d)[i];
    case TSR_INT64: return (double)((const int64_t *)d)[i];
    case TSR_UINT8:
    case TSR_BOOL: return ((const uint8_t *)d)[i];
    case TSR_UINT16: return ((const uint16_t *)d)[i];
    case TSR_UINT32: return ((const uint32_t *)d)[i];
    case TSR_UINT64: return (double)((const uint64_t *)d)[i];
    default: return ref_load(t, d, i);
    }
}

static inline float m_ldf(int32_t t, const void *d, size_t i) {
    switch (t) {
    case TSR_FLOAT: return ((const float *)d)[i];
    case TSR_FLOAT16: return ref_half_to_float(((const uint16_t *)d)[i]);
    case TSR_BFLOAT16: return ref_bf16_to_float(((const uint16_t *)d)[i]);
    case TSR_INT64: return (float)((const int64_t *)d)[i];
    case TSR_UINT64: return (float)((const uint64_t *)d)[i];
    default: return (float)m_ldd(t, d, i);
    }
}

static inline int64_t m_ldi(int32_t t, const void *d, size_t i) {
    switch (t) {
    case TSR_INT8: return ((const int8_t *)d)[i];
    case TSR_INT16: return ((const int16_t *)d)[i];
    case TSR_INT32: return ((const int32_t *)d)[i];
    case TSR_INT64: return ((const int64_t *)d)[i];
    case TSR_UINT8:
    case TSR_BOOL: return ((const uint8_t *)d)[i];
    case TSR_UINT16: return ((const uint16_t *)d)[i];
    case TSR_UINT32: return ((const uint32_t *)d)[i];
    case TSR_UINT64: return (int64_t)((const uint64_t *)d)[i];
    default: return m_d2i(m_ldd(t, d, i));
    }
}

static inline uint64_t m_ldu(int32_t t, const void *d, size_t i) {
    switch (t) {
    case TSR_UINT64: return ((const uint64_t *)d)[i];
    case TSR_FLOAT:
    case TSR_DOUBLE:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return m_d2u(m_ldd(t, d, i));
    default: return (uint64_t)m_ldi(t, d, i);
    }
}

/* Integer stores wrap (two's complement), as numpy's astype does. */
static inline void m_stu(int32_t t, void *d, size_t i, uint64_t v) {
    switch (t) {
    case TSR_INT8:
    case TSR_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; break;
    case TSR_INT16:
    case TSR_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    case TSR_INT32:
    case TSR_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; break;
    case TSR_INT64:
    case TSR_UINT64: ((uint64_t *)d)[i] = v; break;
    case TSR_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case TSR_FLOAT: ((float *)d)[i] = (float)v; break;
    case TSR_DOUBLE: ((double *)d)[i] = (double)v; break;
    case TSR_FLOAT16: ((uint16_t *)d)[i] = ref_float_to_half((float)v); break;
    case TSR_BFLOAT16: ((uint16_t *)d)[i] = ref_float_to_bf16((float)v); break;
    default: ref_store(t, d, i, (double)v); break;
    }
}

static inline void m_sti(int32_t t, void *d, size_t i, int64_t v) {
    switch (t) {
    case TSR_FLOAT: ((float *)d)[i] = (float)v; break;
    case TSR_DOUBLE: ((double *)d)[i] = (double)v; break;
    case TSR_FLOAT16: ((uint16_t *)d)[i] = ref_float_to_half((float)v); break;
    case TSR_BFLOAT16: ((uint16_t *)d)[i] = ref_float_to_bf16((float)v); break;
    default: m_stu(t, d, i, (uint64_t)v); break;
    }
}

static inline void m_std(int32_t t, void *d, size_t i, double v) {
    switch (t) {
    case TSR_FLOAT: ((float *)d)[i] = (float)v; break;
    case TSR_DOUBLE: ((double *)d)[i] = v; break;
    case TSR_FLOAT16: ((uint16_t *)d)[i] = ref_float_to_half((float)v); break;
    case TSR_BFLOAT16: ((uint16_t *)d)[i] = ref_float_to_bf16((float)v); break;
    case TSR_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case TSR_UINT64: ((uint64_t *)d)[i] = m_d2u(v); break;
    default: m_stu(t, d, i, (uint64_t)m_d2i(v)); break;
    }
}

static inline void m_stf(int32_t t, void *d, size_t i, float v) {
    switch (t) {
    case TSR_FLOAT: ((float *)d)[i] = v; break;
    case TSR_FLOAT16: ((uint16_t *)d)[i] = ref_float_to_half(v); break;
    case TSR_BFLOAT16: ((uint16_t *)d)[i] = ref_float_to_bf16(v); break;
    default: m_std(t, d, i, v); break;
    }
}

/* Walks an output shape in row-major order keeping, for up to three
 * inputs, the element offset that broadcasting maps each position to.
 * Incremental, so a step costs O(1) amortised instead of a divide per axis. */
#define M_ITER_MAX 3
typedef struct m_iter {
    int32_t rank;
    int n;
    int64_t dims[REF_MAX_RANK];
    int64_t idx[REF_MAX_RANK];
    int64_t st[M_ITER_MAX][REF_MAX_RANK];
    int64_t off[M_ITER_MAX];
} m_iter;

static inline void m_iter_init(m_iter *it, int32_t rank, const int64_t *dims, int n, const tsr_tensor *const *ins) {
    it->rank = rank;
    it->n = n;
    for (int32_t d = 0; d < rank; d++) {
        it->dims[d] = dims[d];
        it->idx[d] = 0;
    }
    for (int k = 0; k < n; k++) {
        ref_broadcast_strides(ins[k]->rank, ins[k]->dims, rank, dims, it->st[k]);
        it->off[k] = 0;
    }
}

static inline void m_iter_next(m_iter *it) {
    for (int32_t d = it->rank - 1; d >= 0; d--) {
        it->idx[d]++;
        for (int k = 0; k < it->n; k++) it->off[k] += it->st[k][d];
        if (it->idx[d] < it->dims[d]) return;
        for (int k = 0; k < it->n; k++) it->off[k] -= it->st[k][d] * it->dims[d];
        it->idx[d] = 0;
    }
}

static inline uint64_t m_prod(int32_t rank, const int64_t *dims) {
    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= (uint64_t)dims[d];
    return n;
}

/* Element conversions defined in ref_math_cast.c, shared with the
 * quantization kernels so both round and saturate identically. */
typedef struct f8fmt f8fmt;
/* The float8 format of element type t, or NULL when t is not a float8 type
 * with a sign, exponent and mantissa (float8e8m0 is not). */
const f8fmt *ref_f8_format(int32_t t);
double ref_f8_decode(const f8fmt *f, uint8_t v);
/* Nearest even; out-of-range values saturate to the largest finite value
 * when `saturate`, else become infinity or NaN as the format has them. */
uint8_t ref_f8_encode(const f8fmt *f, double x, bool saturate);
double ref_e8m0_decode(uint8_t v);
double ref_f4_decode(uint8_t v);
uint8_t ref_f4_encode(double x);
/* Element i of a packed tensor of `bits`-bit elements (lowest bits first). */
uint8_t ref_sub_get(const void *data, size_t i, int bits);
void ref_sub_set(void *data, size_t i, int bits, uint8_t v);

/* Shared by the kernels, defined in ref_math_binary.c: an error unless
 * inputs 0..n-1 are present, and the error for shapes that do not
 * broadcast (naming both). */
tsr_status *ref_math_need_inputs(ref_ctx *c, size_t n);
tsr_status *ref_math_shape_err(ref_ctx *c, const tsr_tensor *a, const tsr_tensor *b);

/* Kernels defined in ref_math_binary.c. */
tsr_status *ref_math_add(ref_ctx *c);
tsr_status *ref_math_sub(ref_ctx *c);
tsr_status *ref_math_mul(ref_ctx *c);
tsr_status *ref_math_div(ref_ctx *c);
tsr_status *ref_math_pow(ref_ctx *c);
tsr_status *ref_math_and(ref_ctx *c);
tsr_status *ref_math_or(ref_ctx *c);
tsr_status *ref_math_xor(ref_ctx *c);
tsr_status *ref_math_equal(ref_ctx *c);
tsr_status *ref_math_less(ref_ctx *c);
tsr_status *ref_math_greater(ref_ctx *c);
tsr_status *ref_math_less_equal(ref_ctx *c);
tsr_status *ref_math_greater_equal(ref_ctx *c);
tsr_status *ref_math_bitwise_and(ref_ctx *c);
tsr_status *ref_math_bitwise_or(ref_ctx *c);
tsr_status *ref_math_bitwise_xor(ref_ctx *c);
tsr_status *ref_math_prelu(ref_ctx *c);
tsr_status *ref_math_mod(ref_ctx *c);
tsr_status *ref_math_bitshift(ref_ctx *c);
tsr_status *ref_math_max(ref_ctx *c);
tsr_status *ref_math_min(ref_ctx *c);
tsr_status *ref_math_sum(ref_ctx *c);
tsr_status *ref_math_mean(ref_ctx *c);
/* Kernels defined in ref_math_unary.c. */
tsr_status *ref_math_abs(ref_ctx *c);
tsr_status *ref_math_neg(ref_ctx *c);
tsr_status *ref_math_floor(ref_ctx *c);
tsr_status *ref_math_ceil(ref_ctx *c);
tsr_status *ref_math_round(ref_ctx *c);
tsr_status *ref_math_sqrt(ref_ctx *c);
tsr_status *ref_math_reciprocal(ref_ctx *c);
tsr_status *ref_math_exp(ref_ctx *c);
tsr_status *ref_math_log(ref_ctx *c);
tsr_status *ref_math_sin(ref_ctx *c);
tsr_status *ref_math_cos(ref_ctx *c);
tsr_status *ref_math_tan(ref_ctx *c);
tsr_status *ref_math_asin(ref_ctx *c);
tsr_status *ref_math_acos(ref_ctx *c);
tsr_status *ref_math_atan(ref_ctx *c);
tsr_status *ref_math_sinh(ref_ctx *c);
tsr_status *ref_math_cosh(ref_ctx *c);
tsr_status *ref_math_asinh(ref_ctx *c);
tsr_status *ref_math_acosh(ref_ctx *c);
tsr_status *ref_math_atanh(ref_ctx *c);
tsr_status *ref_math_tanh(ref_ctx *c);
tsr_status *ref_math_sigmoid(ref_ctx *c);
tsr_status *ref_math_relu(ref_ctx *c);
tsr_status *ref_math_softplus(ref_ctx *c);
tsr_status *ref_math_softsign(ref_ctx *c);
tsr_status *ref_math_hardswish(ref_ctx *c);
tsr_status *ref_math_mish(ref_ctx *c);
tsr_status *ref_math_erf(ref_ctx *c);
tsr_status *ref_math_sign(ref_ctx *c);
tsr_status *ref_math_isnan(ref_ctx *c);
tsr_status *ref_math_not(ref_ctx *c);
tsr_status *ref_math_bitwise_not(ref_ctx *c);
tsr_status *ref_math_leaky_relu(ref_ctx *c);
tsr_status *ref_math_elu(ref_ctx *c);
tsr_status *ref_math_selu(ref_ctx *c);
tsr_status *ref_math_celu(ref_ctx *c);
tsr_status *ref_math_hard_sigmoid(ref_ctx *c);
tsr_status *ref_math_thresholded_relu(ref_ctx *c);
tsr_status *ref_math_shrink(ref_ctx *c);
tsr_status *ref_math_swish(ref_ctx *c);
tsr_status *ref_math_swiglu(ref_ctx *c);
tsr_status *ref_math_isinf(ref_ctx *c);
tsr_status *ref_math_gelu(ref_ctx *c);
/* Kernels defined in ref_math_where.c. */
tsr_status *ref_math_clip(ref_ctx *c);
tsr_status *ref_math_where(ref_ctx *c);
/* Kernels defined in ref_math_det.c. */
tsr_status *ref_math_det(ref_ctx *c);

/* Kernels defined in ref_math_cast.c. */
tsr_status *ref_math_cast(ref_ctx *c);
tsr_status *ref_math_castlike(ref_ctx *c);
tsr_status *ref_math_bitcast(ref_ctx *c);
int ref_math_cast_check(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* Defined in ref_math_einsum.c. */
tsr_status *ref_math_einsum(ref_ctx *c);

/* Kernels defined in ref_math_reduce.c. */
tsr_status *ref_math_reduce_sum(ref_ctx *c);
tsr_status *ref_math_reduce_mean(ref_ctx *c);
tsr_status *ref_math_reduce_max(ref_ctx *c);
tsr_status *ref_math_reduce_min(ref_ctx *c);
tsr_status *ref_math_reduce_prod(ref_ctx *c);
tsr_status *ref_math_reduce_l1(ref_ctx *c);
tsr_status *ref_math_reduce_l2(ref_ctx *c);
tsr_status *ref_math_reduce_log_sum(ref_ctx *c);
tsr_status *ref_math_reduce_log_sum_exp(ref_ctx *c);
tsr_status *ref_math_reduce_sum_square(ref_ctx *c);
tsr_status *ref_math_argmax(ref_ctx *c);
tsr_status *ref_math_argmin(ref_ctx *c);
tsr_status *ref_math_softmax(ref_ctx *c);
tsr_status *ref_math_log_softmax(ref_ctx *c);
tsr_status *ref_math_hardmax(ref_ctx *c);

/* Claim-time checks (ref_math_check.c): the element types each operator's
 * kernel implements (check_types), and Where's value type. */
int ref_math_check_types(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size);
int ref_math_check_where(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size);

#endif
