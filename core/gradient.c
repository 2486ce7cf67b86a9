/* The Gradient operator: reverse-mode differentiation as a graph rewrite. */
#include "gradient.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "tessera/tessera.h"

#define GRADIENT_DOMAIN "ai.onnx.preview.training"

/* ReduceSum takes its axes as an input from this ai.onnx version on. */
#define REDUCESUM_AXES_INPUT_OPSET 13

typedef struct grad_ctx {
    ir_graph *g;
    ir_node *node;   /* the Gradient node being replaced */
    char label[200]; /* how errors name it */
    char *base;      /* prefix of every new name */
    char *origin;    /* what new nodes record as their origin */
    int64_t opset;   /* ai.onnx version the new nodes are written for */
    size_t made;     /* names handed out so far */
    int32_t elem;    /* element type of y */
    /* Indexed by value index; only values that existed before the rewrite
     * (index < n_fwd) take part in the forward graph. */
    size_t n_fwd;
    bool *is_x;
    bool *depends;   /* computed from some x */
    ir_value **grad; /* accumulated d y / d value, NULL while none */
} grad_ctx;

static void node_label(char *buf, size_t size, const ir_node *n) {
    if (n->name && n->name[0]) snprintf(buf, size, "'%s'", n->name);
    else snprintf(buf, size, "#%zu", n->index);
}

static tsr_status *grad_error(const grad_ctx *c, int32_t code, const char *fmt, ...) TSR_PRINTF(3, 4);
static tsr_status *grad_error(const grad_ctx *c, int32_t code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tsr_error(code, "Gradient node %s: %s", c->label, msg);
}

/* An error about forward node n, which the backward graph cannot go through. */
static tsr_status *fwd_error(const grad_ctx *c, const ir_node *n, const char *why) {
    char nl[200];
    node_label(nl, sizeof nl, n);
    return grad_error(c, TSR_ERR_NOT_SUPPORTED, "cannot differentiate node %s (%s): %s", nl, n->op_type, why);
}

static bool is_gradient(const ir_node *n) {
    return n->op_type && n->domain && strcmp(n->op_type, "Gradient") == 0 && strcmp(n->domain, GRADIENT_DOMAIN) == 0;
}

static bool is_float_elem(int32_t e) {
    return e == TSR_FLOAT || e == TSR_DOUBLE || e == TSR_FLOAT16 || e == TSR_BFLOAT16;
}

static bool is_tensor_with_shape(const ir_value *v) {
    return v->type.kind == IR_TYPE_TENSOR && v->type.rank >= 0 && (v->type.rank == 0 || v->type.dims);
}

static int32_t elem_of(const ir_value *v) { return v->type.kind == IR_TYPE_TENSOR ? v->type.elem_type : 0; }

/* --- building nodes and values ---------------------------------------------- */

static bool name_in_scope(const ir_graph *g, const char *name) {
    for (; g; g = g->parent)
        if (ir_graph_find(g, name)) return true;
    return false;
}

/* "<base>/<what>_<k>": k numbers everything this rewrite names. */
static char *make_name(grad_ctx *c, const char *what) {
    size_t cap = strlen(c->base) + strlen(what) + 48;
    char *name = malloc(cap);
    if (name) snprintf(name, cap, "%s/%s_%zu", c->base, what, c->made++);
    return name;
}

/* A new value named `name`, with a suffix when something in scope has that name. */
static tsr_status *value_named(grad_ctx *c, const char *name, ir_value **out) {
    size_t cap = strlen(name) + 16;
    char *unique = malloc(cap);
    if (!unique) return TSR_NO_MEMORY();
    snprintf(unique, cap, "%s", name);
    for (unsigned extra = 2; name_in_scope(c->g, unique); extra++) snprintf(unique, cap, "%s_%u", name, extra);
    tsr_status *st = ir_graph_value(c->g, unique, out);
    free(unique);
    return st;
}

static tsr_status *new_value(grad_ctx *c, const char *what, ir_value **out) {
    char *name = make_name(c, what);
    if (!name) return TSR_NO_MEMORY();
    tsr_status *st = value_named(c, name, out);
    free(name);
    return st;
}

/* Appends node `op` reading ins[0..n_in) and writing `out`, or a new value
 * when out is NULL. The node is g's last until the splice. */
