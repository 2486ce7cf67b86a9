/*
 * Shape and type inference: the driver.
 *
 * Walks a graph's nodes in order (topological after ir_graph_check), asks the
 * rule for each node's (domain, op_type, opset) to fill its outputs, and
 * merges what the rule found with what the model declared. Per-family rules
 * live in shape_ops_*.c; this file owns everything that touches ir_type
 * memory, the declared-versus-inferred bookkeeping, and the "shape values"
 * side table.
 *
 * Shape values: exporters compute Reshape targets at run time with chains
 * like Shape -> Gather -> Unsqueeze -> Concat (BERT, GPT). Knowing only the
 * types of those int64 tensors would leave every Reshape unknown, so for small
 * integer tensors we also track their contents element by element: a number,
 * a symbol ("N", copied from a dim), or unknown. The table lives only for one
 * run and is indexed by ir_value.index; it never leaks into ir.h.
 *
 * Declared versus inferred: the first run records, in ir_value.infer_flags
 * and infer_open_dims, which parts of each type the model declared. A later
 * run (the session re-infers with the shapes of actual inputs) first drops
 * whatever an earlier run added, so old inferred dims never masquerade as
 * declarations. A declared dim that was not a number but gets one from
 * inference keeps its symbol next to the number; value >= 0 is what counts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* ir_value.infer_flags bits. A type that is not a plain tensor is a chain
 * of kinds (sequence -> optional -> tensor, say), and the model may declare
 * only its first levels: bits 8-15 count the levels it gave, and the ELEM and
 * RANK bits (and infer_open_dims) describe the tensor that ends the chain
 * when that tensor is one of them. A plain tensor is a chain of one. */
enum {
    SHAPE_F_SEEN = 1u,      /* declaration recorded */
    SHAPE_F_DECL_KIND = 2u, /* the model gave a type at all */
    SHAPE_F_DECL_ELEM = 4u, /* ... with an element type */
    SHAPE_F_DECL_RANK = 8u  /* ... with a shape (rank and dims) */
};
#define SHAPE_F_DEPTH_SHIFT 8
#define SHAPE_F_DEPTH_MAX 255u

/* Largest shape value tracked; Reshape targets and such are far smaller. */
#define SHAPE_SVAL_MAX IR_MAX_RANK

typedef struct shape_sval {
    int32_t rank; /* 0 scalar, 1 vector */
    size_t n;
    shape_dim e[SHAPE_SVAL_MAX];
} shape_sval;

typedef struct shape_pool {
    struct shape_pool *next;
    char s[];
} shape_pool;

struct shape_ctx {
    ir_graph *g;
    shape_ctx *parent;  /* enclosing graph's run, for outer-scope values */
    shape_sval **svals; /* n_values entries, NULL when nothing is known */
    size_t n_svals;
    shape_pool **pool;     /* shared with the root run */
    shape_pool *pool_root; /* only meaningful in the root */
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

tsr_status *shape_err(const ir_node *n, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n->name && n->name[0]) return tsr_error(TSR_ERR_INVALID_MODEL, "node '%s' (%s): %s", n->name, n->op_type, msg);
    /* An unnamed node is best found by what it produces. */
    const char *out = n->n_outputs && n->outputs[0] ? n->outputs[0]->name : "";
    return tsr_error(TSR_ERR_INVALID_MODEL, "node #%zu (%s) producing '%s': %s", n->index, n->op_type, out ? out : "",
                     msg);
}

/* ------------------------------------------------------------------------ */
/* Dims and shapes                                                           */

void shape_dims_unknown(shape_dims *s) { s->rank = -1; }

void shape_dims_rank(shape_dims *s, int32_t rank) {
    s->rank = rank;
    for (int32_t i = 0; i < rank && i < IR_MAX_RANK; i++) s->dims[i] = shape_unknown();
}

shape_dim shape_dim_mul(shape_dim a, shape_dim b) {
    if (shape_is_known(a) && shape_is_known(b)) {
        if (a.value != 0 && b.value > INT64_MAX / a.value) return shape_unknown();
        return shape_known(a.value * b.value);
    }
    if (a.value == 0 || b.value == 0) return shape_known(0);
    if (a.value == 1) return b;
    if (b.value == 1) return a;
    return shape_unknown();
}

bool shape_dim_same(shape_dim a, shape_dim b) {
    if (shape_is_known(a) || shape_is_known(b)) return a.value == b.value;
    return a.symbol && b.symbol && strcmp(a.symbol, b.symbol) == 0;
}

bool shape_dim_unify(shape_dim a, shape_dim b, shape_dim *out) {
    if (shape_is_known(a) && shape_is_known(b)) {
        *out = a;
        return a.value == b.value;
    }
    if (shape_is_known(a)) *out = a;
    else if (shape_is_known(b)) *out = b;
    else *out = a.symbol ? a : b;
    return true;
}

static shape_dim broadcast_dim(shape_dim a, shape_dim b, bool *clash) {
    if (shape_is_known(a) && shape_is_known(b)) {
        if (a.value == b.value || b.value == 1) return a;
        if (a.value == 1) return b;
        *clash = true;
        return a;
    }
    if (a.value == 1) return b;
    if (b.value == 1) return a;
    /* A known number other than 1 is what a valid run produces: the other
     * side must be 1 or that same number. */
    if (shape_is_known(a)) return a;
    if (shape_is_known(b)) return b;
    if (a.symbol && b.symbol && strcmp(a.symbol, b.symbol) == 0) return a;
    /* "N" against "M" (or against an unnamed dim) may be either at run time. */
    return shape_unknown();
}

tsr_status *shape_broadcast(shape_ctx *c, const ir_node *n, const shape_dims *a, const shape_dims *b, shape_dims *out) {
    (void)c;
    if (a->rank < 0 || b->rank < 0) {
        shape_dims_unknown(out);
        return NULL;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    shape_dims tmp;
    tmp.rank = r;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        shape_dim da = ia >= 0 ? a->dims[ia] : shape_known(1);
        shape_dim db = ib >= 0 ? b->dims[ib] : shape_known(1);
        bool clash = false;
        tmp.dims[i] = broadcast_dim(da, db, &clash);
        if (clash)
            return shape_err(n, "can't broadcast dimension %lld with %lld (axis %d of the result)", (long long)da.value,
                             (long long)db.value, (int)i);
    }
    *out = tmp;
    return NULL;
}

bool shape_axis(int64_t axis, int32_t rank, int32_t *out) {
    if (axis < -(int64_t)rank || axis >= rank) return false;
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return true;
}

