/* Graph views back to ONNX bytes. The message tree is built with pointers
 * borrowed from the IR wherever protobuf-c only reads them (names, dims,
 * tensor bytes); everything allocated here goes into one list and is freed
 * after packing, so no generated free function ever sees borrowed memory. */
#include "onnx_writer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx_opsets.h"
#include "status.h"
#include "tessera/tessera.h"

typedef struct writer {
    void **allocs;
    size_t n_allocs, cap_allocs;
    const ir_model *model;
    tsr_status *err;   /* first error; later calls become no-ops */
    size_t inline_max; /* a view's constants over this size are inputs without data */
} writer;

/* Zeroed memory owned by the writer; NULL (and w->err set) on failure. */
static void *w_new(writer *w, size_t count, size_t size) {
    if (w->err) return NULL;
    if (count == 0) count = 1;
    if (size && count > SIZE_MAX / size) {
        w->err = TSR_NO_MEMORY();
        return NULL;
    }
    if (w->n_allocs == w->cap_allocs) {
        size_t cap = w->cap_allocs ? w->cap_allocs * 2 : 64;
        void **a = realloc(w->allocs, cap * sizeof *a);
        if (!a) {
            w->err = TSR_NO_MEMORY();
            return NULL;
        }
        w->allocs = a;
        w->cap_allocs = cap;
    }
    void *p = calloc(count, size);
    if (!p) {
        w->err = TSR_NO_MEMORY();
        return NULL;
    }
    w->allocs[w->n_allocs++] = p;
    return p;
}

static void w_fail(writer *w, tsr_status *s) {
    if (!w->err) w->err = s;
    else tsr_status_free(s);
}

/* An outer-scope placeholder stands for the value of an enclosing graph. */
static const ir_value *real_value(const ir_value *v) {
    while (v && v->is_outer && v->outer) v = v->outer;
    return v;
}

/* --- types ---------------------------------------------------------------- */

static Onnx__TensorShapeProto *w_shape(writer *w, const ir_type *t) {
    if (t->rank < 0) return NULL; /* unknown rank: no shape at all */
    Onnx__TensorShapeProto *sp = w_new(w, 1, sizeof *sp);
    if (!sp) return NULL;
    onnx__tensor_shape_proto__init(sp);
    if (t->rank == 0) return sp;
    sp->dim = w_new(w, (size_t)t->rank, sizeof *sp->dim);
    if (!sp->dim) return NULL;
    sp->n_dim = (size_t)t->rank;
    for (int32_t d = 0; d < t->rank; d++) {
        Onnx__TensorShapeProto__Dimension *dm = w_new(w, 1, sizeof *dm);
        if (!dm) return NULL;
        onnx__tensor_shape_proto__dimension__init(dm);
        const ir_dim *id = t->dims ? &t->dims[d] : NULL;
        if (id && id->value >= 0) {
            dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dm->dim_value = id->value;
        } else if (id && id->symbol) {
            dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dm->dim_param = id->symbol;
        }
        sp->dim[d] = dm;
    }
    return sp;
}

