/* ONNX ModelProto -> graph IR. The bytes are read and checked in
 * loader_file.c, tensors decoded in loader_tensor.c; order and validation
 * are ir_graph_check's job (graph_check.c), called at the end. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
#include "status.h"
#include "tessera/tessera.h"

typedef struct load_ctx {
    ir_model *model;
    loader_ext *ext; /* external data: where from, how much so far */
    /* Opsets that nodes being converted see: a function's own imports, or
     * NULL for the model's. */
    const ir_opset *opsets;
    size_t n_opsets;
} load_ctx;

static char *dup_str(const char *s) { return strdup(s ? s : ""); }

static const char *norm_domain(const char *d) { return !d || strcmp(d, "ai.onnx") == 0 ? "" : d; }

/* "'conv3'" or, for a node without a name, "<Conv>", for error messages. */
static void node_label(char *buf, size_t size, const Onnx__NodeProto *np) {
    if (np->name && *np->name) snprintf(buf, size, "'%s'", np->name);
    else snprintf(buf, size, "<%s>", np->op_type ? np->op_type : "?");
}

static tsr_status *convert_opsets(Onnx__OperatorSetIdProto *const *in, size_t n, ir_opset **out, size_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (!n) return NULL;
    ir_opset *o = calloc(n, sizeof *o);
    if (!o) return TSR_NO_MEMORY();
    *out = o;
    for (size_t i = 0; i < n; i++) {
        if (!(o[i].domain = dup_str(norm_domain(in[i]->domain)))) return TSR_NO_MEMORY();
        o[i].version = in[i]->version;
        *n_out = i + 1;
    }
    return NULL;
}

static int64_t scope_opset(const load_ctx *c, const char *domain) {
    for (size_t i = 0; i < c->n_opsets; i++)
        if (strcmp(c->opsets[i].domain, domain) == 0) return c->opsets[i].version;
    return ir_model_opset(c->model, domain);
}

/* --- types ----------------------------------------------------------------- */

static tsr_status *convert_shape(const Onnx__TensorShapeProto *sp, ir_type *t) {
    if (!sp) return NULL; /* rank stays -1: unknown */
    if (sp->n_dim > IR_MAX_RANK)
        return tsr_error(TSR_ERR_INVALID_MODEL, "rank %zu is above the limit of %d", sp->n_dim, IR_MAX_RANK);
    if (sp->n_dim && !(t->dims = calloc(sp->n_dim, sizeof *t->dims))) return TSR_NO_MEMORY();
    t->rank = (int32_t)sp->n_dim;
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        t->dims[i].value = TSR_DIM_UNKNOWN;
        /* Some exporters write -1 for "unknown"; read it as that. Other
         * negative sizes are nonsense, not a size to guess. */
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value < -1)
            return tsr_error(TSR_ERR_INVALID_MODEL, "dim %zu is %lld (a size is >= 0, or -1 for unknown)", i,
                             (long long)d->dim_value);
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
            t->dims[i].value = d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                 *d->dim_param && !(t->dims[i].symbol = strdup(d->dim_param)))
            return TSR_NO_MEMORY();
    }
    int64_t count = 1;
    for (size_t i = 0; i < sp->n_dim; i++) {
        int64_t v = t->dims[i].value;
        /* a 0 does not excuse the others: kernels compute strides from them */
        if (v > 0 && (v > IR_MAX_ELEMENTS / count || (count *= v) > IR_MAX_ELEMENTS))
            return tsr_error(TSR_ERR_INVALID_MODEL, "its known dims make more than 2^56 elements");
    }
    return NULL;
}

static tsr_status *convert_type(const Onnx__TypeProto *tp, ir_type *t);

static tsr_status *convert_elem(const Onnx__TypeProto *tp, ir_type *t) {
    if (!tp) return NULL;
    if (!(t->elem = calloc(1, sizeof *t->elem))) return TSR_NO_MEMORY();
    t->elem->rank = -1;
    return convert_type(tp, t->elem);
}