static tsr_status *emit(grad_ctx *c, const char *op, ir_value *const *ins, size_t n_in, ir_value *out, ir_node **made) {
    char *name = make_name(c, op);
    if (!name) return TSR_NO_MEMORY();
    tsr_status *st = out ? NULL : value_named(c, name, &out);
    ir_node *n = NULL;
    if (!st) st = ir_graph_add_node(c->g, &n);
    if (st) {
        free(name);
        return st;
    }
    n->name = name;
    if (!(n->op_type = strdup(op)) || !(n->domain = strdup("")) || !(n->origin = strdup(c->origin)))
        return TSR_NO_MEMORY();
    n->opset = c->opset;
    n->inputs = calloc(n_in + 1, sizeof *n->inputs);
    n->outputs = calloc(1, sizeof *n->outputs);
    if (!n->inputs || !n->outputs) return TSR_NO_MEMORY();
    for (size_t i = 0; i < n_in; i++) n->inputs[i] = ins[i];
    n->n_inputs = n_in;
    n->outputs[0] = out;
    n->n_outputs = 1;
    out->producer = n;
    out->producer_output = 0;
    if (made) *made = n;
    return NULL;
}

static tsr_status *unary(grad_ctx *c, const char *op, ir_value *a, ir_value **out) {
    ir_node *n;
    TSR_TRY(emit(c, op, &a, 1, NULL, &n));
    *out = n->outputs[0];
    return NULL;
}

static tsr_status *binary(grad_ctx *c, const char *op, ir_value *a, ir_value *b, ir_value **out) {
    ir_value *ins[2] = {a, b};
    ir_node *n;
    TSR_TRY(emit(c, op, ins, 2, NULL, &n));
    *out = n->outputs[0];
    return NULL;
}

static tsr_status *attr_append(ir_node *n, const char *name, int32_t type, ir_attr **out) {
    if (n->n_attrs >= SIZE_MAX / sizeof(ir_attr) - 1) return TSR_NO_MEMORY();
    ir_attr *grown = realloc(n->attrs, (n->n_attrs + 1) * sizeof *grown);
    if (!grown) return TSR_NO_MEMORY();
    n->attrs = grown;
    ir_attr *a = &n->attrs[n->n_attrs];
    memset(a, 0, sizeof *a);
    if (!(a->name = strdup(name))) return TSR_NO_MEMORY();
    a->type = type;
    n->n_attrs++;
    *out = a;
    return NULL;
}

static tsr_status *attr_int(ir_node *n, const char *name, int64_t v) {
    ir_attr *a;
    TSR_TRY(attr_append(n, name, TSR_ATTR_INT, &a));
    a->i = v;
    return NULL;
}

static tsr_status *attr_ints(ir_node *n, const char *name, const int64_t *v, size_t count) {
    ir_attr *a;
    TSR_TRY(attr_append(n, name, TSR_ATTR_INTS, &a));
    if (!(a->ints = malloc((count ? count : 1) * sizeof *a->ints))) return TSR_NO_MEMORY();
    if (count) memcpy(a->ints, v, count * sizeof *v);
    a->count = count;
    return NULL;
}

/* Takes t; it is freed on failure. */
static tsr_status *attr_tensor(ir_node *n, const char *name, ir_tensor *t) {
    ir_attr *a;
    tsr_status *st = attr_append(n, name, TSR_ATTR_TENSOR, &a);
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    a->t = t;
    return NULL;
}

/* Only the constants this file makes (0 and 1) are converted, and both are
 * exact in every floating type, so no rounding is needed. */
static uint16_t half_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    uint32_t sign = (b >> 16) & 0x8000u;
    if ((b & 0x7fffffffu) == 0) return (uint16_t)sign;
    uint32_t exp = ((b >> 23) & 0xffu) - 127u + 15u;
    return (uint16_t)(sign | (exp << 10) | ((b >> 13) & 0x3ffu));
}

static void write_scalar(int32_t elem, float v, void *dst) {
    if (elem == TSR_FLOAT) {
        memcpy(dst, &v, sizeof v);
    } else if (elem == TSR_DOUBLE) {
        double d = v;
        memcpy(dst, &d, sizeof d);
    } else if (elem == TSR_FLOAT16) {
        uint16_t h = half_bits(v);
        memcpy(dst, &h, sizeof h);
    } else { /* TSR_BFLOAT16: the top half of the float's bits */
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        uint16_t h = (uint16_t)(b >> 16);
        memcpy(dst, &h, sizeof h);
    }
}

