/* Graph IR: building, lookup by name, freeing. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_view.h"
#include "ir.h"
#include "status.h"

/* --- name -> value map ---------------------------------------------------
 * Open addressing with linear probing; values are never removed, so no
 * tombstones are needed. Kept at most half full so probes stay short. */
typedef struct ir_map {
    size_t cap; /* power of two */
    size_t count;
    ir_value **slots;
} ir_map;

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static ir_value *map_get(const ir_map *m, const char *name) {
    if (!m || !m->cap) return NULL;
    size_t i = (size_t)name_hash(name) & (m->cap - 1);
    for (ir_value *v; (v = m->slots[i]) != NULL; i = (i + 1) & (m->cap - 1))
        if (strcmp(v->name, name) == 0) return v;
    return NULL;
}

static void map_place(ir_value **slots, size_t cap, ir_value *v) {
    size_t i = (size_t)name_hash(v->name) & (cap - 1);
    while (slots[i]) i = (i + 1) & (cap - 1);
    slots[i] = v;
}

static bool map_put(ir_map *m, ir_value *v) {
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        if (cap < m->cap || cap > SIZE_MAX / sizeof(ir_value *)) return false;
        ir_value **slots = calloc(cap, sizeof *slots);
        if (!slots) return false;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i]) map_place(slots, cap, m->slots[i]);
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    map_place(m->slots, m->cap, v);
    m->count++;
    return true;
}

static void map_free(ir_map *m) {
    if (!m) return;
    free(m->slots);
    free(m);
}

/* Grows a pointer array by one slot; false on overflow or OOM. Capacity is
 * read from the allocator rather than kept beside the array, because other
 * stages may rebuild these arrays with malloc and then append here; growth
 * is still geometric, so loading a large graph stays linear. */
static bool push_ptr(void ***arr, size_t *n, void *item) {
    size_t count = *n;
    if (count >= SIZE_MAX / (2 * sizeof(void *))) return false;
    if (!*arr || malloc_usable_size(*arr) < (count + 1) * sizeof(void *)) {
        size_t cap = count < 8 ? 8 : count * 2;
        void **grown = realloc(*arr, cap * sizeof(void *));
        if (!grown) return false;
        *arr = grown;
    }
    (*arr)[count] = item;
    *n = count + 1;
    return true;
}

/* --- types ---------------------------------------------------------------- */
void ir_type_clear(ir_type *t) {
    if (!t) return;
    if (t->dims)
        for (int32_t i = 0; i < t->rank; i++) free(t->dims[i].symbol);
    free(t->dims);
    if (t->elem) {
        ir_type_clear(t->elem);
        free(t->elem);
    }
    memset(t, 0, sizeof *t);
    t->rank = -1;
}

tsr_status *ir_type_copy(ir_type *dst, const ir_type *src) {
    ir_type tmp = *src;
    tmp.dims = NULL;
    tmp.elem = NULL;
    if (src->rank > 0 && src->dims) {
        tmp.dims = calloc((size_t)src->rank, sizeof *tmp.dims);
        if (!tmp.dims) return TSR_NO_MEMORY();
        for (int32_t i = 0; i < src->rank; i++) {
            tmp.dims[i].value = src->dims[i].value;
            if (src->dims[i].symbol && !(tmp.dims[i].symbol = strdup(src->dims[i].symbol))) {
                ir_type_clear(&tmp);
                return TSR_NO_MEMORY();
            }
        }
    }
    if (src->elem) {
        tmp.elem = calloc(1, sizeof *tmp.elem);
        tsr_status *st = tmp.elem ? ir_type_copy(tmp.elem, src->elem) : TSR_NO_MEMORY();
        if (st) {
            free(tmp.elem);
            tmp.elem = NULL;
            ir_type_clear(&tmp);
            return st;
        }
    }
    *dst = tmp;
    return NULL;
}

/* --- attributes and nodes --------------------------------------------------- */
void ir_attr_clear(ir_attr *a) {
    if (!a) return;
    free(a->name);
    free(a->ref_attr_name);
    free(a->s);
    free(a->ints);
    free(a->floats);
    if (a->strings)
        for (size_t i = 0; i < a->count; i++) free(a->strings[i]);
    free(a->strings);
    free(a->string_lens);
    ir_tensor_free(a->t);
    if (a->tensors)
        for (size_t i = 0; i < a->count; i++) ir_tensor_free(a->tensors[i]);
    free(a->tensors);
    ir_graph_free(a->g);
    if (a->graphs)
        for (size_t i = 0; i < a->count; i++) ir_graph_free(a->graphs[i]);
    free(a->graphs);
    memset(a, 0, sizeof *a);
}

