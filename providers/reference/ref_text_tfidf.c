/*
 * TfIdfVectorizer: counts, per row of X, how often each n-gram of the pool
 * occurs (with up to max_skip_count items skipped between an n-gram's
 * items), then weighs the counts (TF, IDF or TFIDF).
 *
 * The pool lists n-grams by size: section i of pool_* (starting at
 * ngram_counts[i]) holds the (i+1)-grams, one after another, and n-gram
 * number g (counting across all sections) lands in output column
 * ngram_indexes[g]. Only sizes in [min_gram_length, max_gram_length] count.
 *
 * Strings are turned into integers first (their rank in the sorted, unique
 * pool strings; a string not in the pool can match nothing), so one integer
 * path serves both kinds of input. Each section is sorted so an n-gram is
 * found by binary search.
 *
 * As in ONNX Runtime and the ONNX reference, unigrams are counted once (at
 * skip 0), longer n-grams once per skip distance, and IDF/TFIDF weights are
 * indexed by output column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_text.h"

typedef struct gram {
    const int64_t *tok; /* n tokens */
    int64_t id;         /* position g in the pool */
} gram;

typedef struct section {
    size_t n;     /* gram size */
    size_t count; /* grams in it (0 when its size is not counted) */
    gram *grams;  /* sorted by tokens, then id */
} section;

typedef struct vectorizer {
    int64_t min_n, max_n, max_skip;
    int mode;               /* 1 TF, 2 IDF, 3 TFIDF */
    const int64_t *columns; /* ngram_indexes */
    size_t n_columns_attr;
    int64_t width; /* output columns: max(ngram_indexes) + 1 */
    const float *weights;
    size_t n_weights;
    /* Strings of pool_strings, sorted and unique (string pools only). */
    tsr_string *dict;
    size_t n_dict;
    const int64_t *pool_tok; /* the pool as tokens */
    int64_t *owned_tok;      /* pool_tok when made here (string pools) */
    size_t pool_size;
    section *sections;
    size_t n_sections;
} vectorizer;

