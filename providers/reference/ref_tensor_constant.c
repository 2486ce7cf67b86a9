/*
 * Constant, ConstantOfShape, EyeLike, Range and OneHot: outputs made from
 * attributes and shapes rather than from input elements.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_constant(ref_ctx *c) {
    const tsr_host_api *h = c->host;
    tsr_tensor *y;
    const tsr_tensor *v = ref_attr_tensor(c, "value");
    if (v) {
        TSR_TRY(ref_tensor_out_new(c, 0, v->elem_type, v->rank, v->dims, &y));
        return ref_tensor_copy_all(c, y, v);
    }
    if (ref_attr_has(c, "value_float")) {
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_FLOAT, 0, NULL, &y));
        *(float *)y->data = ref_attr_float(c, "value_float", 0.0f);
        return NULL;
    }
    if (ref_attr_has(c, "value_int")) {
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_INT64, 0, NULL, &y));
        *(int64_t *)y->data = ref_attr_int(c, "value_int", 0);
        return NULL;
    }
    if (ref_attr_has(c, "value_floats")) {
        const float *f;
        int64_t n = (int64_t)ref_attr_floats(c, "value_floats", &f);
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_FLOAT, 1, &n, &y));
        if (n) memcpy(y->data, f, sizeof(float) * (size_t)n);
        return NULL;
    }
    if (ref_attr_has(c, "value_ints")) {
        const int64_t *p;
        int64_t n = (int64_t)ref_attr_ints(c, "value_ints", &p);
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_INT64, 1, &n, &y));
        if (n) memcpy(y->data, p, sizeof(int64_t) * (size_t)n);
        return NULL;
    }
    /* Strings go through the host accessors directly: ref.h has no helper
     * that keeps their length (they may hold NUL bytes) or lists them. */
    const tsr_attr *a = h->node_attr_find(c->node, "value_string");
    if (a) {
        size_t size;
        const char *s = h->attr_string(a, &size);
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_STRING, 0, NULL, &y));
        return h->tensor_set_string(y, 0, s, size);
    }
    a = h->node_attr_find(c->node, "value_strings");
    if (a) {
        int64_t n = (int64_t)h->attr_list_size(a);
        TSR_TRY(ref_tensor_out_new(c, 0, TSR_STRING, 1, &n, &y));
        for (int64_t i = 0; i < n; i++) {
            size_t size;
            const char *s = h->attr_strings_at(a, (size_t)i, &size);
            TSR_TRY(h->tensor_set_string(y, (size_t)i, s, size));
        }
        return NULL;
    }
    if (ref_attr_has(c, "sparse_value")) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "sparse_value is not supported");
    return ref_err(c, TSR_ERR_INVALID_MODEL, "no value attribute");
}

tsr_status *ref_tensor_constant_of_shape(ref_ctx *c) {
    tsr_tensor *y;
    int64_t *shape;
    size_t n;
    scalar zero;
    /* The default value is a float 0. */
    const tsr_tensor *v = ref_attr_tensor(c, "value");
    if (!v) v = ref_tensor_scalar_zero(&zero, TSR_FLOAT);
    if (ref_numel(v) != 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "value must hold one element");
    if (ref_tensor_type_bits(v->elem_type) == 0)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)v->elem_type);
    TSR_TRY(ref_tensor_i64(c, ref_in(c, 0), &shape, &n));
    tsr_status *st = NULL;
    if (n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", n, REF_MAX_RANK);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (shape[i] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
    }
    if ((st = ref_tensor_out_new(c, 0, v->elem_type, (int32_t)n, shape, &y))) goto done;
    st = ref_tensor_mv_fill(c, y, 0, v, ref_numel(y));
done:
    free(shape);
    return st;
}

tsr_status *ref_tensor_eye_like(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int32_t t = (int32_t)ref_attr_int(c, "dtype", x->elem_type);
    int64_t k = ref_attr_int(c, "k", 0);
    if (x->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 2");
    if (!ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)t);
    TSR_TRY(ref_tensor_out_new(c, 0, t, 2, x->dims, &y));
    if (y->nbytes) memset(y->data, 0, y->nbytes);
    int64_t rows = x->dims[0], cols = x->dims[1];
    for (int64_t i = 0; i < rows; i++) {
        /* j = i + k, compared without overflowing for extreme k. */
        if (k >= cols || k < -i) continue; /* not -k: k may be INT64_MIN */
        int64_t j = i + k;
        if (j >= 0 && j < cols) ref_store(t, y->data, (size_t)(i * cols + j), 1.0);
    }
    return NULL;
}