const ir_attr *ir_node_attr(const ir_node *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

static void node_free(ir_node *n) {
    if (!n) return;
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->origin);
    free(n->inputs);
    free(n->outputs);
    for (size_t i = 0; i < n->n_attrs; i++) ir_attr_clear(&n->attrs[i]);
    free(n->attrs);
    free(n);
}

/* --- graphs ---------------------------------------------------------------- */
ir_graph *ir_graph_new(ir_model *model, ir_graph *parent, const char *name) {
    ir_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = strdup(name ? name : "");
    g->lookup = calloc(1, sizeof(ir_map));
    if (!g->name || !g->lookup) {
        free(g->name);
        free(g->lookup);
        free(g);
        return NULL;
    }
    g->model = model;
    g->parent = parent;
    g->depth = parent ? parent->depth + 1 : 0;
    return g;
}

void ir_graph_free(ir_graph *g) {
    if (!g) return;
    graph_view_free(g->view); /* made on demand by graph_api.c (attr_graph) */
    for (size_t i = 0; i < g->n_nodes; i++) node_free(g->nodes[i]);
    free(g->nodes);
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        free(v->name);
        ir_type_clear(&v->type);
        ir_tensor_free(v->constant);
        free(v);
    }
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    map_free(g->lookup);
    free(g->name);
    free(g);
}

ir_value *ir_graph_find(const ir_graph *g, const char *name) { return name ? map_get(g->lookup, name) : NULL; }

static tsr_status *value_create(ir_graph *g, const char *name, ir_value **out) {
    ir_value *v = calloc(1, sizeof *v);
    if (!v) return TSR_NO_MEMORY();
    v->name = strdup(name);
    v->type.rank = -1;
    v->index = g->n_values;
    if (!v->name) goto oom;
    if (!push_ptr((void ***)&g->values, &g->n_values, v)) goto oom;
    if (!map_put(g->lookup, v)) {
        g->n_values--;
        goto oom;
    }
    *out = v;
    return NULL;
oom:
    free(v->name);
    free(v);
    return TSR_NO_MEMORY();
}

tsr_status *ir_graph_value(ir_graph *g, const char *name, ir_value **out) {
    if (!name) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value without a name");
    ir_value *v = ir_graph_find(g, name);
    if (v) {
        *out = v;
        return NULL;
    }
    return value_create(g, name, out);
}

/* A placeholder points at the value of the *immediately* enclosing graph,
 * itself possibly a placeholder: then every level that an outer value passes
 * through has its own placeholder, and the node owning each subgraph can see
 * its implicit inputs (for ordering and liveness) by looking one level down. */
tsr_status *ir_graph_new_named_value(ir_graph *g, const char *base, const char *what, ir_value **out) {
    size_t cap = strlen(base) + strlen(what) + 24;
    char *name = malloc(cap);
    if (!name) return TSR_NO_MEMORY();
    snprintf(name, cap, "%s/%s", base, what);
    for (unsigned k = 2;; k++) {
        const ir_graph *in = g;
        while (in && !ir_graph_find(in, name)) in = in->parent;
        if (!in) break;
        snprintf(name, cap, "%s/%s_%u", base, what, k);
    }
    tsr_status *st = ir_graph_value(g, name, out);
    free(name);
    return st;
}

ir_value *ir_graph_resolve(ir_graph *g, const char *name) {
    ir_value *v = ir_graph_find(g, name);
    if (v || !g->parent) return v;
    ir_value *outer = ir_graph_resolve(g->parent, name);
    if (!outer) return NULL;
    if (value_create(g, name, &v)) return NULL; /* OOM reads as absent */
    v->is_outer = true;
    v->outer = outer;
    if (ir_type_copy(&v->type, &outer->type)) v->type.rank = -1;
    return v;
}

tsr_status *ir_graph_add_node(ir_graph *g, ir_node **out) {
    ir_node *n = calloc(1, sizeof *n);
    if (!n) return TSR_NO_MEMORY();
    n->graph = g;
    n->index = g->n_nodes;
    if (!push_ptr((void ***)&g->nodes, &g->n_nodes, n)) {
        free(n);
        return TSR_NO_MEMORY();
    }
    *out = n;
    return NULL;
}

