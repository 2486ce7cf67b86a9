/* Function-op expansion: splicing a function's body in place of a node. */
#include "function_expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* Names of the attributes the expander makes up for context-dependent
 * bodies (function_synth_attr in function_expand.h); SYNTH_PREFIX marks a
 * reference the body cannot do without. */
#define SYNTH_PREFIX "__"
#define SYNTH_TYPE_PREFIX "__type_"
#define SYNTH_DIM_PREFIX "__dim_"

void expansion_clear(expansion *e) {
    free(e->node);
    free(e->op);
    free(e->domain);
    free(e->origin);
    memset(e, 0, sizeof *e);
}

/* --- attribute copies ------------------------------------------------------------- */

static void *dup_bytes(const void *p, size_t n) {
    void *q = malloc(n ? n : 1);
    if (q && n) memcpy(q, p, n);
    return q;
}

/* A deep copy of a without its name and reference; graphs are refused. */
static tsr_status *attr_copy_value(ir_attr *dst, const ir_attr *a) {
    dst->type = a->type;
    dst->i = a->i;
    dst->f = a->f;
    dst->count = a->count;
    if (a->g || a->graphs) return tsr_error(TSR_ERR_NOT_SUPPORTED, "graph attribute '%s' in a function body", a->name);
    if (a->s && !(dst->s = dup_bytes(a->s, a->s_len + 1))) return TSR_NO_MEMORY();
    dst->s_len = a->s_len;
    if (a->ints && !(dst->ints = dup_bytes(a->ints, sizeof(int64_t) * a->count))) return TSR_NO_MEMORY();
    if (a->floats && !(dst->floats = dup_bytes(a->floats, sizeof(float) * a->count))) return TSR_NO_MEMORY();
    if (a->strings) {
        if (!(dst->strings = calloc(a->count + 1, sizeof(char *)))) return TSR_NO_MEMORY();
        if (!(dst->string_lens = dup_bytes(a->string_lens, sizeof(size_t) * a->count))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < a->count; i++)
            if (!(dst->strings[i] = dup_bytes(a->strings[i], a->string_lens[i] + 1))) return TSR_NO_MEMORY();
    }
    if (a->t) TSR_TRY(ir_tensor_clone(&a->t->view, &dst->t));
    if (a->tensors) {
        if (!(dst->tensors = calloc(a->count + 1, sizeof(ir_tensor *)))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < a->count; i++) TSR_TRY(ir_tensor_clone(&a->tensors[i]->view, &dst->tensors[i]));
    }
    return NULL;
}

bool function_synth_attr(const ir_node *n, const ir_function *f, const char *name, int64_t *value) {
    bool want_type = strncmp(name, SYNTH_TYPE_PREFIX, strlen(SYNTH_TYPE_PREFIX)) == 0;
    bool want_dim = strncmp(name, SYNTH_DIM_PREFIX, strlen(SYNTH_DIM_PREFIX)) == 0;
    if (!want_type && !want_dim) return false;
    const char *formal = name + strlen(want_type ? SYNTH_TYPE_PREFIX : SYNTH_DIM_PREFIX);
    size_t formal_len = strlen(formal);
    long axis = 0;
    if (want_dim) {
        /* The axis follows the last '_': formal input names may hold '_'. */
        const char *us = strrchr(formal, '_');
        char *end;
        if (!us || !us[1]) return false;
        axis = strtol(us + 1, &end, 10);
        if (*end || axis < 0 || axis >= IR_MAX_RANK) return false;
        formal_len = (size_t)(us - formal);
    }
    const ir_graph *b = f->body;
    for (size_t i = 0; i < b->n_inputs && i < n->n_inputs; i++) {
        const ir_value *v = n->inputs[i];
        const char *bn = b->inputs[i]->name;
        if (!v || strlen(bn) != formal_len || strncmp(bn, formal, formal_len) != 0) continue;
        if (v->type.kind != IR_TYPE_TENSOR) return false;
        if (want_type) {
            if (v->type.elem_type <= 0) return false;
            *value = v->type.elem_type;
        } else {
            if (v->type.rank <= axis || !v->type.dims || v->type.dims[axis].value < 0) return false;
            *value = v->type.dims[axis].value;
        }
        return true;
    }
    return false;
}

