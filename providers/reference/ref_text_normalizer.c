/*
 * StringNormalizer: drops the elements of a [C] or [1, C] string tensor that
 * are stop words, then upper- or lower-cases the rest.
 *
 * Stop words match whole elements (ONNX Runtime's behaviour, which the
 * conformance cases follow), case-insensitively unless is_case_sensitive;
 * "case-insensitive" means both sides are lower-cased in the node's locale
 * before comparing. When every element is dropped the output is one empty
 * string, shaped [1] or [1, 1], as the operator defines.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_text.h"

/* A stop word (or an element) as bytes; `owned` is data when it was
 * allocated here (a case-mapped copy), else NULL. */
typedef struct word {
    const char *data;
    size_t size;
    char *owned;
} word;

static int word_cmp(const void *a, const void *b) {
    const word *x = a, *y = b;
    size_t n = x->size < y->size ? x->size : y->size;
    int r = n ? memcmp(x->data, y->data, n) : 0;
    if (r) return r;
    return x->size < y->size ? -1 : x->size > y->size;
}

static void words_free(word *w, size_t n) {
    if (!w) return;
    for (size_t i = 0; i < n; i++) free(w[i].owned);
    free(w);
}

/* Lower-cases s into *w (a new buffer) or, when `lower` is false, points *w
 * at s. */
static tsr_status *fold(ref_ctx *c, const ref_text_case *m, bool lower, const char *s, size_t n, word *w) {
    *w = (word){s, n, NULL};
    if (!lower) return NULL;
    int r = ref_text_case_map(m, false, s, n, &w->owned, &w->size);
    if (r == -1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "a string is not valid UTF-8");
    if (r) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    w->data = w->owned;
    return NULL;
}

/* The stop words, folded as the comparison needs, sorted for bsearch. */
static tsr_status *load_stopwords(ref_ctx *c, const ref_text_case *m, bool lower, word **out, size_t *count) {
    const tsr_attr *a = c->host->node_attr_find(c->node, "stopwords");
    size_t n = a ? c->host->attr_list_size(a) : 0;
    *out = NULL;
    *count = 0;
    if (!n) return NULL;
    word *w = calloc(n, sizeof *w);
    if (!w) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *s = c->host->attr_strings_at(a, i, &len);
        tsr_status *st = fold(c, m, lower, s ? s : "", s ? len : 0, &w[i]);
        if (st) {
            words_free(w, i);
            return st;
        }
    }
    qsort(w, n, sizeof *w, word_cmp);
    *out = w;
    *count = n;
    return NULL;
}

static bool is_stopword(const word *stops, size_t n, const word *w) {
    return n && bsearch(w, stops, n, sizeof *stops, word_cmp) != NULL;
}

/* Writes element `idx` of Y: s, case-changed as asked. */
static tsr_status *put(ref_ctx *c, const ref_text_case *m, int action, tsr_tensor *Y, size_t idx, const tsr_string *s) {
    if (action == 0) return c->host->tensor_set_string(Y, idx, s->data, s->size);
    char *buf;
    size_t len;
    int r = ref_text_case_map(m, action > 0, s->data, s->size, &buf, &len);
    if (r == -1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "a string is not valid UTF-8");
    if (r) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    tsr_status *st = c->host->tensor_set_string(Y, idx, buf, len);
    free(buf);
    return st;
}

tsr_status *ref_text_string_normalizer(ref_ctx *c) {
    const tsr_tensor *X;
    const tsr_string *xs;
    tsr_status *st = ref_text_in_strings(c, 0, &X, &xs);
    if (st) return st;
    if (X->rank != 1 && !(X->rank == 2 && X->dims[0] == 1))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have shape [C] or [1, C] (it has rank %d)", (int)X->rank);
    const char *act = ref_attr_str(c, "case_change_action", "NONE");
    int action; /* -1 lower, 0 none, +1 upper */
    if (strcmp(act, "NONE") == 0) action = 0;
    else if (strcmp(act, "LOWER") == 0) action = -1;
    else if (strcmp(act, "UPPER") == 0) action = 1;
    else return ref_err(c, TSR_ERR_INVALID_MODEL, "case_change_action must be NONE, LOWER or UPPER, not '%.40s'", act);
    bool insensitive = ref_attr_int(c, "is_case_sensitive", 0) == 0;

    ref_text_case *m = ref_text_case_open(ref_attr_str(c, "locale", ""));
    if (!m) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    word *stops = NULL;
    size_t n_stops = 0;
    size_t n = (size_t)ref_numel(X), kept = 0;
    bool *keep = malloc(n ? n : 1);
    if (!keep) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if ((st = load_stopwords(c, m, insensitive, &stops, &n_stops))) goto done;
    for (size_t i = 0; i < n; i++) {
        keep[i] = true;
        if (!n_stops) {
            kept++;
            continue;
        }
        word w;
        if ((st = fold(c, m, insensitive, xs[i].data, xs[i].size, &w))) goto done;
        keep[i] = !is_stopword(stops, n_stops, &w);
        free(w.owned);
        kept += keep[i];
    }

    int64_t dims[2] = {1, kept ? (int64_t)kept : 1};
    tsr_tensor *Y;
    if (X->rank == 1) dims[0] = dims[1];
    if ((st = ref_out(c, 0, TSR_STRING, X->rank, dims, &Y))) goto done;
    /* Y's strings start empty, which is also what an all-dropped X gives. */
    for (size_t i = 0, o = 0; i < n; i++) {
        if (!keep[i]) continue;
        if ((st = put(c, m, action, Y, o++, &xs[i]))) goto done;
    }
done:
    free(keep);
    words_free(stops, n_stops);
    ref_text_case_close(m);
    return st;
}