/* v as a scalar (rank 0) or as a one-element vector (rank 1). */
static tsr_status *filled_tensor(int32_t elem, int32_t rank, float v, ir_tensor **out) {
    const int64_t one = 1;
    ir_tensor *t;
    TSR_TRY(ir_tensor_new(elem, rank, rank ? &one : NULL, &t));
    write_scalar(elem, v, t->data);
    ir_tensor_sync_view(t);
    *out = t;
    return NULL;
}

/* A new value holding constant t (taken; freed on failure). */
static tsr_status *const_value(grad_ctx *c, ir_tensor *t, ir_value **out) {
    ir_value *v;
    tsr_status *st = new_value(c, "const", &v);
    if (!st && t->rank > 0 && !(v->type.dims = calloc((size_t)t->rank, sizeof *v->type.dims))) st = TSR_NO_MEMORY();
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    v->constant = t;
    v->type.kind = IR_TYPE_TENSOR;
    v->type.elem_type = t->elem_type;
    v->type.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->type.dims[i].value = t->dims[i];
    *out = v;
    return NULL;
}

static tsr_status *scalar_const(grad_ctx *c, int32_t elem, float v, ir_value **out) {
    ir_tensor *t;
    TSR_TRY(filled_tensor(elem, 0, v, &t));
    return const_value(c, t, out);
}

static tsr_status *int64_vector_const(grad_ctx *c, const int64_t *v, size_t n, ir_value **out) {
    int64_t dim = (int64_t)n;
    ir_tensor *t;
    TSR_TRY(ir_tensor_new(TSR_INT64, 1, &dim, &t));
    if (n) memcpy(t->data, v, n * sizeof *v);
    ir_tensor_sync_view(t);
    return const_value(c, t, out);
}

/* ConstantOfShape(Shape(like)) filled with v. */
static tsr_status *filled_like(grad_ctx *c, ir_value *like, int32_t elem, float v, ir_value **out) {
    ir_value *shape;
    TSR_TRY(unary(c, "Shape", like, &shape));
    ir_node *n;
    TSR_TRY(emit(c, "ConstantOfShape", &shape, 1, NULL, &n));
    ir_tensor *t;
    TSR_TRY(filled_tensor(elem, 1, v, &t));
    TSR_TRY(attr_tensor(n, "value", t));
    *out = n->outputs[0];
    return NULL;
}

static tsr_status *reduce_sum(grad_ctx *c, ir_value *in, const int64_t *axes, size_t n_axes, bool keepdims,
                              ir_value **out) {
    ir_node *n;
    if (c->opset >= REDUCESUM_AXES_INPUT_OPSET) {
        ir_value *ins[2] = {in, NULL};
        TSR_TRY(int64_vector_const(c, axes, n_axes, &ins[1]));
        TSR_TRY(emit(c, "ReduceSum", ins, 2, NULL, &n));
    } else {
        TSR_TRY(emit(c, "ReduceSum", &in, 1, NULL, &n));
        TSR_TRY(attr_ints(n, "axes", axes, n_axes));
    }
    TSR_TRY(attr_int(n, "keepdims", keepdims));
    *out = n->outputs[0];
    return NULL;
}

/* --- undoing broadcasting ------------------------------------------------------ */

typedef enum { AXIS_KEPT, AXIS_BROADCAST, AXIS_UNSURE } axis_kind;

/* Whether an input dim dx was broadcast to the output dim dout. */
static axis_kind axis_of(const ir_dim *dx, const ir_dim *dout) {
    if (dx->value == 1) return dout->value == 1 ? AXIS_KEPT : AXIS_BROADCAST;
    if (dx->value >= 0 || dout->value == 1) return AXIS_KEPT;
    if (dx->symbol && dout->symbol && strcmp(dx->symbol, dout->symbol) == 0) return AXIS_KEPT;
    return AXIS_UNSURE; /* dx may be 1 at run time, or equal dout */
}

/* Sums the axes where x's and t's run-time shapes differ (x's dim is then 1),
 * keeping them: ReduceSum with axes NonZero(Shape(x) != Shape(t)). */
