/* Graph validation and topological order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_heap.h"
#include "ir.h"
#include "op_arity.h"
#include "status.h"

static void label_of(char *buf, size_t size, const ir_node *n) {
    if (n->name && *n->name) snprintf(buf, size, "'%s'", n->name);
    else snprintf(buf, size, "<%s>", n->op_type ? n->op_type : "?");
}

static tsr_status *node_err(const ir_node *n, size_t i, const char *fmt, const char *arg) {
    char nl[160];
    label_of(nl, sizeof nl, n);
    tsr_status *inner = tsr_error(TSR_ERR_INVALID_MODEL, fmt, arg);
    return tsr_error_wrap(inner, "graph.node[%zu] %s", i, nl);
}

/* --- opset scope ------------------------------------------------------------ */

typedef struct scope {
    const ir_model *model;
    const ir_function *function; /* when the graph is (inside) a function body */
} scope;

static scope scope_of(const ir_graph *g) {
    const ir_graph *root = g;
    while (root->parent) root = root->parent;
    scope s = {root->model, NULL};
    if (s.model && root != s.model->graph)
        for (size_t i = 0; i < s.model->n_functions; i++)
            if (s.model->functions[i]->body == root) s.function = s.model->functions[i];
    return s;
}

static bool domain_known(const scope *s, const ir_node *n) {
    const char *d = n->domain ? n->domain : "";
    if (strcmp(d, "ai.onnx") == 0) d = "";
    if (s->function)
        for (size_t i = 0; i < s->function->n_opsets; i++)
            if (strcmp(s->function->opsets[i].domain, d) == 0) return true;
    if (!s->model) return true; /* a free-standing graph: nothing to check against */
    if (ir_model_opset(s->model, d) != 0) return true;
    /* A model-local function may be called without importing its domain. */
    for (size_t i = 0; i < s->model->n_functions; i++) {
        const ir_function *f = s->model->functions[i];
        if (strcmp(f->domain, d) == 0 && strcmp(f->name, n->op_type) == 0) return true;
    }
    return false;
}

/* --- per-node checks ------------------------------------------------------- */

static bool in_graph(const ir_graph *g, const ir_value *v) {
    return v->index < g->n_values && g->values[v->index] == v;
}

static bool defined(const ir_value *v) { return v->producer || v->is_graph_input || v->constant || v->is_outer; }

static tsr_status *check_node(const ir_graph *g, const scope *s, ir_node *n, size_t i) {
    if (!n->op_type || !*n->op_type) return node_err(n, i, "%s", "no op_type");
    if (!domain_known(s, n))
        return node_err(n, i,
                        n->domain && *n->domain ? "domain '%s' has no opset import"
                                                : "domain '%s' (ai.onnx) has no opset import",
                        n->domain ? n->domain : "");
    tsr_status *arity = op_arity_check(n);
    if (arity) {
        char nl[160];
        label_of(nl, sizeof nl, n);
        return tsr_error_wrap(arity, "graph.node[%zu] %s", i, nl);
    }
    for (size_t j = 0; j < n->n_outputs; j++) {
        const ir_value *v = n->outputs[j];
        if (!v) continue;
        if (!in_graph(g, v)) return node_err(n, i, "output '%s' is not a value of this graph", v->name);
        if (v->is_graph_input) return node_err(n, i, "output '%s' has the name of a graph input", v->name);
        if (v->producer != n || v->producer_output != j) {
            char other[200] = "this node";
            const ir_node *p = v->producer;
            if (p != n) {
                size_t pos = p && p->graph == g ? p->index : SIZE_MAX;
                char pl[160];
                if (pos < g->n_nodes && g->nodes[pos] == p) {
                    label_of(pl, sizeof pl, p);
                    snprintf(other, sizeof other, "graph.node[%zu] %s", pos, pl);
                } else {
                    snprintf(other, sizeof other, "another node");
                }
            }
            char nl[160];
            label_of(nl, sizeof nl, n);
            return tsr_error(TSR_ERR_INVALID_MODEL, "graph.node[%zu] %s: output '%s' is also produced by %s", i, nl,
                             v->name, other);
        }
    }
    for (size_t j = 0; j < n->n_inputs; j++) {
        const ir_value *v = n->inputs[j];
        if (!v) continue;
        if (!in_graph(g, v)) return node_err(n, i, "input '%s' is not a value of this graph", v->name);
        if (!defined(v)) return node_err(n, i, "input '%s' is not defined", v->name);
    }
    return NULL;
}

