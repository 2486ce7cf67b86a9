/*
 * Shared by the quantization kernels (ref_ops_quant.c, ref_quant_*.c) and by
 * nothing else: element access for every type a quantized tensor can have,
 * rounding to a float type's precision, how a scale or zero point maps onto
 * the tensor it describes, and size checks.
 *
 * Values travel as double: every 8/16/32-bit integer, float8, float4 and
 * float16 value is exact in a double, so only the explicit rounding steps
 * below round.
 */
#ifndef TESSERA_REF_QUANT_H
#define TESSERA_REF_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ref.h"

/* --- element types ------------------------------------------------------ */
/* Whether rq_load can read element type t. */
bool rq_loadable(int32_t t);
/* A type QuantizeLinear can produce (and DequantizeLinear read, with int32). */
bool rq_is_quant_type(int32_t t);
/* A float type a scale or a dequantized output can have. */
bool rq_is_scale_type(int32_t t);
bool rq_is_float_out_type(int32_t t);
/* Bits per element of a packed type (int4, uint4, float4e2m1: 4; int2,
 * uint2: 2), 0 for the others. */
int rq_packed_bits(int32_t t);
const char *rq_type_name(int32_t t);

/* Element i of t as a double (float8, float4 and packed integers decoded). */
double rq_load(int32_t t, const void *data, size_t i);
/* Stores v in float type t (float, double, float16, bfloat16) rounded once
 * to nearest even. */
void rq_store_float(int32_t t, void *data, size_t i, double v);
/* v rounded to the precision of type t: float16 and bfloat16 exactly (no
 * double rounding through float), float types and float8e8m0 to float,
 * double and integer types unchanged. */
double rq_round_to(int32_t t, double v);

/* Stores the quantized value of q (= x / scale, already in the division's
 * precision) with zero point zp in quantized type t: integers round q to
 * nearest even, add zp and saturate (NaN counts as 0); float8 types encode
 * q + zp with or without saturation; float4e2m1 always saturates. */
void rq_quant_store(int32_t t, void *data, size_t i, double q, double zp, bool saturate);

/* --- sizes -------------------------------------------------------------- */
/* Largest element count a kernel allocates a working array for. */
#define RQ_MAX_ELEMS ((uint64_t)1 << 40)
/* a * b into *out; false on overflow or beyond RQ_MAX_ELEMS. */
bool rq_mul_size(uint64_t a, uint64_t b, uint64_t *out);
/* An error unless t holds at least numel elements of its type in host
 * memory (`what` names the input). */
tsr_status *rq_check_tensor(ref_ctx *c, const tsr_tensor *t, const char *what);
/* Output tensors of packed types start with every byte zero so elements
 * can be set one nibble at a time. */
void rq_clear_packed(tsr_tensor *t);

/* --- scales and zero points --------------------------------------------- */
/* How the elements of a scale (and its zero point) map onto x: per tensor,
 * per slice along `axis`, or per block of `block` slices along `axis`. */
typedef struct rq_layout {
    int kind;          /* RQ_PER_TENSOR, RQ_PER_AXIS, RQ_BLOCKED */
    uint64_t inner;    /* elements of x after the axis */
    uint64_t axis_len; /* x's extent along the axis */
    uint64_t groups;   /* scale's extent along the axis */
    uint64_t block;    /* slices per scale element (1 per axis) */
} rq_layout;
enum { RQ_PER_TENSOR = 0, RQ_PER_AXIS, RQ_BLOCKED };

/* Checks the scale's and zero point's shapes against x and fills *l.
 * block 0 means per tensor or per axis (by the scale's shape);
 * per_axis_ok is false for opsets where only a scalar scale exists. */
tsr_status *rq_layout_init(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *scale, const tsr_tensor *zero_point,
                           int64_t axis, int64_t block, bool per_axis_ok, rq_layout *l);
/* Index into the scale of element i of x. */
static inline size_t rq_layout_index(const rq_layout *l, uint64_t i) {
    if (l->kind == RQ_PER_TENSOR) return 0;
    uint64_t a = (i / l->inner) % l->axis_len;
    if (l->kind == RQ_PER_AXIS) return (size_t)a;
    uint64_t outer = i / (l->inner * l->axis_len), in = i % l->inner;
    return (size_t)((outer * l->groups + a / l->block) * l->inner + in);
}

/* The values of p (any loadable type) broadcast numpy-style to the shape
 * (rank, dims), as a malloc'd array the caller frees; p NULL gives zeros.
 * `what` names p in errors. */
tsr_status *rq_broadcast_values(ref_ctx *c, const tsr_tensor *p, int32_t rank, const int64_t *dims, const char *what,
                                double **out);

/* --- kernels (ref_quant_*.c) -------------------------------------------- */
/* Named ref_quant_<op> like every family's kernels (ref.h); the rq_
 * prefix above marks helpers private to this family. */
tsr_status *ref_quant_quantize_linear(ref_ctx *c);
tsr_status *ref_quant_dequantize_linear(ref_ctx *c);
tsr_status *ref_quant_dynamic_quantize_linear(ref_ctx *c);
tsr_status *ref_quant_matmul_integer(ref_ctx *c);
tsr_status *ref_quant_qlinear_matmul(ref_ctx *c);
tsr_status *ref_quant_conv_integer(ref_ctx *c);
tsr_status *ref_quant_qlinear_conv(ref_ctx *c);

#endif
