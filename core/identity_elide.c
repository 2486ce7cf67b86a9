/*
 * Identity nodes inside control-flow bodies go away at load: their readers,
 * and the body's outputs, read the Identity's input instead. Exporters write
 * an Identity for every loop-carried value passed through unchanged
 * (torch.onnx's `cond_out = cond_in`, a counter, a state a branch does not
 * touch), usually on bool or int64 tensors that only the reference provider
 * runs, so each was a piece of its own on every iteration: a 50-step greedy
 * decoding loop spent 8 of its 28 microseconds per step on three of them. A
 * body output that is then a body input is copied by the executor, as any
 * borrowed output is. The main graph keeps its Identities (providers absorb
 * them there), and so does every graph when all values are observed.
 *
 * A Dropout in inference is an Identity too (ratio whatever, training_mode
 * absent or a constant false, is_test set before opset 7, its mask read by
 * nothing), and no provider but the reference one runs it: a SqueezeNet
 * exported at opset 9 had its one Dropout cut oneDNN's piece in two, with
 * reorders to and from the plain layout. Dropouts go in every graph, the
 * main one too as long as their output is not one of its outputs (whose
 * names the caller asks for).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"

static bool own_value(const ir_graph *g, const ir_value *v) {
    return v && !v->is_outer && v->index < g->n_values && g->values[v->index] == v;
}

/* captured[i]: value i of g is read by name from a body nested in g. */
static void mark_captures(const ir_graph *g, bool *captured) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t gs = at->g ? 1 : at->graphs ? at->count : 0;
            for (size_t j = 0; j < gs; j++) {
                const ir_graph *sg = at->g ? at->g : at->graphs[j];
                for (size_t x = 0; sg && x < sg->n_values; x++) {
                    const ir_value *o = sg->values[x]->is_outer ? sg->values[x]->outer : NULL;
                    if (own_value(g, o)) captured[o->index] = true;
                }
            }
        }
    }
}

/* A Dropout that passes its input through: not training, mask unread. */
static bool inference_dropout(const ir_node *n, const size_t *reads) {
    if (strcmp(n->op_type, "Dropout") != 0 || n->domain[0] || n->n_inputs < 1 || n->n_outputs < 1) return false;
    if (n->n_outputs > 1 && n->outputs[1] && (n->outputs[1]->is_graph_output || reads[n->outputs[1]->index]))
        return false;
    if (n->opset < 7) {
        const ir_attr *is_test = ir_node_attr(n, "is_test");
        if (!is_test || is_test->type != TSR_ATTR_INT || !is_test->i) return false;
    }
    const ir_value *training = n->n_inputs > 2 ? n->inputs[2] : NULL;
    if (!training) return true;
    const ir_tensor *t = training->constant;
    return t && !training->is_graph_input && t->elem_type == TSR_BOOL && t->nbytes == 1 && !*(const uint8_t *)t->data;
}

static bool removable(const ir_graph *g, const ir_node *n, const bool *captured, const size_t *reads) {
    bool identity = strcmp(n->op_type, "Identity") == 0 && !n->domain[0] && n->n_inputs == 1 && n->n_outputs == 1;
    if (!identity && !inference_dropout(n, reads)) return false;
    if (!identity && n->n_outputs > 1 && own_value(g, n->outputs[1]) && captured[n->outputs[1]->index]) return false;
    /* in the main graph, Dropouts only, and not under an output's name */
    if (!g->parent && (identity || n->outputs[0]->is_graph_output)) return false;
    const ir_value *in = n->inputs[0], *out = n->outputs[0];
    return own_value(g, in) && own_value(g, out) && !captured[out->index] && in->type.kind == IR_TYPE_TENSOR &&
        out->type.kind == IR_TYPE_TENSOR;
}

/* Every reader of `out` in g (node inputs, graph outputs) reads `in`. */
static void reroute(ir_graph *g, const ir_value *out, ir_value *in) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *m = g->nodes[i];
        for (size_t k = 0; k < m->n_inputs; k++)
            if (m->inputs[k] == out) m->inputs[k] = in;
    }
    for (size_t o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == out) {
            g->outputs[o] = in;
            in->is_graph_output = true;
        }
}

static tsr_status *elide_in_subgraphs(ir_graph *g);

/* reads[i]: how many node inputs of g read value i. */
static void count_reads(const ir_graph *g, size_t *reads) {
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_inputs; k++)
            if (own_value(g, g->nodes[i]->inputs[k])) reads[g->nodes[i]->inputs[k]->index]++;
}

static tsr_status *elide_in_graph(ir_graph *g) {
    TSR_TRY(elide_in_subgraphs(g));
    bool *captured = calloc(g->n_values + 1, sizeof *captured);
    size_t *reads = calloc(g->n_values + 1, sizeof *reads);
    ir_node **olds = malloc((g->n_nodes + 1) * sizeof *olds);
    size_t *first_new = malloc((g->n_nodes + 2) * sizeof *first_new);
    tsr_status *st = captured && reads && olds && first_new ? NULL : TSR_NO_MEMORY();
    size_t count = 0;
    if (!st) {
        mark_captures(g, captured);
        count_reads(g, reads);
    }
    for (size_t i = 0; !st && i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (!removable(g, n, captured, reads)) continue;
        ir_value *out = n->outputs[0];
        reroute(g, out, n->inputs[0]);
        out->is_graph_output = false;
        out->producer = NULL; /* the node is freed below; nothing reads out now */
        out->producer_output = 0;
        olds[count++] = n;
    }
    if (!st && count) {
        for (size_t k = 0; k <= count; k++) first_new[k] = g->n_nodes;
        st = ir_graph_splice_nodes(g, count, olds, first_new);
    }
    free(captured);
    free(reads);
    free(olds);
    free(first_new);
    return st;
}

static tsr_status *elide_in_subgraphs(ir_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (size_t a = 0; a < n->n_attrs; a++) {
            ir_attr *at = &n->attrs[a];
            if (at->g) TSR_TRY(elide_in_graph(at->g));
            for (size_t j = 0; at->graphs && j < at->count; j++) TSR_TRY(elide_in_graph(at->graphs[j]));
        }
    }
    return NULL;
}

tsr_status *ir_graph_elide_body_identities(ir_graph *g) { return elide_in_graph(g); }