/* What an attribute reference names: the caller's attribute, else the
 * function's default, else a made-up one (function_synth_attr). */
typedef struct attr_env {
    const ir_node *caller;
    const ir_function *f;
    ir_attr synth; /* storage for a made-up attribute */
} attr_env;

static const ir_attr *env_lookup(attr_env *env, const char *name) {
    const ir_attr *a = ir_node_attr(env->caller, name);
    if (a) return a;
    for (size_t i = 0; i < env->f->n_attr_defaults; i++)
        if (strcmp(env->f->attr_defaults[i].name, name) == 0) return &env->f->attr_defaults[i];
    int64_t x;
    if (!function_synth_attr(env->caller, env->f, name, &x)) return NULL;
    memset(&env->synth, 0, sizeof env->synth);
    env->synth.type = TSR_ATTR_INT;
    env->synth.i = x;
    return &env->synth;
}

/* --- names ------------------------------------------------------------------ */

static bool name_taken(const ir_graph *g, const char *name) {
    for (; g; g = g->parent)
        if (ir_graph_find(g, name)) return true;
    return false;
}

/* "<base>/<local>", with "_2", "_3", ... added until no graph in scope has it. */
static tsr_status *fresh_value(ir_graph *g, const char *base, const char *local, ir_value **out) {
    size_t cap = strlen(base) + strlen(local) + 32;
    char *name = malloc(cap);
    if (!name) return TSR_NO_MEMORY();
    snprintf(name, cap, "%s/%s", base, local);
    for (unsigned k = 2; name_taken(g, name); k++) snprintf(name, cap, "%s/%s_%u", base, local, k);
    tsr_status *st = ir_graph_value(g, name, out);
    free(name);
    return st;
}

static char *node_name(const char *base, const char *op, size_t k) {
    size_t cap = strlen(base) + strlen(op) + 32;
    char *s = malloc(cap);
    if (s) snprintf(s, cap, "%s/%s_%zu", base, op, k);
    return s;
}

static char *join_name(const char *base, const char *part) {
    size_t cap = strlen(base) + strlen(part) + 2;
    char *s = malloc(cap);
    if (s) snprintf(s, cap, "%s/%s", base, part);
    return s;
}

static int64_t body_opset(const ir_function *f, const ir_model *m, const ir_node *bn) {
    for (size_t i = 0; i < f->n_opsets; i++)
        if (strcmp(f->opsets[i].domain ? f->opsets[i].domain : "", bn->domain) == 0) return f->opsets[i].version;
    if (bn->opset) return bn->opset;
    return ir_model_opset(m, bn->domain);
}

/* --- copying graphs ------------------------------------------------------------ */

/* How the values of a source graph map to values of the graph being built.
 * Source graphs: the function body (dst: the caller's graph), a graph
 * attribute inside it (dst: its copy), the caller's own graph attribute
 * (copied for an attribute reference, or spliced in for an `@attr` call). */
typedef struct frame {
    const ir_graph *src;
    ir_graph *dst;
    ir_value **to;    /* by source value index */
    bool *set;        /* to[i] decided (NULL then means an omitted input) */
    struct frame *up; /* maps src's outer values; NULL: they are the caller's graph's own */
    bool from_fn;     /* src belongs to the function (attribute references, its opsets) */
    const char *base; /* prefix of the names made in dst */
} frame;

typedef struct expand_ctx {
    const ir_function *f;
    attr_env *env;
    const char *origin;
} expand_ctx;

static tsr_status *frame_init(frame *fr, const ir_graph *src, ir_graph *dst, frame *up, bool from_fn,
                              const char *base) {
    *fr = (frame){
        src,     dst, calloc(src->n_values + 1, sizeof(ir_value *)), calloc(src->n_values + 1, sizeof(bool)), up,
        from_fn, base};
    return fr->to && fr->set ? NULL : TSR_NO_MEMORY();
}

static void frame_clear(frame *fr) {
    free(fr->to);
    free(fr->set);
}

/* p, a value of dst or of a graph enclosing it, as seen from dst: p itself
 * or a placeholder (ir_graph_resolve makes one on each level between). */