static tsr_status *reduce_where_shapes_differ(grad_ctx *c, ir_value *t, ir_value *x, ir_value **out) {
    ir_value *sx, *st, *eq, *ne, *nz, *flat_shape, *axes;
    const int64_t minus_one = -1;
    TSR_TRY(unary(c, "Shape", x, &sx));
    TSR_TRY(unary(c, "Shape", t, &st));
    TSR_TRY(binary(c, "Equal", sx, st, &eq));
    TSR_TRY(unary(c, "Not", eq, &ne));
    TSR_TRY(unary(c, "NonZero", ne, &nz));
    TSR_TRY(int64_vector_const(c, &minus_one, 1, &flat_shape));
    TSR_TRY(binary(c, "Reshape", nz, flat_shape, &axes));
    ir_value *ins[2] = {t, axes};
    ir_node *n;
    TSR_TRY(emit(c, "ReduceSum", ins, 2, NULL, &n));
    TSR_TRY(attr_int(n, "keepdims", 1));
    TSR_TRY(attr_int(n, "noop_with_empty_axes", 1));
    *out = n->outputs[0];
    return NULL;
}

/* dy is shaped like fwd's output, which broadcasting made from input x; the
 * gradient for x sums dy over the leading axes x lacks and over the axes
 * where x has 1. */
static tsr_status *unbroadcast(grad_ctx *c, const ir_node *fwd, ir_value *dy, ir_value *x, ir_value **out) {
    const ir_value *y = fwd->outputs[0];
    if (!is_tensor_with_shape(x) || !is_tensor_with_shape(y)) {
        char why[400];
        snprintf(why, sizeof why, "the shape of '%s' or '%s' is not known, so its broadcasting cannot be undone",
                 x->name, y->name);
        return fwd_error(c, fwd, why);
    }
    const ir_type *tx = &x->type, *ty = &y->type;
    if (ty->rank > IR_MAX_RANK) return fwd_error(c, fwd, "output rank out of range");
    if (tx->rank > ty->rank) {
        char why[400];
        snprintf(why, sizeof why, "input '%s' has rank %d, more than its output's %d", x->name, (int)tx->rank,
                 (int)ty->rank);
        return fwd_error(c, fwd, why);
    }
    int64_t lead = ty->rank - tx->rank;
    int64_t axes[IR_MAX_RANK];
    size_t n_axes = 0;
    int32_t unsure_axis = -1;
    for (int32_t i = 0; i < tx->rank; i++) {
        axis_kind k = axis_of(&tx->dims[i], &ty->dims[i + lead]);
        if (k == AXIS_BROADCAST) axes[n_axes++] = i;
        if (k == AXIS_UNSURE && unsure_axis < 0) unsure_axis = i;
    }
    if (unsure_axis >= 0 && c->opset < REDUCESUM_AXES_INPUT_OPSET) {
        char why[400];
        snprintf(why, sizeof why,
                 "cannot tell whether input '%s' is broadcast along its axis %d before run time, and ReduceSum "
                 "takes axes computed at run time only from opset %d on (the model imports %lld)",
                 x->name, (int)unsure_axis, REDUCESUM_AXES_INPUT_OPSET, (long long)c->opset);
        return fwd_error(c, fwd, why);
    }
    ir_value *cur = dy;
    if (lead > 0) {
        int64_t lead_axes[IR_MAX_RANK];
        for (int64_t i = 0; i < lead; i++) lead_axes[i] = i;
        TSR_TRY(reduce_sum(c, cur, lead_axes, (size_t)lead, false, &cur));
    }
    if (unsure_axis >= 0) TSR_TRY(reduce_where_shapes_differ(c, cur, x, &cur));
    else if (n_axes) TSR_TRY(reduce_sum(c, cur, axes, n_axes, true, &cur));
    *out = cur;
    return NULL;
}

/* --- the backward rules ---------------------------------------------------------- */

/* Adds contribution g to the gradient of forward value v. */
static tsr_status *accumulate(grad_ctx *c, ir_value *v, ir_value *g) {
    ir_value **slot = &c->grad[v->index];
    if (!*slot) {
        *slot = g;
        return NULL;
    }
    return binary(c, "Add", *slot, g, slot);
}

static bool wants_grad(const grad_ctx *c, const ir_value *v) {
    return v && v->index < c->n_fwd && c->g->values[v->index] == v && c->depends[v->index];
}

/* Gradient for input i of an elementwise binary node, given the
 * contribution shaped like its output. */
static tsr_status *to_input(grad_ctx *c, const ir_node *n, size_t i, ir_value *g) {
    TSR_TRY(unbroadcast(c, n, g, n->inputs[i], &g));
    return accumulate(c, n->inputs[i], g);
}

static tsr_status *one_like_output(grad_ctx *c, const ir_node *n, ir_value **out) {
    int32_t e = elem_of(n->outputs[0]);
    return scalar_const(c, is_float_elem(e) ? e : c->elem, 1.0f, out);
}

