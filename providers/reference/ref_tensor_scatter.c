/*
 * ScatterElements (and the older Scatter), ScatterND and TensorScatter:
 * writing elements through index tensors, with their reductions.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static tsr_status *reduction_of(ref_ctx *c, int32_t t, int *red) {
    const char *s = ref_attr_str(c, "reduction", "none");
    *red = strcmp(s, "none") == 0 ? RED_NONE
        : strcmp(s, "add") == 0   ? RED_ADD
        : strcmp(s, "mul") == 0   ? RED_MUL
        : strcmp(s, "max") == 0   ? RED_MAX
        : strcmp(s, "min") == 0   ? RED_MIN
                                  : -1;
    if (*red < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown reduction '%s'", s);
    if (*red != RED_NONE && !ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "reduction '%s' on element type %d", s, (int)t);
    return NULL;
}

/* dst[di] = dst[di] (red) src[si]; RED_NONE copies. */
static tsr_status *combine(ref_ctx *c, int red, tsr_tensor *dst, uint64_t di, const tsr_tensor *src, uint64_t si) {
    int32_t t = dst->elem_type;
    if (t == TSR_FLOAT) {
        /* float32 directly, the same arithmetic as the path below (a GNN's
         * scatter-add over 100k edges spent most of its time in it) */
        float *d = (float *)dst->data + di;
        const float *s = (const float *)src->data + si;
        if (red == RED_NONE) {
            *d = *s;
            return NULL;
        }
        double a = *d, b = *s;
        *d = (float)(red == RED_ADD       ? a + b
                         : red == RED_MUL ? a * b
                         : red == RED_MAX ? (b > a ? b : a)
                                          : (b < a ? b : a));
        return NULL;
    }
    if (red == RED_NONE) return ref_tensor_mv_copy(c, dst, di, src, si, 1);
    if (ref_is_float(t)) {
        double a = ref_load(t, dst->data, (size_t)di), b = ref_load(t, src->data, (size_t)si);
        double v = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (b > a ? b : a) : (b < a ? b : a);
        ref_store(t, dst->data, (size_t)di, v);
        return NULL;
    }
    /* Integers: wrap on overflow (unsigned arithmetic), compare by signedness. */
    uint64_t a = (uint64_t)ref_load_i64(t, dst->data, (size_t)di);
    uint64_t b = (uint64_t)ref_load_i64(t, src->data, (size_t)si), v;
    bool b_gt_a = t == TSR_UINT64 ? b > a : (int64_t)b > (int64_t)a;
    switch (red) {
    case RED_ADD: v = a + b; break;
    case RED_MUL: v = a * b; break;
    case RED_MAX: v = b_gt_a ? b : a; break;
    default: v = b_gt_a ? a : b; break;
    }
    ref_store_i64(t, dst->data, (size_t)di, (int64_t)v);
    return NULL;
}

tsr_status *ref_tensor_scatter_elements(ref_ctx *c) {
    const tsr_tensor *x, *ind, *upd;
    tsr_tensor *y;
    int64_t *idx, axis, str[REF_MAX_RANK], pos[REF_MAX_RANK] = {0};
    size_t n;
    int red;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    TSR_TRY(ref_tensor_need_in(c, 2, &upd));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                       (int)x->rank);
    if (ind->rank != x->rank || upd->rank != x->rank || upd->elem_type != x->elem_type ||
        ref_tensor_dims_count(ind->rank, ind->dims) != ref_numel(upd))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices and updates must match each other and the data's rank");
    for (int32_t d = 0; d < ind->rank; d++)
        if (ind->dims[d] != upd->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices and updates differ in shape");
    TSR_TRY(reduction_of(c, x->elem_type, &red));
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, x->rank, x->dims, &y));
    TSR_TRY(ref_tensor_copy_all(c, y, x));
    TSR_TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    ref_strides(x->rank, x->dims, str);
    for (size_t i = 0; i < n && !st; i++) {
        int64_t off = 0, j;
        if (!ref_tensor_wrap_index(idx[i], x->dims[axis], &j)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld", (long long)idx[i],
                         (long long)x->dims[axis]);
            break;
        }
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t p = d == axis ? j : pos[d];
            if (p >= x->dims[d]) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices are larger than the data");
                break;
            }
            off += p * str[d];
        }
        if (!st) st = combine(c, red, y, (uint64_t)off, upd, i);
        for (int32_t d = ind->rank - 1; d >= 0; d--) {
            if (++pos[d] < ind->dims[d]) break;
            pos[d] = 0;
        }
    }
    free(idx);
    return st;
}