/* Fills t (zeroed by the caller, rank -1); on error t may be partly filled
 * and the caller clears it. Recursion is bounded by the wire depth check. */
static tsr_status *convert_type(const Onnx__TypeProto *tp, ir_type *t) {
    t->rank = -1;
    if (!tp) return NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        t->kind = IR_TYPE_TENSOR;
        t->elem_type = tp->tensor_type->elem_type;
        return convert_shape(tp->tensor_type->shape, t);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        t->kind = IR_TYPE_SPARSE_TENSOR;
        t->elem_type = tp->sparse_tensor_type->elem_type;
        return convert_shape(tp->sparse_tensor_type->shape, t);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        t->kind = IR_TYPE_SEQUENCE;
        return convert_elem(tp->sequence_type->elem_type, t);
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        t->kind = IR_TYPE_OPTIONAL;
        return convert_elem(tp->optional_type->elem_type, t);
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        t->kind = IR_TYPE_MAP;
        t->key_type = tp->map_type->key_type;
        TSR_TRY(convert_elem(tp->map_type->value_type, t));
        if (t->elem && t->elem->kind == IR_TYPE_TENSOR) t->elem_type = t->elem->elem_type;
        return NULL;
    default: return NULL; /* opaque or absent: unknown */
    }
}

static tsr_status *set_value_type(ir_value *v, const Onnx__TypeProto *tp) {
    ir_type t = {0};
    tsr_status *st = convert_type(tp, &t);
    if (st) {
        ir_type_clear(&t);
        return st;
    }
    ir_type_clear(&v->type);
    v->type = t;
    return NULL;
}

static tsr_status *type_from_tensor(ir_value *v, const ir_tensor *t) {
    ir_type ty = {.kind = IR_TYPE_TENSOR, .elem_type = t->elem_type, .rank = t->rank};
    if (t->rank > 0) {
        if (!(ty.dims = calloc((size_t)t->rank, sizeof *ty.dims))) return TSR_NO_MEMORY();
        for (int32_t i = 0; i < t->rank; i++) ty.dims[i].value = t->dims[i];
    }
    ir_type_clear(&v->type);
    v->type = ty;
    return NULL;
}

/* --- attributes ------------------------------------------------------------ */

static tsr_status *convert_graph(load_ctx *c, const Onnx__GraphProto *gp, ir_graph *g, const char *label);

/* IR version 1 had no `type`; the field that is set says it. */
static int32_t attr_type(const Onnx__AttributeProto *ap) {
    if (ap->has_type && ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return (int32_t)ap->type;
    if (ap->has_f) return TSR_ATTR_FLOAT;
    if (ap->has_i) return TSR_ATTR_INT;
    if (ap->has_s) return TSR_ATTR_STRING;
    if (ap->t) return TSR_ATTR_TENSOR;
    if (ap->g) return TSR_ATTR_GRAPH;
    if (ap->sparse_tensor) return TSR_ATTR_SPARSE_TENSOR;
    if (ap->tp) return TSR_ATTR_TYPE_PROTO;
    if (ap->n_floats) return TSR_ATTR_FLOATS;
    if (ap->n_ints) return TSR_ATTR_INTS;
    if (ap->n_strings) return TSR_ATTR_STRINGS;
    if (ap->n_tensors) return TSR_ATTR_TENSORS;
    if (ap->n_graphs) return TSR_ATTR_GRAPHS;
    if (ap->n_sparse_tensors) return TSR_ATTR_SPARSE_TENSORS;
    if (ap->n_type_protos) return TSR_ATTR_TYPE_PROTOS;
    return TSR_ATTR_UNDEFINED;
}

static tsr_status *dup_bytes(const ProtobufCBinaryData *b, char **out, size_t *len) {
    char *s = malloc(b->len + 1);
    if (!s) return TSR_NO_MEMORY();
    if (b->len) memcpy(s, b->data, b->len);
    s[b->len] = 0;
    *out = s;
    *len = b->len;
    return NULL;
}

static tsr_status *subgraph(load_ctx *c, ir_graph *parent, const Onnx__GraphProto *gp, ir_graph **out) {
    /* The byte scan before decoding refuses this first; kept for graphs
     * reached another way. */
    int limit = c->model->limits.graph_depth;
    if (parent->depth + 1 > limit)
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "subgraphs nest deeper than %d levels (a level %d graph '%s'), over the "
                         "graph_depth limit (%d)",
                         limit, parent->depth + 1, gp->name ? gp->name : "", limit);
    ir_graph *g = ir_graph_new(c->model, parent, gp->name);
    if (!g) return TSR_NO_MEMORY();
    *out = g; /* owned by the attribute from here, freed with it on error */
    return convert_graph(c, gp, g, "graph");
}

