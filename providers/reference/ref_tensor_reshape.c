/*
 * Identity, Reshape, Flatten, Squeeze, Unsqueeze (reshaping without moving: the
 * output shares nothing, but every element is one memcpy away), Shape and Size.
 */
#include <stdlib.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_identity(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    /* Since opsets 14/16 Identity also passes sequences and optionals on. */
    if (!ref_in(c, 0) && c->n_in && c->in_map[0] >= 0 && TSR_HAS_MEMBER(c->host, tsr_host_api, val_free)) {
        const tsr_value *v = c->host->run_input_value(c->run, (size_t)c->in_map[0]);
        tsr_value *copy;
        if (!v) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input is required");
        TSR_TRY(c->host->val_clone(v, &copy));
        if (!ref_out_wanted(c, 0)) {
            c->host->val_free(copy);
            return NULL;
        }
        return c->host->run_set_output_value(c->run, (size_t)c->out_map[0], copy);
    }
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, x->rank, x->dims, &y));
    return ref_tensor_copy_all(c, y, x);
}

/* Output 0 = x's elements under a new shape. */
static tsr_status *reshaped(ref_ctx *c, const tsr_tensor *x, int32_t rank, const int64_t *dims) {
    tsr_tensor *y;
    if (ref_tensor_dims_count(rank, dims) != ref_numel(x))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot reshape %llu elements to %llu",
                       (unsigned long long)ref_numel(x), (unsigned long long)ref_tensor_dims_count(rank, dims));
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, rank, dims, &y));
    return ref_tensor_copy_all(c, y, x);
}

tsr_status *ref_tensor_reshape(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *shape = NULL, dims[REF_MAX_RANK];
    size_t n = 0;
    bool have;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    /* Before opset 5 the shape was an attribute. */
    TSR_TRY(ref_tensor_ints_arg(c, "shape", 1, 5, &shape, &n, &have));
    tsr_status *st = NULL;
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no shape given");
        goto done;
    }
    if (n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", n, REF_MAX_RANK);
        goto done;
    }
    bool allowzero = ref_attr_int(c, "allowzero", 0) != 0;
    int64_t known = 1;
    long infer = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t d = shape[i];
        if (d == 0 && !allowzero) {
            /* 0 copies the input's dimension at the same position. */
            if ((int32_t)i >= x->rank) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is 0 but the input has rank %d", i, (int)x->rank);
                goto done;
            }
            d = x->dims[i];
        } else if (d == -1) {
            if (infer >= 0) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "more than one -1 in the shape");
                goto done;
            }
            infer = (long)i;
            continue;
        } else if (d < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is %lld", i, (long long)d);
            goto done;
        }
        dims[i] = d;
        if (__builtin_mul_overflow(known, d, &known)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape overflows");
            goto done;
        }
    }
    if (infer >= 0) {
        uint64_t total = ref_numel(x);
        if (known == 0 || total % (uint64_t)known != 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot infer the -1 dimension of %llu elements",
                         (unsigned long long)total);
            goto done;
        }
        dims[infer] = (int64_t)(total / (uint64_t)known);
    }
    st = reshaped(c, x, (int32_t)n, dims);
done:
    free(shape);
    return st;
}

tsr_status *ref_tensor_flatten(ref_ctx *c) {
    const tsr_tensor *x;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int64_t axis = ref_attr_int(c, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)ref_attr_int(c, "axis", 1), (int)x->rank);
    int64_t dims[2] = {ref_tensor_dims_prod(x->dims, 0, (int32_t)axis),
                       ref_tensor_dims_prod(x->dims, (int32_t)axis, x->rank)};
    return reshaped(c, x, 2, dims);
}

tsr_status *ref_tensor_squeeze(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *axes, dims[REF_MAX_RANK];
    size_t n;
    bool have;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_ints_arg(c, "axes", 1, 13, &axes, &n, &have));
    bool drop[REF_MAX_RANK] = {false};
    tsr_status *st = ref_tensor_norm_axes(c, axes, n, x->rank);
    if (st) goto done;
    /* An empty axes list means "every axis of size 1", like no list. */
    if (have && n > 0) {
        for (size_t i = 0; i < n; i++) {
            if (x->dims[axes[i]] != 1) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                             (long long)x->dims[axes[i]]);
                goto done;
            }
            drop[axes[i]] = true;
        }
    } else {
        /* No axes: drop every axis of size 1. */
        for (int32_t a = 0; a < x->rank; a++) drop[a] = x->dims[a] == 1;
    }
    int32_t r = 0;
    for (int32_t a = 0; a < x->rank; a++)
        if (!drop[a]) dims[r++] = x->dims[a];
    st = reshaped(c, x, r, dims);
done:
    free(axes);
    return st;
}

tsr_status *ref_tensor_unsqueeze(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *axes, dims[REF_MAX_RANK];
    size_t n;
    bool have;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_ints_arg(c, "axes", 1, 13, &axes, &n, &have));
    tsr_status *st = NULL;
    bool add[REF_MAX_RANK] = {false};
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no axes given");
        goto done;
    }
    if ((size_t)x->rank + n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", (size_t)x->rank + n, REF_MAX_RANK);
        goto done;
    }
    int32_t r = x->rank + (int32_t)n;
    /* Axes index the output, so they normalise against its rank. */
    st = ref_tensor_norm_axes(c, axes, n, r);
    if (st) goto done;
    for (size_t i = 0; i < n; i++) add[axes[i]] = true;
    for (int32_t a = 0, j = 0; a < r; a++) dims[a] = add[a] ? 1 : x->dims[j++];
    st = reshaped(c, x, r, dims);
done:
    free(axes);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Shape, Size                                                               */

tsr_status *ref_tensor_shape(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    tsr_tensor *y;
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is missing");
    /* start/end (opset 15) pick a range of axes, clamped like Python slices. */
    int64_t r = x->rank;
    int64_t start = ref_attr_int(c, "start", 0), end = ref_attr_int(c, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    TSR_TRY(ref_tensor_out_new(c, 0, TSR_INT64, 1, &len, &y));
    for (int64_t i = 0; i < len; i++) ((int64_t *)y->data)[i] = x->dims[start + i];
    return NULL;
}

tsr_status *ref_tensor_size(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    tsr_tensor *y;
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is missing");
    TSR_TRY(ref_tensor_out_new(c, 0, TSR_INT64, 0, NULL, &y));
    *(int64_t *)y->data = (int64_t)ref_numel(x);
    return NULL;
}