static tsr_status *visible(ir_graph *dst, ir_value *p, ir_value **out) {
    if (p->index < dst->n_values && dst->values[p->index] == p) {
        *out = p;
        return NULL;
    }
    *out = ir_graph_resolve(dst, p->name);
    if (!*out) return tsr_error(TSR_ERR_INVALID_MODEL, "value '%s' is not in scope where the body reads it", p->name);
    return NULL;
}

/* The dst value for source value v, made on first use: an outer value maps
 * through the enclosing frame, a constant (an initializer of the caller's
 * graph) is copied, anything else gets a fresh name. */
static tsr_status *map_value(frame *fr, const ir_value *v, ir_value **out) {
    *out = NULL;
    if (!v) return NULL;
    if (!fr) { /* a value of the caller's graph, or of one enclosing it */
        *out = (ir_value *)v;
        return NULL;
    }
    if (v->index >= fr->src->n_values || fr->src->values[v->index] != v)
        return tsr_error(TSR_ERR_INVALID_MODEL, "value '%s' does not belong to graph '%s'", v->name, fr->src->name);
    if (fr->set[v->index]) {
        *out = fr->to[v->index];
        return NULL;
    }
    ir_value *nv = NULL;
    if (v->is_outer) {
        ir_value *p;
        TSR_TRY(map_value(fr->up, v->outer, &p));
        if (p) TSR_TRY(visible(fr->dst, p, &nv));
    } else {
        TSR_TRY(fresh_value(fr->dst, fr->base, v->name, &nv));
        if (!fr->from_fn) TSR_TRY(ir_type_copy(&nv->type, &v->type));
        if (v->constant && !v->producer) TSR_TRY(ir_tensor_clone(&v->constant->view, &nv->constant));
    }
    fr->to[v->index] = nv;
    fr->set[v->index] = true;
    *out = nv;
    return NULL;
}

static tsr_status *emit_node(expand_ctx *cx, frame *fr, const ir_node *bn, size_t k);

/* A copy of src as a graph attribute of a node of fr_parent->dst. up maps
 * src's outer values (NULL: the caller's graph's). */
static tsr_status *copy_graph(expand_ctx *cx, const ir_graph *src, frame *up, ir_graph *dst_parent, bool from_fn,
                              const char *base, ir_graph **out) {
    *out = NULL;
    const ir_model *m = dst_parent->model;
    int limit = m ? m->limits.graph_depth : IR_DEFAULT_GRAPH_DEPTH;
    if (dst_parent->depth + 1 > limit)
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "graph '%s' would be nested %d levels deep, over the graph_depth limit (%d)", src->name,
                         dst_parent->depth + 1, limit);
    ir_graph *g = ir_graph_new(dst_parent->model, dst_parent, src->name);
    if (!g) return TSR_NO_MEMORY();
    frame fr;
    tsr_status *st = frame_init(&fr, src, g, up, from_fn, base);
    g->inputs = calloc(src->n_inputs + 1, sizeof(ir_value *));
    g->outputs = calloc(src->n_outputs + 1, sizeof(ir_value *));
    if (!st && (!g->inputs || !g->outputs)) st = TSR_NO_MEMORY();
    for (size_t i = 0; i < src->n_inputs && !st; i++) {
        st = map_value(&fr, src->inputs[i], &g->inputs[i]);
        if (!st) {
            g->inputs[i]->is_graph_input = true;
            g->n_inputs++;
        }
    }
    for (size_t k = 0; k < src->n_nodes && !st; k++) st = emit_node(cx, &fr, src->nodes[k], k);
    for (size_t i = 0; i < src->n_outputs && !st; i++) {
        st = map_value(&fr, src->outputs[i], &g->outputs[i]);
        if (!st && !g->outputs[i])
            st = tsr_error(TSR_ERR_INVALID_MODEL, "graph '%s' output %zu is an omitted input", src->name, i);
        if (!st) {
            g->outputs[i]->is_graph_output = true;
            g->n_outputs++;
        }
    }
    frame_clear(&fr);
    if (st) {
        ir_graph_free(g);
        return st;
    }
    *out = g;
    return NULL;
}

/* Copies the body node's attributes to `dst`, resolving references (in the
 * function's own nodes); a reference to an attribute nobody gives leaves the
 * attribute out. Graph attributes are copied with their outer values mapped. */
