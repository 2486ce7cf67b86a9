/*
 * How a scale and zero point line up with the tensor they describe: one
 * value for the whole tensor, one per slice along an axis, or one per block
 * of slices (QuantizeLinear and DequantizeLinear); and numpy broadcasting of
 * a zero point or scale to a shape (the matrix and convolution kernels).
 */
#include <stdlib.h>

#include "ref_quant.h"

static uint64_t dims_product(int32_t rank, const int64_t *dims, int32_t from) {
    uint64_t n = 1;
    for (int32_t d = from; d < rank; d++) n *= (uint64_t)dims[d];
    return n;
}

static bool same_shape(const tsr_tensor *a, const tsr_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

tsr_status *rq_layout_init(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *scale, const tsr_tensor *zero_point,
                           int64_t axis, int64_t block, bool per_axis_ok, rq_layout *l) {
    l->kind = RQ_PER_TENSOR;
    l->inner = l->axis_len = l->groups = l->block = 1;
    uint64_t sn = ref_numel(scale);
    if (zero_point) {
        uint64_t zn = ref_numel(zero_point);
        /* A scalar and a one-element vector are the same per-tensor value. */
        if (zn != sn || (sn != 1 && !same_shape(scale, zero_point)))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "zero point (%llu elements) and scale (%llu elements) differ in shape",
                           (unsigned long long)zn, (unsigned long long)sn);
    }
    if (block < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "block_size %lld is negative", (long long)block);
    if (ref_numel(x) == 0) return NULL; /* nothing to map */
    if (sn == 1) return NULL;
    if (sn == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale is empty");
    if (block == 0 && !per_axis_ok)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale has %llu elements; this opset takes a scalar scale only",
                       (unsigned long long)sn);
    int64_t ax;
    if (!ref_axis(axis, x->rank, &ax) || x->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis,
                       (int)x->rank);
    uint64_t di = (uint64_t)x->dims[ax];
    l->inner = dims_product(x->rank, x->dims, (int32_t)ax + 1);
    l->axis_len = di;
    if (block == 0) {
        if (scale->rank != 1 || (uint64_t)scale->dims[0] != di)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "a per-axis scale must be 1-D with %llu elements (x's extent along "
                           "axis %lld); this one has rank %d and %llu elements",
                           (unsigned long long)di, (long long)ax, (int)scale->rank, (unsigned long long)sn);
        l->kind = RQ_PER_AXIS;
        l->groups = di;
        return NULL;
    }
    if (scale->rank != x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "a blocked scale must have x's rank %d, not %d", (int)x->rank,
                       (int)scale->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        if (d != ax && scale->dims[d] != x->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "blocked scale extent %lld along axis %d differs from x's %lld",
                           (long long)scale->dims[d], (int)d, (long long)x->dims[d]);
    }
    uint64_t b = (uint64_t)block, si = (uint64_t)scale->dims[ax];
    uint64_t want = (di - 1) / b + 1; /* ceil(di / b); di > 0 here */
    if (si != want)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "block_size %lld splits x's %llu elements along axis %lld into %llu "
                       "blocks, but the scale has %llu",
                       (long long)block, (unsigned long long)di, (long long)ax, (unsigned long long)want,
                       (unsigned long long)si);
    l->kind = RQ_BLOCKED;
    l->groups = si;
    l->block = b;
    return NULL;
}

tsr_status *rq_broadcast_values(ref_ctx *c, const tsr_tensor *p, int32_t rank, const int64_t *dims, const char *what,
                                double **out) {
    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || !rq_mul_size(n, (uint64_t)dims[d], &n))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape too large for %s", what);
    }
    double *v = calloc(n ? (size_t)n : 1, sizeof *v);
    if (!v) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory broadcasting %s", what);
    if (!p) {
        *out = v;
        return NULL;
    }
    bool ok = p->rank <= rank;
    for (int32_t d = 0; ok && d < p->rank; d++) {
        int64_t pd = p->dims[d], od = dims[rank - p->rank + d];
        ok = pd == od || pd == 1;
    }
    if (!ok) {
        free(v);
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s of rank %d does not broadcast to its operand's rank-%d shape",
                       what, (int)p->rank, (int)rank);
    }
    int64_t st[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(p->rank, p->dims, rank, dims, st);
    int64_t off = 0;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = rq_load(p->elem_type, p->data, (size_t)off);
        for (int32_t d = rank - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < dims[d]) break;
            off -= st[d] * dims[d];
            idx[d] = 0;
        }
    }
    *out = v;
    return NULL;
}