/* NULL (without error) for an unknown type. */
static Onnx__TypeProto *w_type(writer *w, const ir_type *t) {
    if (!t || w->err) return NULL;
    Onnx__TypeProto *tp;
    switch (t->kind) {
    case IR_TYPE_TENSOR:
    case IR_TYPE_SPARSE_TENSOR: {
        if (!(tp = w_new(w, 1, sizeof *tp))) return NULL;
        onnx__type_proto__init(tp);
        /* Tensor and SparseTensor have the same members. */
        if (t->kind == IR_TYPE_TENSOR) {
            Onnx__TypeProto__Tensor *tt = w_new(w, 1, sizeof *tt);
            if (!tt) return NULL;
            onnx__type_proto__tensor__init(tt);
            tt->has_elem_type = t->elem_type != 0;
            tt->elem_type = t->elem_type;
            tt->shape = w_shape(w, t);
            tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
            tp->tensor_type = tt;
        } else {
            Onnx__TypeProto__SparseTensor *st = w_new(w, 1, sizeof *st);
            if (!st) return NULL;
            onnx__type_proto__sparse_tensor__init(st);
            st->has_elem_type = t->elem_type != 0;
            st->elem_type = t->elem_type;
            st->shape = w_shape(w, t);
            tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
            tp->sparse_tensor_type = st;
        }
        return tp;
    }
    case IR_TYPE_SEQUENCE:
    case IR_TYPE_OPTIONAL: {
        if (!(tp = w_new(w, 1, sizeof *tp))) return NULL;
        onnx__type_proto__init(tp);
        Onnx__TypeProto *elem = w_type(w, t->elem);
        if (t->kind == IR_TYPE_SEQUENCE) {
            Onnx__TypeProto__Sequence *sq = w_new(w, 1, sizeof *sq);
            if (!sq) return NULL;
            onnx__type_proto__sequence__init(sq);
            sq->elem_type = elem;
            tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
            tp->sequence_type = sq;
        } else {
            Onnx__TypeProto__Optional *op = w_new(w, 1, sizeof *op);
            if (!op) return NULL;
            onnx__type_proto__optional__init(op);
            op->elem_type = elem;
            tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
            tp->optional_type = op;
        }
        return tp;
    }
    case IR_TYPE_MAP: {
        if (!(tp = w_new(w, 1, sizeof *tp))) return NULL;
        onnx__type_proto__init(tp);
        Onnx__TypeProto__Map *mp = w_new(w, 1, sizeof *mp);
        if (!mp) return NULL;
        onnx__type_proto__map__init(mp);
        mp->has_key_type = t->key_type != 0;
        mp->key_type = t->key_type;
        mp->value_type = w_type(w, t->elem);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        tp->map_type = mp;
        return tp;
    }
    default: return NULL;
    }
}