tsr_status *ref_tensor_range(ref_ctx *c) {
    const tsr_tensor *in[3];
    tsr_tensor *y;
    for (size_t i = 0; i < 3; i++) {
        TSR_TRY(ref_tensor_need_in(c, i, &in[i]));
        if (ref_numel(in[i]) != 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a scalar", i);
    }
    int32_t t = in[0]->elem_type;
    if (in[1]->elem_type != t || in[2]->elem_type != t)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "inputs differ in type");
    int64_t n;
    if (ref_is_int(t)) {
        /* Exact integer arithmetic: doubles lose int64 precision. */
        int64_t s = ref_load_i64(t, in[0]->data, 0), l = ref_load_i64(t, in[1]->data, 0);
        int64_t d = ref_load_i64(t, in[2]->data, 0), span;
        if (d == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "delta is 0");
        if (__builtin_sub_overflow(l, s, &span)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "range is too large");
        if ((span > 0) != (d > 0) || span == 0) {
            n = 0;
        } else {
            /* Magnitudes as unsigned, so INT64_MIN has one too. */
            uint64_t us = span > 0 ? (uint64_t)span : 0 - (uint64_t)span;
            uint64_t ud = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
            n = (int64_t)((us - 1) / ud + 1);
        }
        TSR_TRY(ref_tensor_out_new(c, 0, t, 1, &n, &y));
        for (int64_t i = 0; i < n; i++)
            ref_store_i64(t, y->data, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
        return NULL;
    }
    if (!ref_is_float(t)) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)t);
    double s = ref_load(t, in[0]->data, 0), l = ref_load(t, in[1]->data, 0);
    double d = ref_load(t, in[2]->data, 0);
    if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "delta is 0 or an input is not finite");
    double cnt = ceil((l - s) / d);
    if (cnt > 9.0e15) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "range is too large");
    n = cnt > 0 ? (int64_t)cnt : 0;
    TSR_TRY(ref_tensor_out_new(c, 0, t, 1, &n, &y));
    for (int64_t i = 0; i < n; i++) ref_store(t, y->data, (size_t)i, s + (double)i * d);
    return NULL;
}

/* OneHot's output: every element the off value, then per index the one
 * element it selects the on value (an index outside [-depth, depth) selects
 * none). A pass over the output plus one write per index: a vocabulary-wide
 * one-hot of a few tokens was one general element move per output element. */
static tsr_status *one_hot_set(ref_ctx *c, tsr_tensor *y, const tsr_tensor *ind, const tsr_tensor *val, int64_t outer,
                               int64_t depth, int64_t inner) {
    TSR_TRY(ref_tensor_mv_fill(c, y, 0, val, (uint64_t)(outer * depth * inner)));
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t v = ref_load_i64(ind->elem_type, ind->data, (size_t)(o * inner + i));
            if (v < 0) v += depth; /* negative indices count from the end */
            if (v >= 0 && v < depth)
                TSR_TRY(ref_tensor_mv_copy(c, y, (uint64_t)((o * depth + v) * inner + i), val, 1, 1));
        }
    }
    return NULL;
}

tsr_status *ref_tensor_one_hot(ref_ctx *c) {
    const tsr_tensor *ind, *dep, *val;
    tsr_tensor *y;
    int64_t axis, dims[REF_MAX_RANK];
    TSR_TRY(ref_tensor_need_in(c, 0, &ind));
    TSR_TRY(ref_tensor_need_in(c, 1, &dep));
    TSR_TRY(ref_tensor_need_in(c, 2, &val));
    if (ref_numel(dep) != 1 || ref_numel(val) != 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth must be a scalar, values a pair");
    if (!ref_is_int(dep->elem_type) && !ref_is_float(dep->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth must be numeric");
    if (!ref_is_int(ind->elem_type) && !ref_is_float(ind->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must be numeric");
    int64_t depth = ref_load_i64(dep->elem_type, dep->data, 0);
    if (depth < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth is negative");
    int32_t r = ind->rank + 1;
    if (r > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
    int64_t a = ref_attr_int(c, "axis", -1);
    if (!ref_axis(a, r, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a, (int)r);
    for (int32_t i = 0, j = 0; i < r; i++) dims[i] = i == axis ? depth : ind->dims[j++];
    TSR_TRY(ref_tensor_out_new(c, 0, val->elem_type, r, dims, &y));
    int64_t outer = ref_tensor_dims_prod(ind->dims, 0, (int32_t)axis);
    int64_t inner = ref_tensor_dims_prod(ind->dims, (int32_t)axis, ind->rank);
    /* no indices: a huge depth must not be looped over for nothing */
    if (outer == 0 || inner == 0) return NULL;
    return one_hot_set(c, y, ind, val, outer, depth, inner);
}
