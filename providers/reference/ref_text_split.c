/*
 * StringSplit: splits each string of X on `delimiter` into Y (one more axis,
 * padded with empty strings to the longest split) and Z (the count per
 * element), as Python's str.split does:
 *   - with a delimiter, consecutive delimiters delimit empty strings;
 *   - without one (or with ""), runs of whitespace separate and leading or
 *     trailing whitespace yields nothing;
 *   - at most `maxsplit` splits, the rest of the string being the last piece.
 * Each string is split twice: once to size Y, once to fill it.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_text.h"

typedef struct splitter {
    const char *delim; /* NULL: split on whitespace */
    size_t delim_size;
    int64_t maxsplit; /* < 0: unlimited */
} splitter;

static bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

/* Where delim first occurs in s[from..n), or n. */
static size_t find(const char *s, size_t n, size_t from, const char *d, size_t dn) {
    for (size_t i = from; i + dn <= n; i++)
        if (memcmp(s + i, d, dn) == 0) return i;
    return n;
}

/* Splits s[0..n); returns the piece count. When Y is given, the pieces go
 * to Y's elements from `base` on. */
static tsr_status *split_one(ref_ctx *c, const splitter *sp, const char *s, size_t n, tsr_tensor *Y, size_t base,
                             int64_t *count) {
    if (!s) s = ""; /* an empty string element may have no data (n is 0) */
    int64_t k = 0;
    tsr_status *st = NULL;
#define EMIT(from, to)                                                                                                 \
    do {                                                                                                               \
        if (Y && (st = c->host->tensor_set_string(Y, base + (size_t)k, s + (from), (size_t)((to) - (from)))))          \
            return st;                                                                                                 \
        k++;                                                                                                           \
    } while (0)
    if (sp->delim) {
        size_t start = 0;
        while (sp->maxsplit < 0 || k < sp->maxsplit) {
            size_t at = find(s, n, start, sp->delim, sp->delim_size);
            if (at == n) break;
            EMIT(start, at);
            start = at + sp->delim_size;
        }
        EMIT(start, n);
    } else {
        size_t i = 0;
        for (;;) {
            while (i < n && is_space(s[i])) i++;
            if (i == n) break;
            if (sp->maxsplit >= 0 && k == sp->maxsplit) {
                EMIT(i, n);
                break;
            }
            size_t j = i;
            while (j < n && !is_space(s[j])) j++;
            EMIT(i, j);
            i = j;
        }
    }
#undef EMIT
    *count = k;
    return NULL;
}

tsr_status *ref_text_string_split(ref_ctx *c) {
    const tsr_tensor *X;
    const tsr_string *xs;
    tsr_status *st = ref_text_in_strings(c, 0, &X, &xs);
    if (st) return st;
    if (X->rank >= REF_MAX_RANK)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has too many dimensions (%d)", (int)X->rank);
    splitter sp = {NULL, 0, ref_attr_int(c, "maxsplit", -1)};
    const tsr_attr *da = c->host->node_attr_find(c->node, "delimiter");
    if (da) {
        sp.delim = c->host->attr_string(da, &sp.delim_size);
        if (!sp.delim_size) sp.delim = NULL;
    }

    size_t n = (size_t)ref_numel(X);
    tsr_tensor *Z, *Y;
    if ((st = ref_out(c, 1, TSR_INT64, X->rank, X->dims, &Z))) return st;
    int64_t *counts = Z->data, widest = 0;
    for (size_t i = 0; i < n; i++) {
        if ((st = split_one(c, &sp, xs[i].data, xs[i].size, NULL, 0, &counts[i]))) return st;
        if (counts[i] > widest) widest = counts[i];
    }
    int64_t dims[REF_MAX_RANK];
    for (int32_t d = 0; d < X->rank; d++) dims[d] = X->dims[d];
    dims[X->rank] = widest;
    if (widest && (uint64_t)n > SIZE_MAX / sizeof(tsr_string) / (uint64_t)widest)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Y would be too large");
    if ((st = ref_out(c, 0, TSR_STRING, X->rank + 1, dims, &Y))) return st;
    /* Y's elements start empty, which is the padding. */
    for (size_t i = 0; i < n; i++) {
        int64_t k;
        if ((st = split_one(c, &sp, xs[i].data, xs[i].size, Y, i * (size_t)widest, &k))) return st;
    }
    return NULL;
}