/* `name` is the name to write (a placeholder's, which is the outer value's). */
static Onnx__ValueInfoProto *w_value_info(writer *w, const ir_value *v) {
    Onnx__ValueInfoProto *vi = w_new(w, 1, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = v->name;
    vi->type = w_type(w, &real_value(v)->type);
    return vi;
}

/* --- tensors -------------------------------------------------------------- */

static Onnx__TensorProto *w_tensor(writer *w, const tsr_tensor *t, const char *name) {
    if (w->err) return NULL;
    if (!t || t->memory_kind != TSR_MEMORY_HOST) {
        w_fail(w, tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor '%s' is not in host memory", name ? name : ""));
        return NULL;
    }
    Onnx__TensorProto *tp = w_new(w, 1, sizeof *tp);
    if (!tp) return NULL;
    onnx__tensor_proto__init(tp);
    tp->name = (char *)name;
    tp->n_dims = t->rank > 0 ? (size_t)t->rank : 0;
    tp->dims = (int64_t *)t->dims; /* pack only reads */
    tp->has_data_type = 1;
    tp->data_type = t->elem_type;
    if (t->elem_type == TSR_STRING) {
        size_t n = t->nbytes / sizeof(tsr_string);
        const tsr_string *s = t->data;
        if (n) {
            tp->string_data = w_new(w, n, sizeof *tp->string_data);
            if (!tp->string_data) return NULL;
            for (size_t i = 0; i < n; i++) {
                tp->string_data[i].data = (uint8_t *)s[i].data;
                tp->string_data[i].len = s[i].size;
            }
        }
        tp->n_string_data = n;
    } else {
        /* raw_data is little-endian, as the IR keeps it; always present so a
         * tensor with no elements still reads back as one. */
        tp->has_raw_data = 1;
        tp->raw_data.data = t->data;
        tp->raw_data.len = t->data ? t->nbytes : 0;
    }
    return tp;
}

/* A densified sparse attribute back as a SparseTensorProto: every element is
 * listed (values of shape [N], linear int64 indices 0..N-1), which is exact
 * and needs no knowledge of the element type's zero. */
static Onnx__SparseTensorProto *w_sparse(writer *w, const tsr_tensor *t, const char *name) {
    if (w->err) return NULL;
    uint64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++) count *= (uint64_t)(t->dims[d] > 0 ? t->dims[d] : 0);
    Onnx__SparseTensorProto *sp = w_new(w, 1, sizeof *sp);
    int64_t *flat = w_new(w, 1, sizeof *flat);
    int64_t *idx = w_new(w, (size_t)count, sizeof *idx);
    tsr_tensor *vals = w_new(w, 1, sizeof *vals);
    if (!sp || !flat || !idx || !vals) return NULL;
    onnx__sparse_tensor_proto__init(sp);
    *flat = (int64_t)count;
    for (uint64_t i = 0; i < count; i++) idx[i] = (int64_t)i;
    *vals = *t;
    vals->rank = 1;
    vals->dims = flat;
    sp->values = w_tensor(w, vals, name);
    tsr_tensor ind = {sizeof ind, TSR_INT64, 1, flat, idx, (size_t)count * sizeof *idx, TSR_MEMORY_HOST, 0};
    sp->indices = w_tensor(w, &ind, NULL);
    sp->n_dims = t->rank > 0 ? (size_t)t->rank : 0;
    sp->dims = (int64_t *)t->dims;
    return sp;
}

/* --- attributes, nodes, graphs -------------------------------------------- */

static Onnx__GraphProto *w_subgraph(writer *w, const ir_graph *g);

static Onnx__AttributeProto *w_attr(writer *w, const ir_attr *a, const ir_node *n) {
    Onnx__AttributeProto *ap = w_new(w, 1, sizeof *ap);
    if (!ap) return NULL;
    onnx__attribute_proto__init(ap);
    ap->name = a->name;
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    if (a->ref_attr_name) {
        ap->ref_attr_name = a->ref_attr_name;
        return ap;
    }
    switch (a->type) {
    case TSR_ATTR_FLOAT:
        ap->has_f = 1;
        ap->f = a->f;
        break;
    case TSR_ATTR_INT:
        ap->has_i = 1;
        ap->i = a->i;
        break;
    case TSR_ATTR_STRING:
        ap->has_s = 1;
        ap->s.data = (uint8_t *)a->s;
        ap->s.len = a->s ? a->s_len : 0;
        break;
    case TSR_ATTR_TENSOR:
        if (a->t) ap->t = w_tensor(w, &a->t->view, a->t->name);
        break;
    case TSR_ATTR_SPARSE_TENSOR:
        if (a->t) ap->sparse_tensor = w_sparse(w, &a->t->view, a->t->name);
        break;
    case TSR_ATTR_GRAPH:
        if (a->g) ap->g = w_subgraph(w, a->g);
        break;
    case TSR_ATTR_FLOATS:
        ap->n_floats = a->floats ? a->count : 0;
        ap->floats = a->floats;
        break;
    case TSR_ATTR_INTS:
        ap->n_ints = a->ints ? a->count : 0;
        ap->ints = a->ints;
        break;
    case TSR_ATTR_STRINGS:
        if (a->strings && a->count) {
            if (!(ap->strings = w_new(w, a->count, sizeof *ap->strings))) return NULL;
            for (size_t i = 0; i < a->count; i++) {
                ap->strings[i].data = (uint8_t *)a->strings[i];
                ap->strings[i].len = a->string_lens ? a->string_lens[i] : strlen(a->strings[i]);
            }
            ap->n_strings = a->count;
        }
        break;
    case TSR_ATTR_TENSORS:
    case TSR_ATTR_SPARSE_TENSORS: {
        if (!a->tensors || !a->count) break;
        bool sparse = a->type == TSR_ATTR_SPARSE_TENSORS;
        void **arr = w_new(w, a->count, sizeof(void *));
        if (!arr) return NULL;
        for (size_t i = 0; i < a->count && !w->err; i++) {
            const ir_tensor *t = a->tensors[i];
            if (!t) {
                w_fail(w, tsr_error(TSR_ERR_INVALID_MODEL, "attribute '%s' tensor %zu is missing", a->name, i));
                break;
            }
            arr[i] = sparse ? (void *)w_sparse(w, &t->view, t->name) : (void *)w_tensor(w, &t->view, t->name);
        }
        if (sparse) {
            ap->sparse_tensors = (Onnx__SparseTensorProto **)arr;
            ap->n_sparse_tensors = a->count;
        } else {
            ap->tensors = (Onnx__TensorProto **)arr;
            ap->n_tensors = a->count;
        }
        break;
    }
    case TSR_ATTR_GRAPHS:
        if (!a->graphs || !a->count) break;
        if (!(ap->graphs = w_new(w, a->count, sizeof *ap->graphs))) return NULL;
        for (size_t i = 0; i < a->count && !w->err; i++) ap->graphs[i] = w_subgraph(w, a->graphs[i]);
        ap->n_graphs = a->count;
        break;
    case TSR_ATTR_TYPE_PROTO:
    case TSR_ATTR_TYPE_PROTOS:
        /* The loader keeps only the kind of these (no standard op reads
         * them), so they cannot be written back faithfully. */
        w_fail(w,
               tsr_error(TSR_ERR_NOT_SUPPORTED,
                         "node '%s' (%s) attribute '%s': TypeProto attributes are not kept "
                         "by the loader and cannot be serialized",
                         n ? n->name : "", n ? n->op_type : "", a->name));
        return NULL;
    default:
        w_fail(w, tsr_error(TSR_ERR_NOT_SUPPORTED, "attribute '%s' has unknown type %d", a->name, (int)a->type));
        return NULL;
    }
    return ap;
}

static Onnx__NodeProto *w_node(writer *w, const ir_node *n) {
    Onnx__NodeProto *np = w_new(w, 1, sizeof *np);
    if (!np) return NULL;
    onnx__node_proto__init(np);
    np->name = n->name && n->name[0] ? n->name : NULL;
    np->op_type = n->op_type;
    np->domain = n->domain && n->domain[0] ? n->domain : NULL;
    static char empty[] = "";
    if (n->n_inputs) {
        if (!(np->input = w_new(w, n->n_inputs, sizeof *np->input))) return NULL;
        for (size_t i = 0; i < n->n_inputs; i++) np->input[i] = n->inputs[i] ? n->inputs[i]->name : empty;
        np->n_input = n->n_inputs;
    }
    if (n->n_outputs) {
        if (!(np->output = w_new(w, n->n_outputs, sizeof *np->output))) return NULL;
        for (size_t i = 0; i < n->n_outputs; i++) np->output[i] = n->outputs[i] ? n->outputs[i]->name : empty;
        np->n_output = n->n_outputs;
    }
    if (n->n_attrs) {
        if (!(np->attribute = w_new(w, n->n_attrs, sizeof *np->attribute))) return NULL;
        for (size_t i = 0; i < n->n_attrs && !w->err; i++) np->attribute[i] = w_attr(w, &n->attrs[i], n);
        np->n_attribute = n->n_attrs;
    }
    return np;
}

static Onnx__NodeProto **w_nodes(writer *w, ir_node *const *nodes, size_t n) {
    Onnx__NodeProto **arr = w_new(w, n, sizeof *arr);
    for (size_t i = 0; arr && i < n && !w->err; i++) arr[i] = w_node(w, nodes[i]);
    return arr;
}

/* value_info for every typed node output that is not a graph output. */
static void w_value_infos(writer *w, Onnx__GraphProto *gp, ir_node *const *nodes, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += nodes[i]->n_outputs;
    if (!count || !(gp->value_info = w_new(w, count, sizeof *gp->value_info))) return;
    for (size_t i = 0; i < n && !w->err; i++) {
        for (size_t k = 0; k < nodes[i]->n_outputs && !w->err; k++) {
            const ir_value *v = nodes[i]->outputs[k];
            if (!v || v->type.kind == IR_TYPE_UNKNOWN) continue;
            bool is_output = false;
            for (size_t o = 0; o < gp->n_output && !is_output; o++)
                is_output = strcmp(gp->output[o]->name, v->name) == 0;
            if (!is_output) gp->value_info[gp->n_value_info++] = w_value_info(w, v);
        }
    }
}

/* A whole subgraph (If/Loop/Scan body): its own inputs, initializers and
 * outputs; names of enclosing-scope values stay plain references. */
static Onnx__GraphProto *w_subgraph(writer *w, const ir_graph *g) {
    if (w->err) return NULL;
    Onnx__GraphProto *gp = w_new(w, 1, sizeof *gp);
    if (!gp) return NULL;
    onnx__graph_proto__init(gp);
    gp->name = g->name;
    gp->node = w_nodes(w, g->nodes, g->n_nodes);
    gp->n_node = g->n_nodes;
    if (!(gp->input = w_new(w, g->n_inputs, sizeof *gp->input))) return NULL;
    for (size_t i = 0; i < g->n_inputs; i++) gp->input[i] = w_value_info(w, g->inputs[i]);
    gp->n_input = g->n_inputs;
    if (!(gp->output = w_new(w, g->n_outputs, sizeof *gp->output))) return NULL;
    for (size_t i = 0; i < g->n_outputs; i++) gp->output[i] = w_value_info(w, g->outputs[i]);
    gp->n_output = g->n_outputs;
    if (!(gp->initializer = w_new(w, g->n_values, sizeof *gp->initializer))) return NULL;
    for (size_t i = 0; i < g->n_values && !w->err; i++) {
        const ir_value *v = g->values[i];
        if (v->constant && !v->producer && !v->is_outer)
            gp->initializer[gp->n_initializer++] = w_tensor(w, &v->constant->view, v->name);
    }
    w_value_infos(w, gp, g->nodes, g->n_nodes);
    return gp;
}

/* --- the top-level graph of a view --------------------------------------- */

typedef struct needs {
    const ir_graph *g;
    bool *listed; /* by value index of g: already an input, or produced inside */
    ir_value **extra;
    size_t n_extra;
} needs;

static bool value_of(const ir_graph *g, const ir_value *v) {
    return v && v->index < g->n_values && g->values[v->index] == v;
}

static void need(writer *w, needs *nd, ir_value *v) {
    if (!value_of(nd->g, v) || nd->listed[v->index]) return;
    nd->listed[v->index] = true;
    nd->extra[nd->n_extra++] = v; /* sized for every value of g */
    (void)w;
}

/* Values of nd->g that subgraphs of `n` read from the enclosing scope. */
static void need_outer_reads(writer *w, needs *nd, const ir_node *n) {
    for (size_t a = 0; a < n->n_attrs; a++) {
        const ir_attr *at = &n->attrs[a];
        size_t count = at->g ? 1 : (at->graphs ? at->count : 0);
        for (size_t k = 0; k < count; k++) {
            const ir_graph *sg = at->g ? at->g : at->graphs[k];
            if (!sg) continue;
            for (size_t i = 0; i < sg->n_values; i++) {
                ir_value *p = sg->values[i];
                while (p && p->is_outer && p->outer) {
                    p = p->outer;
                    if (value_of(nd->g, p)) need(w, nd, p);
                }
            }
            for (size_t j = 0; j < sg->n_nodes; j++) need_outer_reads(w, nd, sg->nodes[j]);
        }
    }
}

static Onnx__GraphProto *w_view_graph(writer *w, const struct tsr_graph *v) {
    const ir_graph *g = v->ir;
    needs nd = {g, w_new(w, g->n_values, sizeof(bool)), w_new(w, g->n_values, sizeof(ir_value *)), 0};
    Onnx__GraphProto *gp = w_new(w, 1, sizeof *gp);
    if (!gp || !nd.listed || !nd.extra) return NULL;
    onnx__graph_proto__init(gp);
    gp->name = g->name && g->name[0] ? g->name : (char *)"piece";
    /* What is defined: the view's inputs and its nodes' outputs. */
    for (size_t i = 0; i < v->n_inputs; i++)
        if (value_of(g, v->inputs[i])) nd.listed[v->inputs[i]->index] = true;
    for (size_t i = 0; i < v->n_nodes; i++)
        for (size_t k = 0; k < v->nodes[i]->n_outputs; k++)
            if (value_of(g, v->nodes[i]->outputs[k])) nd.listed[v->nodes[i]->outputs[k]->index] = true;
    /* What else the nodes read. */
    for (size_t i = 0; i < v->n_nodes; i++) {
        const ir_node *n = v->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) need(w, &nd, n->inputs[k]);
        need_outer_reads(w, &nd, n);
    }
    /* An output that is a constant (a folded Constant node) is defined by
     * its initializer. */
    for (size_t i = 0; i < v->n_outputs; i++)
        if (v->outputs[i]->constant && !v->outputs[i]->producer) need(w, &nd, v->outputs[i]);
    size_t n_in = v->n_inputs + nd.n_extra;
    gp->input = w_new(w, n_in, sizeof *gp->input);
    gp->initializer = w_new(w, n_in, sizeof *gp->initializer);
    gp->output = w_new(w, v->n_outputs, sizeof *gp->output);
    if (!gp->input || !gp->initializer || !gp->output) return NULL;
    for (size_t i = 0; i < n_in && !w->err; i++) {
        const ir_value *iv = i < v->n_inputs ? v->inputs[i] : nd.extra[i - v->n_inputs];
        const ir_value *rv = real_value(iv);
        bool declared = i < v->n_inputs, data = rv->constant && rv->constant->nbytes <= w->inline_max;
        if (data) gp->initializer[gp->n_initializer++] = w_tensor(w, &rv->constant->view, iv->name);
        if (declared || !data) gp->input[gp->n_input++] = w_value_info(w, iv);
    }
    for (size_t i = 0; i < v->n_outputs; i++) gp->output[i] = w_value_info(w, v->outputs[i]);
    gp->n_output = v->n_outputs;
    gp->node = w_nodes(w, v->nodes, v->n_nodes);
    gp->n_node = v->n_nodes;
    w_value_infos(w, gp, v->nodes, v->n_nodes);
    return gp;
}

