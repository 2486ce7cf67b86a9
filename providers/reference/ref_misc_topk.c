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
 *
 * float32 has its own path (topk_f32) with the same results: each element
 * maps to a 32-bit rank (smaller is better: NaN first for largest, last for
 * smallest, -0 equal to +0) and, with its index, to one 64-bit word whose
 * unsigned order is exactly the (key, index) order above. A small k
 * (k * 8 <= n) gathers candidate words in a buffer, keeps the best k of it
 * (quickselect) whenever it fills, and scans the slice against the k-th
 * best kept, four floats to one vector compare, so most elements cost one
 * compare; a large k radix-sorts the ranks of the whole slice.
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

/* --- float32 ------------------------------------------------------------ */

/* The rank of float bits u: smaller is better. Numbers in their order with
 * -0 as +0, and every NaN above +inf, all equal (as order_f); flip = ~0
 * turns it round for largest. */
static inline uint32_t f32_rank(uint32_t u, uint32_t flip) {
    uint32_t a = u & 0x7fffffffu;
    uint32_t k = a == 0 ? 0x80000000u : u ^ ((0u - (u >> 31)) | 0x80000000u);
    if (a > 0x7f800000u) k = 0xffffffffu;
    return k ^ flip;
}

/* (rank, index): unsigned order is the output order, the index breaking
 * ties towards the lower one. */
static inline uint64_t f32_word(uint32_t u, uint32_t flip, int64_t j) {
    return (uint64_t)f32_rank(u, flip) << 32 | (uint64_t)j;
}

/* Max-heap of words: the root is the worst kept. */
static void wsift_down(uint64_t *h, int64_t size, int64_t at) {
    uint64_t v = h[at];
    for (;;) {
        int64_t l = 2 * at + 1, big = at;
        uint64_t bv = v;
        if (l < size && h[l] > bv) big = l, bv = h[l];
        if (l + 1 < size && h[l + 1] > bv) big = l + 1, bv = h[l + 1];
        if (big == at) break;
        h[at] = bv;
        at = big;
    }
    h[at] = v;
}

typedef float topk_v4f __attribute__((vector_size(16)));
typedef int32_t topk_v4i __attribute__((vector_size(16)));

/* Words ascending: a heap sort (the fallback of the two below). */
static void wheap_sort(uint64_t *a, int64_t n) {
    for (int64_t i = n / 2; i-- > 0;) wsift_down(a, n, i);
    for (int64_t end = n - 1; end > 0; end--) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        wsift_down(a, end, 0);
    }
}

static void winsertion_sort(uint64_t *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        int64_t p = i;
        for (; p > 0 && a[p - 1] > v; p--) a[p] = a[p - 1];
        a[p] = v;
    }
}

/* Hoare partition of a[0..n) (n > 16) around the median of three: on
 * return a[0..*j] <= pivot <= a[*i..n), and what lies between equals it. */
