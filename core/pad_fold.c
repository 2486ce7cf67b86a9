/*
 * A zero Pad in front of a Conv becomes the Conv's own padding. Exporters
 * write explicit Pads where the framework's padding is asymmetric or "SAME"
 * (tf2onnx: every strided convolution of a Keras model; PyTorch's
 * ZeroPad2d), and a Pad on its own is a full copy of the activation, a
 * piece boundary for providers that do not run Pad, and for oneDNN a
 * plain-layout tensor in the middle of a blocked chain. Conv pads with
 * zeros, so  Conv(Pad(x, p), pads=q) == Conv(x, pads=p+q)  exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"

static bool is_op(const ir_node *n, const char *op) { return strcmp(n->op_type, op) == 0 && n->domain[0] == 0; }

/* a string attribute equal to s (a malformed one of another type is not) */
static bool attr_is(const ir_attr *a, const char *s) { return a->type == TSR_ATTR_STRING && a->s && strcmp(a->s, s) == 0; }

/* Readers of each value of g (by index): node inputs, graph outputs and
 * subgraph captures, counted in one pass over the graph; last[i] is a node
 * reading value i through an input. */
typedef struct reader_table {
    size_t *count;
    const ir_node **last;
} reader_table;

static void count_value(const ir_graph *g, reader_table *t, const ir_value *v, const ir_node *n) {
    if (!v || v->index >= g->n_values || g->values[v->index] != v) return; /* another graph's */
    t->count[v->index]++;
    if (n) t->last[v->index] = n;
}

static bool readers_of(const ir_graph *g, reader_table *t) {
    t->count = calloc(g->n_values + 1, sizeof *t->count);
    t->last = calloc(g->n_values + 1, sizeof *t->last);
    if (!t->count || !t->last) return false;
    for (size_t i = 0; i < g->n_outputs; i++) count_value(g, t, g->outputs[i], NULL);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
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

/* The Pad's pads (2*rank values) when it is a constant zero pad of the
 * spatial dims only; NULL otherwise. */
static const int64_t *zero_spatial_pads(const ir_node *pad, int32_t rank) {
    const ir_attr *mode = ir_node_attr(pad, "mode");
    if (mode && !attr_is(mode, "constant")) return NULL;
    const int64_t *pads = NULL;
    size_t count = 0;
    if (pad->opset < 11) {
        const ir_attr *a = ir_node_attr(pad, "pads"), *value = ir_node_attr(pad, "value");
        if (!a || a->type != TSR_ATTR_INTS || (value && (value->type != TSR_ATTR_FLOAT || value->f != 0.0f)))
            return NULL;
        pads = a->ints;
        count = a->count;
    } else {
        if (pad->n_inputs < 2 || !pad->inputs[1] || !pad->inputs[1]->constant) return NULL;
        if (pad->n_inputs > 3 && pad->inputs[3]) return NULL; /* axes */
        const ir_tensor *t = pad->inputs[1]->constant;
        if (t->elem_type != TSR_INT64 || t->rank != 1) return NULL;
        pads = t->data;
        count = (size_t)t->dims[0];
        if (pad->n_inputs > 2 && pad->inputs[2]) {
            const ir_tensor *c = pad->inputs[2]->constant;
            if (!c || c->elem_type != TSR_FLOAT || c->nbytes != sizeof(float) || *(const float *)c->data != 0.0f)
                return NULL;
        }
    }
    if (count != 2 * (size_t)rank) return NULL;
    for (int32_t d = 0; d < rank; d++) {
        if (pads[d] < 0 || pads[rank + d] < 0) return NULL;
        if (d < 2 && (pads[d] || pads[rank + d])) return NULL;
    }
    return pads;
}

/* Adds the Pad's spatial pads to the Conv's; false when the Conv's padding
 * is not explicit (auto_pad) or its attribute is malformed. */
static bool widen_conv_pads(ir_node *conv, const int64_t *pads, int32_t rank) {
    const ir_attr *auto_pad = ir_node_attr(conv, "auto_pad");
    if (auto_pad && !attr_is(auto_pad, "NOTSET")) return false;
    int32_t sp = rank - 2;
    ir_attr *a = (ir_attr *)ir_node_attr(conv, "pads");
    if (a && (a->type != TSR_ATTR_INTS || a->count != 2 * (size_t)sp)) return false;
    for (int32_t i = 0; a && i < sp; i++) /* the sums must not overflow (pads are >= 0) */
        if (a->ints[i] > INT64_MAX - pads[2 + i] || a->ints[sp + i] > INT64_MAX - pads[rank + 2 + i]) return false;
    if (!a) {
        ir_attr *grown = realloc(conv->attrs, (conv->n_attrs + 1) * sizeof *grown);
        if (!grown) return false;
        conv->attrs = grown;
        a = &conv->attrs[conv->n_attrs];
        memset(a, 0, sizeof *a);
        if (!(a->name = strdup("pads")) || !(a->ints = calloc(2 * (size_t)sp, sizeof *a->ints))) {
            free(a->name);
            return false;
        }
        a->type = TSR_ATTR_INTS;
        a->count = 2 * (size_t)sp;
        conv->n_attrs++;
    }
    for (int32_t i = 0; i < sp; i++) {
        a->ints[i] += pads[2 + i];
        a->ints[sp + i] += pads[rank + 2 + i];
    }
    return true;
}

tsr_status *ir_graph_fold_pads(ir_graph *g) {
    size_t count = 0;
    ir_node **olds = malloc((g->n_nodes + 1) * sizeof *olds);
    reader_table t = {0};
    if (!olds || !readers_of(g, &t)) {
        free(olds);
        free(t.count);
        free(t.last);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *pad = g->nodes[i];
        if (!is_op(pad, "Pad") || pad->n_inputs < 1 || !pad->inputs[0] || pad->n_outputs != 1 || !pad->outputs[0])
            continue;
        ir_value *x = pad->inputs[0], *y = pad->outputs[0];
        int32_t rank = x->type.rank;
        if (rank < 3 || rank != y->type.rank) continue;
        /* y is g's own (a node output), so its index is into g */
        const ir_node *reader = t.last[y->index];
        if (t.count[y->index] != 1 || !reader || !is_op(reader, "Conv") || reader->inputs[0] != y) continue;
        const int64_t *pads = zero_spatial_pads(pad, rank);
        if (!pads || !widen_conv_pads((ir_node *)reader, pads, rank)) continue;
        ((ir_node *)reader)->inputs[0] = x;
        y->producer = NULL; /* the Pad is freed below; y is read by nothing now */
        y->producer_output = 0;
        olds[count++] = pad;
    }
    tsr_status *st = NULL;
    if (count) {
        size_t *first_new = malloc((count + 1) * sizeof *first_new);
        if (!first_new) st = TSR_NO_MEMORY();
        for (size_t k = 0; first_new && k <= count; k++) first_new[k] = g->n_nodes;
        if (first_new) st = ir_graph_splice_nodes(g, count, olds, first_new);
        free(first_new);
    }
    free(olds);
    free(t.count);
    free(t.last);
    return st;
}
