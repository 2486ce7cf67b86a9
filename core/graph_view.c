/* Views of a graph or of a set of its nodes, as providers see them: the
 * nodes, the values they read from outside and the values others need. */
#include <stdlib.h>
#include <string.h>

#include "graph_view.h"
#include "status.h"

void graph_view_free(struct tsr_graph *v) {
    if (!v) return;
    free(v->nodes);
    free(v->inputs);
    free(v->outputs);
    free(v->released);
    free(v);
}

struct tsr_graph graph_view_offer(ir_graph *g, ir_node **nodes, size_t n) {
    return (struct tsr_graph){.ir = g,
                              .n_nodes = n,
                              .nodes = nodes,
                              .n_inputs = g->n_inputs,
                              .inputs = g->inputs,
                              .n_outputs = g->n_outputs,
                              .outputs = g->outputs};
}

tsr_status *graph_view_whole(ir_graph *g, struct tsr_graph **out) {
    struct tsr_graph *v = calloc(1, sizeof *v);
    if (!v) return TSR_NO_MEMORY();
    v->ir = g;
    v->nodes = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    v->inputs = malloc(sizeof(ir_value *) * (g->n_inputs + 1));
    v->outputs = malloc(sizeof(ir_value *) * (g->n_outputs + 1));
    if (!v->nodes || !v->inputs || !v->outputs) {
        graph_view_free(v);
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

static bool push(ir_value ***arr, size_t *n, size_t *cap, ir_value *v) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        ir_value **a = realloc(*arr, sizeof *a * c);
        if (!a) return false;
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = v;
    return true;
}

static bool has_graphs(const ir_node *n) {
    for (size_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].g || n->attrs[a].graphs) return true;
    return false;
}

/* Values of g a node's subgraphs read (each once), appended to `list`;
 * `mark` (zero on entry, left zero) dedupes. */
static tsr_status *outer_reads_of(const ir_graph *g, const ir_node *n, bool *mark, ir_value ***list, size_t *count,
                                  size_t *cap) {
    bool *reads = calloc(g->n_values + 1, 1);
    if (!reads) return TSR_NO_MEMORY();
    mark_outer_reads(g, n, reads);
    tsr_status *s = NULL;
    for (size_t vi = 0; vi < g->n_values && !s; vi++)
        if (reads[vi] && !mark[vi]) {
            mark[vi] = true;
            if (!push(list, count, cap, g->values[vi])) s = TSR_NO_MEMORY();
        }
    for (size_t k = 0; k < *count; k++) mark[(*list)[k]->index] = false;
    free(reads);
    return s;
}

void graph_readers_free(graph_readers *r) {
    if (!r) return;
    free(r->total);
    free(r->inside);
    free(r->in_set);
    free(r->seen);
    free(r);
}

tsr_status *graph_readers_new(const ir_graph *g, graph_readers **out) {
    graph_readers *r = calloc(1, sizeof *r);
    if (!r) return TSR_NO_MEMORY();
    r->g = g;
    r->total = calloc(g->n_values + 1, sizeof *r->total);
    r->inside = calloc(g->n_values + 1, sizeof *r->inside);
    r->in_set = calloc(g->n_nodes + 1, 1);
    r->seen = calloc(g->n_values + 1, 1);
    tsr_status *s = r->total && r->inside && r->in_set && r->seen ? NULL : TSR_NO_MEMORY();
    ir_value **list = NULL;
    size_t count = 0, cap = 0;
    for (size_t i = 0; i < g->n_nodes && !s; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k]) r->total[n->inputs[k]->index]++;
        if (!has_graphs(n)) continue;
        count = 0;
        s = outer_reads_of(g, n, r->seen, &list, &count, &cap);
        for (size_t k = 0; k < count && !s; k++) r->total[list[k]->index]++;
    }
    free(list);
    /* g's outputs are read from outside every set */
    for (size_t i = 0; i < g->n_outputs && !s; i++)
        if (g->outputs[i]) r->total[g->outputs[i]->index]++;
    if (s) {
        graph_readers_free(r);
        return s;
    }
    *out = r;
    return NULL;
}

/* A value of the set is used outside when it has more readers in g than in
 * the set (a subgraph's reads count once per node holding it), is a graph
 * output or is kept observable. Everything here is O(set), given the
 * readers counted once for the graph: a partition of a 100,000-node chain
 * into single-node pieces was quadratic. */