/* ------------------------------------------------------------------------ */
/* String pool                                                               */

const char *shape_intern(shape_ctx *c, const char *s) {
    if (!s) return NULL;
    for (shape_pool *p = *c->pool; p; p = p->next)
        if (strcmp(p->s, s) == 0) return p->s;
    size_t len = strlen(s);
    shape_pool *p = malloc(sizeof *p + len + 1);
    if (!p) return NULL;
    memcpy(p->s, s, len + 1);
    p->next = *c->pool;
    *c->pool = p;
    return p->s;
}

/* ------------------------------------------------------------------------ */
/* Attributes                                                                */

const ir_attr *shape_attr(const ir_node *n, const char *name) { return ir_node_attr(n, name); }

int64_t shape_attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == TSR_ATTR_INT ? a->i : dflt;
}

float shape_attr_float(const ir_node *n, const char *name, float dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == TSR_ATTR_FLOAT ? a->f : dflt;
}

const char *shape_attr_str(const ir_node *n, const char *name, const char *dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == TSR_ATTR_STRING && a->s ? a->s : dflt;
}

const int64_t *shape_attr_ints(const ir_node *n, const char *name, size_t *count) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != TSR_ATTR_INTS) return NULL;
    *count = a->count;
    /* An empty list still counts as given (e.g. axes=[]): never NULL then. */
    static const int64_t none[1] = {0};
    return a->ints ? a->ints : none;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */

/* The value an outer-scope placeholder stands for, through any depth. */
static const ir_value *real_value(const ir_value *v) {
    for (int i = 0; v && v->is_outer && v->outer && i <= IR_MAX_GRAPH_DEPTH; i++) v = v->outer;
    return v;
}

bool shape_has_in(const ir_node *n, size_t i) { return i < n->n_inputs && n->inputs[i]; }

const ir_type *shape_in_type(shape_ctx *c, const ir_node *n, size_t i) {
    (void)c;
    if (!shape_has_in(n, i)) return NULL;
    return &real_value(n->inputs[i])->type;
}

int32_t shape_in_elem(shape_ctx *c, const ir_node *n, size_t i) {
    const ir_type *t = shape_in_type(c, n, i);
    if (!t || (t->kind != IR_TYPE_TENSOR && t->kind != IR_TYPE_SPARSE_TENSOR)) return 0;
    return t->elem_type;
}

static void type_to_shape(const ir_type *t, shape_dims *out) {
    if (!t || t->kind != IR_TYPE_TENSOR || t->rank < 0 || t->rank > IR_MAX_RANK) {
        out->rank = -1;
        return;
    }
    out->rank = t->rank;
    for (int32_t d = 0; d < t->rank; d++) {
        out->dims[d].value = t->dims[d].value >= 0 ? t->dims[d].value : TSR_DIM_UNKNOWN;
        out->dims[d].symbol = t->dims[d].symbol && t->dims[d].symbol[0] ? t->dims[d].symbol : NULL;
        /* A bound symbol (value and name) is just the number here. */
        if (out->dims[d].value >= 0) out->dims[d].symbol = NULL;
    }
}

void shape_in_shape(shape_ctx *c, const ir_node *n, size_t i, shape_dims *out) {
    type_to_shape(shape_in_type(c, n, i), out);
}

void shape_value_shape(const ir_value *v, shape_dims *out) { type_to_shape(v ? &real_value(v)->type : NULL, out); }

const ir_type *shape_value_type(const ir_value *v) { return v ? &real_value(v)->type : NULL; }

void shape_type_shape(const ir_type *t, shape_dims *out) { type_to_shape(t, out); }

int32_t shape_type_elem(const ir_type *t) { return t && t->kind == IR_TYPE_TENSOR ? t->elem_type : 0; }

const ir_type *shape_in_inner(shape_ctx *c, const ir_node *n, size_t i) {
    const ir_type *t = shape_in_type(c, n, i);
    if (!t || (t->kind != IR_TYPE_SEQUENCE && t->kind != IR_TYPE_OPTIONAL)) return NULL;
    return t->elem;
}

void shape_dims_join(const shape_dims *a, const shape_dims *b, shape_dims *out) {
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        shape_dims_unknown(out);
        return;
    }
    shape_dims tmp;
    tmp.rank = a->rank;
    for (int32_t i = 0; i < a->rank; i++)
        tmp.dims[i] = shape_dim_same(a->dims[i], b->dims[i]) ? a->dims[i] : shape_unknown();
    *out = tmp;
}

int32_t shape_value_elem(const ir_value *v) {
    const ir_type *t = v ? &real_value(v)->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR ? t->elem_type : 0;
}

const ir_tensor *shape_in_const(shape_ctx *c, const ir_node *n, size_t i) {
    (void)c;
    if (!shape_has_in(n, i)) return NULL;
    return real_value(n->inputs[i])->constant;
}

static bool tensor_int_at(const ir_tensor *t, size_t k, int64_t *out) {
    switch (t->elem_type) {
    case TSR_INT64: *out = ((const int64_t *)t->data)[k]; return true;
    case TSR_INT32: *out = ((const int32_t *)t->data)[k]; return true;
    case TSR_INT16: *out = ((const int16_t *)t->data)[k]; return true;
    case TSR_INT8: *out = ((const int8_t *)t->data)[k]; return true;
    case TSR_UINT8:
    case TSR_BOOL: *out = ((const uint8_t *)t->data)[k]; return true;
    case TSR_UINT16: *out = ((const uint16_t *)t->data)[k]; return true;
    case TSR_UINT32: *out = ((const uint32_t *)t->data)[k]; return true;
    case TSR_UINT64: {
        uint64_t u = ((const uint64_t *)t->data)[k];
        if (u > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)u;
        return true;
    }
    default: return false;
    }
}

static bool tensor_count(const ir_tensor *t, size_t *count) {
    uint64_t cnt;
    if (!ir_dims_count(t->rank, t->dims, &cnt) || cnt > SIZE_MAX) return false;
    *count = (size_t)cnt;
    return true;
}

/* The shape-value record of v (following outer placeholders into the
 * enclosing runs), or NULL. */
static const shape_sval *sval_of(shape_ctx *c, const ir_value *v) {
    const ir_value *r = real_value(v);
    for (shape_ctx *k = c; k; k = k->parent)
        if (r->index < k->n_svals && k->g->values[r->index] == r) return k->svals[r->index];
    return NULL;
}