static tsr_status *copy_attrs(expand_ctx *cx, frame *fr, ir_node *dst, const ir_node *src) {
    if (!src->n_attrs) return NULL;
    dst->attrs = calloc(src->n_attrs, sizeof(ir_attr));
    if (!dst->attrs) return TSR_NO_MEMORY();
    for (size_t i = 0; i < src->n_attrs; i++) {
        const ir_attr *a = &src->attrs[i];
        bool from_caller = false;
        if (a->ref_attr_name && fr->from_fn) {
            a = env_lookup(cx->env, a->ref_attr_name);
            if (!a && strncmp(src->attrs[i].ref_attr_name, SYNTH_PREFIX, strlen(SYNTH_PREFIX)) == 0)
                return tsr_error(TSR_ERR_NOT_SUPPORTED,
                                 "the body needs '%s' (a type or size of an input), which shape "
                                 "inference does not know",
                                 src->attrs[i].ref_attr_name);
            if (!a) continue;
            if (a->type != src->attrs[i].type && src->attrs[i].type != TSR_ATTR_UNDEFINED)
                return tsr_error(TSR_ERR_INVALID_MODEL, "attribute '%s' is referenced as another type",
                                 src->attrs[i].ref_attr_name);
            from_caller = ir_node_attr(cx->env->caller, src->attrs[i].ref_attr_name) == a;
        }
        ir_attr *d = &dst->attrs[dst->n_attrs++];
        if (!(d->name = strdup(src->attrs[i].name))) return TSR_NO_MEMORY();
        if (a->graphs) return tsr_error(TSR_ERR_NOT_SUPPORTED, "graph-list attribute '%s' in a function body", a->name);
        if (a->g) {
            d->type = TSR_ATTR_GRAPH;
            char *base = join_name(fr->base, d->name);
            if (!base) return TSR_NO_MEMORY();
            /* The caller's graph reads the caller's values; the function's reads fr's. */
            tsr_status *st =
                copy_graph(cx, a->g, from_caller ? NULL : fr, fr->dst, !from_caller && fr->from_fn, base, &d->g);
            free(base);
            TSR_TRY(st);
            continue;
        }
        TSR_TRY(attr_copy_value(d, a));
    }
    return NULL;
}

/* Every node expansion makes counts against the model's function_nodes
 * limit (all graphs of the session together), checked before it is made. */
static tsr_status *count_node(ir_model *m, const char *origin) {
    if (!m) return NULL;
    if (m->function_nodes >= m->limits.function_nodes)
        return tsr_error(TSR_ERR_NO_MEMORY,
                         "expanding function ops of node '%s' would make more than %llu nodes, "
                         "over the function_nodes limit (%llu)",
                         origin, (unsigned long long)m->function_nodes, (unsigned long long)m->limits.function_nodes);
    m->function_nodes++;
    return NULL;
}

static tsr_status *add_node(expand_ctx *cx, frame *fr, const char *op, const char *domain, size_t k, ir_node **out) {
    ir_node *nn;
    TSR_TRY(count_node(fr->dst->model, cx->origin));
    TSR_TRY(ir_graph_add_node(fr->dst, &nn));
    if (!(nn->name = node_name(fr->base, op, k)) || !(nn->op_type = strdup(op)) || !(nn->domain = strdup(domain)) ||
        !(nn->origin = strdup(cx->origin)))
        return TSR_NO_MEMORY();
    *out = nn;
    return NULL;
}

static tsr_status *set_outputs(ir_node *nn, ir_value *const *outs, size_t n) {
    nn->outputs = calloc(n + 1, sizeof(ir_value *));
    if (!nn->outputs) return TSR_NO_MEMORY();
    nn->n_outputs = n;
    for (size_t i = 0; i < n; i++) {
        ir_value *v = outs[i];
        if (!v) continue;
        if (v->producer || v->is_graph_input || v->is_outer)
            return tsr_error(TSR_ERR_INVALID_MODEL, "value '%s' would be made twice", v->name);
        v->producer = nn;
        v->producer_output = i;
        nn->outputs[i] = v;
    }
    return NULL;
}

