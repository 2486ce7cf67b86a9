/* The partitioner's side of function-op expansion: replacing the function
 * ops nobody claimed, and the records the assignment report shows. */
#include "partition_expand.h"

#include <stdlib.h>
#include <string.h>

#include "status.h"

/* Replaces every unclaimed function op by its body: bodies are appended
 * first, then moved into place in one pass, so expanding many nodes of a
 * large graph stays linear. */
tsr_status *partition_expand_unclaimed(ir_graph *g, const bool *assigned, expansion **log, size_t *n_log,
                                       size_t *n_expanded) {
    *n_expanded = 0;
    size_t n = 0;
    ir_node **todo = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    size_t *first_new = malloc(sizeof(size_t) * (g->n_nodes + 1));
    if (!todo || !first_new) {
        free(todo);
        free(first_new);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!assigned[i]) todo[n++] = g->nodes[i];
    tsr_status *s = NULL;
    size_t done = 0; /* todo[0..done) are expanded, in order */
    for (size_t i = 0; i < n && !s; i++) {
        ir_function *f;
        bool owned;
        s = function_find(todo[i], &f, &owned);
        if (s || !f) continue;
        expansion *nl = realloc(*log, sizeof *nl * (*n_log + 1));
        if (!nl) s = TSR_NO_MEMORY();
        if (nl) *log = nl;
        if (!s) s = function_expand_append(g, todo[i], f, &nl[*n_log], &first_new[done]);
        if (!s) {
            (*n_log)++;
            todo[done++] = todo[i];
        }
        if (owned) ir_function_free(f);
    }
    if (!s && done) {
        first_new[done] = g->n_nodes;
        s = ir_graph_splice_nodes(g, done, todo, first_new);
    }
    free(todo);
    free(first_new);
    *n_expanded = done;
    if (done && g->view) {
        /* The whole-graph view lists the replaced nodes; it is remade on demand. */
        graph_view_free(g->view);
        g->view = NULL;
    }
    return s;
}

tsr_status *partition_depth_error(const ir_graph *g, const bool *assigned, int rounds) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (assigned[i]) continue;
        const ir_node *n = g->nodes[i];
        ir_function *f;
        bool owned;
        TSR_TRY(function_find(n, &f, &owned));
        if (!f) continue;
        if (owned) ir_function_free(f);
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "node '%s' (%s%s%s, from '%s'): function ops still unexpanded after %d "
                         "levels of expansion, over the function_depth limit (%d); a function "
                         "that calls itself?",
                         n->name, n->domain, n->domain[0] ? "." : "", n->op_type, n->origin ? n->origin : n->name,
                         rounds, rounds);
    }
    return NULL;
}

static int cmp_expansion_node(const void *a, const void *b) {
    const expansion *x = *(expansion *const *)a, *y = *(expansion *const *)b;
    return strcmp(x->node, y->node);
}

/* Finds the top-level record for `name` in `sorted` (n entries). */
static expansion *find_top_level(expansion **sorted, size_t n, const char *name) {
    expansion key = {.node = (char *)name};
    expansion *kp = &key;
    expansion **hit = n ? bsearch(&kp, sorted, n, sizeof *sorted, cmp_expansion_node) : NULL;
    return hit ? *hit : NULL;
}

/* Hands this call's expansion records to `out` and sets each top-level
 * record's total_nodes. Nodes an earlier call expanded (the graph keeps their
 * origin, not their op) get one record per origin. Body nodes sit together
 * where their node was, so one pass over runs of equal origin does it. */
tsr_status *partition_collect_expansions(const ir_graph *g, expansion *log, size_t n_log, partition *out) {
    size_t runs = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const char *o = g->nodes[i]->origin, *prev = i ? g->nodes[i - 1]->origin : NULL;
        if (o && (!prev || strcmp(o, prev) != 0)) runs++;
    }
    out->expanded = calloc(n_log + runs + 1, sizeof *out->expanded);
    expansion **sorted = malloc(sizeof(expansion *) * (n_log + 1));
    if (!out->expanded || !sorted) {
        free(sorted);
        return TSR_NO_MEMORY();
    }
    size_t n_top = 0;
    for (size_t i = 0; i < n_log; i++) {
        out->expanded[out->n_expanded] = log[i];
        memset(&log[i], 0, sizeof log[i]);
        if (!out->expanded[out->n_expanded].origin) sorted[n_top++] = &out->expanded[out->n_expanded];
        out->n_expanded++;
    }
    qsort(sorted, n_top, sizeof *sorted, cmp_expansion_node);
    tsr_status *s = NULL;
    for (size_t i = 0; i < g->n_nodes && !s;) {
        const char *origin = g->nodes[i]->origin;
        size_t j = i + 1;
        while (origin && j < g->n_nodes && g->nodes[j]->origin && strcmp(g->nodes[j]->origin, origin) == 0) j++;
        if (origin) {
            expansion *e = find_top_level(sorted, n_top, origin);
            if (!e) {
                e = &out->expanded[out->n_expanded];
                e->node = strdup(origin);
                e->op = strdup("");
                e->domain = strdup("");
                if (!e->node || !e->op || !e->domain) {
                    expansion_clear(e);
                    s = TSR_NO_MEMORY();
                    break;
                }
                e->body_nodes = j - i;
                out->n_expanded++;
            }
            e->total_nodes += j - i;
        }
        i = j;
    }
    free(sorted);
    return s;
}