/* Fills a (zeroed; the caller clears it on error). g: the graph the node
 * belongs to, parent of any subgraph. */
static tsr_status *convert_attr(load_ctx *c, ir_graph *g, const Onnx__AttributeProto *ap, ir_attr *a) {
    if (!ap->name || !*ap->name) return tsr_error(TSR_ERR_INVALID_MODEL, "attribute without a name");
    if (!(a->name = strdup(ap->name))) return TSR_NO_MEMORY();
    a->type = attr_type(ap);
    if (ap->ref_attr_name && *ap->ref_attr_name) {
        /* A function body's reference to its caller's attribute: no value. */
        if (!(a->ref_attr_name = strdup(ap->ref_attr_name))) return TSR_NO_MEMORY();
        return NULL;
    }
    switch (a->type) {
    case TSR_ATTR_FLOAT: a->f = ap->f; return NULL;
    case TSR_ATTR_INT: a->i = ap->i; return NULL;
    case TSR_ATTR_STRING: return dup_bytes(&ap->s, &a->s, &a->s_len);
    case TSR_ATTR_TENSOR:
        if (!ap->t) return tsr_error(TSR_ERR_INVALID_MODEL, "type TENSOR but no tensor");
        return loader_tensor_decode(ap->t, c->ext, &a->t);
    case TSR_ATTR_SPARSE_TENSOR:
        /* Densified: every later stage reads a->t. */
        if (!ap->sparse_tensor) return tsr_error(TSR_ERR_INVALID_MODEL, "type SPARSE_TENSOR but no sparse tensor");
        return loader_sparse_decode(ap->sparse_tensor, c->ext, &a->t);
    case TSR_ATTR_GRAPH:
        if (!ap->g) return tsr_error(TSR_ERR_INVALID_MODEL, "type GRAPH but no graph");
        return subgraph(c, g, ap->g, &a->g);
    case TSR_ATTR_FLOATS:
        if (ap->n_floats && !(a->floats = malloc(ap->n_floats * sizeof(float)))) return TSR_NO_MEMORY();
        if (ap->n_floats) memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
        a->count = ap->n_floats;
        return NULL;
    case TSR_ATTR_INTS:
        if (ap->n_ints && !(a->ints = malloc(ap->n_ints * sizeof(int64_t)))) return TSR_NO_MEMORY();
        if (ap->n_ints) memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        a->count = ap->n_ints;
        return NULL;
    case TSR_ATTR_STRINGS:
        if (!ap->n_strings) return NULL;
        if (!(a->strings = calloc(ap->n_strings, sizeof *a->strings)) ||
            !(a->string_lens = calloc(ap->n_strings, sizeof *a->string_lens)))
            return TSR_NO_MEMORY();
        a->count = ap->n_strings;
        for (size_t i = 0; i < ap->n_strings; i++)
            TSR_TRY(dup_bytes(&ap->strings[i], &a->strings[i], &a->string_lens[i]));
        return NULL;
    case TSR_ATTR_TENSORS:
    case TSR_ATTR_SPARSE_TENSORS: {
        bool sparse = a->type == TSR_ATTR_SPARSE_TENSORS;
        size_t n = sparse ? ap->n_sparse_tensors : ap->n_tensors;
        if (!n) return NULL;
        if (!(a->tensors = calloc(n, sizeof *a->tensors))) return TSR_NO_MEMORY();
        a->count = n;
        for (size_t i = 0; i < n; i++) {
            tsr_status *st = sparse ? loader_sparse_decode(ap->sparse_tensors[i], c->ext, &a->tensors[i])
                                    : loader_tensor_decode(ap->tensors[i], c->ext, &a->tensors[i]);
            if (st) return tsr_error_wrap(st, "tensor %zu", i);
        }
        return NULL;
    }
    case TSR_ATTR_GRAPHS:
        if (!ap->n_graphs) return NULL;
        if (!(a->graphs = calloc(ap->n_graphs, sizeof *a->graphs))) return TSR_NO_MEMORY();
        a->count = ap->n_graphs;
        for (size_t i = 0; i < ap->n_graphs; i++) {
            tsr_status *st = subgraph(c, g, ap->graphs[i], &a->graphs[i]);
            if (st) return tsr_error_wrap(st, "graph %zu", i);
        }
        return NULL;
    case TSR_ATTR_TYPE_PROTO:
    case TSR_ATTR_TYPE_PROTOS:
        /* No standard op reads these yet and ir_attr has no slot for them:
         * the kind and count are kept, the types are not. */
        a->count = a->type == TSR_ATTR_TYPE_PROTOS ? ap->n_type_protos : 1;
        return NULL;
    case TSR_ATTR_UNDEFINED: return tsr_error(TSR_ERR_INVALID_MODEL, "attribute has no type and no value");
    default: return tsr_error(TSR_ERR_INVALID_MODEL, "unknown attribute type %d", (int)a->type);
    }
}

