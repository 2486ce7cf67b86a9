/* Grouping claimed nodes into pieces. A piece must be convex — no path may
 * leave it and come back — or the host has to split it (into single nodes,
 * losing every fusion). Nodes are visited in topological order; a claimed
 * node joins the group of one of its producers unless some path from that
 * group has already left it on the way here.
 *
 * left[u] is the set of groups with a path to u that passes outside the
 * group (a bitset over group ids, one row per node). */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

#define ODN_GROUP_MAX_NODES 20000 /* left[] is nodes^2/8 bytes; bigger graphs group linearly */

typedef struct grouping {
    size_t n, words;
    uint64_t *left; /* n rows of `words` words */
    int *group;     /* per node: group id, or -1 when not claimed */
} grouping;

static uint64_t *row(grouping *g, size_t node) { return g->left + node * g->words; }
static bool has(grouping *g, size_t node, int grp) { return row(g, node)[grp / 64] >> (grp % 64) & 1u; }
static void add(grouping *g, size_t node, int grp) { row(g, node)[grp / 64] |= UINT64_C(1) << (grp % 64); }

/* Groups a and b may become one when no path runs between them through
 * other nodes (checked on the nodes before `limit`). */
static bool can_merge(grouping *g, size_t limit, int a, int b) {
    for (size_t u = 0; u < limit; u++) {
        if (g->group[u] == a && has(g, u, b)) return false;
        if (g->group[u] == b && has(g, u, a)) return false;
    }
    return true;
}

/* Moves group b into a, in memberships and in every left[] row. */
static void merge(grouping *g, size_t limit, int a, int b) {
    for (size_t u = 0; u < limit; u++) {
        if (g->group[u] == b) g->group[u] = a;
        if (has(g, u, b)) {
            row(g, u)[b / 64] &= ~(UINT64_C(1) << (b % 64));
            add(g, u, a);
        }
    }
}

/* Index of the node producing `v` among the first `limit` nodes, or -1
 * (by the index of every node output, built once). */
static int producer(const odn_index *producers, size_t limit, const tsr_value_info *v) {
    size_t i;
    return odn_index_get(producers, v, &i) && i < limit ? (int)i : -1;
}

/* Every node output of `graph` -> the index of its node. */
static bool index_producers(const tsr_graph *graph, size_t n, odn_index *out) {
    for (size_t i = 0; i < n; i++) {
        const tsr_node *nd = odn_host->graph_node(graph, i);
        for (size_t k = 0; k < odn_host->node_output_count(nd); k++) {
            const tsr_value_info *v = odn_host->node_output(nd, k);
            if (v && !odn_index_put(out, v, i)) return false;
        }
    }
    return true;
}

/* Too many nodes for path bitsets: a claimed node joins a group only when
 * every node-produced input it has comes from that one group (no path can
 * then leave the group and re-enter at it; the groups grow in topological
 * order, so each stays convex). Linear; chains still fuse whole. */
static int big_graph_groups(const tsr_graph *graph, const odn_index *producers, const bool *claimed, int *group) {
    size_t n = odn_host->graph_node_count(graph);
    int groups = 0;
    for (size_t v = 0; v < n; v++) {
        group[v] = -1;
        if (!claimed[v]) continue;
        const tsr_node *nd = odn_host->graph_node(graph, v);
        int joined = -1;
        bool single = true;
        for (size_t k = 0; k < odn_host->node_input_count(nd) && single; k++) {
            const tsr_value_info *in = odn_host->node_input(nd, k);
            int p = in ? producer(producers, v, in) : -1;
            if (p < 0) continue;
            if (group[p] < 0 || (joined >= 0 && group[p] != joined)) single = false;
            else joined = group[p];
        }
        group[v] = single && joined >= 0 ? joined : groups++;
    }
    return groups;
}

/* Seconds a fused piece takes: a primitive's fixed overhead per node and
 * about 100 GFLOP/s (one AVX-512 core runs the MLP at ~200 GFLOP/s; most
 * ops reach less). Negative (unknown) with a host too old to estimate. */
static double group_cost(const tsr_node *const *members, size_t count) {
    if (!TSR_HAS_MEMBER(odn_host, tsr_host_api, node_flops)) return -1.0;
    double t = 0.0;
    for (size_t i = 0; i < count; i++) {
        double f = odn_host->node_flops(members[i]);
        if (f < 0) return -1.0;
        t += 2e-6 + f / 100e9;
    }
    return t;
}

void odn_group_memo_clear(odn_group_memo *m) {
    free(m->nodes);
    free(m->group);
    m->nodes = NULL;
    m->group = NULL;
    m->count = 0;
}

typedef struct memo_entry {
    const tsr_node *node;
    int group;
} memo_entry;

static int by_node(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const memo_entry *)a)->node, y = (uintptr_t)((const memo_entry *)b)->node;
    return x < y ? -1 : x > y;
}

static int by_address(const void *key, const void *elem) {
    uintptr_t x = (uintptr_t)key, y = (uintptr_t) * (const tsr_node *const *)elem;
    return x < y ? -1 : x > y;
}

/* The memo's group of `n`, -2 when `n` is not in it. */
static int memo_group(const odn_group_memo *m, const tsr_node *n) {
    const tsr_node **hit = m->count ? bsearch(n, m->nodes, m->count, sizeof *m->nodes, by_address) : NULL;
    return hit ? m->group[hit - m->nodes] : -2;
}