static tsr_status *backprop_binary(grad_ctx *c, const ir_node *n, ir_value *dy) {
    ir_value *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0], *t, *u;
    bool ga = wants_grad(c, a), gb = wants_grad(c, b);
    const char *op = n->op_type;
    if (strcmp(op, "Add") == 0) {
        if (ga) TSR_TRY(to_input(c, n, 0, dy));
        if (gb) TSR_TRY(to_input(c, n, 1, dy));
    } else if (strcmp(op, "Sub") == 0) {
        if (ga) TSR_TRY(to_input(c, n, 0, dy));
        if (gb) {
            TSR_TRY(unbroadcast(c, n, dy, b, &t));
            TSR_TRY(unary(c, "Neg", t, &t));
            TSR_TRY(accumulate(c, b, t));
        }
    } else if (strcmp(op, "Mul") == 0) {
        if (ga) {
            TSR_TRY(binary(c, "Mul", dy, b, &t));
            TSR_TRY(to_input(c, n, 0, t));
        }
        if (gb) {
            TSR_TRY(binary(c, "Mul", dy, a, &t));
            TSR_TRY(to_input(c, n, 1, t));
        }
    } else if (strcmp(op, "Div") == 0) {
        /* y = a / b: dy/da = 1 / b, dy/db = -a / b^2 = -y / b */
        if (ga) {
            TSR_TRY(binary(c, "Div", dy, b, &t));
            TSR_TRY(to_input(c, n, 0, t));
        }
        if (gb) {
            TSR_TRY(binary(c, "Mul", dy, y, &t));
            TSR_TRY(binary(c, "Div", t, b, &u));
            TSR_TRY(unbroadcast(c, n, u, b, &u));
            TSR_TRY(unary(c, "Neg", u, &u));
            TSR_TRY(accumulate(c, b, u));
        }
    } else { /* MatMul: y = a b, da = dy b^T, db = a^T dy */
        if (a->type.kind != IR_TYPE_TENSOR || a->type.rank != 2 || b->type.kind != IR_TYPE_TENSOR || b->type.rank != 2)
            return fwd_error(c, n, "only MatMul of two 2-D inputs of known rank is differentiated");
        if (ga) {
            TSR_TRY(unary(c, "Transpose", b, &t));
            TSR_TRY(binary(c, "MatMul", dy, t, &t));
            TSR_TRY(accumulate(c, a, t));
        }
        if (gb) {
            TSR_TRY(unary(c, "Transpose", a, &t));
            TSR_TRY(binary(c, "MatMul", t, dy, &t));
            TSR_TRY(accumulate(c, b, t));
        }
    }
    return NULL;
}

static tsr_status *backprop_unary(grad_ctx *c, const ir_node *n, ir_value *dy) {
    ir_value *x = n->inputs[0], *y = n->outputs[0], *t, *one;
    if (!wants_grad(c, x)) return NULL;
    const char *op = n->op_type;
    if (strcmp(op, "Identity") == 0) {
        t = dy;
    } else if (strcmp(op, "Neg") == 0) {
        TSR_TRY(unary(c, "Neg", dy, &t));
    } else if (strcmp(op, "Relu") == 0) {
        /* y >= 0, so Sign(y) is 1 where x > 0 and 0 elsewhere */
        TSR_TRY(unary(c, "Sign", y, &t));
        TSR_TRY(binary(c, "Mul", dy, t, &t));
    } else if (strcmp(op, "Abs") == 0) {
        TSR_TRY(unary(c, "Sign", x, &t));
        TSR_TRY(binary(c, "Mul", dy, t, &t));
    } else if (strcmp(op, "Sigmoid") == 0) { /* y (1 - y) */
        TSR_TRY(one_like_output(c, n, &one));
        TSR_TRY(binary(c, "Sub", one, y, &t));
        TSR_TRY(binary(c, "Mul", y, t, &t));
        TSR_TRY(binary(c, "Mul", dy, t, &t));
    } else if (strcmp(op, "Tanh") == 0) { /* 1 - y^2 */
        TSR_TRY(one_like_output(c, n, &one));
        TSR_TRY(binary(c, "Mul", y, y, &t));
        TSR_TRY(binary(c, "Sub", one, t, &t));
        TSR_TRY(binary(c, "Mul", dy, t, &t));
    } else if (strcmp(op, "Exp") == 0) {
        TSR_TRY(binary(c, "Mul", dy, y, &t));
    } else if (strcmp(op, "Log") == 0) {
        TSR_TRY(binary(c, "Div", dy, x, &t));
    } else { /* Sqrt: 1 / (2 y) */
        TSR_TRY(binary(c, "Add", y, y, &t));
        TSR_TRY(binary(c, "Div", dy, t, &t));
    }
    return accumulate(c, x, t);
}

