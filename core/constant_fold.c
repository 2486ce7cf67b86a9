/*
 * Constant nodes become constants: the loader has already put each Constant
 * node's tensor on its output value (loader.c, fill_constant), so the node
 * itself only costs a piece, a kernel call and a copy per run. Removing it
 * leaves a value with data and no producer, which every later stage treats
 * exactly like an initializer: providers see it through value_constant and
 * reorder weights stored as Constant nodes once per session.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"

static bool foldable(const ir_node *n) {
    if (strcmp(n->op_type, "Constant") != 0 || n->domain[0] != 0) return false;
    if (n->n_outputs != 1 || !n->outputs[0] || !n->outputs[0]->constant) return false;
    /* inside a function body the value may come from the caller's attribute */
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].ref_attr_name) return false;
    return n->outputs[0]->producer == n;
}

static tsr_status *fold_subgraphs(ir_node *n) {
    for (size_t i = 0; i < n->n_attrs; i++) {
        ir_attr *a = &n->attrs[i];
        if (a->g) TSR_TRY(ir_graph_fold_constant_nodes(a->g));
        for (size_t k = 0; a->graphs && k < a->count; k++) TSR_TRY(ir_graph_fold_constant_nodes(a->graphs[k]));
    }
    return NULL;
}

tsr_status *ir_graph_fold_constant_nodes(ir_graph *g) {
    size_t count = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        TSR_TRY(fold_subgraphs(g->nodes[i]));
        if (foldable(g->nodes[i])) count++;
    }
    if (!count) return NULL;
    ir_node **olds = malloc(count * sizeof *olds);
    size_t *first_new = malloc((count + 1) * sizeof *first_new);
    if (!olds || !first_new) {
        free(olds);
        free(first_new);
        return TSR_NO_MEMORY();
    }
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (!foldable(n)) continue;
        n->outputs[0]->producer = NULL;
        n->outputs[0]->producer_output = 0;
        olds[k] = n;
        first_new[k++] = g->n_nodes; /* replaced by nothing */
    }
    first_new[count] = g->n_nodes;
    tsr_status *st = ir_graph_splice_nodes(g, count, olds, first_new);
    free(olds);
    free(first_new);
    return st;
}