bool shape_in_dims(shape_ctx *c, const ir_node *n, size_t i, shape_dim *buf, size_t cap, size_t *count, int32_t *rank) {
    if (!shape_has_in(n, i)) return false;
    const ir_tensor *t = shape_in_const(c, n, i);
    if (t) {
        size_t cnt;
        if (t->rank > 1 || !tensor_count(t, &cnt) || cnt > cap) return false;
        if (cnt && !t->data) return false;
        for (size_t k = 0; k < cnt; k++) {
            int64_t v;
            if (!tensor_int_at(t, k, &v)) return false;
            buf[k].value = v;
            buf[k].symbol = NULL;
        }
        *count = cnt;
        if (rank) *rank = t->rank;
        return true;
    }
    const shape_sval *s = sval_of(c, n->inputs[i]);
    if (!s || s->n > cap) return false;
    memcpy(buf, s->e, s->n * sizeof *buf);
    *count = s->n;
    if (rank) *rank = s->rank;
    return true;
}

bool shape_in_ints(shape_ctx *c, const ir_node *n, size_t i, int64_t *buf, size_t cap, size_t *count, int32_t *rank) {
    shape_dim d[SHAPE_SVAL_MAX];
    size_t cnt;
    const ir_tensor *t = shape_in_const(c, n, i);
    /* A big constant (Gather's indices, say) is read directly, not capped
     * at SHAPE_SVAL_MAX. */
    if (t) {
        if (t->rank > 1 || !tensor_count(t, &cnt) || cnt > cap || (cnt && !t->data)) return false;
        for (size_t k = 0; k < cnt; k++)
            if (!tensor_int_at(t, k, &buf[k])) return false;
        *count = cnt;
        if (rank) *rank = t->rank;
        return true;
    }
    if (!shape_in_dims(c, n, i, d, cap < SHAPE_SVAL_MAX ? cap : SHAPE_SVAL_MAX, &cnt, rank)) return false;
    for (size_t k = 0; k < cnt; k++) {
        if (d[k].value == SHAPE_NAN) return false;
        buf[k] = d[k].value;
    }
    *count = cnt;
    return true;
}