/* --- order ------------------------------------------------------------------ */

typedef struct edges {
    size_t n, cap;
    size_t (*e)[2]; /* from, to: node positions */
} edges;

static bool edge_add(edges *es, size_t from, size_t to) {
    if (es->n == es->cap) {
        size_t cap = es->cap ? es->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *es->e) return false;
        void *grown = realloc(es->e, cap * sizeof *es->e);
        if (!grown) return false;
        es->e = grown;
        es->cap = cap;
    }
    es->e[es->n][0] = from;
    es->e[es->n][1] = to;
    es->n++;
    return true;
}

/* Position of v's producer in g, or SIZE_MAX when it has none there. */
static size_t producer_pos(const ir_graph *g, const ir_value *v) {
    const ir_node *p = v ? v->producer : NULL;
    if (p && p->graph == g && p->index < g->n_nodes && g->nodes[p->index] == p) return p->index;
    return SIZE_MAX;
}

/* Subgraph placeholders point at values of g (see ir_graph_resolve): a node
 * whose body reads an outer value depends on that value's producer. */
static bool sub_deps(const ir_graph *g, const ir_graph *sub, size_t to, edges *es) {
    if (!sub) return true;
    for (size_t k = 0; k < sub->n_values; k++) {
        const ir_value *w = sub->values[k];
        size_t from = w->is_outer ? producer_pos(g, w->outer) : SIZE_MAX;
        if (from != SIZE_MAX && !edge_add(es, from, to)) return false;
    }
    return true;
}

/* A predecessor of n that Kahn's algorithm left unsorted, or SIZE_MAX. */
static size_t unsorted_pred(const ir_graph *g, const ir_node *n, const size_t *indeg) {
    for (size_t j = 0; j < n->n_inputs; j++) {
        size_t p = producer_pos(g, n->inputs[j]);
        if (p != SIZE_MAX && indeg[p] > 0) return p;
    }
    for (size_t k = 0; k < n->n_attrs; k++) {
        const ir_attr *a = &n->attrs[k];
        size_t count = a->g ? 1 : a->graphs ? a->count : 0;
        for (size_t m = 0; m < count; m++) {
            const ir_graph *sub = a->g ? a->g : a->graphs[m];
            for (size_t v = 0; v < sub->n_values; v++) {
                const ir_value *w = sub->values[v];
                size_t p = w->is_outer ? producer_pos(g, w->outer) : SIZE_MAX;
                if (p != SIZE_MAX && indeg[p] > 0) return p;
            }
        }
    }
    return SIZE_MAX;
}

static bool collect_edges(const ir_graph *g, edges *es) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t j = 0; j < n->n_inputs; j++) {
            size_t from = producer_pos(g, n->inputs[j]);
            if (from != SIZE_MAX && !edge_add(es, from, i)) return false;
        }
        for (size_t k = 0; k < n->n_attrs; k++) {
            const ir_attr *a = &n->attrs[k];
            if (!sub_deps(g, a->g, i, es)) return false;
            for (size_t m = 0; a->graphs && m < a->count; m++)
                if (!sub_deps(g, a->graphs[m], i, es)) return false;
        }
    }
    return true;
}

