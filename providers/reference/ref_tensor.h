/*
 * The tensor family of the reference provider (shape and data movement):
 * its table is in ref_ops_tensor.c, its kernels (ref_tensor_<op>) in
 * ref_tensor_*.c, one file per group of ops, and what they share in
 * ref_tensor_util.c: element moves that know strings and the packed
 * sub-byte types, the view engine, and the claim-time checks.
 *
 * Almost every operator here only moves elements, so they share one engine
 * (ref_tensor_view_run_free): the output is walked in row-major order and,
 * per output axis, a table gives the source element offset contributed by
 * each index along that axis (or MISSING for "write the fill value", as Pad
 * needs). Transpose, Slice, Expand, Tile, Pad, CenterCropPad, Gather,
 * Compress, DepthToSpace and SpaceToDepth are all just different tables.
 * Elements are moved by ref_tensor_mv_copy, the only place that knows about
 * strings (copied through the host, which owns their bytes) and about the
 * packed sub-byte types.
 */
#ifndef TESSERA_REF_TENSOR_H
#define TESSERA_REF_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ref.h"

/* An offset-table entry meaning "no source element: write the fill value". */
#define MISSING INT64_MIN

/* --- elements (ref_tensor_util.c) ---------------------------------------- */
/* Bits per element; 0 for types this family cannot move. Strings count as
 * their descriptor, but are never copied bytewise (see ref_tensor_mv_copy). */
static inline unsigned ref_tensor_type_bits(int32_t t) {
    switch (t) {
    case TSR_UINT4:
    case TSR_INT4:
    case TSR_FLOAT4E2M1: return 4;
    case TSR_UINT2:
    case TSR_INT2: return 2;
    default: return (unsigned)ref_elem_size(t) * 8;
    }
}