bool shape_in_doubles(shape_ctx *c, const ir_node *n, size_t i, double *buf, size_t cap, size_t *count) {
    const ir_tensor *t = shape_in_const(c, n, i);
    size_t cnt;
    if (!t || t->rank > 1 || !tensor_count(t, &cnt) || cnt > cap || (cnt && !t->data)) return false;
    for (size_t k = 0; k < cnt; k++) {
        int64_t v;
        if (t->elem_type == TSR_FLOAT) buf[k] = ((const float *)t->data)[k];
        else if (t->elem_type == TSR_DOUBLE) buf[k] = ((const double *)t->data)[k];
        else if (tensor_int_at(t, k, &v)) buf[k] = (double)v;
        else return false;
    }
    *count = cnt;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Writing types                                                             */

static void free_dims(ir_type *t) {
    for (int32_t d = 0; t->dims && d < t->rank; d++) free(t->dims[d].symbol);
    free(t->dims);
    t->dims = NULL;
    t->rank = -1;
}

static char *dup_str(const char *s) {
    size_t len = strlen(s);
    char *p = malloc(len + 1);
    if (p) memcpy(p, s, len + 1);
    return p;
}

static bool is_container(int32_t kind) {
    return kind == IR_TYPE_SEQUENCE || kind == IR_TYPE_OPTIONAL || kind == IR_TYPE_MAP;
}

/* First sight of a value: remember what the model declared. */
static void record_declared(ir_value *v) {
    const ir_type *t = &v->type, *last = t;
    uint32_t f = SHAPE_F_SEEN, depth = 0;
    uint64_t open = 0;
    while (t && t->kind != IR_TYPE_UNKNOWN && depth < SHAPE_F_DEPTH_MAX) {
        depth++;
        last = t;
        t = is_container(t->kind) ? t->elem : NULL;
    }
    if (depth) f |= SHAPE_F_DECL_KIND;
    f |= depth << SHAPE_F_DEPTH_SHIFT;
    if (depth && (last->kind == IR_TYPE_TENSOR || last->kind == IR_TYPE_SPARSE_TENSOR) && last->elem_type)
        f |= SHAPE_F_DECL_ELEM;
    if (depth && last->kind == IR_TYPE_TENSOR && last->rank >= 0 && last->rank <= IR_MAX_RANK) {
        f |= SHAPE_F_DECL_RANK;
        for (int32_t d = 0; d < last->rank; d++)
            if (last->dims[d].value < 0) open |= (uint64_t)1 << d;
    }
    v->infer_flags = f;
    v->infer_open_dims = open;
}

/* Drops what an earlier run inferred, leaving the declaration. */
static void restore_declared(ir_value *v) {
    if (!(v->infer_flags & SHAPE_F_SEEN)) {
        record_declared(v);
        return;
    }
    ir_type *t = &v->type;
    if (!(v->infer_flags & SHAPE_F_DECL_KIND)) {
        ir_type_clear(t);
        memset(t, 0, sizeof *t);
        t->rank = -1;
        return;
    }
    /* Down to the last level the model declared; below it, all is ours. */
    uint32_t depth = (v->infer_flags >> SHAPE_F_DEPTH_SHIFT) & SHAPE_F_DEPTH_MAX;
    if (depth >= SHAPE_F_DEPTH_MAX) return; /* deeper than counted: leave it */
    for (uint32_t k = 1; k < depth && t && is_container(t->kind); k++) t = t->elem;
    if (!t) return;
    if (is_container(t->kind)) {
        if (t->elem) {
            ir_type_clear(t->elem);
            free(t->elem);
            t->elem = NULL;
        }
        if (t->kind == IR_TYPE_MAP) t->elem_type = 0; /* mirrors the value type's */
        return;
    }
    if (t->kind != IR_TYPE_TENSOR) return; /* sparse: never written */
    if (!(v->infer_flags & SHAPE_F_DECL_ELEM)) t->elem_type = 0;
    if (!(v->infer_flags & SHAPE_F_DECL_RANK)) {
        free_dims(t);
        return;
    }
    for (int32_t d = 0; d < t->rank && d < IR_MAX_RANK; d++)
        if (v->infer_open_dims & ((uint64_t)1 << d)) t->dims[d].value = TSR_DIM_UNKNOWN;
}

/* Merges an inferred tensor type into t (a value's type, or the tensor
 * inside one). What the model declared stays unless the rule is certain it
 * is wrong (flags); what is unknown gets filled; a declared shape of another
 * rank wins over the inferred one, since a wrong rule is likelier than a
 * model that lies about rank and still runs. */
static tsr_status *merge_tensor(ir_type *t, int32_t elem, const shape_dims *s, unsigned flags) {
    if (t->kind != IR_TYPE_UNKNOWN && t->kind != IR_TYPE_TENSOR) return NULL;
    int32_t new_elem = t->elem_type;
    if (elem && (!new_elem || (new_elem != elem && (flags & SHAPE_ELEM_CERTAIN)))) new_elem = elem;
    if (t->kind == IR_TYPE_TENSOR && t->rank >= 0) {
        if (s && s->rank == t->rank) {
            for (int32_t d = 0; d < t->rank; d++) {
                ir_dim *dd = &t->dims[d];
                shape_dim id = s->dims[d];
                if (dd->value >= 0) continue;
                if (shape_is_known(id)) {
                    dd->value = id.value;
                } else if (!dd->symbol && id.symbol) {
                    dd->symbol = dup_str(id.symbol);
                    if (!dd->symbol) return TSR_NO_MEMORY();
                }
            }
        }
        t->elem_type = new_elem;
        return NULL;
    }
    ir_dim *dims = NULL;
    int32_t rank = s && s->rank >= 0 ? s->rank : -1;
    if (rank > 0) {
        dims = calloc((size_t)rank, sizeof *dims);
        if (!dims) return TSR_NO_MEMORY();
        for (int32_t d = 0; d < rank; d++) {
            dims[d].value = s->dims[d].value >= 0 ? s->dims[d].value : TSR_DIM_UNKNOWN;
            if (!shape_is_known(s->dims[d]) && s->dims[d].symbol) {
                dims[d].symbol = dup_str(s->dims[d].symbol);
                if (!dims[d].symbol) {
                    for (int32_t k = 0; k < d; k++) free(dims[k].symbol);
                    free(dims);
                    return TSR_NO_MEMORY();
                }
            }
        }
    }
    free_dims(t);
    t->kind = IR_TYPE_TENSOR;
    t->elem_type = new_elem;
    t->rank = rank;
    t->dims = dims;
    return NULL;
}

static tsr_status *merge_type(ir_value *v, int32_t elem, const shape_dims *s, unsigned flags) {
    return merge_tensor(&v->type, elem, s, flags);
}

/* Merges an inferred type of any kind into t, level by level: a level the
 * model left unknown takes the inferred kind, a level of another kind than
 * the inferred one stays as declared (and so does all below it), tensors
 * merge as in merge_tensor. SHAPE_NO_SHAPES in flags takes element types only. */
static tsr_status *merge_any(ir_type *t, const ir_type *src, unsigned flags, int depth) {
    if (!src || src->kind == IR_TYPE_UNKNOWN || depth > IR_MAX_GRAPH_DEPTH) return NULL;
    if (src->kind == IR_TYPE_TENSOR) {
        shape_dims s;
        type_to_shape(src, &s);
        return merge_tensor(t, src->elem_type, flags & SHAPE_NO_SHAPES ? NULL : &s, flags & SHAPE_ELEM_CERTAIN);
    }
    if (src->kind == IR_TYPE_SPARSE_TENSOR) {
        if (t->kind == IR_TYPE_UNKNOWN) {
            ir_type_clear(t);
            return ir_type_copy(t, src);
        }
        if (t->kind == IR_TYPE_SPARSE_TENSOR && !t->elem_type) t->elem_type = src->elem_type;
        return NULL;
    }
    if (!is_container(src->kind)) return NULL;
    if (t->kind == IR_TYPE_UNKNOWN) {
        ir_type_clear(t);
        t->kind = src->kind;
    }
    if (t->kind != src->kind) return NULL;
    if (t->kind == IR_TYPE_MAP && !t->key_type) t->key_type = src->key_type;
    if (!src->elem) return NULL;
    if (!t->elem) {
        if (!(t->elem = calloc(1, sizeof *t->elem))) return TSR_NO_MEMORY();
        t->elem->rank = -1;
    }
    TSR_TRY(merge_any(t->elem, src->elem, flags, depth + 1));
    if (t->kind == IR_TYPE_MAP && t->elem->kind == IR_TYPE_TENSOR) t->elem_type = t->elem->elem_type;
    return NULL;
}

/* An error when shape s can't be output i's: rank or element count out of range. */
static tsr_status *check_out_shape(const ir_node *n, size_t i, const shape_dims *s) {
    if (s && s->rank > IR_MAX_RANK) return shape_err(n, "output %zu would have rank %d", i, (int)s->rank);
    int64_t count = 1;
    for (int32_t d = 0; s && d < s->rank; d++) {
        int64_t v = s->dims[d].value;
        if (v < TSR_DIM_UNKNOWN) return shape_err(n, "output %zu would have negative dimension %lld", i, (long long)v);
        /* a 0 does not excuse the others: kernels compute strides from them */
        if (v > 0 && (v > IR_MAX_ELEMENTS / count || (count *= v) > IR_MAX_ELEMENTS))
            return shape_err(n, "output %zu would have dims making more than 2^56 elements", i);
    }
    return NULL;
}

tsr_status *shape_set_out_ex(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s,
                             unsigned flags) {
    (void)c;
    if (i >= n->n_outputs || !n->outputs[i]) return NULL;
    TSR_TRY(check_out_shape(n, i, s));
    return merge_type(n->outputs[i], elem, s, flags);
}

tsr_status *shape_set_out_type(shape_ctx *c, const ir_node *n, size_t i, const ir_type *t) {
    (void)c;
    if (i >= n->n_outputs || !n->outputs[i]) return NULL;
    return merge_any(&n->outputs[i]->type, t, 0, 0);
}

tsr_status *shape_set_out_wrap(shape_ctx *c, const ir_node *n, size_t i, int32_t kind, const ir_type *inner) {
    (void)c;
    if (i >= n->n_outputs || !n->outputs[i] || !is_container(kind) || kind == IR_TYPE_MAP) return NULL;
    /* A wrapper on the stack: merge_any only reads it. */
    ir_type w = {.kind = kind, .rank = -1, .elem = (ir_type *)inner};
    return merge_any(&n->outputs[i]->type, &w, 0, 0);
}

tsr_status *shape_set_out_seq(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s) {
    (void)c;
    if (i >= n->n_outputs || !n->outputs[i]) return NULL;
    TSR_TRY(check_out_shape(n, i, s));
    ir_type *t = &n->outputs[i]->type;
    if (t->kind == IR_TYPE_UNKNOWN) {
        ir_type_clear(t);
        t->kind = IR_TYPE_SEQUENCE;
    }
    if (t->kind != IR_TYPE_SEQUENCE) return NULL; /* the model says otherwise: its word stands */
    if (!t->elem) {
        if (!(t->elem = calloc(1, sizeof *t->elem))) return TSR_NO_MEMORY();
        t->elem->rank = -1;
    }
    return merge_tensor(t->elem, elem, s, 0);
}

/* What a and b agree on, into out (zeroed by the caller): one side without
 * a type gives the other's element types but no shapes, since the unknown
 * side may have any; kinds that differ give nothing. */
static tsr_status *join_types(const ir_type *a, const ir_type *b, ir_type *out, int depth) {
    bool ka = a && a->kind != IR_TYPE_UNKNOWN, kb = b && b->kind != IR_TYPE_UNKNOWN;
    out->rank = -1;
    if ((!ka && !kb) || depth > IR_MAX_GRAPH_DEPTH) return NULL;
    if (!ka || !kb) return merge_any(out, ka ? a : b, SHAPE_NO_SHAPES, depth);
    if (a->kind != b->kind) return NULL;
    out->kind = a->kind;
    if (a->kind == IR_TYPE_TENSOR || a->kind == IR_TYPE_SPARSE_TENSOR) {
        out->elem_type = a->elem_type == b->elem_type ? a->elem_type
            : !a->elem_type                           ? b->elem_type
            : !b->elem_type                           ? a->elem_type
                                                      : 0;
        if (a->kind != IR_TYPE_TENSOR) return NULL;
        shape_dims sa, sb, s;
        type_to_shape(a, &sa);
        type_to_shape(b, &sb);
        shape_dims_join(&sa, &sb, &s);
        return s.rank >= 0 ? merge_tensor(out, 0, &s, 0) : NULL;
    }
    out->key_type = a->key_type == b->key_type ? a->key_type : 0;
    if (!a->elem && !b->elem) return NULL;
    if (!(out->elem = calloc(1, sizeof *out->elem))) return TSR_NO_MEMORY();
    TSR_TRY(join_types(a->elem, b->elem, out->elem, depth + 1));
    if (out->kind == IR_TYPE_MAP && out->elem->kind == IR_TYPE_TENSOR) out->elem_type = out->elem->elem_type;
    return NULL;
}

tsr_status *shape_set_out_join(shape_ctx *c, const ir_node *n, size_t i, const ir_type *a, const ir_type *b) {
    (void)c;
    if (i >= n->n_outputs || !n->outputs[i]) return NULL;
    ir_type j;
    memset(&j, 0, sizeof j);
    tsr_status *st = join_types(a, b, &j, 0);
    if (!st) st = merge_any(&n->outputs[i]->type, &j, 0, 0);
    ir_type_clear(&j);
    return st;
}

tsr_status *shape_set_out(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s) {
    return shape_set_out_ex(c, n, i, elem, s, 0);
}

tsr_status *shape_same_as_in(shape_ctx *c, const ir_node *n, size_t i, size_t j) {
    shape_dims s;
    shape_in_shape(c, n, j, &s);
    return shape_set_out(c, n, i, shape_in_elem(c, n, j), &s);
}

/* A constant's type is exactly its tensor's. */
static tsr_status *type_from_constant(ir_value *v) {
    const ir_tensor *t = v->constant;
    shape_dims s;
    if (t->rank < 0 || t->rank > IR_MAX_RANK) return NULL;
    s.rank = t->rank;
    for (int32_t d = 0; d < t->rank; d++) s.dims[d] = shape_known(t->dims[d]);
    return merge_type(v, t->elem_type, &s, SHAPE_ELEM_CERTAIN);
}

/* ------------------------------------------------------------------------ */
/* Shape values                                                              */

static tsr_status *sval_set(shape_ctx *c, const ir_value *v, int32_t rank, const shape_dim *e, size_t n) {
    if (!v || v->index >= c->n_svals || c->g->values[v->index] != v || n > SHAPE_SVAL_MAX) return NULL;
    shape_sval *s = c->svals[v->index];
    if (!s) {
        s = malloc(sizeof *s);
        if (!s) return TSR_NO_MEMORY();
        c->svals[v->index] = s;
    }
    s->rank = rank;
    s->n = n;
    for (size_t k = 0; k < n; k++) {
        s->e[k] = e[k];
        if (e[k].symbol) {
            s->e[k].symbol = shape_intern(c, e[k].symbol);
            if (!s->e[k].symbol) return TSR_NO_MEMORY();
        }
    }
    return NULL;
}

static bool is_int_type(int32_t t) {
    return t == TSR_INT64 || t == TSR_INT32 || t == TSR_INT16 || t == TSR_INT8 || t == TSR_UINT8 || t == TSR_UINT16 ||
        t == TSR_UINT32 || t == TSR_UINT64 || t == TSR_BOOL;
}

static shape_dim nan_dim(const char *symbol) {
    shape_dim d = {SHAPE_NAN, symbol};
    return d;
}

static shape_dim sval_arith(const char *op, shape_dim a, shape_dim b) {
    if (a.value != SHAPE_NAN && b.value != SHAPE_NAN) {
        int64_t x = a.value, y = b.value, r;
        if (!strcmp(op, "Add")) {
            if (__builtin_add_overflow(x, y, &r)) return nan_dim(NULL);
        } else if (!strcmp(op, "Sub")) {
            if (__builtin_sub_overflow(x, y, &r)) return nan_dim(NULL);
        } else if (!strcmp(op, "Mul")) {
            if (__builtin_mul_overflow(x, y, &r)) return nan_dim(NULL);
        } else if (!strcmp(op, "Div")) {
            if (y == 0 || (x == INT64_MIN && y == -1)) return nan_dim(NULL);
            r = x / y; /* ONNX integer Div truncates, like C */
        } else if (!strcmp(op, "Max")) r = x > y ? x : y;
        else if (!strcmp(op, "Min")) r = x < y ? x : y;
        else if (!strcmp(op, "Equal")) r = x == y;
        else return nan_dim(NULL);
        if (r == SHAPE_NAN) return nan_dim(NULL);
        return shape_known(r);
    }
    /* N*1, N/1, N+0, N-0 keep the name; N == N is true. */
    if (b.value == 1 && (!strcmp(op, "Mul") || !strcmp(op, "Div"))) return a;
    if (a.value == 1 && !strcmp(op, "Mul")) return b;
    if (b.value == 0 && (!strcmp(op, "Add") || !strcmp(op, "Sub"))) return a;
    if (a.value == 0 && !strcmp(op, "Add")) return b;
    if (!strcmp(op, "Equal") && a.symbol && b.symbol && !strcmp(a.symbol, b.symbol)) return shape_known(1);
    /* A dim is never negative, so it never equals -1 (Reshape's marker):
     * exporters test exactly that in Where(Equal(shape, -1), ...). */
    if (!strcmp(op, "Equal") && ((a.value == SHAPE_NAN && b.value < 0) || (b.value == SHAPE_NAN && a.value < 0)))
        return shape_known(0);
    return nan_dim(NULL);
}

/* Works out the contents of n's first output when it is a small integer
 * tensor computed from other small integer tensors or from a shape. Only
 * what exporters use to build shapes; anything else is left unknown. */
static tsr_status *sval_node(shape_ctx *c, const ir_node *n) {
    if (n->domain[0] || n->n_outputs < 1 || !n->outputs[0]) return NULL;
    const char *op = n->op_type;
    const ir_value *out = n->outputs[0];
    shape_dim a[SHAPE_SVAL_MAX], b[SHAPE_SVAL_MAX], r[SHAPE_SVAL_MAX];
    size_t na, nb;
    int32_t ra, rb;

    if (!strcmp(op, "Shape")) {
        shape_dims s;
        shape_in_shape(c, n, 0, &s);
        if (s.rank < 0) return NULL;
        int64_t start = shape_attr_int(n, "start", 0), end = shape_attr_int(n, "end", s.rank);
        if (start < 0) start += s.rank;
        if (end < 0) end += s.rank;
        if (start < 0) start = 0;
        if (end > s.rank) end = s.rank;
        if (end < start) end = start;
        if ((size_t)(end - start) > SHAPE_SVAL_MAX) return NULL;
        for (int64_t d = start; d < end; d++)
            r[d - start] = shape_is_known(s.dims[d]) ? s.dims[d] : nan_dim(s.dims[d].symbol);
        return sval_set(c, out, 1, r, (size_t)(end - start));
    }
    if (!strcmp(op, "Size")) {
        shape_dims s;
        shape_in_shape(c, n, 0, &s);
        if (s.rank < 0) return NULL;
        shape_dim p = shape_known(1);
        for (int32_t d = 0; d < s.rank; d++) p = shape_dim_mul(p, s.dims[d]);
        if (!shape_is_known(p)) return NULL;
        return sval_set(c, out, 0, &p, 1);
    }
    if (!strcmp(op, "Identity") || !strcmp(op, "Cast")) {
        if (!strcmp(op, "Cast") && !is_int_type((int32_t)shape_attr_int(n, "to", 0))) return NULL;
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra)) return NULL;
        return sval_set(c, out, ra, a, na);
    }
    if (!strcmp(op, "Neg")) {
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra)) return NULL;
        for (size_t k = 0; k < na; k++) r[k] = a[k].value != SHAPE_NAN ? shape_known(-a[k].value) : nan_dim(NULL);
        return sval_set(c, out, ra, r, na);
    }
    if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze") || !strcmp(op, "Reshape") || !strcmp(op, "Flatten")) {
        /* Only scalar <-> [k] changes of a 1-D-or-less value; the output
         * type tells which. */
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra)) return NULL;
        const ir_type *t = &out->type;
        if (t->kind != IR_TYPE_TENSOR || t->rank < 0 || t->rank > 1) return NULL;
        if (t->rank == 0 && na != 1) return NULL;
        return sval_set(c, out, t->rank, a, na);
    }
    if (!strcmp(op, "Gather")) {
        int64_t idx[SHAPE_SVAL_MAX];
        size_t ni;
        int32_t ri;
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra) || ra != 1) return NULL;
        if (!shape_in_ints(c, n, 1, idx, SHAPE_SVAL_MAX, &ni, &ri)) return NULL;
        for (size_t k = 0; k < ni; k++) {
            int64_t j = idx[k] < 0 ? idx[k] + (int64_t)na : idx[k];
            if (j < 0 || j >= (int64_t)na) return NULL;
            r[k] = a[j];
        }
        return sval_set(c, out, ri, r, ni);
    }
    if (!strcmp(op, "Slice")) {
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra) || ra != 1) return NULL;
        int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
        size_t k1, k2, k3 = 1, k4 = 1;
        if (n->opset > 0 && n->opset < 10) {
            size_t cs, ce, ca = 0;
            const int64_t *ps = shape_attr_ints(n, "starts", &cs), *pe = shape_attr_ints(n, "ends", &ce);
            const int64_t *pa = shape_attr_ints(n, "axes", &ca);
            if (!ps || !pe || cs != 1 || ce != 1 || (pa && (ca != 1 || (pa[0] != 0 && pa[0] != -1)))) return NULL;
            st[0] = ps[0];
            en[0] = pe[0];
        } else {
            if (!shape_in_ints(c, n, 1, st, 1, &k1, NULL) || k1 != 1) return NULL;
            if (!shape_in_ints(c, n, 2, en, 1, &k2, NULL) || k2 != 1) return NULL;
            if (shape_has_in(n, 3) &&
                (!shape_in_ints(c, n, 3, ax, 1, &k3, NULL) || k3 != 1 || (ax[0] != 0 && ax[0] != -1)))
                return NULL;
            if (shape_has_in(n, 4) && (!shape_in_ints(c, n, 4, sp, 1, &k4, NULL) || k4 != 1 || sp[0] == 0)) return NULL;
        }
        int64_t len = (int64_t)na, s0 = st[0], e0 = en[0], step = sp[0];
        if (s0 < 0) s0 += len;
        if (e0 < 0) e0 += len;
        size_t m = 0;
        if (step > 0) {
            if (s0 < 0) s0 = 0;
            if (e0 > len) e0 = len;
            for (int64_t j = s0; j < e0; j += step) r[m++] = a[j];
        } else {
            if (s0 > len - 1) s0 = len - 1;
            if (e0 < -1) e0 = -1;
            for (int64_t j = s0; j > e0; j += step) r[m++] = a[j];
        }
        return sval_set(c, out, 1, r, m);
    }
    if (!strcmp(op, "Concat")) {
        size_t m = 0;
        for (size_t i = 0; i < n->n_inputs; i++) {
            if (!shape_has_in(n, i)) continue;
            if (!shape_in_dims(c, n, i, a, SHAPE_SVAL_MAX, &na, &ra) || ra != 1) return NULL;
            if (m + na > SHAPE_SVAL_MAX) return NULL;
            memcpy(r + m, a, na * sizeof *a);
            m += na;
        }
        return sval_set(c, out, 1, r, m);
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") || !strcmp(op, "Max") ||
        !strcmp(op, "Min") || !strcmp(op, "Equal")) {
        if (n->n_inputs != 2) return NULL;
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra)) return NULL;
        if (!shape_in_dims(c, n, 1, b, SHAPE_SVAL_MAX, &nb, &rb)) return NULL;
        if (na != nb && na != 1 && nb != 1) return NULL;
        size_t m = na > nb ? na : nb;
        for (size_t k = 0; k < m; k++) {
            shape_dim x = a[na == 1 ? 0 : k], y = b[nb == 1 ? 0 : k];
            r[k] = sval_arith(op, x, y);
        }
        return sval_set(c, out, ra > rb ? ra : rb, r, m);
    }
    if (!strcmp(op, "Where")) {
        shape_dim cd[SHAPE_SVAL_MAX];
        size_t nc;
        if (!shape_in_dims(c, n, 0, cd, SHAPE_SVAL_MAX, &nc, &ra)) return NULL;
        if (!shape_in_dims(c, n, 1, a, SHAPE_SVAL_MAX, &na, NULL)) return NULL;
        if (!shape_in_dims(c, n, 2, b, SHAPE_SVAL_MAX, &nb, &rb)) return NULL;
        size_t m = nc;
        if (na > m) m = na;
        if (nb > m) m = nb;
        if ((nc != m && nc != 1) || (na != m && na != 1) || (nb != m && nb != 1)) return NULL;
        for (size_t k = 0; k < m; k++) {
            shape_dim cond = cd[nc == 1 ? 0 : k];
            if (cond.value == SHAPE_NAN) return NULL;
            r[k] = cond.value ? a[na == 1 ? 0 : k] : b[nb == 1 ? 0 : k];
        }
        return sval_set(c, out, m > 1 || ra > 0 || rb > 0 ? 1 : 0, r, m);
    }
    if (!strcmp(op, "ReduceProd") || !strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin")) {
        /* a whole 1-D shape value reduced (Shape(start=2) -> ReduceProd gives
         * the flattened size a Reshape then uses): axes absent or [0] */
        if (!shape_in_dims(c, n, 0, a, SHAPE_SVAL_MAX, &na, &ra) || ra != 1 || na == 0) return NULL;
        int64_t axes[2];
        size_t n_axes = 0;
        const int64_t *attr_axes = shape_attr_ints(n, "axes", &n_axes);
        if (attr_axes) {
            if (n_axes != 1) return NULL;
            axes[0] = attr_axes[0];
        } else if (n->n_inputs > 1 && n->inputs[1]) {
            if (!shape_in_ints(c, n, 1, axes, 2, &n_axes, NULL) || n_axes > 1) return NULL;
        }
        if (n_axes == 1 && axes[0] != 0 && axes[0] != -1) return NULL;
        const char *arith = !strcmp(op, "ReduceProd") ? "Mul"
            : !strcmp(op, "ReduceSum")                ? "Add"
            : !strcmp(op, "ReduceMax")                ? "Max"
                                                      : "Min";
        shape_dim acc = a[0];
        for (size_t k = 1; k < na; k++) acc = sval_arith(arith, acc, a[k]);
        return sval_set(c, out, shape_attr_int(n, "keepdims", 1) ? 1 : 0, &acc, 1);
    }
    if (!strcmp(op, "ConstantOfShape")) {
        int64_t shp[1];
        size_t k;
        if (!shape_in_ints(c, n, 0, shp, 1, &k, NULL) || k != 1 || shp[0] < 0 || shp[0] > SHAPE_SVAL_MAX) return NULL;
        const ir_attr *v = shape_attr(n, "value");
        int64_t fill = 0;
        if (v && v->type == TSR_ATTR_TENSOR && v->t) {
            size_t cnt;
            if (!tensor_count(v->t, &cnt) || cnt != 1 || !v->t->data || !tensor_int_at(v->t, 0, &fill)) return NULL;
        }
        for (int64_t j = 0; j < shp[0]; j++) r[j] = shape_known(fill);
        return sval_set(c, out, 1, r, (size_t)shp[0]);
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */

static shape_rule find_rule(const ir_node *n) {
    static const struct {
        const shape_op *ops;
        const size_t *count;
    } tables[] = {{shape_ops_elementwise, &shape_ops_elementwise_count},
                  {shape_ops_nn, &shape_ops_nn_count},
                  {shape_ops_tensor, &shape_ops_tensor_count},
                  {shape_ops_reduce, &shape_ops_reduce_count},
                  {shape_ops_control, &shape_ops_control_count},
                  {shape_ops_rnn, &shape_ops_rnn_count},
                  {shape_ops_misc, &shape_ops_misc_count},
                  {shape_ops_sequence, &shape_ops_sequence_count}};
    int64_t opset = shape_opset(n);
    shape_rule best = NULL;
    int64_t best_since = -1;
    if (n->domain && n->domain[0]) {
        for (size_t k = 0; k < shape_ops_domains_count; k++) {
            const shape_domain_op *o = &shape_ops_domains[k];
            if (o->since <= opset && o->since > best_since && !strcmp(o->domain, n->domain) &&
                !strcmp(o->op_type, n->op_type)) {
                best = o->rule;
                best_since = o->since;
            }
        }
        return best;
    }
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t k = 0; k < *tables[t].count; k++) {
            const shape_op *o = &tables[t].ops[k];
            if (o->since <= opset && o->since > best_since && !strcmp(o->op_type, n->op_type)) {
                best = o->rule;
                best_since = o->since;
            }
        }
    return best;
}