static const char *const BINARY_OPS[] = {"Add", "Sub", "Mul", "Div", "MatMul"};
static const char *const UNARY_OPS[] = {"Identity", "Neg", "Relu", "Abs", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt"};

/* Ops whose outputs are piecewise constant in their inputs, or not numbers:
 * no gradient flows through them. Backward graphs use several, so a gradient
 * of a gradient crosses them. */
static const char *const ZERO_GRADIENT_OPS[] = {
    "Shape", "Size",           "ConstantOfShape", "Sign", "Equal", "Greater",
    "Less",  "GreaterOrEqual", "LessOrEqual",     "Not",  "And",   "Or",
    "Xor",   "NonZero"};

static bool op_in(const char *op, const char *const *ops, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}

static bool is_zero_gradient(const ir_node *n) {
    return n->domain[0] == '\0' &&
        op_in(n->op_type, ZERO_GRADIENT_OPS, sizeof ZERO_GRADIENT_OPS / sizeof *ZERO_GRADIENT_OPS);
}

/* Passes dy, the gradient of n's only output, to n's inputs. */
static tsr_status *backprop_node(grad_ctx *c, const ir_node *n, ir_value *dy) {
    bool std = n->domain[0] == '\0';
    size_t arity = 0;
    if (std && op_in(n->op_type, BINARY_OPS, sizeof BINARY_OPS / sizeof *BINARY_OPS)) arity = 2;
    if (std && op_in(n->op_type, UNARY_OPS, sizeof UNARY_OPS / sizeof *UNARY_OPS)) arity = 1;
    if (!arity) return fwd_error(c, n, "no gradient is known for this operator");
    if (n->n_outputs != 1 || n->n_inputs != arity) return fwd_error(c, n, "unexpected number of inputs or outputs");
    for (size_t i = 0; i < arity; i++)
        if (!n->inputs[i]) return fwd_error(c, n, "an input is missing");
    return arity == 2 ? backprop_binary(c, n, dy) : backprop_unary(c, n, dy);
}

/* --- one Gradient node ----------------------------------------------------------- */

static const ir_attr *strings_attr(const ir_node *n, const char *name) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == TSR_ATTR_STRINGS && (a->strings || !a->count) ? a : NULL;
}

/* Finds the xs, y and zs and checks the node's inputs and outputs against them. */
static tsr_status *check_node(grad_ctx *c, const ir_attr **xs_out, ir_value **y_out) {
    const ir_node *n = c->node;
    const ir_attr *xs = strings_attr(n, "xs"), *zs = strings_attr(n, "zs"), *ya = ir_node_attr(n, "y");
    if (!xs || xs->count == 0)
        return grad_error(c, TSR_ERR_INVALID_MODEL, "attribute 'xs' must be a non-empty list of value names");
    if (!ya || ya->type != TSR_ATTR_STRING || !ya->s)
        return grad_error(c, TSR_ERR_INVALID_MODEL, "attribute 'y' must be a value name");
    if (ir_node_attr(n, "zs") && !zs)
        return grad_error(c, TSR_ERR_INVALID_MODEL, "attribute 'zs' must be a list of value names");
    size_t n_zs = zs ? zs->count : 0;
    if (n->n_inputs != xs->count + n_zs)
        return grad_error(c, TSR_ERR_INVALID_MODEL, "%zu inputs, but 'xs' and 'zs' name %zu values", n->n_inputs,
                          xs->count + n_zs);
    if (n->n_outputs == 0 || n->n_outputs > xs->count)
        return grad_error(c, TSR_ERR_INVALID_MODEL, "%zu outputs, but 'xs' names %zu values", n->n_outputs, xs->count);
    for (size_t i = 0; i < n->n_inputs; i++) {
        const char *want = i < xs->count ? xs->strings[i] : zs->strings[i - xs->count];
        const ir_value *in = n->inputs[i];
        if (!in || strcmp(in->name, want) != 0)
            return grad_error(c, TSR_ERR_NOT_SUPPORTED,
                              "input %zu is '%s', not '%s' as 'xs' and 'zs' say; feeding other values than "
                              "the graph's own is not supported",
                              i, in ? in->name : "", want);
    }
    ir_value *y = ir_graph_find(c->g, ya->s);
    if (!y) return grad_error(c, TSR_ERR_INVALID_MODEL, "y '%s' is not a value of its graph", ya->s);
    if (y->is_outer)
        return grad_error(c, TSR_ERR_NOT_SUPPORTED, "y '%s' is computed outside the subgraph that holds the node",
                          y->name);
    c->elem = elem_of(y);
    if (!is_float_elem(c->elem))
        return grad_error(c, TSR_ERR_NOT_SUPPORTED, "y '%s' has %s elements, not a floating-point type", y->name,
                          c->elem ? tsr_elem_type_name(c->elem) : "unknown");
    *xs_out = xs;
    *y_out = y;
    return NULL;
}