/* out = Identity(in), in fr->dst. */
static tsr_status *emit_identity(expand_ctx *cx, frame *fr, ir_value *in, ir_value *out, size_t k) {
    ir_node *nn;
    TSR_TRY(add_node(cx, fr, "Identity", "", k, &nn));
    nn->opset = ir_model_opset(fr->dst->model, "");
    if (!(nn->inputs = calloc(2, sizeof(ir_value *)))) return TSR_NO_MEMORY();
    nn->inputs[0] = in;
    nn->n_inputs = 1;
    return set_outputs(nn, &out, 1);
}

/* `outs = @attr (ins)`: the caller's graph attribute spliced in, its inputs
 * and outputs bound to ins and outs; when the caller gives none, outs are
 * ins (the "no modification" that FlexAttention's score_mod means). */
static tsr_status *emit_call(expand_ctx *cx, frame *fr, const ir_node *bn, size_t k) {
    const char *name = bn->op_type + 1;
    const ir_attr *a = ir_node_attr(cx->env->caller, name);
    if (a && a->type != TSR_ATTR_GRAPH) return tsr_error(TSR_ERR_INVALID_MODEL, "attribute '%s' is not a graph", name);
    const ir_graph *g = a ? a->g : NULL;
    if (!g) {
        if (bn->n_inputs != bn->n_outputs)
            return tsr_error(TSR_ERR_INVALID_MODEL, "call of absent graph '%s' needs as many inputs as outputs", name);
        for (size_t i = 0; i < bn->n_inputs; i++) {
            ir_value *in, *out;
            TSR_TRY(map_value(fr, bn->inputs[i], &in));
            TSR_TRY(map_value(fr, bn->outputs[i], &out));
            if (!in || !out) return tsr_error(TSR_ERR_INVALID_MODEL, "call of '%s' with an omitted value", name);
            TSR_TRY(emit_identity(cx, fr, in, out, k));
        }
        return NULL;
    }
    if (bn->n_inputs != g->n_inputs || bn->n_outputs != g->n_outputs)
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "graph attribute '%s' takes %zu inputs and makes %zu outputs; the body "
                         "calls it with %zu and %zu",
                         name, g->n_inputs, g->n_outputs, bn->n_inputs, bn->n_outputs);
    char *base = join_name(fr->base, name);
    if (!base) return TSR_NO_MEMORY();
    frame cf;
    tsr_status *st = frame_init(&cf, g, fr->dst, NULL, false, base);
    for (size_t i = 0; i < g->n_inputs && !st; i++) {
        ir_value *in;
        st = map_value(fr, bn->inputs[i], &in);
        cf.to[g->inputs[i]->index] = in;
        cf.set[g->inputs[i]->index] = true;
    }
    /* Outputs made by the graph's nodes are made straight into outs. */
    bool *direct = calloc(g->n_outputs + 1, sizeof(bool));
    if (!st && !direct) st = TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_outputs && !st; i++) {
        const ir_value *ov = g->outputs[i];
        if (!ov->producer || cf.set[ov->index]) continue;
        st = map_value(fr, bn->outputs[i], &cf.to[ov->index]);
        cf.set[ov->index] = direct[i] = true;
    }
    for (size_t j = 0; j < g->n_nodes && !st; j++) st = emit_node(cx, &cf, g->nodes[j], j);
    for (size_t i = 0; i < g->n_outputs && !st; i++) {
        if (direct[i]) continue;
        ir_value *in, *out;
        st = map_value(&cf, g->outputs[i], &in);
        if (!st) st = map_value(fr, bn->outputs[i], &out);
        if (!st && (!in || !out)) st = tsr_error(TSR_ERR_INVALID_MODEL, "call of '%s' with an omitted value", name);
        if (!st) st = emit_identity(cx, &cf, in, out, g->n_nodes + i);
    }
    free(direct);
    frame_clear(&cf);
    free(base);
    return st;
}