tsr_status *ref_tensor_scatter_nd(ref_ctx *c) {
    const tsr_tensor *x, *ind, *upd;
    tsr_tensor *y;
    int64_t *offs, nt, slice;
    int red;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    TSR_TRY(ref_tensor_need_in(c, 2, &upd));
    if (upd->elem_type != x->elem_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "updates differ in type from the data");
    TSR_TRY(reduction_of(c, x->elem_type, &red));
    TSR_TRY(ref_tensor_nd_offsets(c, x, ind, 0, &offs, &nt, &slice));
    tsr_status *st = NULL;
    if (ref_numel(upd) != (uint64_t)(nt * slice)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "updates hold %llu elements, expected %lld",
                     (unsigned long long)ref_numel(upd), (long long)(nt * slice));
        goto done;
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, x->rank, x->dims, &y))) goto done;
    if ((st = ref_tensor_copy_all(c, y, x))) goto done;
    for (int64_t t = 0; t < nt && !st; t++)
        for (int64_t i = 0; i < slice && !st; i++)
            st = combine(c, red, y, (uint64_t)(offs[t] + i), upd, (uint64_t)(t * slice + i));
done:
    free(offs);
    return st;
}

/* TensorScatter (opset 24), a KV-cache update: present = past with, per
 * batch entry b, update's sequence rows written from write_indices[b] on
 * along `axis` (wrapping around in "circular" mode). */
tsr_status *ref_tensor_tensor_scatter(ref_ctx *c) {
    const tsr_tensor *x, *upd, *wt = ref_in(c, 2);
    tsr_tensor *y;
    int64_t axis, *wi = NULL;
    size_t nw = 0;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &upd));
    int64_t a = ref_attr_int(c, "axis", -2);
    const char *mode = ref_attr_str(c, "mode", "linear");
    bool circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
    /* Axis 0 is the batch, so the sequence axis comes after it. */
    if (x->rank < 2 || !ref_axis(a, x->rank, &axis) || axis == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is invalid for rank %d", (long long)a, (int)x->rank);
    if (upd->elem_type != x->elem_type || upd->rank != x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update differs in type or rank");
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis ? upd->dims[d] != x->dims[d] : upd->dims[d] > x->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update's shape does not fit the cache");
    if (wt) {
        TSR_TRY(ref_tensor_i64(c, wt, &wi, &nw));
        if (nw != (size_t)x->dims[0]) {
            free(wi);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "write_indices has %zu entries for batch %lld", nw,
                           (long long)x->dims[0]);
        }
    }
    tsr_status *st = ref_tensor_out_new(c, 0, x->elem_type, x->rank, x->dims, &y);
    if (!st) st = ref_tensor_copy_all(c, y, x);
    int64_t max_seq = x->dims[axis], seq = upd->dims[axis];
    int64_t outer = ref_tensor_dims_prod(x->dims, 0, (int32_t)axis);
    int64_t per_batch = ref_tensor_dims_prod(x->dims, 1, (int32_t)axis);
    int64_t inner = ref_tensor_dims_prod(x->dims, (int32_t)axis + 1, x->rank);
    for (int64_t o = 0; o < outer && !st; o++) {
        int64_t start = wi ? wi[o / per_batch] : 0;
        for (int64_t s = 0; s < seq && !st; s++) {
            int64_t at = start + s;
            if (circular) {
                at %= max_seq;
                if (at < 0) at += max_seq;
            }
            if (at < 0 || at >= max_seq) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "write index %lld is out of range", (long long)at);
                break;
            }
            st = ref_tensor_mv_copy(c, y, (uint64_t)((o * max_seq + at) * inner), upd,
                                    (uint64_t)((o * seq + s) * inner), (uint64_t)inner);
        }
    }
    free(wi);
    return st;
}