static int str_cmp(const void *a, const void *b) {
    const tsr_string *x = a, *y = b;
    size_t n = x->size < y->size ? x->size : y->size;
    int r = n ? memcmp(x->data, y->data, n) : 0;
    if (r) return r;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* Token of a string: its index in the dictionary, or -1. */
static int64_t dict_token(const vectorizer *v, const char *s, size_t n) {
    tsr_string key = {s ? s : "", s ? n : 0};
    const tsr_string *hit = v->n_dict ? bsearch(&key, v->dict, v->n_dict, sizeof key, str_cmp) : NULL;
    return hit ? (int64_t)(hit - v->dict) : -1;
}

/* qsort comparators see no context, so the gram size being sorted travels
 * in a file-level variable set right before each qsort (kernels run one
 * node at a time per thread; _Thread_local keeps threads apart). */
static _Thread_local size_t sort_n;

static int tok_cmp(const int64_t *a, const int64_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int gram_cmp(const void *a, const void *b) {
    const gram *x = a, *y = b;
    int r = tok_cmp(x->tok, y->tok, sort_n);
    if (r) return r;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The pool position of the gram tok[0..n) (items `skip` apart), or -1.
 * A gram listed twice counts as its last listing, as in ONNX Runtime. */
static int64_t lookup(const section *s, const int64_t *tok, size_t skip) {
    size_t lo = 0, hi = s->count;
    /* Upper bound: the first gram greater than tok. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = 0;
        for (size_t i = 0; i < s->n && !r; i++) {
            int64_t a = s->grams[mid].tok[i], b = tok[i * skip];
            r = a < b ? -1 : a > b;
        }
        if (r <= 0) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const gram *g = &s->grams[lo - 1];
    for (size_t i = 0; i < s->n; i++)
        if (g->tok[i] != tok[i * skip]) return -1;
    return g->id;
}

static void vectorizer_free(vectorizer *v) {
    for (size_t i = 0; i < v->n_sections; i++) free(v->sections[i].grams);
    free(v->sections);
    free(v->dict);
    free(v->owned_tok);
}

/* Reads pool_int64s or pool_strings; *strings says which. */
static tsr_status *load_pool(ref_ctx *c, vectorizer *v, bool *strings) {
    size_t *pool_size = &v->pool_size;
    const tsr_attr *ps = c->host->node_attr_find(c->node, "pool_strings");
    const int64_t *pi;
    size_t n_int = ref_attr_ints(c, "pool_int64s", &pi);
    size_t n_str = ps ? c->host->attr_list_size(ps) : 0;
    if (n_int && n_str) return ref_err(c, TSR_ERR_INVALID_MODEL, "pool_int64s and pool_strings are both set");
    *strings = ps != NULL && !n_int;
    if (!*strings) {
        v->pool_tok = pi;
        *pool_size = n_int;
        return NULL;
    }
    *pool_size = n_str;
    if (!n_str) return NULL;
    v->dict = malloc(n_str * sizeof *v->dict);
    v->pool_tok = v->owned_tok = malloc(n_str * sizeof *v->owned_tok);
    if (!v->dict || !v->owned_tok) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n_str; i++) {
        size_t len;
        const char *s = c->host->attr_strings_at(ps, i, &len);
        v->dict[i] = (tsr_string){s ? s : "", s ? len : 0};
    }
    qsort(v->dict, n_str, sizeof *v->dict, str_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n_str; i++)
        if (!u || str_cmp(&v->dict[u - 1], &v->dict[i]) != 0) v->dict[u++] = v->dict[i];
    v->n_dict = u;
    for (size_t i = 0; i < n_str; i++) {
        size_t len;
        const char *s = c->host->attr_strings_at(ps, i, &len);
        v->owned_tok[i] = dict_token(v, s, len);
    }
    return NULL;
}

/* Reads and checks the attributes and builds the sorted sections. */
static tsr_status *vectorizer_load(ref_ctx *c, vectorizer *v, bool *string_pool) {
    memset(v, 0, sizeof *v);
    v->min_n = ref_attr_int(c, "min_gram_length", 0);
    v->max_n = ref_attr_int(c, "max_gram_length", 0);
    v->max_skip = ref_attr_int(c, "max_skip_count", 0);
    if (v->min_n < 1 || v->max_n < v->min_n)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "need 1 <= min_gram_length <= max_gram_length (have %lld and %lld)",
                       (long long)v->min_n, (long long)v->max_n);
    if (v->max_skip < 0 || v->max_skip > INT32_MAX)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "max_skip_count %lld is out of range", (long long)v->max_skip);
    const char *mode = ref_attr_str(c, "mode", "");
    v->mode = !strcmp(mode, "TF") ? 1 : !strcmp(mode, "IDF") ? 2 : !strcmp(mode, "TFIDF") ? 3 : 0;
    if (!v->mode) return ref_err(c, TSR_ERR_INVALID_MODEL, "mode must be TF, IDF or TFIDF, not '%.20s'", mode);
    v->n_columns_attr = ref_attr_ints(c, "ngram_indexes", &v->columns);
    v->n_weights = ref_attr_floats(c, "weights", &v->weights);
    v->width = 0;
    for (size_t i = 0; i < v->n_columns_attr; i++) {
        if (v->columns[i] < 0 || v->columns[i] >= INT32_MAX)
            return ref_err(c, TSR_ERR_INVALID_MODEL, "ngram_indexes[%zu] = %lld is out of range", i,
                           (long long)v->columns[i]);
        if (v->columns[i] + 1 > v->width) v->width = v->columns[i] + 1;
    }
    if (v->n_weights && v->n_weights < (size_t)v->width)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "weights has %zu values for %lld columns", v->n_weights,
                       (long long)v->width);

    tsr_status *st = load_pool(c, v, string_pool);
    if (st) return st;
    size_t pool_size = v->pool_size;
    const int64_t *counts;
    size_t n_sec = ref_attr_ints(c, "ngram_counts", &counts);
    v->sections = calloc(n_sec ? n_sec : 1, sizeof *v->sections);
    if (!v->sections) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    v->n_sections = n_sec;
    int64_t id = 0;
    for (size_t i = 0; i < n_sec; i++) {
        int64_t start = counts[i], end = i + 1 < n_sec ? counts[i + 1] : (int64_t)pool_size;
        if (start < 0 || end < start || end > (int64_t)pool_size)
            return ref_err(c, TSR_ERR_INVALID_MODEL, "ngram_counts must rise within the pool (entry %zu)", i);
        section *s = &v->sections[i];
        s->n = i + 1;
        size_t count = (size_t)(end - start) / s->n;
        if ((uint64_t)id + count > v->n_columns_attr)
            return ref_err(c, TSR_ERR_INVALID_MODEL, "ngram_indexes has %zu entries, fewer than the pool's n-grams",
                           v->n_columns_attr);
        if ((int64_t)s->n >= v->min_n && (int64_t)s->n <= v->max_n && count) {
            s->grams = malloc(count * sizeof *s->grams);
            if (!s->grams) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
            for (size_t k = 0; k < count; k++) s->grams[k] = (gram){v->pool_tok + start + k * s->n, id + (int64_t)k};
            s->count = count;
            sort_n = s->n;
            qsort(s->grams, count, sizeof *s->grams, gram_cmp);
        }
        id += (int64_t)count;
    }
    return NULL;
}