/* --- Constant nodes: their output is a constant value ---------------------- */

static tsr_status *constant_tensor(const ir_attr *a, ir_tensor **out) {
    int64_t n = (int64_t)a->count;
    ir_tensor *t = NULL;
    switch (a->type) {
    case TSR_ATTR_TENSOR:
    case TSR_ATTR_SPARSE_TENSOR: return ir_tensor_clone(&a->t->view, out);
    case TSR_ATTR_FLOAT:
        TSR_TRY(ir_tensor_new(TSR_FLOAT, 0, NULL, &t));
        memcpy(t->data, &a->f, sizeof a->f);
        break;
    case TSR_ATTR_INT:
        TSR_TRY(ir_tensor_new(TSR_INT64, 0, NULL, &t));
        memcpy(t->data, &a->i, sizeof a->i);
        break;
    case TSR_ATTR_FLOATS:
        TSR_TRY(ir_tensor_new(TSR_FLOAT, 1, &n, &t));
        if (n) memcpy(t->data, a->floats, t->nbytes);
        break;
    case TSR_ATTR_INTS:
        TSR_TRY(ir_tensor_new(TSR_INT64, 1, &n, &t));
        if (n) memcpy(t->data, a->ints, t->nbytes);
        break;
    case TSR_ATTR_STRING: {
        TSR_TRY(ir_tensor_new(TSR_STRING, 0, NULL, &t));
        tsr_status *st = ir_tensor_set_string(t, 0, a->s, a->s_len);
        if (st) {
            ir_tensor_free(t);
            return st;
        }
        break;
    }
    case TSR_ATTR_STRINGS:
        TSR_TRY(ir_tensor_new(TSR_STRING, 1, &n, &t));
        for (size_t i = 0; i < a->count; i++) {
            tsr_status *st = ir_tensor_set_string(t, i, a->strings[i], a->string_lens[i]);
            if (st) {
                ir_tensor_free(t);
                return st;
            }
        }
        break;
    default: return tsr_error(TSR_ERR_INVALID_MODEL, "attribute '%s' has the wrong type", a->name);
    }
    *out = t;
    return NULL;
}