/* --- models ---------------------------------------------------------------- */
ir_limits ir_limits_default(void) {
    return (ir_limits){IR_DEFAULT_MODEL_BYTES, IR_DEFAULT_EXTERNAL_BYTES, IR_DEFAULT_GRAPH_DEPTH,
                       IR_DEFAULT_FUNCTION_NODES, IR_DEFAULT_FUNCTION_DEPTH};
}

ir_model *ir_model_new(void) {
    ir_model *m = calloc(1, sizeof(ir_model));
    if (m) m->limits = ir_limits_default();
    return m;
}

static void function_free(ir_function *f) {
    if (!f) return;
    free(f->name);
    free(f->domain);
    free(f->overload);
    for (size_t i = 0; i < f->n_opsets; i++) free(f->opsets[i].domain);
    free(f->opsets);
    for (size_t i = 0; i < f->n_attr_names; i++) free(f->attr_names[i]);
    free(f->attr_names);
    for (size_t i = 0; i < f->n_attr_defaults; i++) ir_attr_clear(&f->attr_defaults[i]);
    free(f->attr_defaults);
    ir_graph_free(f->body);
    free(f);
}

void ir_model_free(ir_model *m) {
    if (!m) return;
    free(m->producer_name);
    free(m->producer_version);
    free(m->domain);
    free(m->doc_string);
    for (size_t i = 0; i < m->n_opsets; i++) free(m->opsets[i].domain);
    free(m->opsets);
    for (size_t i = 0; i < m->n_metadata; i++) {
        free(m->metadata[i].key);
        free(m->metadata[i].value);
    }
    free(m->metadata);
    ir_graph_free(m->graph);
    for (size_t i = 0; i < m->n_functions; i++) function_free(m->functions[i]);
    free(m->functions);
    free(m->base_dir);
    free(m);
}

int64_t ir_model_opset(const ir_model *m, const char *domain) {
    if (!m) return 0;
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain ? m->opsets[i].domain : "", domain) == 0) return m->opsets[i].version;
    return 0;
}

/* --- graph surgery (function expansion) ----------------------------------- */
void ir_function_free(ir_function *f) { function_free(f); }

tsr_status *ir_graph_splice_nodes(ir_graph *g, size_t n_old, ir_node *const *olds, const size_t *first_new) {
    size_t base = n_old ? first_new[0] : g->n_nodes;
    for (size_t i = 0; i < n_old; i++) {
        const ir_node *o = olds[i];
        if (o->index >= base || g->nodes[o->index] != o || first_new[i] > first_new[i + 1] ||
            first_new[i + 1] > g->n_nodes)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "node '%s' cannot be spliced", o->name);
    }
    if (n_old == 0) return NULL;
    /* replaced_by[k] = 1 + position in olds of node k, 0 when it stays. */
    size_t *replaced_by = calloc(base + 1, sizeof *replaced_by);
    ir_node **order = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    if (!replaced_by || !order) {
        free(replaced_by);
        free(order);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < n_old; i++) replaced_by[olds[i]->index] = i + 1;
    size_t n = 0;
    for (size_t k = 0; k < base; k++) {
        size_t r = replaced_by[k];
        if (!r) {
            order[n++] = g->nodes[k];
            continue;
        }
        for (size_t j = first_new[r - 1]; j < first_new[r]; j++) order[n++] = g->nodes[j];
    }
    for (size_t i = 0; i < n_old; i++) node_free(olds[i]);
    memcpy(g->nodes, order, sizeof(ir_node *) * n);
    g->n_nodes = n;
    for (size_t k = 0; k < n; k++) g->nodes[k]->index = k;
    free(replaced_by);
    free(order);
    return NULL;
}

tsr_status *ir_graph_splice_node(ir_graph *g, ir_node *old, size_t first_new) {
    size_t range[2] = {first_new, g->n_nodes};
    if (first_new <= old->index) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "node '%s' cannot be spliced", old->name);
    return ir_graph_splice_nodes(g, 1, &old, range);
}

/* --- renaming and moving values (core/model_compose.c) -------------------- */
tsr_status *ir_graph_reindex(ir_graph *g) {
    ir_map *m = calloc(1, sizeof *m);
    if (!m) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        if (map_get(m, v->name)) {
            map_free(m);
            return tsr_error(TSR_ERR_INVALID_MODEL, "graph '%s' has two values named '%s'", g->name ? g->name : "",
                             v->name);
        }
        if (!map_put(m, v)) {
            map_free(m);
            return TSR_NO_MEMORY();
        }
        v->index = i;
    }
    map_free(g->lookup);
    g->lookup = m;
    return NULL;
}