static Onnx__OperatorSetIdProto **w_opsets(writer *w, const ir_opset *ops, size_t n) {
    Onnx__OperatorSetIdProto **arr = w_new(w, n, sizeof *arr);
    for (size_t i = 0; arr && i < n; i++) {
        Onnx__OperatorSetIdProto *op = w_new(w, 1, sizeof *op);
        if (!op) return NULL;
        onnx__operator_set_id_proto__init(op);
        op->domain = ops[i].domain ? ops[i].domain : (char *)"";
        op->has_version = 1;
        op->version = ops[i].version;
        arr[i] = op;
    }
    return arr;
}

static Onnx__FunctionProto *w_function(writer *w, const ir_function *f) {
    Onnx__FunctionProto *fp = w_new(w, 1, sizeof *fp);
    if (!fp) return NULL;
    onnx__function_proto__init(fp);
    fp->name = f->name;
    fp->domain = f->domain;
    fp->overload = f->overload && f->overload[0] ? f->overload : NULL;
    fp->opset_import = w_opsets(w, f->opsets, f->n_opsets);
    fp->n_opset_import = f->n_opsets;
    fp->attribute = f->attr_names;
    fp->n_attribute = f->n_attr_names;
    if (f->n_attr_defaults) {
        if (!(fp->attribute_proto = w_new(w, f->n_attr_defaults, sizeof *fp->attribute_proto))) return NULL;
        for (size_t i = 0; i < f->n_attr_defaults && !w->err; i++)
            fp->attribute_proto[i] = w_attr(w, &f->attr_defaults[i], NULL);
        fp->n_attribute_proto = f->n_attr_defaults;
    }
    const ir_graph *b = f->body;
    if (!b) return fp;
    if (!(fp->input = w_new(w, b->n_inputs, sizeof *fp->input)) ||
        !(fp->output = w_new(w, b->n_outputs, sizeof *fp->output)))
        return NULL;
    for (size_t i = 0; i < b->n_inputs; i++) fp->input[i] = b->inputs[i]->name;
    for (size_t i = 0; i < b->n_outputs; i++) fp->output[i] = b->outputs[i]->name;
    fp->n_input = b->n_inputs;
    fp->n_output = b->n_outputs;
    fp->node = w_nodes(w, b->nodes, b->n_nodes);
    fp->n_node = b->n_nodes;
    return fp;
}