/* Keeps the groups of the n nodes of `graph` (sorted by address). */
static void memo_save(odn_group_memo *m, const tsr_graph *graph, const int *group, size_t n) {
    odn_group_memo_clear(m);
    memo_entry *e = malloc((n + 1) * sizeof *e);
    m->nodes = malloc((n + 1) * sizeof *m->nodes);
    m->group = malloc((n + 1) * sizeof *m->group);
    if (!e || !m->nodes || !m->group) { /* no memo: a later offer groups afresh */
        free(e);
        odn_group_memo_clear(m);
        return;
    }
    for (size_t i = 0; i < n; i++) e[i] = (memo_entry){odn_host->graph_node(graph, i), group[i]};
    qsort(e, n, sizeof *e, by_node);
    for (size_t i = 0; i < n; i++) {
        m->nodes[i] = e[i].node;
        m->group[i] = e[i].group;
    }
    m->count = n;
    free(e);
}

/* When every offered node was offered last time, the groups then (seen
 * with every node between them) for the nodes claimed now; a node claimed
 * now but not then gets a group of its own. False when the offer has a new
 * node. */
static bool groups_from_memo(const odn_group_memo *m, const tsr_graph *graph, const bool *claimed, int *group,
                             int *groups) {
    size_t n = odn_host->graph_node_count(graph);
    int top = -1;
    for (size_t v = 0; v < n; v++) {
        int gid = memo_group(m, odn_host->graph_node(graph, v));
        if (gid == -2) return false;
        group[v] = claimed[v] ? gid : -1;
        if (group[v] > top) top = group[v];
    }
    for (size_t v = 0; v < n; v++)
        if (claimed[v] && group[v] < 0) group[v] = ++top;
    *groups = top + 1;
    return true;
}

tsr_status *odn_group_assign(const tsr_graph *graph, const bool *claimed, odn_group_memo *memo, int *group,
                             int *group_count) {
    grouping g = {.n = odn_host->graph_node_count(graph), .group = group};
    *group_count = 0;
    if (g.n == 0) return NULL;
    bool big = g.n > ODN_GROUP_MAX_NODES;
    g.words = big ? 1 : (g.n + 63) / 64;
    g.left = big ? NULL : calloc(g.n * g.words, sizeof(uint64_t));
    int *prods = NULL;
    odn_index producers = {0};
    tsr_status *s = NULL;
    int groups = 0;
    if (!big && !g.left) {
        s = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
        goto done;
    }
    if (memo && groups_from_memo(memo, graph, claimed, g.group, &groups)) goto done;
    if (!index_producers(graph, g.n, &producers)) {
        s = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
        goto done;
    }
    if (big) {
        groups = big_graph_groups(graph, &producers, claimed, g.group);
        if (memo) memo_save(memo, graph, g.group, g.n);
        goto done;
    }
    for (size_t v = 0; v < g.n; v++) {
        const tsr_node *n = odn_host->graph_node(graph, v);
        g.group[v] = -1;
        size_t np = odn_host->node_input_count(n);
        free(prods);
        prods = malloc((np + 1) * sizeof(int));
        if (!prods) {
            s = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
            goto done;
        }
        for (size_t k = 0; k < np; k++) {
            const tsr_value_info *in = odn_host->node_input(n, k);
            prods[k] = in ? producer(&producers, v, in) : -1;
        }
        if (claimed[v]) {
            /* producers' groups no path has left on its way here; the first
             * input's comes first: that is the chain fusion follows */
            for (size_t k = 0; k < np; k++) {
                int p = prods[k];
                if (p < 0 || g.group[p] < 0) continue;
                int cand = g.group[p];
                bool ok = cand != g.group[v];
                for (size_t j = 0; j < np && ok; j++)
                    if (prods[j] >= 0 && has(&g, (size_t)prods[j], cand)) ok = false;
                if (!ok) continue;
                if (g.group[v] < 0) g.group[v] = cand;
                else if (can_merge(&g, v, g.group[v], cand)) merge(&g, v, g.group[v], cand);
            }
            if (g.group[v] < 0) g.group[v] = groups++;
        }
        for (size_t k = 0; k < np; k++) {
            int p = prods[k];
            if (p < 0) continue;
            for (size_t w = 0; w < g.words; w++) row(&g, v)[w] |= row(&g, (size_t)p)[w];
            if (g.group[p] >= 0 && g.group[p] != g.group[v]) add(&g, v, g.group[p]);
        }
    }
    if (memo) memo_save(memo, graph, g.group, g.n);
done:
    odn_index_free(&producers);
    free(prods);
    free(g.left);
    *group_count = groups;
    return s;
}

tsr_status *odn_group_emit(const tsr_graph *graph, const int *group, int groups, tsr_claim_sink *sink) {
    size_t n = odn_host->graph_node_count(graph);
    /* members of each group in node order: a counting sort by group */
    size_t *start = calloc((size_t)groups + 2, sizeof *start);
    const tsr_node **members = calloc(n + 1, sizeof *members);
    tsr_status *s = NULL;
    if (!start || !members) {
        s = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
        goto done;
    }
    for (size_t v = 0; v < n; v++)
        if (group[v] >= 0) start[group[v] + 1]++;
    for (int grp = 0; grp < groups; grp++) start[grp + 1] += start[grp];
    for (size_t v = 0; v < n; v++)
        if (group[v] >= 0) members[start[group[v]]++] = odn_host->graph_node(graph, v);
    /* start[grp] is now the end of grp, which begins at the end of grp - 1 */
    for (int grp = 0; grp < groups && !s; grp++) {
        size_t begin = grp ? start[grp - 1] : 0, count = start[grp] - begin;
        if (count) s = odn_host->claim_piece(sink, members + begin, count, group_cost(members + begin, count));
    }
done:
    free(start);
    free(members);
    return s;
}