static tsr_status *fill_constant(ir_node *n) {
    static const char *const keys[] = {"value",     "sparse_value", "value_float",  "value_floats",
                                       "value_int", "value_ints",   "value_string", "value_strings"};
    const ir_attr *found = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const ir_attr *a = ir_node_attr(n, keys[i]);
        if (!a) continue;
        if (found) return tsr_error(TSR_ERR_INVALID_MODEL, "Constant has both '%s' and '%s'", found->name, a->name);
        found = a;
    }
    if (!found) return tsr_error(TSR_ERR_INVALID_MODEL, "Constant has no value attribute");
    if (found->ref_attr_name || n->n_outputs < 1 || !n->outputs[0]) return NULL;
    ir_value *v = n->outputs[0];
    if (v->constant) return NULL; /* a duplicate producer; ir_graph_check reports it */
    TSR_TRY(constant_tensor(found, &v->constant));
    return type_from_tensor(v, v->constant);
}

/* --- graphs ---------------------------------------------------------------- */

static tsr_status *add_graph_input(ir_graph *g, const Onnx__ValueInfoProto *vi) {
    if (!vi->name || !*vi->name) return tsr_error(TSR_ERR_INVALID_MODEL, "no name");
    if (ir_graph_find(g, vi->name)) return tsr_error(TSR_ERR_INVALID_MODEL, "declared more than once");
    ir_value *v;
    TSR_TRY(ir_graph_value(g, vi->name, &v));
    TSR_TRY(set_value_type(v, vi->type));
    v->is_graph_input = true;
    ir_value **grown = realloc(g->inputs, (g->n_inputs + 1) * sizeof *grown);
    if (!grown) return TSR_NO_MEMORY();
    g->inputs = grown;
    g->inputs[g->n_inputs++] = v;
    return NULL;
}

static tsr_status *add_initializer(ir_graph *g, ir_tensor *t) {
    if (!t->name || !*t->name) {
        ir_tensor_free(t);
        return tsr_error(TSR_ERR_INVALID_MODEL, "no name");
    }
    ir_value *v = ir_graph_find(g, t->name);
    if (v && (v->constant || !v->is_graph_input)) {
        ir_tensor_free(t);
        return tsr_error(TSR_ERR_INVALID_MODEL, "name used more than once");
    }
    tsr_status *st = v ? NULL : ir_graph_value(g, t->name, &v);
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    v->constant = t;
    /* A declared input keeps its declared type (it may be overridden at run time). */
    return v->is_graph_input && v->type.kind != IR_TYPE_UNKNOWN ? NULL : type_from_tensor(v, t);
}

static tsr_status *node_header(load_ctx *c, ir_graph *g, const Onnx__NodeProto *np, ir_node **out) {
    ir_node *n;
    TSR_TRY(ir_graph_add_node(g, &n));
    *out = n;
    if (!np->op_type || !*np->op_type) return tsr_error(TSR_ERR_INVALID_MODEL, "no op_type");
    if (!(n->name = dup_str(np->name)) || !(n->op_type = strdup(np->op_type)) ||
        !(n->domain = dup_str(norm_domain(np->domain))))
        return TSR_NO_MEMORY();
    n->opset = scope_opset(c, n->domain);
    if (np->n_output) {
        if (!(n->outputs = calloc(np->n_output, sizeof *n->outputs))) return TSR_NO_MEMORY();
        n->n_outputs = np->n_output;
    }
    for (size_t j = 0; j < np->n_output; j++) {
        const char *name = np->output[j];
        if (!name || !*name) continue; /* omitted optional output */
        ir_value *v;
        TSR_TRY(ir_graph_value(g, name, &v));
        if (v->is_graph_input || (v->constant && !v->producer))
            return tsr_error(TSR_ERR_INVALID_MODEL, "output '%s' has the name of a graph input or initializer", name);
        n->outputs[j] = v;
        /* A second producer is left for ir_graph_check to report. */
        if (!v->producer) {
            v->producer = n;
            v->producer_output = j;
        }
    }
    return NULL;
}