/* Whether node n reads a value marked in c->depends, directly or from a subgraph. */
static bool reads_dependent(const grad_ctx *c, const ir_node *n) {
    for (size_t i = 0; i < n->n_inputs; i++)
        if (wants_grad(c, n->inputs[i])) return true;
    for (size_t k = 0; k < n->n_attrs; k++) {
        const ir_attr *a = &n->attrs[k];
        size_t count = a->g ? 1 : a->graphs ? a->count : 0;
        for (size_t m = 0; m < count; m++) {
            const ir_graph *sub = a->g ? a->g : a->graphs[m];
            for (size_t v = 0; v < sub->n_values; v++)
                if (sub->values[v]->is_outer && wants_grad(c, sub->values[v]->outer)) return true;
        }
    }
    return false;
}

static tsr_status *mark_forward(grad_ctx *c, const ir_attr *xs) {
    for (size_t i = 0; i < xs->count; i++) {
        ir_value *x = ir_graph_find(c->g, xs->strings[i]);
        if (!x) return grad_error(c, TSR_ERR_INVALID_MODEL, "x '%s' is not a value of its graph", xs->strings[i]);
        c->is_x[x->index] = c->depends[x->index] = true;
    }
    for (size_t k = 0; k < c->g->n_nodes; k++) {
        const ir_node *n = c->g->nodes[k];
        if (n == c->node || is_zero_gradient(n) || !reads_dependent(c, n)) continue;
        for (size_t j = 0; j < n->n_outputs; j++)
            if (n->outputs[j]) c->depends[n->outputs[j]->index] = true;
    }
    return NULL;
}

/* Walks the forward nodes from last to first, so every consumer of a value
 * has added its share to the value's gradient before the value's producer
 * reads it. An x's gradient stops there: the xs are what is fed. */
static tsr_status *backward(grad_ctx *c, size_t n_fwd_nodes) {
    for (size_t k = n_fwd_nodes; k-- > 0;) {
        const ir_node *n = c->g->nodes[k];
        if (n == c->node) continue;
        ir_value *dy = NULL;
        for (size_t j = 0; j < n->n_outputs && !dy; j++) {
            const ir_value *o = n->outputs[j];
            if (wants_grad(c, o) && !c->is_x[o->index] && c->grad[o->index]) dy = c->grad[o->index];
        }
        if (dy) TSR_TRY(backprop_node(c, n, dy));
    }
    return NULL;
}

static tsr_status *write_outputs(grad_ctx *c, const ir_attr *xs) {
    ir_node *n = c->node;
    for (size_t i = 0; i < n->n_outputs; i++) {
        ir_value *out = n->outputs[i];
        if (!out) continue;
        ir_value *x = ir_graph_find(c->g, xs->strings[i]);
        ir_value *g = c->grad[x->index];
        if (!g) { /* y does not depend on x */
            int32_t e = elem_of(x);
            TSR_TRY(filled_like(c, x, is_float_elem(e) ? e : c->elem, 0.0f, &g));
        }
        TSR_TRY(emit(c, "Identity", &g, 1, out, NULL));
    }
    return NULL;
}

static void ctx_free(grad_ctx *c) {
    free(c->base);
    free(c->origin);
    free(c->is_x);
    free(c->depends);
    free(c->grad);
}

