/* Helpers of the load-time rewrites (core/rewrite_util.h). */
#include "rewrite_util.h"

#include <stdlib.h>
#include <string.h>

static void count_value(const ir_graph *g, reader_table *t, const ir_value *v, ir_node *n) {
    if (!v || v->index >= g->n_values || g->values[v->index] != v) return; /* another graph's */
    t->count[v->index]++;
    if (n) t->last[v->index] = n;
}

bool reader_table_make(const ir_graph *g, reader_table *t) {
    t->count = calloc(g->n_values + 1, sizeof *t->count);
    t->last = calloc(g->n_values + 1, sizeof *t->last);
    if (!t->count || !t->last) {
        reader_table_free(t);
        return false;
    }
    for (size_t i = 0; i < g->n_outputs; i++) count_value(g, t, g->outputs[i], NULL);
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) count_value(g, t, n->inputs[k], n);
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t gs = at->g ? 1 : at->graphs ? at->count : 0;
            for (size_t j = 0; j < gs; j++) {
                const ir_graph *sg = at->g ? at->g : at->graphs[j];
                for (size_t x = 0; sg && x < sg->n_values; x++)
                    if (sg->values[x]->is_outer) count_value(g, t, sg->values[x]->outer, NULL);
            }
        }
    }
    return true;
}

void reader_table_free(reader_table *t) {
    free(t->count);
    free(t->last);
    t->count = NULL;
    t->last = NULL;
}

bool rewrite_is_op(const ir_node *n, const char *op) { return strcmp(n->op_type, op) == 0 && n->domain[0] == 0; }

int32_t transpose_perm(const ir_node *t, int64_t *p) {
    const ir_attr *a = ir_node_attr(t, "perm");
    int32_t in_rank = t->inputs[0]->type.rank, r;
    if (!a) {
        if (in_rank < 1 || in_rank > IR_MAX_RANK) return -1;
        for (int32_t i = 0; i < in_rank; i++) p[i] = in_rank - 1 - i; /* default: dims reversed */
        return in_rank;
    }
    if (a->type != TSR_ATTR_INTS || a->count < 1 || a->count > IR_MAX_RANK) return -1;
    r = (int32_t)a->count;
    if (in_rank >= 0 && in_rank != r) return -1;
    bool seen[IR_MAX_RANK] = {false};
    for (int32_t i = 0; i < r; i++) {
        if (a->ints[i] < 0 || a->ints[i] >= r || seen[a->ints[i]]) return -1;
        seen[a->ints[i]] = true;
        p[i] = a->ints[i];
    }
    return r;
}