tsr_status *graph_view_nodes_counted(graph_readers *r, ir_node *const *nodes, size_t n, struct tsr_graph **out) {
    const ir_graph *g = r->g;
    struct tsr_graph *v = calloc(1, sizeof *v);
    tsr_status *s = NULL;
    ir_value **sub = NULL, **touched = NULL;
    size_t n_sub = 0, sub_cap = 0, n_touched = 0, touched_cap = 0, in_cap = 0, out_cap = 0;
    if (!v || !(v->nodes = malloc(sizeof(ir_node *) * (n + 1)))) {
        free(v);
        return TSR_NO_MEMORY();
    }
    v->ir = (ir_graph *)g;
    memcpy(v->nodes, nodes, sizeof(ir_node *) * n);
    v->n_nodes = n;
    for (size_t i = 0; i < n; i++) r->in_set[nodes[i]->index] = true;
    /* readers inside the set */
    for (size_t i = 0; i < n && !s; i++) {
        const ir_node *nd = nodes[i];
        for (size_t k = 0; k < nd->n_inputs && !s; k++) {
            ir_value *iv = nd->inputs[k];
            if (!iv) continue;
            if (r->inside[iv->index]++ == 0 && !push(&touched, &n_touched, &touched_cap, iv)) s = TSR_NO_MEMORY();
        }
        if (s || !has_graphs(nd)) continue;
        n_sub = 0;
        s = outer_reads_of(g, nd, r->seen, &sub, &n_sub, &sub_cap);
        for (size_t k = 0; k < n_sub && !s; k++)
            if (r->inside[sub[k]->index]++ == 0 && !push(&touched, &n_touched, &touched_cap, sub[k]))
                s = TSR_NO_MEMORY();
    }
    /* inputs: read by the set, produced outside it (each once) */
    for (size_t i = 0; i < n && !s; i++) {
        const ir_node *nd = nodes[i];
        for (size_t k = 0; k < nd->n_inputs && !s; k++) {
            ir_value *iv = nd->inputs[k];
            if (!iv || r->seen[iv->index] ||
                (iv->producer && iv->producer->graph == g && r->in_set[iv->producer->index]))
                continue;
            r->seen[iv->index] = true;
            if (!push(&v->inputs, &v->n_inputs, &in_cap, iv)) s = TSR_NO_MEMORY();
        }
        /* what its subgraphs read from g is an input too (implicit) */
        if (s || !has_graphs(nd)) continue;
        n_sub = 0;
        s = outer_reads_of(g, nd, r->seen, &sub, &n_sub, &sub_cap);
        for (size_t k = 0; k < n_sub && !s; k++) {
            ir_value *iv = sub[k];
            if (r->seen[iv->index] || (iv->producer && iv->producer->graph == g && r->in_set[iv->producer->index]))
                continue;
            r->seen[iv->index] = true;
            if (!push(&v->inputs, &v->n_inputs, &in_cap, iv)) s = TSR_NO_MEMORY();
        }
    }
    for (size_t k = 0; k < v->n_inputs; k++) r->seen[v->inputs[k]->index] = false;
    /* outputs: produced by the set, needed outside it */
    for (size_t i = 0; i < n && !s; i++) {
        const ir_node *nd = nodes[i];
        for (size_t k = 0; k < nd->n_outputs && !s; k++) {
            ir_value *ov = nd->outputs[k];
            if (!ov || r->seen[ov->index]) continue;
            if ((r->total[ov->index] > r->inside[ov->index] || ov->is_graph_output || ov->observed)) {
                r->seen[ov->index] = true;
                if (!push(&v->outputs, &v->n_outputs, &out_cap, ov)) s = TSR_NO_MEMORY();
            }
        }
    }
    for (size_t k = 0; k < v->n_outputs; k++) r->seen[v->outputs[k]->index] = false;
    for (size_t k = 0; k < n_touched; k++) r->inside[touched[k]->index] = 0;
    for (size_t i = 0; i < n; i++) r->in_set[nodes[i]->index] = false;
    free(touched);
    free(sub);
    if (s) {
        graph_view_free(v);
        return s;
    }
    *out = v;
    return NULL;
}

tsr_status *graph_view_nodes(ir_graph *g, ir_node *const *nodes, size_t n, struct tsr_graph **out) {
    graph_readers *r;
    TSR_TRY(graph_readers_new(g, &r));
    tsr_status *s = graph_view_nodes_counted(r, nodes, n, out);
    graph_readers_free(r);
    return s;
}