/* The model's own producer, doc string and metadata_props, for a model
 * written whole (onnx_write_model) rather than a piece of one. */
static void w_model_header(writer *w, const ir_model *m, Onnx__ModelProto *mp) {
    mp->producer_name = m->producer_name;
    mp->producer_version = m->producer_version;
    mp->doc_string = m->doc_string && m->doc_string[0] ? m->doc_string : NULL;
    if (!m->n_metadata) return;
    mp->metadata_props = w_new(w, m->n_metadata, sizeof *mp->metadata_props);
    for (size_t i = 0; mp->metadata_props && i < m->n_metadata; i++) {
        Onnx__StringStringEntryProto *e = w_new(w, 1, sizeof *e);
        if (!e) return;
        onnx__string_string_entry_proto__init(e);
        e->key = m->metadata[i].key;
        e->value = m->metadata[i].value;
        mp->metadata_props[mp->n_metadata_props++] = e;
    }
}

static tsr_status *write_model(const struct tsr_graph *v, bool whole, size_t inline_max, void **bytes, size_t *size) {
    writer w = {NULL, 0, 0, v->ir->model, NULL, inline_max};
    const ir_model *m = w.model;
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    /* Initializers that are not graph inputs need IR version 4. */
    mp.has_ir_version = 1;
    mp.ir_version = m && m->ir_version >= 4 ? m->ir_version : 8;
    mp.producer_name = (char *)"tessera";
    mp.producer_version = (char *)"0.1.0";
    if (m && whole) w_model_header(&w, m, &mp);
    if (m) {
        mp.domain = m->domain;
        mp.has_model_version = m->model_version != 0;
        mp.model_version = m->model_version;
        /* one version per domain, though nodes keep their own (onnx_opsets.c) */
        ir_opset *ops = NULL;
        size_t n_ops = 0;
        tsr_status *st = onnx_opsets_for(m, v->nodes, v->n_nodes, whole, &ops, &n_ops);
        if (st) w_fail(&w, st);
        mp.opset_import = w_opsets(&w, ops, n_ops);
        mp.n_opset_import = n_ops;
        free(ops); /* w_opsets kept the domains, which are the model's and the nodes' */
        if (m->n_functions) {
            mp.functions = w_new(&w, m->n_functions, sizeof *mp.functions);
            for (size_t i = 0; mp.functions && i < m->n_functions && !w.err; i++)
                mp.functions[i] = w_function(&w, m->functions[i]);
            mp.n_functions = mp.functions ? m->n_functions : 0;
        }
    }
    mp.graph = w_view_graph(&w, v);
    tsr_status *st = w.err;
    if (!st) {
        size_t len = onnx__model_proto__get_packed_size(&mp);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf) {
            st = TSR_NO_MEMORY();
        } else {
            size_t wrote = onnx__model_proto__pack(&mp, buf);
            if (wrote != len) {
                free(buf);
                st = tsr_error(TSR_ERR_RUNTIME, "ONNX serialization wrote %zu of %zu bytes", wrote, len);
            } else {
                *bytes = buf;
                *size = len;
            }
        }
    }
    for (size_t i = 0; i < w.n_allocs; i++) free(w.allocs[i]);
    free(w.allocs);
    return st;
}

tsr_status *onnx_write_view(const struct tsr_graph *v, void **bytes, size_t *size) {
    if (!v || !v->ir || !bytes || !size)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "graph_to_onnx needs a graph, bytes and size");
    return write_model(v, false, SIZE_MAX, bytes, size);
}

tsr_status *onnx_write_view_by_reference(const struct tsr_graph *v, size_t inline_max, void **bytes, size_t *size) {
    if (!v || !v->ir || !bytes || !size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a graph, bytes and size are needed");
    return write_model(v, false, inline_max, bytes, size);
}

tsr_status *onnx_write_model(ir_model *m, void **bytes, size_t *size) {
    if (!m || !m->graph || !bytes || !size)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "writing a model needs a model, bytes and size");
    struct tsr_graph *v;
    TSR_TRY(graph_view_whole(m->graph, &v));
    tsr_status *st = write_model(v, true, SIZE_MAX, bytes, size);
    graph_view_free(v);
    return st;
}
