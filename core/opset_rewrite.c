/* The rewrites behind OPSET_REWRITE (opset_compat.c): node n, written for a
 * version before `since`, put in the form that version reads with the same
 * meaning. Attributes that became inputs become constant inputs (written
 * as initializers); Softmax's pre-13 2-D coercion becomes Flatten, the
 * softmax over its last axis, and Reshape back. Nodes added here are
 * appended to n's graph; the caller sorts it. */
#include "opset_rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "tessera/tessera.h"

/* --- attributes ------------------------------------------------------------- */

static ir_attr *find_attr(ir_node *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

/* Moves attribute `name` out of n into *out (zeroed when absent); the
 * caller clears it. */
static void take_attr(ir_node *n, const char *name, ir_attr *out) {
    memset(out, 0, sizeof *out);
    ir_attr *a = find_attr(n, name);
    if (!a) return;
    *out = *a;
    size_t i = (size_t)(a - n->attrs);
    memmove(&n->attrs[i], &n->attrs[i + 1], (n->n_attrs - i - 1) * sizeof *n->attrs);
    n->n_attrs--;
}

static void drop_attr(ir_node *n, const char *name) {
    ir_attr a;
    take_attr(n, name, &a);
    ir_attr_clear(&a);
}

/* Attribute `name` of n, made (of `type`) when absent, its old contents
 * cleared when present. */
static tsr_status *reset_attr(ir_node *n, const char *name, int32_t type, ir_attr **out) {
    ir_attr *a = find_attr(n, name);
    if (!a) {
        ir_attr *grown = realloc(n->attrs, (n->n_attrs + 1) * sizeof *grown);
        if (!grown) return TSR_NO_MEMORY();
        n->attrs = grown;
        a = &n->attrs[n->n_attrs];
        memset(a, 0, sizeof *a);
        if (!(a->name = strdup(name))) return TSR_NO_MEMORY();
        n->n_attrs++;
    } else {
        char *keep = a->name;
        a->name = NULL;
        ir_attr_clear(a);
        a->name = keep;
    }
    a->type = type;
    *out = a;
    return NULL;
}

static tsr_status *set_int(ir_node *n, const char *name, int64_t v) {
    ir_attr *a;
    TSR_TRY(reset_attr(n, name, TSR_ATTR_INT, &a));
    a->i = v;
    return NULL;
}

static tsr_status *set_string(ir_node *n, const char *name, const char *s) {
    ir_attr *a;
    TSR_TRY(reset_attr(n, name, TSR_ATTR_STRING, &a));
    if (!(a->s = strdup(s))) return TSR_NO_MEMORY();
    a->s_len = strlen(s);
    return NULL;
}

/* --- new values ---------------------------------------------------------------- */

static const char *base_name(const ir_node *n) {
    if (n->name && n->name[0]) return n->name;
    return n->n_outputs && n->outputs[0] ? n->outputs[0]->name : n->op_type;
}

/* n's input k is now `v` (earlier missing inputs are omitted ones). */
static tsr_status *set_input(ir_node *n, size_t k, ir_value *v) {
    if (k >= n->n_inputs) {
        ir_value **grown = realloc(n->inputs, (k + 2) * sizeof *grown);
        if (!grown) return TSR_NO_MEMORY();
        for (size_t i = n->n_inputs; i <= k + 1; i++) grown[i] = NULL;
        n->inputs = grown;
        n->n_inputs = k + 1;
    }
    n->inputs[k] = v;
    return NULL;
}

/* Constant t (consumed) as n's input k, named after n and `what`. */
static tsr_status *const_input(ir_node *n, size_t k, const char *what, ir_tensor *t) {
    ir_value *v;
    tsr_status *st = ir_graph_new_named_value(n->graph, base_name(n), what, &v);
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    v->constant = t;
    v->type.kind = IR_TYPE_TENSOR;
    v->type.elem_type = t->elem_type;
    v->type.rank = t->rank;
    if (t->rank > 0) {
        if (!(v->type.dims = calloc((size_t)t->rank, sizeof *v->type.dims))) return TSR_NO_MEMORY();
        for (int32_t d = 0; d < t->rank; d++) v->type.dims[d].value = t->dims[d];
    }
    return set_input(n, k, v);
}

static tsr_status *ints_tensor(const int64_t *v, size_t count, bool scalar, ir_tensor **out) {
    int64_t dims[1] = {(int64_t)count};
    TSR_TRY(ir_tensor_new(TSR_INT64, scalar ? 0 : 1, dims, out));
    if (count) memcpy((*out)->data, v, count * sizeof *v);
    return NULL;
}

/* One number (or a list) of element type `elem` (float or double). */
static tsr_status *floats_tensor(int32_t elem, const float *v, size_t count, bool scalar, ir_tensor **out) {
    int64_t dims[1] = {(int64_t)count};
    TSR_TRY(ir_tensor_new(elem, scalar ? 0 : 1, dims, out));
    for (size_t i = 0; i < count; i++) {
        if (elem == TSR_DOUBLE) ((double *)(*out)->data)[i] = v[i];
        else ((float *)(*out)->data)[i] = v[i];
    }
    return NULL;
}

static tsr_status *cannot(const char *why) { return tsr_error(TSR_ERR_NOT_SUPPORTED, "%s", why); }

/* Attribute `name` (ints; a single int when `one`) moved to input k. */
static tsr_status *ints_to_input(ir_node *n, const char *name, size_t k, bool one, bool scalar) {
    ir_attr a;
    take_attr(n, name, &a);
    tsr_status *st = NULL;
    if (a.name) {
        if (a.ref_attr_name) st = cannot("the attribute refers to a function's attribute");
        else if (one ? a.type != TSR_ATTR_INT : a.type != TSR_ATTR_INTS)
            st = tsr_error(TSR_ERR_INVALID_MODEL, "attribute %s is not %s", name, one ? "an int" : "ints");
        ir_tensor *t = NULL;
        if (!st) st = one ? ints_tensor(&a.i, 1, scalar, &t) : ints_tensor(a.ints, a.count, false, &t);
        if (!st) st = const_input(n, k, name, t);
    }
    ir_attr_clear(&a);
    return st;
}

/* out = op(in0[, in1]) appended to like's graph, read at version `to`. */
static tsr_status *add_node(ir_node *like, int64_t to, const char *op, ir_value *in0, ir_value *in1, ir_value *out,
                            ir_node **made) {
    ir_node *m;
    TSR_TRY(ir_graph_add_node(like->graph, &m));
    const char *base = base_name(like);
    size_t cap = strlen(base) + strlen(op) + 2;
    if (!(m->name = malloc(cap))) return TSR_NO_MEMORY();
    snprintf(m->name, cap, "%s/%s", base, op);
    if (!(m->op_type = strdup(op)) || !(m->domain = strdup("")) ||
        !(m->origin = strdup(like->origin ? like->origin : base)))
        return TSR_NO_MEMORY();
    m->opset = to;
    if (!(m->inputs = calloc(3, sizeof *m->inputs)) || !(m->outputs = calloc(2, sizeof *m->outputs)))
        return TSR_NO_MEMORY();
    m->inputs[0] = in0;
    m->inputs[1] = in1;
    m->n_inputs = in1 ? 2 : 1;
    m->outputs[0] = out;
    m->n_outputs = 1;
    out->producer = m;
    out->producer_output = 0;
    if (made) *made = m;
    return NULL;
}

/* Float attribute `name` moved to input k as a scalar of the element type
 * of n's input 0 (or `elem` when given); when absent, or 0 and `skip_zero`
 * (the input's default), the input stays omitted. When that type is not
 * declared (an intermediate value before shape inference), a float made
 * the data's type by CastLike (opset 15 on). */
static tsr_status *float_to_input(ir_node *n, const char *name, size_t k, int32_t elem, bool skip_zero, int64_t to) {
    ir_attr a;
    take_attr(n, name, &a);
    tsr_status *st = NULL;
    if (a.name && !(skip_zero && a.type == TSR_ATTR_FLOAT && a.f == 0.0f)) {
        ir_value *x = n->n_inputs ? n->inputs[0] : NULL;
        if (!elem && x && x->type.kind == IR_TYPE_TENSOR) elem = x->type.elem_type;
        bool cast = !elem && x && to >= 15;
        if (a.type != TSR_ATTR_FLOAT) st = tsr_error(TSR_ERR_INVALID_MODEL, "attribute %s is not a float", name);
        else if (!cast && elem != TSR_FLOAT && elem != TSR_DOUBLE)
            st = tsr_error(TSR_ERR_NOT_SUPPORTED,
                           "attribute %s becomes an input of the data's element type, which is %s here "
                           "(a declared float or double, or any type from opset 15 on, is converted)",
                           name, elem ? tsr_elem_type_name(elem) : "not declared");
        ir_tensor *t = NULL;
        if (!st) st = floats_tensor(cast ? TSR_FLOAT : elem, &a.f, 1, true, &t);
        if (!st) st = const_input(n, k, name, t);
        ir_value *typed = NULL;
        if (!st && cast) st = ir_graph_new_named_value(n->graph, base_name(n), "cast", &typed);
        if (!st && cast) st = add_node(n, to, "CastLike", n->inputs[k], x, typed, NULL);
        if (!st && cast) n->inputs[k] = typed;
    }
    ir_attr_clear(&a);
    return st;
}

/* --- Softmax, LogSoftmax, Hardmax before 13 ------------------------------------- */

/* Before 13, axis a (default 1) flattened the input to 2-D [d0*..*d(a-1),
 * the rest] and normalized each row: Flatten(axis a), the op on the last
 * axis, Reshape to the input's shape. When the input's rank is declared
 * and a is its last axis, that is the op on axis -1 alone. */
static tsr_status *softmax_13(ir_node *n, int64_t to) {
    const ir_attr *ax = ir_node_attr(n, "axis");
    int64_t a = ax && ax->type == TSR_ATTR_INT ? ax->i : 1;
    if (ax && ax->ref_attr_name) return cannot("axis refers to a function's attribute");
    ir_value *x = n->n_inputs ? n->inputs[0] : NULL, *y = n->n_outputs ? n->outputs[0] : NULL;
    if (!x || !y) return tsr_error(TSR_ERR_INVALID_MODEL, "%s without its input or output", n->op_type);
    int32_t r = x->type.kind == IR_TYPE_TENSOR ? x->type.rank : -1;
    if (r > 0 && (a == r - 1 || a == -1)) return set_int(n, "axis", -1);
    ir_value *flat, *shape, *rows;
    TSR_TRY(ir_graph_new_named_value(n->graph, y->name, "flat", &flat));
    TSR_TRY(ir_graph_new_named_value(n->graph, y->name, "shape", &shape));
    TSR_TRY(ir_graph_new_named_value(n->graph, y->name, "2d", &rows));
    ir_node *fl;
    TSR_TRY(add_node(n, to, "Flatten", x, NULL, flat, &fl));
    TSR_TRY(set_int(fl, "axis", a));
    TSR_TRY(add_node(n, to, "Shape", x, NULL, shape, NULL));
    TSR_TRY(add_node(n, to, "Reshape", rows, shape, y, NULL));
    n->inputs[0] = flat;
    n->outputs[0] = rows;
    rows->producer = n;
    rows->producer_output = 0;
    return set_int(n, "axis", -1);
}

/* --- dispatch -------------------------------------------------------------------- */

static bool is(const ir_node *n, const char *op) { return strcmp(n->op_type, op) == 0; }

static bool is_reduce(const ir_node *n) { return strncmp(n->op_type, "Reduce", 6) == 0; }

tsr_status *opset_rewrite(ir_node *n, int64_t since, int64_t to) {
    switch (since) {
    case 2:
        if (is(n, "Pad")) {
            ir_attr *a = find_attr(n, "paddings");
            char *name = strdup("pads");
            if (!name) return TSR_NO_MEMORY();
            free(a->name);
            a->name = name;
            return NULL;
        }
        break;
    case 4:
        if (is(n, "Concat")) return set_int(n, "axis", 1);
        break;
    case 5:
        if (is(n, "Reshape")) return ints_to_input(n, "shape", 1, false, false);
        break;
    case 6: drop_attr(n, "consumed_inputs"); return NULL;
    case 7:
        if (is(n, "BatchNormalization") || is(n, "Dropout")) {
            drop_attr(n, "is_test");
        } else {
            drop_attr(n, "broadcast");
            drop_attr(n, "axis");
        }
        return NULL;
    case 9:
        if (is(n, "BatchNormalization")) {
            drop_attr(n, "spatial");
            return NULL;
        }
        if (is(n, "Upsample")) {
            ir_attr a;
            take_attr(n, "scales", &a);
            ir_tensor *t = NULL;
            tsr_status *st = a.type == TSR_ATTR_FLOATS ? floats_tensor(TSR_FLOAT, a.floats, a.count, false, &t)
                                                       : tsr_error(TSR_ERR_INVALID_MODEL, "scales is not floats");
            if (!st) st = const_input(n, 1, "scales", t);
            ir_attr_clear(&a);
            return st;
        }
        break;
    case 10:
        if (is(n, "Slice")) {
            TSR_TRY(ints_to_input(n, "starts", 1, false, false));
            TSR_TRY(ints_to_input(n, "ends", 2, false, false));
            return ints_to_input(n, "axes", 3, false, false);
        }
        if (is(n, "TopK")) return ints_to_input(n, "k", 1, true, false);
        break;
    case 11:
        if (is(n, "Clip")) {
            TSR_TRY(float_to_input(n, "min", 1, 0, false, to));
            return float_to_input(n, "max", 2, 0, false, to);
        }
        if (is(n, "Pad")) {
            TSR_TRY(ints_to_input(n, "pads", 1, false, false));
            return float_to_input(n, "value", 2, 0, true, to);
        }
        if (is(n, "Scatter")) {
            char *op = strdup("ScatterElements");
            if (!op) return TSR_NO_MEMORY();
            free(n->op_type);
            n->op_type = op;
            return NULL;
        }
        break;
    case 12:
        if (is(n, "Dropout")) return float_to_input(n, "ratio", 1, TSR_FLOAT, false, to);
        break;
    case 13:
        if (is(n, "Softmax") || is(n, "LogSoftmax") || is(n, "Hardmax")) return softmax_13(n, to);
        if (is(n, "Split")) return ints_to_input(n, "split", 1, false, false);
        if (is(n, "Squeeze") || is(n, "Unsqueeze") || is(n, "ReduceSum"))
            return ints_to_input(n, "axes", 1, false, false);
        break;
    case 16:
        if (is(n, "RoiAlign")) return set_string(n, "coordinate_transformation_mode", "output_half_pixel");
        break;
    case 18:
        if (is_reduce(n)) return ints_to_input(n, "axes", 1, false, false);
        break;
    case 20:
        if (is(n, "DFT")) {
            if (!ir_node_attr(n, "axis")) TSR_TRY(set_int(n, "axis", 1)); /* the default changed */
            return ints_to_input(n, "axis", 2, true, true);
        }
        if (is(n, "GridSample")) {
            const ir_attr *m = ir_node_attr(n, "mode");
            return set_string(n, "mode", strcmp(m->s, "bicubic") == 0 ? "cubic" : "linear");
        }
        break;
    default: break;
    }
    return tsr_error(TSR_ERR_NOT_SUPPORTED, "no rewrite of %s to opset %lld", n->op_type, (long long)since);
}