static tsr_status *run_graph(shape_ctx *c, size_t n_feeds, const shape_feed *feeds);

tsr_status *shape_infer_subgraph(shape_ctx *c, const ir_node *n, ir_graph *body, size_t n_feeds,
                                 const shape_feed *feeds) {
    if (!body) return NULL;
    if (body->depth > IR_MAX_GRAPH_DEPTH) return NULL;
    shape_ctx sub = {0};
    sub.g = body;
    sub.parent = c;
    sub.pool = c->pool;
    tsr_status *st = run_graph(&sub, n_feeds, feeds);
    if (st) {
        const char *what = body->name && body->name[0] ? body->name : "subgraph";
        if (n->name && n->name[0]) return tsr_error_wrap(st, "node '%s' (%s) %s", n->name, n->op_type, what);
        return tsr_error_wrap(st, "node #%zu (%s) %s", n->index, n->op_type, what);
    }
    return NULL;
}

static tsr_status *run_graph(shape_ctx *c, size_t n_feeds, const shape_feed *feeds) {
    ir_graph *g = c->g;
    tsr_status *st = NULL;
    c->n_svals = g->n_values;
    c->svals = g->n_values ? calloc(g->n_values, sizeof *c->svals) : NULL;
    if (g->n_values && !c->svals) return TSR_NO_MEMORY();

    for (size_t i = 0; i < g->n_values && !st; i++) {
        ir_value *v = g->values[i];
        if (!v) continue;
        if (v->is_outer) {
            /* The placeholder's copy dates from loading; the enclosing graph
             * may know more now. Rules read through it anyway, this is for
             * later stages. */
            const ir_value *r = real_value(v);
            if (r != v) {
                ir_type t;
                st = ir_type_copy(&t, &r->type);
                if (!st) {
                    ir_type_clear(&v->type);
                    v->type = t;
                }
            }
            continue;
        }
        /* A main-graph input belongs to whoever set it (model or session);
         * a subgraph's inputs are fed by its node, so they are re-inferred. */
        if (v->is_graph_input && !g->parent) {
            if (!(v->infer_flags & SHAPE_F_SEEN)) record_declared(v);
        } else {
            restore_declared(v);
        }
        if (v->constant) st = type_from_constant(v);
    }
    for (size_t i = 0; i < n_feeds && i < g->n_inputs && !st; i++) {
        if (!g->inputs[i] || g->inputs[i]->constant) continue;
        if (feeds[i].type) st = merge_any(&g->inputs[i]->type, feeds[i].type, feeds[i].flags, 0);
        else st = merge_type(g->inputs[i], feeds[i].elem, &feeds[i].shape, 0);
    }

    for (size_t k = 0; k < g->n_nodes && !st; k++) {
        const ir_node *n = g->nodes[k];
        shape_rule rule = find_rule(n);
        if (rule) st = rule(c, n);
        if (!st) st = sval_node(c, n);
    }

    for (size_t i = 0; i < c->n_svals; i++) free(c->svals[i]);
    free(c->svals);
    c->svals = NULL;
    c->n_svals = 0;
    return st;
}