static tsr_status *emit_node(expand_ctx *cx, frame *fr, const ir_node *bn, size_t k) {
    if (fr->from_fn && bn->op_type[0] == '@') return emit_call(cx, fr, bn, k);
    ir_node *nn;
    TSR_TRY(add_node(cx, fr, bn->op_type, bn->domain, k, &nn));
    nn->opset = fr->from_fn ? body_opset(cx->f, fr->dst->model, bn) : bn->opset;
    TSR_TRY(copy_attrs(cx, fr, nn, bn));
    nn->inputs = calloc(bn->n_inputs + 1, sizeof(ir_value *));
    if (!nn->inputs) return TSR_NO_MEMORY();
    nn->n_inputs = bn->n_inputs;
    for (size_t i = 0; i < bn->n_inputs; i++) TSR_TRY(map_value(fr, bn->inputs[i], &nn->inputs[i]));
    ir_value **outs = calloc(bn->n_outputs + 1, sizeof(ir_value *));
    if (!outs) return TSR_NO_MEMORY();
    tsr_status *st = NULL;
    for (size_t i = 0; i < bn->n_outputs && !st; i++) st = map_value(fr, bn->outputs[i], &outs[i]);
    if (!st) st = set_outputs(nn, outs, bn->n_outputs);
    free(outs);
    return st;
}

/* --- the splice --------------------------------------------------------------- */

tsr_status *function_expand_append(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec, size_t *first_new) {
    memset(rec, 0, sizeof *rec);
    *first_new = g->n_nodes;
    const ir_graph *b = f->body;
    if (n->n_inputs > b->n_inputs || n->n_outputs > b->n_outputs)
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "node '%s' (%s): %zu inputs and %zu outputs, its function takes %zu and %zu", n->name,
                         n->op_type, n->n_inputs, n->n_outputs, b->n_inputs, b->n_outputs);
    char base_buf[64];
    const char *base = n->name;
    if (!base[0]) {
        snprintf(base_buf, sizeof base_buf, "%s_%zu", n->op_type, n->index);
        base = base_buf;
    }
    char *base_copy = strdup(base);
    char *origin = strdup(n->origin ? n->origin : base);
    frame fr = {0};
    tsr_status *st = NULL;
    if (!base_copy || !origin) {
        st = TSR_NO_MEMORY();
        goto out;
    }
    if ((st = frame_init(&fr, b, g, NULL, true, base_copy)) != NULL) goto out;
    /* Formal inputs are the node's (an omitted one maps to NULL); formal
     * outputs the node's output values, which keep their names. */
    for (size_t i = 0; i < b->n_inputs; i++) {
        fr.to[b->inputs[i]->index] = i < n->n_inputs ? n->inputs[i] : NULL;
        fr.set[b->inputs[i]->index] = true;
    }
    for (size_t i = 0; i < n->n_outputs; i++) {
        size_t bi = b->outputs[i]->index;
        if (fr.set[bi] && n->outputs[i])
            st = tsr_error(TSR_ERR_NOT_SUPPORTED, "node '%s' (%s): function output '%s' is also an input", n->name,
                           n->op_type, b->outputs[i]->name);
        if (!st && n->outputs[i]) {
            fr.to[bi] = n->outputs[i];
            fr.set[bi] = true;
        }
    }
    /* The node's outputs get new producers below. */
    for (size_t i = 0; i < n->n_outputs && !st; i++)
        if (n->outputs[i] && n->outputs[i]->producer == n) n->outputs[i]->producer = NULL;
    attr_env env = {n, f, {0}};
    expand_ctx cx = {f, &env, origin};
    for (size_t k = 0; k < b->n_nodes && !st; k++) st = emit_node(&cx, &fr, b->nodes[k], k);
    if (st) {
        /* The graph is left half-built; the caller fails the whole partition. */
        st = tsr_error_wrap(st, "expanding node '%s' (%s)", n->name, n->op_type);
        goto out;
    }
    rec->node = base_copy;
    rec->op = strdup(n->op_type);
    rec->domain = strdup(n->domain);
    rec->origin = n->origin ? strdup(n->origin) : NULL;
    rec->body_nodes = g->n_nodes - *first_new;
    base_copy = NULL;
    if (!rec->op || !rec->domain || (n->origin && !rec->origin)) {
        st = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && !n->outputs[i]->producer)
            st = tsr_error(TSR_ERR_INVALID_MODEL, "node '%s': output '%s' left without a producer", n->name,
                           n->outputs[i]->name);
out:
    free(base_copy);
    free(origin);
    frame_clear(&fr);
    return st;
}

tsr_status *function_expand_node(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec) {
    size_t first_new;
    TSR_TRY(function_expand_append(g, n, f, rec, &first_new));
    tsr_status *st = ir_graph_splice_node(g, n, first_new);
    if (st) expansion_clear(rec);
    return st;
}
