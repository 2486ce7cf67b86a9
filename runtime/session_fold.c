/*
 * Constant folding at session creation: a node whose inputs are all
 * constants computes the same tensors on every run, so it runs once here
 * and its outputs become constants (weights stored as Transpose/Cast of an
 * initializer, a BiFPN's normalised fusion weights, Shape -> ConstantOfShape
 * -> Expand chains on static shapes). ONNX Runtime does the same; without
 * it such nodes were pieces of their own, often on the reference provider,
 * on every run.
 *
 * Which nodes: every input a constant (an initializer, a Constant, or an
 * output folded before it), or Shape/Size of a
 * value whose dims shape inference knows; outputs plain tensors of known
 * shape, each at most the "fold_bytes" limit. Never folded: nodes with
 * subgraphs, random and training-only ops, DequantizeLinear (a QDQ model's
 * int8 weights stay int8 for the provider that fuses them), nodes pinned
 * with --assign, and everything when every value is observed.
 *
 * How: Shape and Size are read off the inferred type. The rest are written
 * as one model (onnx_write_view), loaded, planned over the session's own
 * providers and run once, so a folded value is exactly what the run would
 * have computed. If that fails the nodes stay as they were: folding is an
 * optimisation, never a new way for a session to fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_plan.h"
#include "graph_view.h"
#include "host_log.h"
#include "onnx_writer.h"
#include "session.h"
#include "status.h"

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

typedef struct fold_plan {
    ir_node **shapes; /* Shape/Size read off their input's type */
    size_t n_shapes;
    ir_node **evals; /* run once over the session's providers */
    size_t n_evals;
    bool *constant; /* by value index: known at creation */
} fold_plan;

static void fold_plan_free(fold_plan *p) {
    free(p->shapes);
    free(p->evals);
    free(p->constant);
}

static bool outputs_foldable(const ir_node *n, uint64_t limit) {
    for (size_t o = 0; o < n->n_outputs; o++) {
        const ir_value *v = n->outputs[o];
        uint64_t bytes;
        if (!v) continue;
        if (v->observed || !static_tensor(v, &bytes) || bytes > limit) return false;
    }
    return true;
}

static bool inputs_constant(const ir_node *n, const bool *constant) {
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !constant[n->inputs[i]->index]) return false;
    return true;
}

static tsr_status *choose(ir_graph *g, uint64_t limit, bool (*pinned)(const ir_node *, void *), void *ctx,
                          fold_plan *p) {
    memset(p, 0, sizeof *p);
    p->constant = calloc(g->n_values + 1, sizeof *p->constant);
    p->shapes = malloc((g->n_nodes + 1) * sizeof *p->shapes);
    p->evals = malloc((g->n_nodes + 1) * sizeof *p->evals);
    if (!p->constant || !p->shapes || !p->evals) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        /* an initializer listed among the inputs too is still a constant:
         * sessions do not let a caller feed it (runtime/session_io.c) */
        p->constant[i] = v->constant && !v->is_outer && !v->producer;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (never_folded(n) || pinned(n, ctx) || !outputs_foldable(n, limit)) continue;
        if (shape_of_static(n)) p->shapes[p->n_shapes++] = n;
        else if (inputs_constant(n, p->constant)) p->evals[p->n_evals++] = n;
        else continue;
        for (size_t o = 0; o < n->n_outputs; o++)
            if (n->outputs[o]) p->constant[n->outputs[o]->index] = true;
    }
    return NULL;
}

/* Shape (start/end as opset 15 has them) or Size of n's input, from its type. */
static tsr_status *shape_value(const ir_node *n, ir_tensor **out) {
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

/* The tensor a run left in `slot` (host memory), as an ir_tensor. */
static tsr_status *take_tensor(rt_tensor *slot, ir_tensor **out) {
    if (!slot->view.struct_size) return tsr_error(TSR_ERR_RUNTIME, "not a tensor");
    if (slot->host && slot->host->data == slot->view.data && !slot->borrowed) {
        *out = slot->host;
        slot->host = NULL;
        return NULL;
    }
    return ir_tensor_clone(&slot->view, out);
}

static bool same_shape(const ir_tensor *t, const ir_value *v) {
    if (t->elem_type != v->type.elem_type || t->rank != v->type.rank) return false;
    for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d] != v->type.dims[d].value) return false;
    return true;
}