static tsr_status *node_inputs(ir_graph *g, const Onnx__NodeProto *np, ir_node *n) {
    if (!np->n_input) return NULL;
    if (!(n->inputs = calloc(np->n_input, sizeof *n->inputs))) return TSR_NO_MEMORY();
    n->n_inputs = np->n_input;
    for (size_t j = 0; j < np->n_input; j++) {
        const char *name = np->input[j];
        if (!name || !*name) continue; /* omitted optional input */
        ir_value *v = ir_graph_resolve(g, name);
        /* Undefined: kept as a dangling value so ir_graph_check names it. */
        if (!v) TSR_TRY(ir_graph_value(g, name, &v));
        n->inputs[j] = v;
    }
    return NULL;
}

/* On error *bad names the attribute at fault (NULL when none is). */
static tsr_status *node_attrs(load_ctx *c, ir_graph *g, const Onnx__NodeProto *np, ir_node *n, const char **bad) {
    *bad = NULL;
    if (np->n_attribute) {
        if (!(n->attrs = calloc(np->n_attribute, sizeof *n->attrs))) return TSR_NO_MEMORY();
        n->n_attrs = np->n_attribute;
    }
    for (size_t k = 0; k < np->n_attribute; k++) {
        const Onnx__AttributeProto *ap = np->attribute[k];
        tsr_status *st = convert_attr(c, g, ap, &n->attrs[k]);
        for (size_t j = 0; !st && j < k; j++)
            if (strcmp(n->attrs[j].name, n->attrs[k].name) == 0) st = tsr_error(TSR_ERR_INVALID_MODEL, "given twice");
        if (st) {
            *bad = ap->name ? ap->name : "";
            return st;
        }
    }
    if (strcmp(n->op_type, "Constant") == 0 && n->domain[0] == 0) TSR_TRY(fill_constant(n));
    return NULL;
}

static tsr_status *node_error(tsr_status *st, const char *label, size_t i, const Onnx__NodeProto *np,
                              const char *attr) {
    char nl[160];
    node_label(nl, sizeof nl, np);
    if (attr) return tsr_error_wrap(st, "%s.node[%zu] %s attribute '%s'", label, i, nl, attr);
    return tsr_error_wrap(st, "%s.node[%zu] %s", label, i, nl);
}

/* Graph inputs, initializers, then every node's outputs exist before any
 * input is looked up: a name is then local exactly when this graph defines
 * it. Subgraphs come last, so they find all of this graph's values, with
 * the types declared for them (outer placeholders copy the type). */
static tsr_status *convert_graph(load_ctx *c, const Onnx__GraphProto *gp, ir_graph *g, const char *label) {
    tsr_status *st = NULL;
    for (size_t i = 0; i < gp->n_input; i++)
        if ((st = add_graph_input(g, gp->input[i])))
            return tsr_error_wrap(st, "%s.input[%zu] '%s'", label, i, gp->input[i]->name ? gp->input[i]->name : "");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        ir_tensor *t;
        st = loader_tensor_decode(tp, c->ext, &t);
        if (!st) st = add_initializer(g, t);
        if (st) return tsr_error_wrap(st, "%s.initializer[%zu] '%s'", label, i, tp->name ? tp->name : "");
    }
    for (size_t i = 0; i < gp->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
        ir_tensor *t;
        st = loader_sparse_decode(sp, c->ext, &t);
        if (!st) st = add_initializer(g, t);
        if (st)
            return tsr_error_wrap(st, "%s.sparse_initializer[%zu] '%s'", label, i,
                                  sp->values && sp->values->name ? sp->values->name : "");
    }
    size_t first = g->n_nodes;
    for (size_t i = 0; i < gp->n_node; i++) {
        ir_node *n;
        if ((st = node_header(c, g, gp->node[i], &n))) return node_error(st, label, i, gp->node[i], NULL);
    }
    for (size_t i = 0; i < gp->n_node; i++)
        if ((st = node_inputs(g, gp->node[i], g->nodes[first + i]))) return node_error(st, label, i, gp->node[i], NULL);
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi->name || !*vi->name) return tsr_error(TSR_ERR_INVALID_MODEL, "%s.output[%zu]: no name", label, i);
        ir_value *v = ir_graph_resolve(g, vi->name);
        if (!v && (st = ir_graph_value(g, vi->name, &v))) return st;
        if (v->type.kind == IR_TYPE_UNKNOWN && (st = set_value_type(v, vi->type)))
            return tsr_error_wrap(st, "%s.output[%zu] '%s'", label, i, vi->name);
        v->is_graph_output = true;
        ir_value **grown = realloc(g->outputs, (g->n_outputs + 1) * sizeof *grown);
        if (!grown) return TSR_NO_MEMORY();
        g->outputs = grown;
        g->outputs[g->n_outputs++] = v;
    }
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        ir_value *v = vi->name ? ir_graph_find(g, vi->name) : NULL;
        if (v && v->type.kind == IR_TYPE_UNKNOWN && (st = set_value_type(v, vi->type)))
            return tsr_error_wrap(st, "%s.value_info[%zu] '%s'", label, i, vi->name);
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        const char *bad;
        if ((st = node_attrs(c, g, gp->node[i], g->nodes[first + i], &bad)))
            return node_error(st, label, i, gp->node[i], bad);
    }
    return NULL;
}

