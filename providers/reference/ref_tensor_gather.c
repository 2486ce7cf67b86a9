/*
 * Gather, GatherElements, GatherND and ai.onnx.ml ArrayFeatureExtractor:
 * reading elements through index tensors.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_gather(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, axis, dims[REF_MAX_RANK];
    size_t n;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                       (int)x->rank);
    int32_t r = x->rank - 1 + ind->rank;
    if (r > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
    TSR_TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    int64_t dim = x->dims[axis];
    for (size_t i = 0; i < n; i++) {
        if (!ref_tensor_wrap_index(idx[i], dim, &idx[i])) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld", (long long)idx[i],
                         (long long)dim);
            goto done;
        }
    }
    /* Output shape: data[:axis] + indices + data[axis+1:]. */
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) dims[k++] = x->dims[i];
    for (int32_t i = 0; i < ind->rank; i++) dims[k++] = ind->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) dims[k++] = x->dims[i];
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    /* As a 3-axis view: outer x index x inner. */
    int64_t vd[3] = {ref_tensor_dims_prod(x->dims, 0, (int32_t)axis), (int64_t)n,
                     ref_tensor_dims_prod(x->dims, (int32_t)axis + 1, x->rank)};
    if (ref_tensor_dims_count(3, vd) == 0) goto done;
    size_t es = x->elem_type == TSR_STRING ? 0 : ref_elem_size(x->elem_type);
    if (es) {
        /* plain types: whole rows of the inner block at a time (an audio
         * model's framing gathers 40,000 single samples a run) */
        const char *src = x->data;
        char *dst = y->data;
        size_t row = (size_t)vd[2] * es;
        for (int64_t o = 0; o < vd[0]; o++)
            for (size_t i = 0; i < n; i++) {
                const char *from = src + ((size_t)o * (size_t)dim + (size_t)idx[i]) * row;
                char *to = dst + ((size_t)o * n + i) * row;
                if (es == 4 && vd[2] == 1) memcpy(to, from, 4);
                else memcpy(to, from, row);
            }
        goto done;
    }
    view v;
    if ((st = ref_tensor_view_init(c, &v, 3, vd))) goto done;
    ref_tensor_view_linear(&v, 0, 0, dim * vd[2]);
    for (size_t i = 0; i < n; i++) v.off[1][i] = idx[i] * vd[2];
    ref_tensor_view_linear(&v, 2, 0, 1);
    st = ref_tensor_view_run_free(c, &v, y, x, NULL);
done:
    free(idx);
    return st;
}

/* ai.onnx.ml ArrayFeatureExtractor: x[..., indices] with the indices
 * flattened; a 1-D x gives a [1, n] result, as the ONNX reference does. */
tsr_status *ref_tensor_array_feature_extractor(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, dims[REF_MAX_RANK];
    size_t n;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    if (x->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    TSR_TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    int64_t last = x->dims[x->rank - 1], outer = ref_tensor_dims_prod(x->dims, 0, x->rank - 1);
    for (size_t i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= last) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld", (long long)idx[i],
                         (long long)last);
            goto done;
        }
    }
    int32_t r = x->rank < 2 ? 2 : x->rank;
    if (x->rank < 2) dims[0] = 1;
    else memcpy(dims, x->dims, sizeof(int64_t) * (size_t)(r - 1));
    dims[r - 1] = (int64_t)n;
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t o = 0; o < outer && !st; o++)
        for (size_t i = 0; i < n && !st; i++)
            st = ref_tensor_mv_copy(c, y, (uint64_t)o * n + i, x, (uint64_t)(o * last + idx[i]), 1);
done:
    free(idx);
    return st;
}

tsr_status *ref_tensor_gather_elements(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, axis, str[REF_MAX_RANK], pos[REF_MAX_RANK] = {0};
    size_t n;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                       (int)x->rank);
    if (ind->rank != x->rank) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must have the data's rank");
    TSR_TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = ref_tensor_out_new(c, 0, x->elem_type, ind->rank, ind->dims, &y);
    if (st) goto done;
    ref_strides(x->rank, x->dims, str);
    for (size_t i = 0; i < n; i++) {
        int64_t off = 0, j;
        if (!ref_tensor_wrap_index(idx[i], x->dims[axis], &j)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld", (long long)idx[i],
                         (long long)x->dims[axis]);
            goto done;
        }
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t p = d == axis ? j : pos[d];
            if (p >= x->dims[d]) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices are larger than the data");
                goto done;
            }
            off += p * str[d];
        }
        if ((st = ref_tensor_mv_copy(c, y, i, x, (uint64_t)off, 1))) goto done;
        for (int32_t d = ind->rank - 1; d >= 0; d--) {
            if (++pos[d] < ind->dims[d]) break;
            pos[d] = 0;
        }
    }
done:
    free(idx);
    return st;
}

tsr_status *ref_tensor_gather_nd(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *offs, nt, slice, dims[REF_MAX_RANK];
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_need_in(c, 1, &ind));
    int64_t b = ref_attr_int(c, "batch_dims", 0);
    TSR_TRY(ref_tensor_nd_offsets(c, x, ind, b, &offs, &nt, &slice));
    /* Output shape: indices.shape[:-1] + data.shape[b+k:]. */
    int64_t k = ind->dims[ind->rank - 1];
    int32_t r = 0;
    for (int32_t i = 0; i < ind->rank - 1; i++) dims[r++] = ind->dims[i];
    tsr_status *st = NULL;
    if (r + x->rank - (b + k) > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
        goto done;
    }
    for (int32_t i = (int32_t)(b + k); i < x->rank; i++) dims[r++] = x->dims[i];
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t t = 0; t < nt && !st; t++)
        st = ref_tensor_mv_copy(c, y, (uint64_t)(t * slice), x, (uint64_t)offs[t], (uint64_t)slice);
done:
    free(offs);
    return st;
}
