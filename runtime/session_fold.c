/*
 * Constant folding at session creation: a node whose inputs are all
 * constants computes the same tensors on every run, so it runs once here
 * and its outputs become constants (weights stored as Transpose/Cast of an
 * initializer, a BiFPN's normalised fusion weights, Shape -> ConstantOfShape
 * -> Expand chains on static shapes, a loop body's Unsqueeze of a
 * constant). ONNX Runtime does the same; without it such nodes were pieces
 * of their own, often on the reference provider, on every run (every
 * iteration, in a loop).
 *
 * Which nodes: runtime/fold_select.c. How: Shape and Size are read off the
 * inferred type. The rest of one graph are written as one model
 * (onnx_write_view, which gives values of enclosing graphs as
 * initializers), loaded, planned over the session's own providers and run
 * once, so a folded value is what the run would have computed. If that
 * fails the nodes stay as they were: folding is an optimisation, never a
 * new way for a session to fail. The main graph first, then each body,
 * which may then read the main graph's new constants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold_select.h"
#include "graph_plan.h"
#include "graph_view.h"
#include "host_log.h"
#include "onnx_writer.h"
#include "rewrite_util.h"
#include "session.h"
#include "status.h"

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

/* Constants larger than this are not copied into the model that runs once
 * but fed from where they are; smaller ones (shapes, axes, scales) stay
 * initializers, which providers may need to see as constants. */
#define FOLD_INLINE_BYTES 65536

/* Feeds each input of g (the view's graph, as loaded) that came without
 * data from the constant it names in the view's graph. */
static tsr_status *feed_constants(const struct tsr_graph *view, const ir_graph *g, rt_tensor *slots) {
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i]->constant) continue;
        const ir_value *v = ir_graph_find(view->ir, g->inputs[i]->name);
        for (int d = 0; v && v->is_outer && d <= IR_MAX_GRAPH_DEPTH; d++) v = v->outer;
        if (!v || !v->constant) return tsr_error(TSR_ERR_RUNTIME, "no constant for '%s'", g->inputs[i]->name);
        rt_tensor_borrow(&slots[i], &v->constant->view);
    }
    return NULL;
}

/* Runs the view's nodes as their own graph; results[i] is view output i. */
static tsr_status *run_view(tsr_session *s, const struct tsr_graph *view, ir_tensor **results) {
    void *bytes = NULL;
    size_t size = 0;
    TSR_TRY(onnx_write_view_by_reference(view, FOLD_INLINE_BYTES, &bytes, &size));
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
    if (!st) st = feed_constants(view, g, slots);
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

/* Constants nothing reads any more (weights only folded nodes used) are
 * given back, so folding a Cast of float16 weights does not keep both. */
static void drop_unread_constants(ir_graph *g) {
    reader_table r;
    if (!reader_table_make(g, &r)) return; /* kept: no harm but memory */
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        if (v->constant && !r.count[i] && !v->is_graph_input && !v->is_graph_output && !v->producer) {
            ir_tensor_free(v->constant);
            v->constant = NULL;
        }
    }
    reader_table_free(&r);
}

static tsr_status *fold_shapes(fold_plan *p) {
    for (size_t k = 0; k < p->n_shapes; k++) {
        ir_tensor *t;
        TSR_TRY(fold_shape_value(p->shapes[k], &t));
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

/* What the report lists, growing as graphs are folded. */
typedef struct fold_records {
    folded_node *items;
    size_t n, cap;
} fold_records;

static tsr_status *record(fold_records *r, ir_node *const *nodes, size_t n, const char *body) {
    if (r->n + n > r->cap) {
        size_t cap = (r->n + n) * 2;
        folded_node *grown = realloc(r->items, cap * sizeof *grown);
        if (!grown) return TSR_NO_MEMORY();
        r->items = grown;
        r->cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        folded_node *f = &r->items[r->n++];
        const ir_node *nd = nodes[i];
        memset(f, 0, sizeof *f);
        f->node = strdup(nd->name ? nd->name : "");
        f->op = strdup(nd->op_type);
        f->body = body[0] ? strdup(body) : NULL;
        f->outputs = calloc(nd->n_outputs + 1, sizeof *f->outputs);
        if (!f->node || !f->op || !f->outputs || (body[0] && !f->body)) return TSR_NO_MEMORY();
        for (size_t o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] && !(f->outputs[f->n_outputs++] = strdup(nd->outputs[o]->name))) return TSR_NO_MEMORY();
    }
    return NULL;
}

typedef struct fold_ctx {
    tsr_session *s;
    uint64_t limit;
    bool (*pinned)(const ir_node *, void *);
    void *pin_ctx;
    fold_records rec;
} fold_ctx;

static tsr_status *fold_graph(fold_ctx *c, ir_graph *g, const char *path);

/* The bodies of g's nodes, each named NODE/ATTRIBUTE as the report names them. */
static tsr_status *fold_bodies(fold_ctx *c, ir_graph *g, const char *path) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t count = at->g ? 1 : (at->graphs ? at->count : 0);
            for (size_t k = 0; k < count; k++) {
                ir_graph *sg = at->g ? at->g : at->graphs[k];
                char sub[1024];
                snprintf(sub, sizeof sub, "%s%s%s/%s", path, path[0] ? "/" : "", n->name, at->name);
                if (sg) TSR_TRY(fold_graph(c, sg, sub));
            }
        }
    }
    return NULL;
}

static tsr_status *fold_graph(fold_ctx *c, ir_graph *g, const char *path) {
    fold_plan p;
    tsr_status *st = fold_choose(g, c->limit, c->pinned, c->pin_ctx, &p);
    bool evaluated = false;
    if (!st) st = fold_shapes(&p);
    if (!st) st = fold_evals(c->s, g, &p, &evaluated);
    if (!st) st = record(&c->rec, p.shapes, p.n_shapes, path);
    if (!st && evaluated) st = record(&c->rec, p.evals, p.n_evals, path);
    if (!st) st = remove_nodes(g, p.shapes, p.n_shapes);
    if (!st && evaluated) st = remove_nodes(g, p.evals, p.n_evals);
    fold_plan_free(&p);
    if (!st) st = fold_bodies(c, g, path);
    return st;
}

tsr_status *session_fold_constants(tsr_session *s, uint64_t limit, bool (*pinned)(const ir_node *, void *), void *ctx,
                                   folded_node **folded, size_t *n_folded) {
    fold_ctx c = {s, limit, pinned, ctx, {0}};
    tsr_status *st = fold_graph(&c, s->model->graph, "");
    *folded = c.rec.items;
    *n_folded = c.rec.n;
    if (!st && c.rec.n) {
        drop_unread_constants(s->model->graph);
        char msg[160];
        snprintf(msg, sizeof msg, "folded %zu nodes into constants at load", c.rec.n);
        host_log(TSR_LOG_INFO, NULL, msg);
    }
    return st;
}
