/*
 * Unique: sorted or first-seen distinct elements or slices, with indices,
 * inverse indices and counts.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

/* Orders element i of a against element j of b (same type): numbers by
 * value, strings bytewise. */
static int elem_cmp(const tsr_tensor *a, uint64_t i, const tsr_tensor *b, uint64_t j) {
    int32_t t = a->elem_type;
    if (t == TSR_STRING) {
        const tsr_string *x = (const tsr_string *)a->data + i, *y = (const tsr_string *)b->data + j;
        size_t m = x->size < y->size ? x->size : y->size;
        int r = m ? memcmp(x->data, y->data, m) : 0;
        return r ? r : (x->size > y->size) - (x->size < y->size);
    }
    if (ref_is_float(t)) {
        double x = ref_load(t, a->data, (size_t)i), y = ref_load(t, b->data, (size_t)j);
        return (x > y) - (x < y);
    }
    if (t == TSR_UINT64) {
        uint64_t x = ((const uint64_t *)a->data)[i], y = ((const uint64_t *)b->data)[j];
        return (x > y) - (x < y);
    }
    if (ref_is_int(t) || t == TSR_BOOL) {
        int64_t x = ref_load_i64(t, a->data, (size_t)i), y = ref_load_i64(t, b->data, (size_t)j);
        return (x > y) - (x < y);
    }
    /* Other types: raw bits give a consistent order for equality grouping. */
    unsigned bits = ref_tensor_type_bits(t);
    if (bits < 8) {
        uint8_t x = ref_tensor_get_bits(a->data, i, bits), y = ref_tensor_get_bits(b->data, j, bits);
        return (x > y) - (x < y);
    }
    size_t es = bits / 8;
    return memcmp((const char *)a->data + i * es, (const char *)b->data + j * es, es);
}

/* The slices Unique compares: `count` slices along an axis, each made of
 * `outer` runs of `inner` elements `stride` apart. */
typedef struct slices {
    const tsr_tensor *x;
    int64_t count, outer, inner, stride;
} slices;

static int slice_cmp(const slices *s, int64_t p, int64_t q) {
    for (int64_t o = 0; o < s->outer; o++) {
        for (int64_t i = 0; i < s->inner; i++) {
            int64_t base = o * s->stride + i;
            int r = elem_cmp(s->x, (uint64_t)(base + p * s->inner), s->x, (uint64_t)(base + q * s->inner));
            if (r) return r;
        }
    }
    return 0;
}

/* Stable merge sort of slice numbers, so equal slices keep input order and
 * the first of each run is the first occurrence. */
static void slice_sort(const slices *s, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t h = n / 2;
    slice_sort(s, v, tmp, h);
    slice_sort(s, v + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = slice_cmp(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(int64_t) * (size_t)n);
}

tsr_status *ref_tensor_unique(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y, *o_idx, *o_inv, *o_cnt;
    int64_t axis = 0, dims[REF_MAX_RANK];
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    bool flat = !ref_attr_has(c, "axis");
    bool sorted = ref_attr_int(c, "sorted", 1) != 0;
    slices s = {x, 0, 1, 1, 0};
    if (flat) {
        s.count = (int64_t)ref_numel(x);
    } else {
        int64_t a = ref_attr_int(c, "axis", 0);
        if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                           (int)x->rank);
        s.count = x->dims[axis];
        s.outer = ref_tensor_dims_prod(x->dims, 0, (int32_t)axis);
        s.inner = ref_tensor_dims_prod(x->dims, (int32_t)axis + 1, x->rank);
        s.stride = s.count * s.inner;
    }
    int64_t n = s.count;
    /* order: slices sorted (stably); group: each slice's unique number in
     * order of first occurrence; first: first occurrence of each unique. */
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    if (!order || !buf) {
        free(order);
        free(buf);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    int64_t *tmp = buf, *group = order + n, *first = order + 2 * n;
    int64_t *counts = buf + n, *rank_of = buf + 2 * n;
    for (int64_t i = 0; i < n; i++) order[i] = i;
    slice_sort(&s, order, tmp, n);
    /* Runs of equal slices in sorted order; the first of a run is the
     * earliest occurrence thanks to the stable sort. */
    int64_t u = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || slice_cmp(&s, order[k - 1], order[k]) != 0) first[u++] = order[k];
        group[order[k]] = u - 1; /* run number, in sorted order */
    }
    /* Output position of each run: sorted order, or by first occurrence. */
    if (sorted) {
        for (int64_t g = 0; g < u; g++) rank_of[g] = g;
    } else {
        /* Walk the input; a run's position is when it first appears. */
        int64_t next = 0;
        for (int64_t g = 0; g < u; g++) rank_of[g] = -1;
        for (int64_t i = 0; i < n; i++)
            if (rank_of[group[i]] < 0) rank_of[group[i]] = next++;
    }
    tsr_status *st = NULL;
    int64_t *pos_first = tmp; /* reuse: output position -> first occurrence */
    for (int64_t g = 0; g < u; g++) pos_first[rank_of[g]] = first[g];
    for (int64_t p = 0; p < u; p++) counts[p] = 0;
    for (int64_t i = 0; i < n; i++) counts[rank_of[group[i]]]++;
    int32_t r = flat ? 1 : x->rank;
    if (flat) dims[0] = u;
    else {
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
        dims[axis] = u;
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t p = 0; p < u && !st; p++)
        for (int64_t o = 0; o < s.outer && !st; o++)
            st = ref_tensor_mv_copy(c, y, (uint64_t)((o * u + p) * s.inner), x,
                                    (uint64_t)(o * s.stride + pos_first[p] * s.inner), (uint64_t)s.inner);
    if (st) goto done;
    if ((st = ref_tensor_out_new(c, 1, TSR_INT64, 1, &u, &o_idx))) goto done;
    if ((st = ref_tensor_out_new(c, 2, TSR_INT64, 1, &n, &o_inv))) goto done;
    if ((st = ref_tensor_out_new(c, 3, TSR_INT64, 1, &u, &o_cnt))) goto done;
    for (int64_t p = 0; p < u; p++) {
        ((int64_t *)o_idx->data)[p] = pos_first[p];
        ((int64_t *)o_cnt->data)[p] = counts[p];
    }
    for (int64_t i = 0; i < n; i++) ((int64_t *)o_inv->data)[i] = rank_of[group[i]];
done:
    free(order);
    free(buf);
    return st;
}