static void pool_free(shape_pool *p) {
    while (p) {
        shape_pool *next = p->next;
        free(p);
        p = next;
    }
}

tsr_status *ir_infer_shapes(ir_graph *g) {
    if (!g) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no graph");
    shape_ctx c = {0};
    c.g = g;
    c.pool = &c.pool_root;
    tsr_status *st = run_graph(&c, 0, NULL);
    pool_free(c.pool_root);
    return st;
}

/* Checks a run's input against the declaration and writes it as the input's
 * type: declared numbers must match; open dims take the run's numbers and keep
 * their names. */
static tsr_status *set_input(ir_value *v, const tsr_tensor *x) {
    ir_type *t = &v->type;
    if (!(v->infer_flags & SHAPE_F_SEEN)) record_declared(v);
    if (t->kind != IR_TYPE_UNKNOWN && t->kind != IR_TYPE_TENSOR)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' is not a tensor", v->name);
    if (x->rank < 0 || x->rank > IR_MAX_RANK)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': rank %d out of range", v->name, (int)x->rank);
    if ((v->infer_flags & SHAPE_F_DECL_ELEM) && t->elem_type != x->elem_type)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': expected %s, got %s", v->name,
                         tsr_elem_type_name(t->elem_type), tsr_elem_type_name(x->elem_type));
    if (v->infer_flags & SHAPE_F_DECL_RANK) {
        if (t->rank != x->rank)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': expected rank %d, got %d", v->name, (int)t->rank,
                             (int)x->rank);
        for (int32_t d = 0; d < t->rank; d++) {
            bool open = v->infer_open_dims & ((uint64_t)1 << d);
            if (open) {
                t->dims[d].value = x->dims[d];
            } else if (t->dims[d].value != x->dims[d]) {
                return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': dimension %d is %lld, the model says %lld",
                                 v->name, (int)d, (long long)x->dims[d], (long long)t->dims[d].value);
            }
        }
        t->elem_type = x->elem_type;
        t->kind = IR_TYPE_TENSOR;
        return NULL;
    }
    shape_dims s;
    s.rank = x->rank;
    for (int32_t d = 0; d < x->rank; d++) s.dims[d] = shape_known(x->dims[d]);
    /* Nothing declared to keep: the run's shape replaces an earlier run's. */
    free_dims(t);
    return merge_type(v, x->elem_type, &s, SHAPE_ELEM_CERTAIN);
}