/* --- functions ------------------------------------------------------------- */

/* A function body is converted as a graph whose inputs and outputs are the
 * formal parameters (names only; types come from value_info when given). */
static tsr_status *function_body(load_ctx *c, const Onnx__FunctionProto *fp, ir_function *f) {
    size_t nio = fp->n_input + fp->n_output;
    Onnx__ValueInfoProto *vis = calloc(nio ? nio : 1, sizeof *vis);
    Onnx__ValueInfoProto **ptrs = calloc(nio ? nio : 1, sizeof *ptrs);
    if (!vis || !ptrs) {
        free(vis);
        free(ptrs);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < nio; i++) {
        onnx__value_info_proto__init(&vis[i]);
        vis[i].name = i < fp->n_input ? fp->input[i] : fp->output[i - fp->n_input];
        ptrs[i] = &vis[i];
    }
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    gp.name = fp->name;
    gp.n_input = fp->n_input;
    gp.input = ptrs;
    gp.n_output = fp->n_output;
    gp.output = ptrs + fp->n_input;
    gp.n_node = fp->n_node;
    gp.node = fp->node;
    gp.n_value_info = fp->n_value_info;
    gp.value_info = fp->value_info;
    tsr_status *st = convert_graph(c, &gp, f->body, "body");
    free(vis);
    free(ptrs);
    return st;
}

static tsr_status *convert_function(load_ctx *c, const Onnx__FunctionProto *fp, ir_function *f) {
    if (!fp->name || !*fp->name) return tsr_error(TSR_ERR_INVALID_MODEL, "no name");
    if (!(f->name = strdup(fp->name)) || !(f->domain = dup_str(norm_domain(fp->domain))) ||
        !(f->overload = dup_str(fp->overload)))
        return TSR_NO_MEMORY();
    TSR_TRY(convert_opsets(fp->opset_import, fp->n_opset_import, &f->opsets, &f->n_opsets));
    if (fp->n_attribute) {
        if (!(f->attr_names = calloc(fp->n_attribute, sizeof *f->attr_names))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < fp->n_attribute; i++) {
            if (!(f->attr_names[i] = dup_str(fp->attribute[i]))) return TSR_NO_MEMORY();
            f->n_attr_names = i + 1;
        }
    }
    if (!(f->body = ir_graph_new(c->model, NULL, fp->name))) return TSR_NO_MEMORY();
    load_ctx fc = *c;
    fc.opsets = f->opsets;
    fc.n_opsets = f->n_opsets;
    if (fp->n_attribute_proto) {
        f->attr_defaults = calloc(fp->n_attribute_proto, sizeof *f->attr_defaults);
        if (!f->attr_defaults) return TSR_NO_MEMORY();
        f->n_attr_defaults = fp->n_attribute_proto;
        for (size_t i = 0; i < fp->n_attribute_proto; i++) {
            tsr_status *st = convert_attr(&fc, f->body, fp->attribute_proto[i], &f->attr_defaults[i]);
            if (st) return tsr_error_wrap(st, "attribute_proto[%zu]", i);
        }
    }
    return function_body(&fc, fp, f);
}

