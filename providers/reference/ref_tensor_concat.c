/*
 * Concat, Split and Slice: joining and cutting along axes.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_concat(ref_ctx *c) {
    const tsr_tensor *x0;
    tsr_tensor *y;
    int64_t dims[REF_MAX_RANK], axis;
    TSR_TRY(ref_tensor_need_in(c, 0, &x0));
    /* Opset 1 defaulted the axis to 1; later opsets require it. */
    int64_t a = ref_attr_int(c, "axis", 1);
    if (!ref_axis(a, x0->rank, &axis) || x0->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                       (int)x0->rank);
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    dims[axis] = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *x;
        TSR_TRY(ref_tensor_need_in(c, i, &x));
        if (x->elem_type != x0->elem_type || x->rank != x0->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu differs in type or rank", i);
        for (int32_t d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu has dim %lld on axis %d, input 0 has %lld", i,
                               (long long)x->dims[d], (int)d, (long long)x0->dims[d]);
        dims[axis] += x->dims[axis];
    }
    TSR_TRY(ref_tensor_out_new(c, 0, x0->elem_type, x0->rank, dims, &y));
    int64_t outer = ref_tensor_dims_prod(dims, 0, (int32_t)axis);
    int64_t inner = ref_tensor_dims_prod(dims, (int32_t)axis + 1, x0->rank);
    int64_t out_block = dims[axis] * inner, at = 0;
    /* Each input contributes one contiguous block per outer index. */
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *x = ref_in(c, i);
        int64_t block = x->dims[axis] * inner;
        for (int64_t o = 0; o < outer; o++)
            TSR_TRY(
                ref_tensor_mv_copy(c, y, (uint64_t)(o * out_block + at), x, (uint64_t)(o * block), (uint64_t)block));
        at += block;
    }
    return NULL;
}

/* Output i = x[..., start:start+len, ...] along axis. */
static tsr_status *slice_axis_out(ref_ctx *c, size_t i, const tsr_tensor *x, int64_t axis, int64_t start, int64_t len) {
    int64_t dims[REF_MAX_RANK];
    tsr_tensor *y;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = len;
    TSR_TRY(ref_tensor_out_new(c, i, x->elem_type, x->rank, dims, &y));
    int64_t outer = ref_tensor_dims_prod(dims, 0, (int32_t)axis);
    int64_t inner = ref_tensor_dims_prod(dims, (int32_t)axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        TSR_TRY(ref_tensor_mv_copy(c, y, (uint64_t)(o * len * inner), x,
                                   (uint64_t)((o * x->dims[axis] + start) * inner), (uint64_t)(len * inner)));
    return NULL;
}

tsr_status *ref_tensor_split(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t axis, *split = NULL;
    size_t n = 0;
    bool have = false;
    tsr_status *st = NULL;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (!ref_axis(a, x->rank, &axis) || x->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                       (int)x->rank);
    /* `split` was an input in opset 1, an attribute in 2..12, an input again
     * from 13. */
    if (ref_opset(c) < 2 && ref_in(c, 1)) {
        TSR_TRY(ref_tensor_i64(c, ref_in(c, 1), &split, &n));
        have = true;
    } else {
        TSR_TRY(ref_tensor_ints_arg(c, "split", 1, 13, &split, &n, &have));
    }
    int64_t dim = x->dims[axis], outs = (int64_t)c->n_out;
    if (have && n > 0) {
        int64_t sum = 0;
        if ((int64_t)n != outs) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split has %zu entries for %lld outputs", n, (long long)outs);
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            if (split[i] < 0) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split[%zu] is negative", i);
                goto done;
            }
            /* past the axis length the sum is wrong anyway; stop before it
             * can overflow */
            if (split[i] > dim - sum) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                             "split entries sum past the axis length %lld (split[%zu] = %lld)", (long long)dim, i,
                             (long long)split[i]);
                goto done;
            }
            sum += split[i];
        }
        if (sum != dim) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split sums to %lld, the axis has %lld", (long long)sum,
                         (long long)dim);
            goto done;
        }
        int64_t at = 0;
        for (size_t i = 0; i < n && !st; i++) {
            st = slice_axis_out(c, i, x, axis, at, split[i]);
            at += split[i];
        }
        goto done;
    }
    /* No split list: equal parts. Opset 18 names the count (num_outputs)
     * and lets the last part be smaller; earlier opsets need exact parts. */
    if (ref_attr_has(c, "num_outputs")) {
        int64_t k = ref_attr_int(c, "num_outputs", 0);
        if (k != outs) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "num_outputs is %lld but the node has %lld", (long long)k,
                         (long long)outs);
            goto done;
        }
    }
    if (outs <= 0) goto done;
    int64_t chunk = (dim + outs - 1) / outs;
    if (ref_opset(c) < 18 && dim % outs != 0) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis of %lld does not split into %lld parts", (long long)dim,
                     (long long)outs);
        goto done;
    }
    for (int64_t i = 0, at = 0; i < outs && !st; i++) {
        int64_t len = dim - at < chunk ? dim - at : chunk;
        if (len < 0) len = 0;
        st = slice_axis_out(c, (size_t)i, x, axis, at, len);
        at += len;
    }