/* Runs the view's nodes as their own graph; results[i] is view output i. */
static tsr_status *run_view(tsr_session *s, const struct tsr_graph *view, ir_tensor **results) {
    void *bytes = NULL;
    size_t size = 0;
    TSR_TRY(onnx_write_view(view, &bytes, &size));
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_buffer(bytes, size, NULL, &m);
    free(bytes);
    if (st) return st;
    graph_plan plan;
    memset(&plan, 0, sizeof plan);
    rt_tensor *slots = NULL;
    ir_graph *g = m->graph;
    if (g->n_outputs != view->n_outputs) st = tsr_error(TSR_ERR_RUNTIME, "outputs written and read differ");
    if (!st) st = ir_infer_shapes(g);
    bool planned = false;
    if (!st) st = graph_plan_build(g, s->provs, s->n_provs, &s->rules, &plan);
    planned = !st;
    if (!st && !(slots = calloc(g->n_inputs + g->n_outputs + 1, sizeof *slots))) st = TSR_NO_MEMORY();
    if (!st) st = graph_run(&plan, s->provs, slots, NULL, true, NULL, slots + g->n_inputs);
    for (size_t i = 0; !st && i < g->n_outputs; i++) {
        st = take_tensor(&slots[g->n_inputs + i], &results[i]);
        if (!st && !same_shape(results[i], view->outputs[i]))
            st = tsr_error(TSR_ERR_RUNTIME, "'%s' came out in another shape than inferred", view->outputs[i]->name);
    }
    for (size_t i = 0; slots && i < g->n_outputs; i++) rt_tensor_release(&slots[g->n_inputs + i]);
    free(slots);
    if (planned) graph_plan_free(&plan, s->provs);
    ir_model_free(m);
    return st;
}

static void make_constant(ir_value *v, ir_tensor *t) {
    ir_tensor_free(v->constant);
    v->constant = t;
    v->producer = NULL;
    v->producer_output = 0;
}

/* Removes `nodes` from g; their outputs keep whatever constant they got. */
static tsr_status *remove_nodes(ir_graph *g, ir_node **nodes, size_t n) {
    if (!n) return NULL;
    size_t *first_new = malloc((n + 1) * sizeof *first_new);
    if (!first_new) return TSR_NO_MEMORY();
    for (size_t k = 0; k <= n; k++) first_new[k] = g->n_nodes;
    for (size_t k = 0; k < n; k++)
        for (size_t o = 0; o < nodes[k]->n_outputs; o++)
            if (nodes[k]->outputs[o]) {
                nodes[k]->outputs[o]->producer = NULL;
                nodes[k]->outputs[o]->producer_output = 0;
            }
    tsr_status *st = ir_graph_splice_nodes(g, n, nodes, first_new);
    free(first_new);
    return st;
}

static void mark_read(bool *read, const ir_graph *root, const ir_graph *g) {
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        while (v && v->is_outer) v = v->outer;
        if (v && v != g->values[i] && v->index < root->n_values && root->values[v->index] == v) read[v->index] = true;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (g == root)
            for (size_t k = 0; k < n->n_inputs; k++)
                if (n->inputs[k]) read[n->inputs[k]->index] = true;
        for (size_t a = 0; a < n->n_attrs; a++) {
            if (n->attrs[a].g) mark_read(read, root, n->attrs[a].g);
            for (size_t k = 0; n->attrs[a].graphs && k < n->attrs[a].count; k++)
                mark_read(read, root, n->attrs[a].graphs[k]);
        }
    }
}

/* Constants nothing reads any more (weights only folded nodes used) are
 * given back, so folding a Cast of float16 weights does not keep both. */
static void drop_unread_constants(ir_graph *g) {
    bool *read = calloc(g->n_values + 1, sizeof *read);
    if (!read) return;
    mark_read(read, g, g);
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        if (v->constant && !read[i] && !v->is_graph_input && !v->is_graph_output && !v->producer) {
            ir_tensor_free(v->constant);
            v->constant = NULL;
        }
    }
    free(read);
}

