/*
 * Constant folding, which nodes (runtime/fold_select.h). A value is known
 * at creation when it is an initializer or a Constant's (in the main graph
 * also one listed among the inputs: sessions never let a caller feed it,
 * runtime/session_io.c), a constant of an enclosing graph read by a body,
 * or an output of a node chosen before it.
 */
#include <stdlib.h>
#include <string.h>

#include "fold_select.h"

static bool never_folded(const ir_node *n) {
    static const char *const ops[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                      "Multinomial",  "Bernoulli",     "Dropout",          "DequantizeLinear"};
    if (n->domain[0] && strcmp(n->domain, "com.microsoft") != 0) return true;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return true;
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].g || n->attrs[i].graphs) return true;
    return false;
}

/* A tensor whose every dim is known: its bytes (strings excluded). */
static bool static_tensor(const ir_value *v, uint64_t *bytes) {
    const ir_type *t = &v->type;
    if (t->kind != IR_TYPE_TENSOR || t->rank < 0 || !t->elem_type || t->elem_type == TSR_STRING) return false;
    uint64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d].value < 0) return false;
        if (t->dims[d].value && count > (uint64_t)IR_MAX_ELEMENTS / (uint64_t)t->dims[d].value) return false;
        count *= (uint64_t)t->dims[d].value;
    }
    size_t b;
    if (!ir_elem_bytes(t->elem_type, count, &b)) return false;
    *bytes = b;
    return true;
}

static bool shape_of_static(const ir_node *n) {
    if (n->domain[0] || (strcmp(n->op_type, "Shape") != 0 && strcmp(n->op_type, "Size") != 0)) return false;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1 || !n->outputs[0]) return false;
    uint64_t bytes;
    ir_type t = n->inputs[0]->type;
    if (t.kind != IR_TYPE_TENSOR || t.rank < 0) return false;
    for (int32_t d = 0; d < t.rank; d++)
        if (t.dims[d].value < 0) return false;
    return static_tensor(n->outputs[0], &bytes);
}

void fold_plan_free(fold_plan *p) {
    free(p->shapes);
    free(p->evals);
    free(p->constant);
}

/* A body's outputs stay what its node makes each iteration: the core's
 * control flow reads them from pieces. */
static bool outputs_foldable(const ir_node *n, bool body, uint64_t limit) {
    for (size_t o = 0; o < n->n_outputs; o++) {
        const ir_value *v = n->outputs[o];
        uint64_t bytes;
        if (!v) continue;
        if (v->observed || (body && v->is_graph_output) || !static_tensor(v, &bytes) || bytes > limit) return false;
    }
    return true;
}

static bool known_at_creation(const ir_value *v, bool body) {
    if (v->is_outer) {
        for (int i = 0; v && v->is_outer && i <= IR_MAX_GRAPH_DEPTH; i++) v = v->outer;
        return v && !v->is_outer && v->constant && !v->producer;
    }
    return v->constant && !v->producer && !(body && v->is_graph_input);
}

static bool inputs_constant(const ir_node *n, const bool *constant) {
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !constant[n->inputs[i]->index]) return false;
    return true;
}

tsr_status *fold_choose(ir_graph *g, uint64_t limit, bool (*pinned)(const ir_node *, void *), void *ctx, fold_plan *p) {
    memset(p, 0, sizeof *p);
    p->constant = calloc(g->n_values + 1, sizeof *p->constant);
    p->shapes = malloc((g->n_nodes + 1) * sizeof *p->shapes);
    p->evals = malloc((g->n_nodes + 1) * sizeof *p->evals);
    if (!p->constant || !p->shapes || !p->evals) return TSR_NO_MEMORY();
    bool body = g->parent != NULL;
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        p->constant[i] = known_at_creation(v, body);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (never_folded(n) || pinned(n, ctx) || !outputs_foldable(n, body, limit)) continue;
        /* A loop-carried value may change shape from one iteration to the
         * next whatever was inferred from the first: main graph only. */
        if (!body && shape_of_static(n)) p->shapes[p->n_shapes++] = n;
        else if (inputs_constant(n, p->constant)) p->evals[p->n_evals++] = n;
        else continue;
        for (size_t o = 0; o < n->n_outputs; o++)
            if (n->outputs[o]) p->constant[n->outputs[o]->index] = true;
    }
    return NULL;
}

tsr_status *fold_shape_value(const ir_node *n, ir_tensor **out) {
    const ir_type *t = &n->inputs[0]->type;
    if (strcmp(n->op_type, "Size") == 0) {
        TSR_TRY(ir_tensor_new(TSR_INT64, 0, NULL, out));
        int64_t count = 1;
        for (int32_t d = 0; d < t->rank; d++) count *= t->dims[d].value;
        *(int64_t *)(*out)->data = count;
        return NULL;
    }
    int64_t rank = t->rank, start = 0, end = rank;
    const ir_attr *a = ir_node_attr(n, "start");
    if (a) start = a->i;
    if ((a = ir_node_attr(n, "end"))) end = a->i;
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    int64_t len = end > start ? end - start : 0;
    TSR_TRY(ir_tensor_new(TSR_INT64, 1, &len, out));
    for (int64_t d = 0; d < len; d++) ((int64_t *)(*out)->data)[d] = t->dims[start + d].value;
    return NULL;
}