done:
    free(split);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Slice                                                                     */

tsr_status *ref_tensor_slice(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    bool hs, he, ha, hst = false;
    tsr_status *st;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    /* Opset 1 took starts/ends/axes as attributes; 10 made them inputs and
     * added steps. */
    st = ref_tensor_ints_arg(c, "starts", 1, 10, &starts, &ns, &hs);
    if (!st) st = ref_tensor_ints_arg(c, "ends", 2, 10, &ends, &ne, &he);
    if (!st) st = ref_tensor_ints_arg(c, "axes", 3, 10, &axes, &na, &ha);
    if (!st && ref_opset(c) >= 10) st = ref_tensor_ints_arg(c, "steps", 4, 10, &steps, &nst, &hst);
    if (st) goto done;
    int32_t r = x->rank;
    if (!hs || !he || ns != ne || (ha && na != ns) || (hst && nst != ns)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "starts, ends, axes and steps differ in length");
        goto done;
    }
    if (!ha) {
        if (ns > (size_t)r) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%zu starts for rank %d", ns, (int)r);
            goto done;
        }
        free(axes);
        axes = malloc(sizeof(int64_t) * (ns ? ns : 1));
        if (!axes) {
            st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < ns; i++) axes[i] = (int64_t)i;
    }
    if ((st = ref_tensor_norm_axes(c, axes, ns, r))) goto done;
    int64_t first[REF_MAX_RANK], step[REF_MAX_RANK], dims[REF_MAX_RANK];
    for (int32_t a = 0; a < r; a++) {
        first[a] = 0;
        step[a] = 1;
        dims[a] = x->dims[a];
    }
    for (size_t i = 0; i < ns; i++) {
        int64_t a = axes[i], d = x->dims[a], s = starts[i], e = ends[i];
        int64_t k = hst ? steps[i] : 1, len;
        if (k == INT64_MIN) k = -INT64_MAX; /* so -k exists; the length is the same */
        if (k == 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "step is 0");
            goto done;
        }
        if (s < 0) s += d;
        if (e < 0) e += d;
        /* Clamp as Python slicing does: a forward slice lives in [0, d], a
         * backward one in [-1, d-1] (where -1 means "before the first"). */
        if (k > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            len = e > s ? (e - s - 1) / k + 1 : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            len = s > e ? (s - e - 1) / -k + 1 : 0;
        }
        first[a] = s;
        step[a] = k;
        dims[a] = len;
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (ref_tensor_dims_count(r, dims) == 0) goto done;
    int64_t str[REF_MAX_RANK];
    ref_strides(r, x->dims, str);
    view v;
    if ((st = ref_tensor_view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) ref_tensor_view_linear(&v, a, first[a] * str[a], step[a] * str[a]);
    st = ref_tensor_view_run_free(c, &v, y, x, NULL);
done:
    free(starts);
    free(ends);
    free(axes);
    free(steps);
    return st;
}