static tsr_status *expand_one(ir_graph *g, ir_node *node) {
    grad_ctx c = {.g = g, .node = node};
    node_label(c.label, sizeof c.label, node);
    char unnamed[64];
    snprintf(unnamed, sizeof unnamed, "Gradient_%zu", node->index);
    const char *base = node->name && node->name[0] ? node->name : unnamed;
    c.opset = ir_model_opset(g->model, "");
    c.n_fwd = g->n_values;
    c.base = strdup(base);
    c.origin = strdup(node->origin ? node->origin : base);
    c.is_x = calloc(c.n_fwd + 1, sizeof *c.is_x);
    c.depends = calloc(c.n_fwd + 1, sizeof *c.depends);
    c.grad = calloc(c.n_fwd + 1, sizeof *c.grad);
    tsr_status *st = NULL;
    const ir_attr *xs = NULL;
    ir_value *y = NULL;
    if (!c.base || !c.origin || !c.is_x || !c.depends || !c.grad) st = TSR_NO_MEMORY();
    if (!st && c.opset <= 0)
        st = grad_error(&c, TSR_ERR_INVALID_MODEL, "the model imports no ai.onnx opset for the backward nodes");
    if (!st) st = check_node(&c, &xs, &y);
    if (!st) st = mark_forward(&c, xs);
    size_t n_fwd_nodes = g->n_nodes, first_new = g->n_nodes;
    if (!st && c.depends[y->index]) st = filled_like(&c, y, c.elem, 1.0f, &c.grad[y->index]);
    if (!st) st = backward(&c, n_fwd_nodes);
    if (!st) st = write_outputs(&c, xs);
    /* The backward nodes read forward values that may come after the Gradient
     * node; splice them into its place, then sort again. */
    if (!st) st = ir_graph_splice_node(g, node, first_new);
    if (!st) st = ir_graph_check(g);
    ctx_free(&c);
    return st;
}

/* --- the pass --------------------------------------------------------------------- */

static bool has_gradient(const ir_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (is_gradient(n)) return true;
        for (size_t k = 0; k < n->n_attrs; k++) {
            const ir_attr *a = &n->attrs[k];
            if (a->g && has_gradient(a->g)) return true;
            for (size_t m = 0; a->graphs && m < a->count; m++)
                if (has_gradient(a->graphs[m])) return true;
        }
    }
    return false;
}

/* The Gradient node to rewrite next: the first whose y does not depend on
 * another Gradient node's outputs (a gradient of a gradient needs the inner
 * one rewritten first). When every one does, the first: its rewrite then
 * fails on the Gradient node in its way and says so. */
static tsr_status *next_gradient(const ir_graph *g, ir_node **out) {
    *out = NULL;
    bool *after = calloc(g->n_values + 1, sizeof *after); /* downstream of some Gradient node */
    if (!after) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        bool marked = is_gradient(n);
        for (size_t j = 0; j < n->n_inputs && !marked; j++) marked = n->inputs[j] && after[n->inputs[j]->index];
        for (size_t j = 0; j < n->n_outputs && marked; j++)
            if (n->outputs[j]) after[n->outputs[j]->index] = true;
    }
    for (size_t i = 0; i < g->n_nodes && !*out; i++) {
        ir_node *n = g->nodes[i];
        if (!is_gradient(n)) continue;
        const ir_attr *y = ir_node_attr(n, "y");
        const ir_value *v = y && y->type == TSR_ATTR_STRING && y->s ? ir_graph_find(g, y->s) : NULL;
        if (!v || !after[v->index]) *out = n;
    }
    for (size_t i = 0; i < g->n_nodes && !*out; i++)
        if (is_gradient(g->nodes[i])) *out = g->nodes[i];
    free(after);
    return NULL;
}

static tsr_status *expand_graph(ir_graph *root, ir_graph *g) {
    for (;;) {
        ir_node *n;
        TSR_TRY(next_gradient(g, &n));
        if (!n) break;
        /* Types again each time: an earlier rewrite's values may be on this
         * node's path (a gradient of a gradient). */
        TSR_TRY(ir_infer_shapes(root));
        TSR_TRY(expand_one(g, n));
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_attrs; k++) {
            ir_attr *a = &n->attrs[k];
            if (a->g && has_gradient(a->g)) TSR_TRY(expand_graph(root, a->g));
            for (size_t m = 0; a->graphs && m < a->count; m++)
                if (has_gradient(a->graphs[m])) TSR_TRY(expand_graph(root, a->graphs[m]));
        }
    }
    return NULL;
}

tsr_status *gradient_expand(ir_graph *g) {
    if (!g) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no graph");
    if (!has_gradient(g)) return NULL;
    return expand_graph(g, g);
}
