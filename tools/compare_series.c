/*
 * One value over the runs of its body. The library hands a value made
 * inside a control-flow body back as a sequence with one item per run of
 * the body, nested one level per enclosing body (tessera.h, "Values inside
 * control-flow bodies"); here the baseline's and the compared set's items
 * are paired by position at every level and measured one by one, each
 * tagged with its chain of indices (outermost first), so a divergence can
 * be placed in an iteration. A main-graph value is a series of one item.
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

typedef struct builder {
    cmpx_series *s;
    cmp_tolerance tol;
    size_t chain[CMPX_MAX_DEPTH];
    bool failed;
} builder;

static void push(builder *b, const tsr_value *base, const cmpx_stats *st) {
    cmpx_series *s = b->s;
    size_t n = s->count + 1, d = s->depth;
    size_t *chains = realloc(s->chains, (n * d + 1) * sizeof *chains);
    if (chains) s->chains = chains;
    cmpx_stats *stats = realloc(s->stats, n * sizeof *stats);
    if (stats) s->stats = stats;
    const tsr_value **bases = realloc(s->base, n * sizeof *bases);
    if (bases) s->base = bases;
    if (!chains || !stats || !bases) {
        b->failed = true;
        return;
    }
    if (d) memcpy(&s->chains[s->count * d], b->chain, d * sizeof *b->chain);
    s->stats[s->count] = *st;
    s->base[s->count] = base;
    s->count++;
}

static void walk(builder *b, const tsr_value *base, const tsr_value *got, size_t level) {
    if (level == b->s->depth) {
        cmpx_stats st;
        cmpx_measure(base, got, b->tol, &st);
        push(b, base, &st);
        return;
    }
    bool seqs = tsr_value_get_kind(base) == TSR_VALUE_SEQUENCE && tsr_value_get_kind(got) == TSR_VALUE_SEQUENCE;
    size_t nb = seqs ? tsr_value_count(base) : 0, ng = seqs ? tsr_value_count(got) : 0;
    for (size_t i = 0; i < nb && i < ng && !b->failed; i++) {
        b->chain[level] = i;
        walk(b, tsr_value_item(base, i), tsr_value_item(got, i), level + 1);
    }
    if (seqs && nb == ng) return;
    /* The body ran a different number of times (a loop condition that
     * differs): one item, not comparable, where the runs part. */
    cmpx_stats st;
    memset(&st, 0, sizeof st);
    snprintf(st.why, sizeof st.why,
             seqs ? "the body ran %zu times here, %zu in the baseline" : "not a sequence of the body's runs", ng, nb);
    st.count = 1;
    st.mismatches = 1;
    b->chain[level] = nb < ng ? nb : ng;
    for (size_t k = level + 1; k < b->s->depth; k++) b->chain[k] = 0;
    push(b, NULL, &st);
}

bool cmpx_series_measure(const tsr_value *base, const tsr_value *got, size_t depth, cmp_tolerance tol,
                         cmpx_series *out) {
    memset(out, 0, sizeof *out);
    out->depth = depth < CMPX_MAX_DEPTH ? depth : CMPX_MAX_DEPTH;
    builder b = {out, tol, {0}, false};
    walk(&b, base, got, 0);
    if (b.failed) cmpx_series_free(out);
    return !b.failed;
}

void cmpx_series_free(cmpx_series *s) {
    free(s->chains);
    free(s->stats);
    free(s->base);
    memset(s, 0, sizeof *s);
}

static int chain_cmp(const size_t *a, const size_t *b, size_t depth) {
    for (size_t i = 0; i < depth; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

size_t cmpx_series_find(const cmpx_series *s, const size_t *chain) {
    /* Items come in run order, which is the chains' lexicographic order. */
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = chain_cmp(&s->chains[mid * s->depth], chain, s->depth);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return SIZE_MAX;
}