static inline uint8_t ref_tensor_get_bits(const void *data, uint64_t i, unsigned bits) {
    unsigned per = 8 / bits;
    const uint8_t *b = data;
    return (uint8_t)((b[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1));
}

static inline void ref_tensor_put_bits(void *data, uint64_t i, unsigned bits, uint8_t v) {
    unsigned per = 8 / bits, shift = (unsigned)(i % per) * bits;
    uint8_t *b = (uint8_t *)data + i / per;
    uint8_t mask = (uint8_t)(((1u << bits) - 1) << shift);
    *b = (uint8_t)((*b & ~mask) | ((unsigned)(v << shift) & mask));
}

static inline uint64_t ref_tensor_dims_count(int32_t rank, const int64_t *dims) {
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= (uint64_t)dims[i];
    return n;
}

/* Product of dims[from..to). */
static inline int64_t ref_tensor_dims_prod(const int64_t *dims, int32_t from, int32_t to) {
    int64_t n = 1;
    for (int32_t i = from; i < to; i++) n *= dims[i];
    return n;
}

/* Wraps a possibly negative index into [0, dim); false when out of range. */
static inline bool ref_tensor_wrap_index(int64_t i, int64_t dim, int64_t *out) {
    if (i < 0) i += dim;
    if (i < 0 || i >= dim) return false;
    *out = i;
    return true;
}

/* A one-element tensor on the stack, for fill values that come from an
 * attribute or default to zero rather than from an input. */
typedef struct scalar {
    tsr_tensor t;
    union {
        unsigned char bytes[16];
        tsr_string s;
        double d;
        int64_t i;
    } u;
} scalar;

/* --- the view engine (ref_tensor_util.c) --------------------------------- */
typedef struct view {
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    int64_t *off[REF_MAX_RANK]; /* off[a][i]: source offset for index i on axis a */
    int64_t *mem;
} view;

/* --- shared helpers and claim-time checks (ref_tensor_util.c) ------------ */
/* Copies n consecutive elements src[si..] to dst[di..]; both of dst's type. */
tsr_status *ref_tensor_mv_copy(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *src, uint64_t si,
                               uint64_t n);
/* Writes element 0 of `val` into dst[di..di+n). */
tsr_status *ref_tensor_mv_fill(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *val, uint64_t n);
/* Zero of type t: all-zero bits are 0 for every numeric type and an empty
 * string for strings. */
const tsr_tensor *ref_tensor_scalar_zero(scalar *s, int32_t t);
/* Allocates output i; packed outputs are zeroed so the padding bits of a
 * last partial byte are deterministic (ref_tensor_put_bits only touches its own). */
tsr_status *ref_tensor_out_new(ref_ctx *c, size_t i, int32_t t, int32_t rank, const int64_t *dims, tsr_tensor **out);
/* Input i, which must be present and of a type ref_tensor_mv_copy can move. */
tsr_status *ref_tensor_need_in(ref_ctx *c, size_t i, const tsr_tensor **out);
tsr_status *ref_tensor_copy_all(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src);
/* An integer list that was an attribute before opset `input_opset` and an
 * input from then on. *have says whether it was given; the caller frees *out. */
tsr_status *ref_tensor_ints_arg(ref_ctx *c, const char *attr, size_t input, int64_t input_opset, int64_t **out,
                                size_t *n, bool *have);
/* Normalises a list of axes against `rank` in place; refuses repeats. */
tsr_status *ref_tensor_norm_axes(ref_ctx *c, int64_t *axes, size_t n, int32_t rank);
/* Allocates the offset tables. Call only for a non-empty output: every dim
 * is then at least 1 and their sum is at most the element count. */
tsr_status *ref_tensor_view_init(ref_ctx *c, view *v, int32_t rank, const int64_t *dims);
/* Fills axis a's table with base + i * stride. */
void ref_tensor_view_linear(view *v, int32_t a, int64_t base, int64_t stride);
/* dst (contiguous, v's element count) = src gathered through v, then v's
 * tables freed. `fill` may be NULL when no table holds MISSING. */
tsr_status *ref_tensor_view_run_free(ref_ctx *c, view *v, tsr_tensor *dst, const tsr_tensor *src,
                                     const tsr_tensor *fill);
/* dst = src read as the row-major shape vdims, with its axes reordered by
 * perm (output axis a is source axis perm[a]); a strided copy, not the
 * view engine, for elements of 1-8 bytes (ref_tensor_permute.c). */
tsr_status *ref_tensor_permute(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src, int32_t rank, const int64_t *vdims,
                               const int64_t *perm);
/* Shared by GatherND and ScatterND: the data offset each index tuple of
 * `ind` (last axis k) selects, as tuple count *nt, slice size *slice. Batch
 * dims (GatherND) make the first b axes of data and indices correspond. */
tsr_status *ref_tensor_nd_offsets(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *ind, int64_t b, int64_t **offs,
                                  int64_t *nt, int64_t *slice);
/* Input 0 holds elements this family can move. */
int ref_tensor_check_movable(const tsr_host_api *h, const tsr_node *n, char *why, size_t size);
/* Input 0 is a number (CumSum, CumProd, Range compute with it). */
int ref_tensor_check_numeric(const tsr_host_api *h, const tsr_node *n, char *why, size_t size);
/* A reduction needs numbers; plain scatter moves anything. */
int ref_tensor_check_scatter(const tsr_host_api *h, const tsr_node *n, char *why, size_t size);
int ref_tensor_check_constant(const tsr_host_api *h, const tsr_node *n, char *why, size_t size);

/* --- kernels ------------------------------------------------------------- */
/* ref_tensor_reshape.c */
tsr_status *ref_tensor_identity(ref_ctx *c);
tsr_status *ref_tensor_reshape(ref_ctx *c);
tsr_status *ref_tensor_flatten(ref_ctx *c);
tsr_status *ref_tensor_squeeze(ref_ctx *c);
tsr_status *ref_tensor_unsqueeze(ref_ctx *c);
tsr_status *ref_tensor_shape(ref_ctx *c);
tsr_status *ref_tensor_size(ref_ctx *c);
/* ref_tensor_transpose.c */
tsr_status *ref_tensor_transpose(ref_ctx *c);
tsr_status *ref_tensor_depth_to_space(ref_ctx *c);
tsr_status *ref_tensor_space_to_depth(ref_ctx *c);
/* ref_tensor_concat.c */
tsr_status *ref_tensor_concat(ref_ctx *c);
tsr_status *ref_tensor_split(ref_ctx *c);
tsr_status *ref_tensor_slice(ref_ctx *c);
/* ref_tensor_expand.c */
tsr_status *ref_tensor_expand(ref_ctx *c);
tsr_status *ref_tensor_tile(ref_ctx *c);
tsr_status *ref_tensor_pad(ref_ctx *c);
tsr_status *ref_tensor_center_crop_pad(ref_ctx *c);
/* ref_tensor_gather.c */
tsr_status *ref_tensor_gather(ref_ctx *c);
tsr_status *ref_tensor_array_feature_extractor(ref_ctx *c);
tsr_status *ref_tensor_gather_elements(ref_ctx *c);
tsr_status *ref_tensor_gather_nd(ref_ctx *c);
/* ref_tensor_scatter.c */
tsr_status *ref_tensor_scatter_elements(ref_ctx *c);
tsr_status *ref_tensor_scatter_nd(ref_ctx *c);
tsr_status *ref_tensor_tensor_scatter(ref_ctx *c);
/* ref_tensor_constant.c */
tsr_status *ref_tensor_constant(ref_ctx *c);
tsr_status *ref_tensor_constant_of_shape(ref_ctx *c);
tsr_status *ref_tensor_eye_like(ref_ctx *c);
tsr_status *ref_tensor_range(ref_ctx *c);
tsr_status *ref_tensor_one_hot(ref_ctx *c);
/* ref_tensor_select.c */
tsr_status *ref_tensor_trilu(ref_ctx *c);
tsr_status *ref_tensor_cumsum(ref_ctx *c);
tsr_status *ref_tensor_cumprod(ref_ctx *c);
tsr_status *ref_tensor_nonzero(ref_ctx *c);
tsr_status *ref_tensor_compress(ref_ctx *c);
tsr_status *ref_tensor_reverse_sequence(ref_ctx *c);
/* ref_tensor_unique.c */
tsr_status *ref_tensor_unique(ref_ctx *c);

#endif