static tsr_status *sort_nodes(ir_graph *g) {
    size_t n = g->n_nodes;
    if (n == 0) return NULL;
    edges es = {0};
    size_t *indeg = calloc(n, sizeof *indeg), *start = calloc(n + 1, sizeof *start);
    size_t *heap = malloc(n * sizeof *heap), *order = malloc(n * sizeof *order);
    size_t *succ = NULL;
    tsr_status *st = NULL;
    if (!indeg || !start || !heap || !order || !collect_edges(g, &es)) {
        st = TSR_NO_MEMORY();
        goto done;
    }
    /* Successor lists in CSR form. */
    if (!(succ = malloc((es.n ? es.n : 1) * sizeof *succ))) {
        st = TSR_NO_MEMORY();
        goto done;
    }
    for (size_t k = 0; k < es.n; k++) {
        start[es.e[k][0] + 1]++;
        indeg[es.e[k][1]]++;
    }
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    {
        size_t *fill = heap; /* borrowed as a cursor array before the heap is used */
        for (size_t i = 0; i < n; i++) fill[i] = start[i];
        for (size_t k = 0; k < es.n; k++) succ[fill[es.e[k][0]]++] = es.e[k][1];
    }
    size_t hn = 0, done_n = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0) index_heap_push(heap, &hn, i);
    while (hn) {
        size_t u = index_heap_pop(heap, &hn);
        order[done_n++] = u;
        for (size_t k = start[u]; k < start[u + 1]; k++)
            if (--indeg[succ[k]] == 0) index_heap_push(heap, &hn, succ[k]);
    }
    if (done_n < n) {
        /* Every node left has a predecessor left; walking back n steps from
         * any of them must end on a cycle, so the node named is in one. */
        size_t u = 0;
        while (indeg[u] == 0) u++;
        for (size_t step = 0; step < n; step++) {
            size_t pred = unsorted_pred(g, g->nodes[u], indeg);
            if (pred == SIZE_MAX) break;
            u = pred;
        }
        char nl[160];
        label_of(nl, sizeof nl, g->nodes[u]);
        st = tsr_error(TSR_ERR_INVALID_MODEL, "graph.node[%zu] %s is part of a cycle", u, nl);
        goto done;
    }
    {
        ir_node **sorted = malloc(n * sizeof *sorted);
        if (!sorted) {
            st = TSR_NO_MEMORY();
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            sorted[i] = g->nodes[order[i]];
            sorted[i]->index = i;
        }
        memcpy(g->nodes, sorted, n * sizeof *sorted);
        free(sorted);
    }
done:
    free(es.e);
    free(indeg);
    free(start);
    free(heap);
    free(order);
    free(succ);
    return st;
}

/* --- entry ------------------------------------------------------------------ */

tsr_status *ir_graph_check(ir_graph *g) {
    if (!g) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no graph");
    int limit = g->model ? g->model->limits.graph_depth : IR_MAX_GRAPH_DEPTH;
    if (g->depth > limit)
        return tsr_error(TSR_ERR_INVALID_MODEL, "graph '%s' is nested %d levels deep, over the graph_depth limit (%d)",
                         g->name, g->depth, limit);
    scope s = scope_of(g);
    for (size_t i = 0; i < g->n_nodes; i++) {
        g->nodes[i]->graph = g;
        g->nodes[i]->index = i;
    }
    for (size_t i = 0; i < g->n_nodes; i++) TSR_TRY(check_node(g, &s, g->nodes[i], i));
    for (size_t i = 0; i < g->n_outputs; i++) {
        const ir_value *v = g->outputs[i];
        if (!v || !in_graph(g, v))
            return tsr_error(TSR_ERR_INVALID_MODEL, "graph.output[%zu] is not a value of this graph", i);
        if (!defined(v)) return tsr_error(TSR_ERR_INVALID_MODEL, "graph.output[%zu] '%s' is not defined", i, v->name);
    }
    TSR_TRY(sort_nodes(g));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_attrs; k++) {
            const ir_attr *a = &n->attrs[k];
            size_t count = a->g ? 1 : a->graphs ? a->count : 0;
            for (size_t m = 0; m < count; m++) {
                tsr_status *st = ir_graph_check(a->g ? a->g : a->graphs[m]);
                if (st) {
                    char nl[160];
                    label_of(nl, sizeof nl, n);
                    return tsr_error_wrap(st, "graph.node[%zu] %s attribute '%s'", i, nl, a->name);
                }
            }
        }
    }
    return NULL;
}