static tsr_status *fold_shapes(fold_plan *p) {
    for (size_t k = 0; k < p->n_shapes; k++) {
        ir_tensor *t;
        TSR_TRY(shape_value(p->shapes[k], &t));
        make_constant(p->shapes[k]->outputs[0], t);
    }
    return NULL;
}

/* Evaluates p's nodes; false in *done when they could not be (left as they are). */
static tsr_status *fold_evals(tsr_session *s, ir_graph *g, fold_plan *p, bool *done) {
    *done = false;
    if (!p->n_evals) return NULL;
    struct tsr_graph *view;
    TSR_TRY(graph_view_nodes(g, p->evals, p->n_evals, &view));
    ir_tensor **results = calloc(view->n_outputs + 1, sizeof *results);
    if (!results) {
        graph_view_free(view);
        return TSR_NO_MEMORY();
    }
    tsr_status *st = view->n_outputs ? run_view(s, view, results) : NULL;
    if (st) {
        char msg[512];
        snprintf(msg, sizeof msg, "constant folding left %zu nodes to run every time: %s", p->n_evals,
                 tsr_status_message(st));
        host_log(TSR_LOG_INFO, NULL, msg);
        tsr_status_free(st);
        for (size_t i = 0; i < view->n_outputs; i++) ir_tensor_free(results[i]);
    } else {
        for (size_t i = 0; i < view->n_outputs; i++) make_constant(view->outputs[i], results[i]);
        *done = true;
    }
    free(results);
    graph_view_free(view);
    return NULL;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static tsr_status *record(ir_node *const *nodes, size_t n, folded_node *out, size_t *k) {
    for (size_t i = 0; i < n; i++) {
        folded_node *f = &out[(*k)++];
        const ir_node *nd = nodes[i];
        f->node = dup_or_empty(nd->name);
        f->op = dup_or_empty(nd->op_type);
        f->outputs = calloc(nd->n_outputs + 1, sizeof *f->outputs);
        if (!f->node || !f->op || !f->outputs) return TSR_NO_MEMORY();
        for (size_t o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] && !(f->outputs[f->n_outputs++] = strdup(nd->outputs[o]->name))) return TSR_NO_MEMORY();
    }
    return NULL;
}

/* What the report lists: every node folded, with the values it made. */
static tsr_status *records(const fold_plan *p, bool evaluated, folded_node **out, size_t *n_out) {
    size_t n = p->n_shapes + (evaluated ? p->n_evals : 0), k = 0;
    *out = NULL;
    *n_out = 0;
    if (!n) return NULL;
    folded_node *f = calloc(n, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    tsr_status *st = record(p->shapes, p->n_shapes, f, &k);
    if (!st && evaluated) st = record(p->evals, p->n_evals, f, &k);
    *out = f;
    *n_out = k;
    return st;
}

tsr_status *session_fold_constants(tsr_session *s, uint64_t limit, bool (*pinned)(const ir_node *, void *),
                                   void *ctx, folded_node **folded, size_t *n_folded) {
    ir_graph *g = s->model->graph;
    fold_plan p;
    tsr_status *st = choose(g, limit, pinned, ctx, &p);
    bool evaluated = false;
    *folded = NULL;
    *n_folded = 0;
    if (!st) st = fold_shapes(&p);
    if (!st) st = fold_evals(s, g, &p, &evaluated);
    if (!st) st = records(&p, evaluated, folded, n_folded);
    if (!st) st = remove_nodes(g, p.shapes, p.n_shapes);
    if (!st && evaluated) st = remove_nodes(g, p.evals, p.n_evals);
    if (!st && (p.n_shapes || evaluated)) {
        drop_unread_constants(g);
        char msg[160];
        snprintf(msg, sizeof msg, "folded %zu nodes into constants at load (%zu Shape/Size, %zu evaluated)",
                 p.n_shapes + (evaluated ? p.n_evals : 0), p.n_shapes, evaluated ? p.n_evals : 0);
        host_log(TSR_LOG_INFO, NULL, msg);
    }
    fold_plan_free(&p);
    return st;
}
