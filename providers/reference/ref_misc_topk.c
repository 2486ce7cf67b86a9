/*
 * TopK: the k largest (or smallest) elements along an axis, with their
 * indices.
 *
 * Each slice along the axis is ordered on (key, index) pairs (qsort, or a
 * heap of the best k when k is small against the slice); ties go to the
 * lower index, and NaN counts as larger than every number,
 * as in numpy's sort that the ONNX reference uses. Output is always sorted,
 * which also satisfies sorted = 0 (order unspecified). Keys are compared in
 * their own kind (double, int64 or uint64), so 64-bit integers keep every
 * bit, and values are copied bytewise from the input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_misc.h"

typedef struct topk_entry {
    union {
        double f;
        int64_t i;
        uint64_t u;
    } key;
    int64_t index;
} topk_entry;

static int by_index(const topk_entry *a, const topk_entry *b) { return (a->index > b->index) - (a->index < b->index); }

static int order_f(const topk_entry *a, const topk_entry *b) {
    bool na = isnan(a->key.f), nb = isnan(b->key.f);
    if (na || nb) return (int)na - (int)nb;
    return (a->key.f > b->key.f) - (a->key.f < b->key.f);
}

static int order_i(const topk_entry *a, const topk_entry *b) { return (a->key.i > b->key.i) - (a->key.i < b->key.i); }

static int order_u(const topk_entry *a, const topk_entry *b) { return (a->key.u > b->key.u) - (a->key.u < b->key.u); }

/* qsort comparators: value order (ascending for smallest, descending for
 * largest), then ascending index. */
static int asc_f(const void *a, const void *b) {
    int o = order_f(a, b);
    return o ? o : by_index(a, b);
}
static int desc_f(const void *a, const void *b) {
    int o = order_f(b, a);
    return o ? o : by_index(a, b);
}
static int asc_i(const void *a, const void *b) {
    int o = order_i(a, b);
    return o ? o : by_index(a, b);
}
static int desc_i(const void *a, const void *b) {
    int o = order_i(b, a);
    return o ? o : by_index(a, b);
}
static int asc_u(const void *a, const void *b) {
    int o = order_u(a, b);
    return o ? o : by_index(a, b);
}
static int desc_u(const void *a, const void *b) {
    int o = order_u(b, a);
    return o ? o : by_index(a, b);
}

static bool is_unsigned(int32_t t) { return t == TSR_UINT8 || t == TSR_UINT16 || t == TSR_UINT32 || t == TSR_UINT64; }

static void load_key(int32_t t, const void *data, size_t at, topk_entry *e) {
    if (ref_is_float(t)) e->key.f = ref_load(t, data, at);
    else if (is_unsigned(t))
        e->key.u = t == TSR_UINT64 ? ((const uint64_t *)data)[at] : (uint64_t)ref_load_i64(t, data, at);
    else e->key.i = ref_load_i64(t, data, at);
}

/* Puts the k first entries of e[0..n) in cmp's order (a strict total
 * order: ties broken by index) at its start, sorted. A k much smaller than
 * n (a detector keeping 300 boxes of 25,200) keeps the best k in a heap
 * whose root is the worst kept, O(n log k), instead of sorting all n; the
 * result is the same entries in the same order. */
static void sift_down(topk_entry *h, int64_t size, int64_t at, int (*cmp)(const void *, const void *)) {
    for (;;) {
        int64_t worst = at, l = 2 * at + 1, r = l + 1;
        if (l < size && cmp(&h[l], &h[worst]) > 0) worst = l;
        if (r < size && cmp(&h[r], &h[worst]) > 0) worst = r;
        if (worst == at) return;
        topk_entry tmp = h[at];
        h[at] = h[worst];
        h[worst] = tmp;
        at = worst;
    }
}

static void first_k(topk_entry *e, int64_t n, int64_t k, int (*cmp)(const void *, const void *)) {
    if (k == 0) return;
    if (k * 8 > n) {
        qsort(e, (size_t)n, sizeof *e, cmp);
        return;
    }
    for (int64_t i = k / 2; i-- > 0;) sift_down(e, k, i, cmp);
    for (int64_t j = k; j < n; j++)
        if (cmp(&e[j], &e[0]) < 0) {
            e[0] = e[j];
            sift_down(e, k, 0, cmp);
        }
    qsort(e, (size_t)k, sizeof *e, cmp);
}

/* k from the K input (opset 10 on) or the attribute (opset 1). */
static tsr_status *read_k(ref_ctx *c, int64_t *k) {
    if (ref_opset(c) < 10) {
        if (!ref_attr_has(c, "k")) return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute 'k' is required");
        *k = ref_attr_int(c, "k", 0);
        return NULL;
    }
    const tsr_tensor *K = ref_in(c, 1);
    if (!K) return ref_err(c, TSR_ERR_INVALID_MODEL, "input K is missing");
    if (!ref_is_int(K->elem_type) || ref_numel(K) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "K must be one integer");
    *k = ref_load_i64(K->elem_type, K->data, 0);
    return NULL;
}

tsr_status *ref_misc_topk(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input X is missing");
    int32_t t = X->elem_type;
    if (!ref_is_float(t) && !ref_is_int(t))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "element type %d is not supported", (int)t);
    if (X->rank < 1 || X->rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has rank %d", (int)X->rank);
    int64_t axis, k = 0;
    if (!ref_axis(ref_attr_int(c, "axis", -1), X->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)ref_attr_int(c, "axis", -1), (int)X->rank);
    tsr_status *st = read_k(c, &k);
    if (st) return st;
    int64_t n = X->dims[axis];
    if (k < 0 || k > n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "k = %lld is outside [0, %lld]", (long long)k, (long long)n);
    bool largest = ref_opset(c) < 11 || ref_attr_int(c, "largest", 1) != 0;

    int64_t dims[REF_MAX_RANK], outer = 1, inner = 1;
    for (int32_t d = 0; d < X->rank; d++) {
        dims[d] = d == axis ? k : X->dims[d];
        if (d < axis) outer *= X->dims[d];
        else if (d > axis) inner *= X->dims[d];
    }
    tsr_tensor *V, *I;
    if ((st = ref_out(c, 0, t, X->rank, dims, &V)) || (st = ref_out(c, 1, TSR_INT64, X->rank, dims, &I))) return st;
    if (k == 0 || outer == 0 || inner == 0) return NULL;

    int (*cmp)(const void *, const void *);
    if (ref_is_float(t)) cmp = largest ? desc_f : asc_f;
    else if (is_unsigned(t)) cmp = largest ? desc_u : asc_u;
    else cmp = largest ? desc_i : asc_i;
    topk_entry *e = malloc((size_t)n * sizeof *e);
    if (!e) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    size_t es = ref_elem_size(t);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t j = 0; j < n; j++) {
                e[j].index = j;
                load_key(t, X->data, (size_t)((o * n + j) * inner + i), &e[j]);
            }
            first_k(e, n, k, cmp);
            for (int64_t j = 0; j < k; j++) {
                size_t to = (size_t)((o * k + j) * inner + i);
                size_t from = (size_t)((o * n + e[j].index) * inner + i);
                memcpy((char *)V->data + to * es, (const char *)X->data + from * es, es);
                ((int64_t *)I->data)[to] = e[j].index;
            }
        }
    free(e);
    return NULL;
}

int ref_misc_topk_check(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *x = tsr_util_node_input(host, node, 0);
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t)) {
        snprintf(why, why_size, "TopK on element type %d is not implemented", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}
