/* Function-op expansion: splicing a function's body in place of a node. */
#include "function_expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* Attributes the expander makes up for context-dependent bodies (ONNX
 * builds those bodies from the node's input types and shapes):
 * "__type_<formal input>" is that input's element type, "__dim_<formal
 * input>_<axis>" its size along axis, both from shape inference. */
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
    if (a->g || a->graphs)
        return tsr_error(TSR_ERR_NOT_SUPPORTED, "graph attribute '%s' in a function body", a->name);
    if (a->s && !(dst->s = dup_bytes(a->s, a->s_len + 1))) return TSR_NO_MEMORY();
    dst->s_len = a->s_len;
    if (a->ints && !(dst->ints = dup_bytes(a->ints, sizeof(int64_t) * a->count)))
        return TSR_NO_MEMORY();
    if (a->floats && !(dst->floats = dup_bytes(a->floats, sizeof(float) * a->count)))
        return TSR_NO_MEMORY();
    if (a->strings) {
        if (!(dst->strings = calloc(a->count + 1, sizeof(char *)))) return TSR_NO_MEMORY();
        if (!(dst->string_lens = dup_bytes(a->string_lens, sizeof(size_t) * a->count)))
            return TSR_NO_MEMORY();
        for (size_t i = 0; i < a->count; i++)
            if (!(dst->strings[i] = dup_bytes(a->strings[i], a->string_lens[i] + 1)))
                return TSR_NO_MEMORY();
    }
    if (a->t) TSR_TRY(ir_tensor_clone(&a->t->view, &dst->t));
    if (a->tensors) {
        if (!(dst->tensors = calloc(a->count + 1, sizeof(ir_tensor *)))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < a->count; i++)
            TSR_TRY(ir_tensor_clone(&a->tensors[i]->view, &dst->tensors[i]));
    }
    return NULL;
}

/* What an attribute reference names: the caller's attribute, else the
 * function's default, else (for __type_X) the element type of formal input X. */
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
    bool want_type = strncmp(name, SYNTH_TYPE_PREFIX, strlen(SYNTH_TYPE_PREFIX)) == 0;
    bool want_dim = strncmp(name, SYNTH_DIM_PREFIX, strlen(SYNTH_DIM_PREFIX)) == 0;
    if (!want_type && !want_dim) return NULL;
    const char *formal = name + strlen(want_type ? SYNTH_TYPE_PREFIX : SYNTH_DIM_PREFIX);
    size_t formal_len = strlen(formal);
    long axis = 0;
    if (want_dim) {
        const char *us = strrchr(formal, '_');
        char *end;
        if (!us || !us[1]) return NULL;
        axis = strtol(us + 1, &end, 10);
        if (*end || axis < 0 || axis >= IR_MAX_RANK) return NULL;
        formal_len = (size_t)(us - formal);
    }
    const ir_graph *b = env->f->body;
    for (size_t i = 0; i < b->n_inputs && i < env->caller->n_inputs; i++) {
        const ir_value *v = env->caller->inputs[i];
        const char *bn = b->inputs[i]->name;
        if (!v || strlen(bn) != formal_len || strncmp(bn, formal, formal_len) != 0) continue;
        if (v->type.kind != IR_TYPE_TENSOR) return NULL;
        memset(&env->synth, 0, sizeof env->synth);
        env->synth.type = TSR_ATTR_INT;
        if (want_type) {
            if (v->type.elem_type == 0) return NULL;
            env->synth.i = v->type.elem_type;
        } else {
            if (v->type.rank <= axis || !v->type.dims || v->type.dims[axis].value < 0) return NULL;
            env->synth.i = v->type.dims[axis].value;
        }
        return &env->synth;
    }
    return NULL;
}

/* Copies the body node's attributes to `dst`, resolving references; a
 * reference to an attribute nobody gives leaves the attribute out. */