static void wpartition(uint64_t *a, int64_t n, int64_t *pi, int64_t *pj) {
    uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
    uint64_t p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int64_t i = 0, j = n - 1;
    while (i <= j) {
        while (a[i] < p) i++;
        while (a[j] > p) j--;
        if (i <= j) {
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
    }
    *pi = i;
    *pj = j;
}

/* Words ascending: introsort. */
static void wsort(uint64_t *a, int64_t n, int depth) {
    while (n > 16) {
        if (depth-- <= 0) {
            wheap_sort(a, n);
            return;
        }
        int64_t i, j;
        wpartition(a, n, &i, &j);
        if (j + 1 < n - i) {
            wsort(a, j + 1, depth);
            a += i;
            n -= i;
        } else {
            wsort(a + i, n - i, depth);
            n = j + 1;
        }
    }
    winsertion_sort(a, n);
}

/* The k smallest words of a[0..n) (0 < k < n) into a[0..k), in no order. */
static void wselect(uint64_t *a, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n; /* a[lo..hi) holds position k - 1 */
    for (int budget = 64; hi - lo > 16; budget--) {
        if (budget == 0) {
            wheap_sort(a + lo, hi - lo);
            return;
        }
        int64_t i, j;
        wpartition(a + lo, hi - lo, &i, &j);
        i += lo;
        j += lo;
        if (k - 1 <= j) hi = j + 1;
        else if (k - 1 >= i) lo = i;
        else return;
    }
    winsertion_sort(a + lo, hi - lo);
}

typedef float topk_v4f __attribute__((vector_size(16)));
typedef int32_t topk_v4i __attribute__((vector_size(16)));

/* The best k words of x[0..n) (0 < k < n) into w[0..k), ascending; w has
 * room for cap >= k + 32 words. Candidates are appended to w; when it is
 * full the best k of it are kept, and from then on only an element ranked
 * below the k-th of those is a candidate (at equal rank its index is the
 * higher). A vector test against that element's value, a superset of the
 * candidates (NaN elements pass it for largest), lets 16 elements through
 * at a time, to be ranked one by one. */
static void f32_best(const float *x, int64_t n, int64_t k, bool largest, uint64_t *w, int64_t cap) {
    uint32_t flip = largest ? 0xffffffffu : 0;
    const uint32_t *xu = (const uint32_t *)(const void *)x;
    uint64_t thr = (uint64_t)1 << 32; /* every rank is below it, until w first fills */
    float t = 0;
    int64_t cnt = 0, j = 0;
    while (j < n) {
        if (cnt > cap - 16) {
            wselect(w, cnt, k);
            cnt = k;
            uint64_t kth = w[0];
            for (int64_t q = 1; q < k; q++) kth = w[q] > kth ? w[q] : kth;
            thr = kth >> 32;
            t = x[(uint32_t)kth];
            if (t != t && largest) break; /* nothing beats k NaNs */
        }
        if (thr >> 32 == 0 && t == t) {
            topk_v4f tv = {t, t, t, t};
            for (; j + 16 <= n; j += 16) {
                topk_v4f a, b, c, d;
                memcpy(&a, x + j, sizeof a);
                memcpy(&b, x + j + 4, sizeof b);
                memcpy(&c, x + j + 8, sizeof c);
                memcpy(&d, x + j + 12, sizeof d);
                topk_v4i m;
                if (largest) m = (a > tv) | (a != a) | (b > tv) | (b != b) | (c > tv) | (c != c) | (d > tv) | (d != d);
                else m = (a < tv) | (b < tv) | (c < tv) | (d < tv);
                if (m[0] | m[1] | m[2] | m[3]) break;
            }
        }
        /* the 16 that passed (or the last n % 16), appended when candidates;
         * once there is a threshold, only the fours that pass it */
        int64_t e = j + 16 < n ? j + 16 : n;
        bool test = thr >> 32 == 0 && t == t;
        topk_v4f tv = {t, t, t, t};
        for (; j < e; j += 4) {
            if (test && j + 4 <= e) {
                topk_v4f a;
                memcpy(&a, x + j, sizeof a);
                topk_v4i m = largest ? (a > tv) | (a != a) : a < tv;
                if (!(m[0] | m[1] | m[2] | m[3])) continue;
            }
            int64_t e4 = j + 4 < e ? j + 4 : e;
            for (int64_t q = j; q < e4; q++) {
                uint32_t r = f32_rank(xu[q], flip);
                w[cnt] = (uint64_t)r << 32 | (uint64_t)q;
                cnt += r < thr;
            }
        }
        j = e;
    }
    if (cnt > k) wselect(w, cnt, k);
    wsort(w, k, 64);
}

/* All n words of x, ascending, into w (tmp: n more words): a stable LSD
 * radix sort on the rank, words made in index order. */
static void f32_sort_all(const float *x, int64_t n, bool largest, uint64_t *w, uint64_t *tmp) {
    uint32_t flip = largest ? 0xffffffffu : 0;
    const uint32_t *xu = (const uint32_t *)(const void *)x;
    for (int64_t j = 0; j < n; j++) w[j] = f32_word(xu[j], flip, j);
    if (n < 64) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t v = w[i];
            int64_t p = i;
            for (; p > 0 && w[p - 1] > v; p--) w[p] = w[p - 1];
            w[p] = v;
        }
        return;
    }
    static const int shifts[4] = {32, 40, 48, 56};
    size_t(*cnt)[256] = calloc(4, sizeof *cnt);
    if (!cnt) { /* no memory for counts: sort the words as they are */
        wsort(w, n, 64);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        for (int d = 0; d < 4; d++) cnt[d][(w[j] >> shifts[d]) & 255]++;
    uint64_t *src = w, *dst = tmp;
    for (int d = 0; d < 4; d++) {
        size_t *c = cnt[d], sum = 0;
        if (c[(src[0] >> shifts[d]) & 255] == (size_t)n) continue; /* one digit: nothing moves */
        for (int b = 0; b < 256; b++) {
            size_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (int64_t j = 0; j < n; j++) dst[c[(src[j] >> shifts[d]) & 255]++] = src[j];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != w) memcpy(w, src, (size_t)n * sizeof *w);
    free(cnt);
}

/* TopK of a float32 X: outer x n x inner, k in (0, n], n < 2^32. */
static tsr_status *topk_f32(ref_ctx *c, const float *x, int64_t outer, int64_t n, int64_t inner, int64_t k,
                            bool largest, float *v, int64_t *idx) {
    bool select = k * 8 <= n;
    int64_t cap = 2 * k + 64;
    if (cap > n + 32) cap = n + 32;
    uint64_t *w = malloc((size_t)(select ? cap : 2 * n) * sizeof *w);
    float *col = inner > 1 ? malloc((size_t)n * sizeof *col) : NULL;
    if (!w || (inner > 1 && !col)) {
        free(w);
        free(col);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *s = x + o * n * inner + i;
            if (inner > 1) {
                for (int64_t j = 0; j < n; j++) col[j] = s[j * inner];
                s = col;
            }
            if (select) f32_best(s, n, k, largest, w, cap);
            else f32_sort_all(s, n, largest, w, w + n);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (o * k + j) * inner + i, from = (int64_t)(uint32_t)w[j];
                memcpy(&v[at], &s[from], sizeof *v);
                idx[at] = from;
            }
        }
    free(w);
    free(col);
    return NULL;
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

    if (t == TSR_FLOAT && n <= (int64_t)UINT32_MAX)
        return topk_f32(c, X->data, outer, n, inner, k, largest, V->data, I->data);

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