/* Adds row `tok[0..len)`'s n-gram counts into freq[0..width). */
static void count_row(const vectorizer *v, const int64_t *tok, size_t len, int64_t *freq) {
    for (int64_t skip = 1; skip <= v->max_skip + 1; skip++) {
        int64_t first = skip == 1 ? v->min_n : (v->min_n > 2 ? v->min_n : 2);
        if (first > v->max_n) break;
        for (size_t start = 0; start < len; start++) {
            /* The shortest counted gram must fit from here on. */
            if ((uint64_t)(first - 1) * (uint64_t)skip >= len - start) break;
            for (int64_t n = first; n <= v->max_n && (size_t)n <= v->n_sections; n++) {
                if ((uint64_t)(n - 1) * (uint64_t)skip >= len - start) break;
                const section *s = &v->sections[n - 1];
                if (!s->count) continue;
                int64_t g = lookup(s, tok + start, (size_t)skip);
                if (g >= 0) freq[v->columns[g]]++;
            }
        }
    }
}

int ref_text_check_tfidf(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "mode");
    size_t n = 0;
    const char *mode = a ? host->attr_string(a, &n) : "";
    if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF")) {
        snprintf(why, why_size, "mode must be TF, IDF or TFIDF");
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

tsr_status *ref_text_tfidf(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input X is missing");
    bool is_str = X->elem_type == TSR_STRING;
    if (!is_str && X->elem_type != TSR_INT32 && X->elem_type != TSR_INT64)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must be string, int32 or int64");
    if (X->rank > 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have shape [C] or [N, C]");
    size_t rows = X->rank == 2 ? (size_t)X->dims[0] : 1;
    size_t len = X->rank == 0 ? 1 : (size_t)X->dims[X->rank - 1];

    vectorizer v;
    bool string_pool = false;
    int64_t *tok = NULL, *freq = NULL;
    tsr_status *st = vectorizer_load(c, &v, &string_pool);
    if (st) goto done;
    if (string_pool != is_str && v.pool_size) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X is %s but the pool holds %s", is_str ? "strings" : "integers",
                     string_pool ? "strings" : "integers");
        goto done;
    }
    int64_t dims[2] = {(int64_t)rows, v.width};
    tsr_tensor *Y;
    if (X->rank == 2) {
        if ((uint64_t)rows > SIZE_MAX / sizeof(float) / (uint64_t)(v.width ? v.width : 1)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Y would be too large");
            goto done;
        }
        st = ref_out(c, 0, TSR_FLOAT, 2, dims, &Y);
    } else {
        st = ref_out(c, 0, TSR_FLOAT, 1, dims + 1, &Y);
    }
    if (st) goto done;
    tok = malloc((len ? len : 1) * sizeof *tok);
    freq = malloc((size_t)(v.width ? v.width : 1) * sizeof *freq);
    if (!tok || !freq) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    float *y = Y->data;
    for (size_t r = 0; r < rows; r++) {
        for (size_t i = 0; i < len; i++) {
            size_t at = r * len + i;
            if (is_str) {
                const tsr_string *s = (const tsr_string *)X->data + at;
                tok[i] = dict_token(&v, s->data, s->size);
            } else {
                tok[i] = ref_load_i64(X->elem_type, X->data, at);
            }
        }
        memset(freq, 0, (size_t)v.width * sizeof *freq);
        count_row(&v, tok, len, freq);
        for (int64_t k = 0; k < v.width; k++) {
            double f = (double)freq[k], w = v.n_weights ? v.weights[k] : 1.0;
            double out = v.mode == 1 ? f : v.mode == 2 ? (f > 0 ? w : 0.0) : w * f;
            y[r * (size_t)v.width + (size_t)k] = (float)out;
        }
    }
done:
    free(tok);
    free(freq);
    vectorizer_free(&v);
    return st;
}
