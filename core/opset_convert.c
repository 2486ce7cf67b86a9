/* One version per domain for one ONNX file (opset_convert.h): every node
 * of the main graph and its subgraphs read at the version the model
 * imports, by rewriting what changed only in form and refusing, by name,
 * what changed in meaning. */
#include "opset_convert.h"

#include <stdlib.h>
#include <string.h>

#include "opset_compat.h"
#include "opset_rewrite.h"
#include "status.h"
#include "tessera/tessera.h"

static const char *domain_label(const char *d) { return d && *d ? d : "ai.onnx"; }

/* "node 'x' (Op, opset 11) cannot be written at opset 18 of ai.onnx: WHY;
 * convert ... or run ...": `why` (consumed) says what changed. */
static tsr_status *node_error(const ir_node *n, int64_t to, tsr_status *why) {
    if (tsr_status_code(why) == TSR_ERR_NO_MEMORY) return why;
    tsr_status *st = tsr_error(TSR_ERR_NOT_SUPPORTED,
                               "node '%s' (%s, opset %lld) cannot be written at opset %lld of %s, the "
                               "version the merged model imports: %s. Convert its model first "
                               "(onnx.version_converter), or run the chain rather than writing one file "
                               "(tessera run A.onnx B.onnx keeps each node's version)",
                               n->name, n->op_type, (long long)n->opset, (long long)to, domain_label(n->domain),
                               tsr_status_message(why));
    tsr_status_free(why);
    return st;
}

/* n read at version `to` of its domain, rewritten where needed. */
static tsr_status *settle_node(const ir_model *m, ir_node *n, int64_t to, bool *added) {
    size_t nodes_before = n->graph->n_nodes;
    for (int64_t from = n->opset;;) {
        opset_change c;
        bool found;
        tsr_status *st = opset_next_change(m, n, from, to, &c, &found);
        if (st) return node_error(n, to, st);
        if (!found) break;
        if (c.kind == OPSET_BREAKS)
            return node_error(n, to, tsr_error(TSR_ERR_NOT_SUPPORTED, "at opset %lld %s", (long long)c.since, c.what));
        st = opset_rewrite(n, c.since, to);
        if (st)
            return node_error(
                n, to,
                tsr_error_wrap(st, "at opset %lld %s, and it could not be rewritten", (long long)c.since, c.what));
        from = c.since;
    }
    n->opset = to;
    if (n->graph->n_nodes != nodes_before) *added = true;
    return NULL;
}

/* *added: some rewrite appended nodes to g or a subgraph, unsorted. */
static tsr_status *settle_graph(const ir_model *m, ir_graph *g, bool *added) {
    size_t count = g->n_nodes; /* nodes a rewrite appends are read at the model's version */
    for (size_t i = 0; i < count; i++) {
        ir_node *n = g->nodes[i];
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            if (at->g) TSR_TRY(settle_graph(m, at->g, added));
            for (size_t k = 0; at->graphs && k < at->count; k++)
                if (at->graphs[k]) TSR_TRY(settle_graph(m, at->graphs[k], added));
        }
        int64_t to = ir_model_opset(m, n->domain);
        if (n->opset > 0 && n->opset < to) TSR_TRY(settle_node(m, n, to, added));
    }
    return NULL;
}

/* A function body that leaves a domain to the model's import was read at
 * its own file's version: name that version in the function, which keeps
 * it whatever the merged model imports. */
static tsr_status *pin_function_opsets(ir_function *f, const ir_graph *g) {
    for (size_t i = 0; g && i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        bool have = n->opset <= 0;
        for (size_t k = 0; k < f->n_opsets && !have; k++)
            have = strcmp(f->opsets[k].domain ? f->opsets[k].domain : "", n->domain) == 0;
        if (!have) {
            ir_opset *grown = realloc(f->opsets, (f->n_opsets + 1) * sizeof *grown);
            if (!grown) return TSR_NO_MEMORY();
            f->opsets = grown;
            if (!(grown[f->n_opsets].domain = strdup(n->domain))) return TSR_NO_MEMORY();
            grown[f->n_opsets++].version = n->opset;
        }
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            TSR_TRY(pin_function_opsets(f, at->g));
            for (size_t k = 0; at->graphs && k < at->count; k++) TSR_TRY(pin_function_opsets(f, at->graphs[k]));
        }
    }
    return NULL;
}

tsr_status *ir_model_settle_opsets(ir_model *m) {
    if (!m || !m->graph) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no model");
    bool added = false;
    TSR_TRY(settle_graph(m, m->graph, &added));
    if (added) TSR_TRY(ir_graph_check(m->graph)); /* sorts, subgraphs too */
    for (size_t i = 0; i < m->n_functions; i++) TSR_TRY(pin_function_opsets(m->functions[i], m->functions[i]->body));
    return NULL;
}