/* --- models ---------------------------------------------------------------- */

static tsr_status *convert_model(load_ctx *c, const Onnx__ModelProto *mp) {
    ir_model *m = c->model;
    m->ir_version = mp->ir_version;
    m->model_version = mp->model_version;
    if (!(m->producer_name = dup_str(mp->producer_name)) || !(m->producer_version = dup_str(mp->producer_version)) ||
        !(m->domain = dup_str(mp->domain)) || !(m->doc_string = dup_str(mp->doc_string)))
        return TSR_NO_MEMORY();
    TSR_TRY(convert_opsets(mp->opset_import, mp->n_opset_import, &m->opsets, &m->n_opsets));
    if (!m->n_opsets && mp->ir_version < 3) {
        /* Before IR 3 there were no imports: ai.onnx version 1 was implied. */
        if (!(m->opsets = calloc(1, sizeof *m->opsets)) || !(m->opsets[0].domain = strdup(""))) return TSR_NO_MEMORY();
        m->opsets[0].version = 1;
        m->n_opsets = 1;
    }
    if (mp->n_metadata_props) {
        if (!(m->metadata = calloc(mp->n_metadata_props, sizeof *m->metadata))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < mp->n_metadata_props; i++) {
            m->n_metadata = i + 1;
            if (!(m->metadata[i].key = dup_str(mp->metadata_props[i]->key)) ||
                !(m->metadata[i].value = dup_str(mp->metadata_props[i]->value)))
                return TSR_NO_MEMORY();
        }
    }
    if (mp->n_functions) {
        if (!(m->functions = calloc(mp->n_functions, sizeof *m->functions))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < mp->n_functions; i++) {
            const Onnx__FunctionProto *fp = mp->functions[i];
            if (!(m->functions[i] = calloc(1, sizeof **m->functions))) return TSR_NO_MEMORY();
            m->n_functions = i + 1;
            tsr_status *st = convert_function(c, fp, m->functions[i]);
            if (st) return tsr_error_wrap(st, "functions[%zu] '%s'", i, fp->name ? fp->name : "");
        }
    }
    if (!mp->graph) return tsr_error(TSR_ERR_INVALID_MODEL, "model has no graph");
    if (!(m->graph = ir_graph_new(m, NULL, mp->graph->name))) return TSR_NO_MEMORY();
    TSR_TRY(convert_graph(c, mp->graph, m->graph, "graph"));
    TSR_TRY(ir_graph_check(m->graph));
    TSR_TRY(ir_graph_fold_constant_nodes(m->graph));
    for (size_t i = 0; i < m->n_functions; i++) {
        tsr_status *st = ir_graph_check(m->functions[i]->body);
        if (st) return tsr_error_wrap(st, "function '%s'", m->functions[i]->name);
    }
    return NULL;
}

tsr_status *loader_build_model(Onnx__ModelProto *mp, const char *base_dir, const ir_limits *lim, ir_model **out) {
    ir_model *m = ir_model_new();
    tsr_status *st = m ? NULL : TSR_NO_MEMORY();
    if (!st && base_dir && !(m->base_dir = strdup(base_dir))) st = TSR_NO_MEMORY();
    if (!st) {
        m->limits = *lim;
        loader_ext ext = {base_dir, lim->external_bytes, 0};
        load_ctx c = {.model = m, .ext = &ext};
        st = convert_model(&c, mp);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    if (st) {
        ir_model_free(m);
        return st;
    }
    *out = m;
    return NULL;
}