/* Before the first run nothing was inferred into an input, so its type is
 * the declaration; after it, the flags say which parts were declared. */
int32_t ir_input_declared_elem(const ir_value *v) {
    if ((v->infer_flags & SHAPE_F_SEEN) && !(v->infer_flags & SHAPE_F_DECL_ELEM)) return 0;
    return v->type.kind == IR_TYPE_TENSOR ? v->type.elem_type : 0;
}

int32_t ir_input_declared_rank(const ir_value *v) {
    if ((v->infer_flags & SHAPE_F_SEEN) && !(v->infer_flags & SHAPE_F_DECL_RANK)) return -1;
    return v->type.kind == IR_TYPE_TENSOR ? v->type.rank : -1;
}

int64_t ir_input_declared_dim(const ir_value *v, int32_t d) {
    int32_t rank = ir_input_declared_rank(v);
    if (d < 0 || d >= rank || !v->type.dims) return -1;
    if ((v->infer_flags & SHAPE_F_SEEN) && d < 64 && (v->infer_open_dims & ((uint64_t)1 << d))) return -1;
    return v->type.dims[d].value;
}

tsr_status *ir_infer_shapes_for_inputs(ir_graph *g, size_t n_inputs, const tsr_tensor *const *inputs) {
    if (!g || (n_inputs && !inputs)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no graph or inputs");
    if (n_inputs > g->n_inputs)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%zu inputs given, the graph has %zu", n_inputs, g->n_inputs);
    for (size_t i = 0; i < g->n_inputs; i++) {
        ir_value *v = g->inputs[i];
        if (!v) continue;
        /* Start from the declaration, not from an earlier run's input. */
        if (v->infer_flags & SHAPE_F_SEEN) restore_declared(v);
        else record_declared(v);
        if (i < n_inputs && inputs[i]) TSR_TRY(set_input(v, inputs[i]));
    }
    return ir_infer_shapes(g);
}