static tsr_status *copy_attrs(ir_node *dst, const ir_node *src, attr_env *env) {
    if (!src->n_attrs) return NULL;
    dst->attrs = calloc(src->n_attrs, sizeof(ir_attr));
    if (!dst->attrs) return TSR_NO_MEMORY();
    for (size_t i = 0; i < src->n_attrs; i++) {
        const ir_attr *a = &src->attrs[i];
        if (a->ref_attr_name) {
            a = env_lookup(env, a->ref_attr_name);
            if (!a && strncmp(src->attrs[i].ref_attr_name, SYNTH_PREFIX, strlen(SYNTH_PREFIX)) == 0)
                return tsr_error(TSR_ERR_NOT_SUPPORTED,
                                 "the body needs '%s' (a type or size of an input), which shape "
                                 "inference does not know",
                                 src->attrs[i].ref_attr_name);
            if (!a) continue;
            if (a->type != src->attrs[i].type && src->attrs[i].type != TSR_ATTR_UNDEFINED)
                return tsr_error(TSR_ERR_INVALID_MODEL,
                                 "attribute '%s' is referenced as another type",
                                 src->attrs[i].ref_attr_name);
        }
        ir_attr *d = &dst->attrs[dst->n_attrs++];
        if (!(d->name = strdup(src->attrs[i].name))) return TSR_NO_MEMORY();
        TSR_TRY(attr_copy_value(d, a));
    }
    return NULL;
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
    for (unsigned k = 2; name_taken(g, name); k++)
        snprintf(name, cap, "%s/%s_%u", base, local, k);
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

static int64_t body_opset(const ir_function *f, const ir_model *m, const ir_node *bn) {
    for (size_t i = 0; i < f->n_opsets; i++)
        if (strcmp(f->opsets[i].domain ? f->opsets[i].domain : "", bn->domain) == 0)
            return f->opsets[i].version;
    if (bn->opset) return bn->opset;
    return ir_model_opset(m, bn->domain);
}

/* --- the splice --------------------------------------------------------------- */

typedef struct value_map {
    ir_value **to; /* indexed by body value index */
} value_map;

static tsr_status *add_body_node(ir_graph *g, const ir_node *bn, const ir_function *f,
                                 attr_env *env, value_map *vm, const char *base, const char *origin,
                                 size_t k) {
    ir_node *nn;
    TSR_TRY(ir_graph_add_node(g, &nn));
    if (!(nn->name = node_name(base, bn->op_type, k)) || !(nn->op_type = strdup(bn->op_type)) ||
        !(nn->domain = strdup(bn->domain)) || !(nn->origin = strdup(origin)))
        return TSR_NO_MEMORY();
    nn->opset = body_opset(f, g->model, bn);
    TSR_TRY(copy_attrs(nn, bn, env));
    nn->inputs = calloc(bn->n_inputs + 1, sizeof(ir_value *));
    nn->outputs = calloc(bn->n_outputs + 1, sizeof(ir_value *));
    if (!nn->inputs || !nn->outputs) return TSR_NO_MEMORY();
    nn->n_inputs = bn->n_inputs;
    nn->n_outputs = bn->n_outputs;
    for (size_t i = 0; i < bn->n_inputs; i++)
        nn->inputs[i] = bn->inputs[i] ? vm->to[bn->inputs[i]->index] : NULL;
    for (size_t i = 0; i < bn->n_outputs; i++) {
        const ir_value *bv = bn->outputs[i];
        if (!bv) continue;
        ir_value *v = vm->to[bv->index];
        if (!v) {
            TSR_TRY(fresh_value(g, base, bv->name, &v));
            vm->to[bv->index] = v;
        }
        v->producer = nn;
        v->producer_output = i;
        nn->outputs[i] = v;
    }
    return NULL;
}

tsr_status *function_expand_append(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec,
                                   size_t *first_new) {
    memset(rec, 0, sizeof *rec);
    *first_new = g->n_nodes;
    const ir_graph *b = f->body;
    if (n->n_inputs > b->n_inputs || n->n_outputs > b->n_outputs)
        return tsr_error(
            TSR_ERR_INVALID_MODEL,
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
    value_map vm = {calloc(b->n_values + 1, sizeof(ir_value *))};
    tsr_status *st = NULL;
    if (!base_copy || !origin || !vm.to) {
        st = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t i = 0; i < n->n_inputs; i++)
        vm.to[b->inputs[i]->index] = n->inputs[i];
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (vm.to[b->outputs[i]->index] && n->outputs[i])
            st = tsr_error(TSR_ERR_NOT_SUPPORTED,
                           "node '%s' (%s): function output '%s' is also an input", n->name,
                           n->op_type, b->outputs[i]->name);
        if (!st && n->outputs[i]) vm.to[b->outputs[i]->index] = n->outputs[i];
    }
    attr_env env = {n, f, {0}};
    for (size_t k = 0; k < b->n_nodes && !st; k++)
        st = add_body_node(g, b->nodes[k], f, &env, &vm, base_copy, origin, k);
    if (st) {
        /* The graph is left half-built; the caller fails the whole partition. */
        st = tsr_error_wrap(st, "expanding node '%s' (%s)", n->name, n->op_type);
        goto out;
    }
    rec->node = base_copy;
    rec->op = strdup(n->op_type);
    rec->domain = strdup(n->domain);
    rec->origin = n->origin ? strdup(n->origin) : NULL;
    rec->body_nodes = b->n_nodes;
    base_copy = NULL;
    if (!rec->op || !rec->domain || (n->origin && !rec->origin)) {
        st = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && n->outputs[i]->producer == n)
            st = tsr_error(TSR_ERR_INVALID_MODEL, "node '%s': output '%s' left without a producer",
                           n->name, n->outputs[i]->name);
out:
    free(base_copy);
    free(origin);
    free(vm.to);
    return st;
}

tsr_status *function_expand_node(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec) {
    size_t first_new;
    TSR_TRY(function_expand_append(g, n, f, rec, &first_new));
    tsr_status *st = ir_graph_splice_node(g, n, first_new);
    if (st) expansion_clear(rec);
    return st;
}
