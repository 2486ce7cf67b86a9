/* Views of a graph or of a set of its nodes, as providers see them: the
 * nodes, the values they read from outside and the values others need. */
#include <stdlib.h>
#include <string.h>

#include "host_api.h"
#include "status.h"

void host_graph_view_free(struct tsr_graph *v) {
    if (!v) return;
    free(v->nodes);
    free(v->inputs);
    free(v->outputs);
    free(v);
}

tsr_status *host_graph_view_whole(ir_graph *g, struct tsr_graph **out) {
    struct tsr_graph *v = calloc(1, sizeof *v);
    if (!v) return TSR_NO_MEMORY();
    v->ir = g;
    v->nodes = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    v->inputs = malloc(sizeof(ir_value *) * (g->n_inputs + 1));
    v->outputs = malloc(sizeof(ir_value *) * (g->n_outputs + 1));
    if (!v->nodes || !v->inputs || !v->outputs) {
        host_graph_view_free(v);
        return TSR_NO_MEMORY();
    }
    /* memcpy from NULL is undefined even for 0 bytes (a subgraph with no inputs) */
    if (g->n_nodes) memcpy(v->nodes, g->nodes, sizeof(ir_node *) * g->n_nodes);
    if (g->n_inputs) memcpy(v->inputs, g->inputs, sizeof(ir_value *) * g->n_inputs);
    if (g->n_outputs) memcpy(v->outputs, g->outputs, sizeof(ir_value *) * g->n_outputs);
    v->n_nodes = g->n_nodes;
    v->n_inputs = g->n_inputs;
    v->n_outputs = g->n_outputs;
    *out = v;
    return NULL;
}

/* Marks in `used` (indexed by value index of g) every value of g that a
 * subgraph of `n` reads from the outer scope, at any depth. */
static void mark_outer_reads(const ir_graph *g, const ir_node *n, bool *used) {
    for (size_t a = 0; a < n->n_attrs; a++) {
        const ir_attr *at = &n->attrs[a];
        size_t ng = at->g ? 1 : (at->graphs ? at->count : 0);
        for (size_t k = 0; k < ng; k++) {
            const ir_graph *sg = at->g ? at->g : at->graphs[k];
            if (!sg) continue;
            for (size_t i = 0; i < sg->n_values; i++) {
                const ir_value *p = sg->values[i];
                while (p && p->is_outer && p->outer) {
                    p = p->outer;
                    if (p->index < g->n_values && g->values[p->index] == p) used[p->index] = true;
                }
            }
            for (size_t j = 0; j < sg->n_nodes; j++) mark_outer_reads(g, sg->nodes[j], used);
        }
    }
}

static bool push_unique(ir_value ***arr, size_t *n, ir_value *v) {
    for (size_t i = 0; i < *n; i++)
        if ((*arr)[i] == v) return true;
    ir_value **a = realloc(*arr, sizeof *a * (*n + 1));
    if (!a) return false;
    *arr = a;
    a[(*n)++] = v;
    return true;
}

tsr_status *host_graph_view_nodes(ir_graph *g, ir_node *const *nodes, size_t n,
                                  struct tsr_graph **out) {
    struct tsr_graph *v = calloc(1, sizeof *v);
    bool *in_set = calloc(g->n_nodes + 1, 1);
    bool *used_outside = calloc(g->n_values + 1, 1);
    tsr_status *s = NULL;
    if (!v || !in_set || !used_outside || !(v->nodes = malloc(sizeof(ir_node *) * (n + 1)))) {
        s = TSR_NO_MEMORY();
        goto done;
    }
    v->ir = g;
    memcpy(v->nodes, nodes, sizeof(ir_node *) * n);
    v->n_nodes = n;
    for (size_t i = 0; i < n; i++) in_set[nodes[i]->index] = true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *o = g->nodes[i];
        if (in_set[o->index]) continue;
        for (size_t k = 0; k < o->n_inputs; k++)
            if (o->inputs[k]) used_outside[o->inputs[k]->index] = true;
        mark_outer_reads(g, o, used_outside);
    }
    for (size_t i = 0; i < g->n_outputs; i++) used_outside[g->outputs[i]->index] = true;
    for (size_t i = 0; i < n && !s; i++) {
        const ir_node *nd = nodes[i];
        for (size_t k = 0; k < nd->n_inputs && !s; k++) {
            ir_value *iv = nd->inputs[k];
            if (!iv || (iv->producer && iv->producer->graph == g && in_set[iv->producer->index]))
                continue;
            if (!push_unique(&v->inputs, &v->n_inputs, iv)) s = TSR_NO_MEMORY();
        }
        /* What its subgraphs read from g is an input too (implicit). */
        bool has_graphs = false;
        for (size_t a = 0; a < nd->n_attrs; a++) has_graphs |= nd->attrs[a].g || nd->attrs[a].graphs;
        if (has_graphs && !s) {
            bool *reads = calloc(g->n_values + 1, 1);
            if (!reads) s = TSR_NO_MEMORY();
            else mark_outer_reads(g, nd, reads);
            for (size_t vi = 0; reads && vi < g->n_values && !s; vi++) {
                ir_value *iv = g->values[vi];
                if (!reads[vi] || (iv->producer && iv->producer->graph == g && in_set[iv->producer->index]))
                    continue;
                if (!push_unique(&v->inputs, &v->n_inputs, iv)) s = TSR_NO_MEMORY();
            }
            free(reads);
        }
        for (size_t k = 0; k < nd->n_outputs && !s; k++) {
            ir_value *ov = nd->outputs[k];
            if (ov && (used_outside[ov->index] || ov->observed) && !push_unique(&v->outputs, &v->n_outputs, ov))
                s = TSR_NO_MEMORY();
        }
    }
done:
    free(in_set);
    free(used_outside);
    if (s) {
        host_graph_view_free(v);
        return s;
    }
    *out = v;
    return NULL;
}
