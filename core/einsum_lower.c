/*
 * Einsum written as a contraction of two operands becomes Transpose ->
 * [Reshape ->] MatMul -> [Reshape ->] Transpose at load, and one operand
 * that only permutes its labels a Transpose. torch.onnx exports
 * torch.einsum as it stands, so an attention written "bihd,bjhd->bhij"
 * reaches every provider as an Einsum, and tf2onnx writes Keras'
 * EinsumDense projections ("abc,cde->abde", "abcd,cde->abe") the same way;
 * only the reference kernel runs an Einsum, as MatMul it fuses and runs
 * where matmuls do, and the Transposes are strided views to the providers
 * that read them so.
 *
 * Labels: batch (A, B and output), left (A and output), right (B and
 * output), contracted (A and B only). A is permuted to [batch, left,
 * contracted] and B to [batch, contracted, right]; several contracted
 * labels merge into one dim (Reshape), as do several right ones, and B gets
 * a 1 for each left label but the last, so MatMul broadcasts it over them
 * (with no batch labels MatMul's own broadcasting does that); no left or
 * no right label is a dim of 1; the product [batch, left, R] is unmerged
 * (Reshape) and permuted to the output. A Reshape's target keeps batch and
 * left dims by copying them (0) and needs the sizes of what it splits or
 * merges known at load (weights' sizes are), one of them inferred (-1).
 *
 * Lowered: two operands (or one that only permutes), an explicit output
 * ("->"), no ellipsis, no label repeated within an operand, every label in
 * the output or in both operands, sizes as above. Anything else stays an
 * Einsum. The sum over the contracted labels is the same sum, in the
 * MatMul's order. Measured: "bij,jk->bik" [1,256,256]x[256,256] 1.3 s on
 * the reference kernel when it was a per-element loop, 0.39 ms lowered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"
#include "tessera/tessera.h"

#define MAX_LABELS IR_MAX_RANK

typedef struct einsum_plan {
    bool single; /* one operand: perm_a only */
    int32_t rank_a, rank_b, rank_y;
    int64_t perm_a[MAX_LABELS], perm_b[MAX_LABELS], perm_y[MAX_LABELS];
    /* Reshape targets after the Transposes of A and B and after the
     * MatMul (rank 0: no Reshape; rank_y 0 with reshape_p: a scalar) */
    int32_t rank_ra, rank_rb, rank_rp;
    bool reshape_p;
    int64_t shape_a[MAX_LABELS], shape_b[MAX_LABELS], shape_p[MAX_LABELS];
} einsum_plan;

static bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* The labels of one term (letters only, spaces skipped) into out; -1 when
 * the term holds anything else (an ellipsis) or is too long. */
static int32_t term_labels(const char *s, size_t len, char *out) {
    int32_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') continue;
        if (!is_label(s[i]) || n == MAX_LABELS) return -1;
        for (int32_t k = 0; k < n; k++)
            if (out[k] == s[i]) return -1; /* a diagonal */
        out[n++] = s[i];
    }
    return n;
}

static int32_t find(const char *labels, int32_t n, char c) {
    for (int32_t i = 0; i < n; i++)
        if (labels[i] == c) return i;
    return -1;
}

static bool is_identity(const int64_t *perm, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (perm[i] != i) return false;
    return true;
}

/* Whether `eq` is a batched matrix product, and its permutations:
 * A to [batch..., left, contracted], B to [batch..., contracted, right],
 * and the product's [batch..., left, right] to the output's order. */
/* The size of label c from the operands' types or constant data: -1 when
 * unknown; -2 when the two operands disagree. */
static int64_t label_size(char c, const char *a, int32_t na, const ir_value *va, const char *b, int32_t nb,
                          const ir_value *vb) {
    int64_t size = -1;
    const char *terms[2] = {a, b};
    int32_t counts[2] = {na, nb};
    const ir_value *vals[2] = {va, vb};
    for (int t = 0; t < 2; t++) {
        int32_t k = vals[t] ? find(terms[t], counts[t], c) : -1;
        if (k < 0) continue;
        int64_t d = -1;
        if (vals[t]->constant && vals[t]->constant->rank == counts[t]) d = vals[t]->constant->dims[k];
        else if (vals[t]->type.rank == counts[t] && vals[t]->type.dims[k].value >= 0) d = vals[t]->type.dims[k].value;
        if (d >= 0 && size >= 0 && d != size) return -2;
        if (d >= 0) size = d;
    }
    return size;
}

/* *out: the product of the sizes of labels[0..n), or -1 when one is
 * unknown. */
static int64_t sizes_product(const char *labels, int32_t n, const int64_t *size_of) {
    int64_t p = 1;
    for (int32_t i = 0; i < n; i++) {
        int64_t d = size_of[(unsigned char)labels[i]];
        if (d < 0 || (d && p > INT64_MAX / d)) return -1;
        p *= d;
    }
    return p;
}

static bool plan_single(const char *a, int32_t na, const char *y, int32_t ny, einsum_plan *pl) {
    if (na != ny) return false;
    pl->single = true;
    pl->rank_a = pl->rank_y = na;
    for (int32_t i = 0; i < ny; i++)
        if ((pl->perm_a[i] = find(a, na, y[i])) < 0) return false;
    return !is_identity(pl->perm_a, na); /* an identity is left alone */
}

static bool plan_of(const char *eq, const ir_value *va, const ir_value *vb, einsum_plan *pl) {
    memset(pl, 0, sizeof *pl);
    const char *arrow = strstr(eq, "->");
    const char *comma = strchr(eq, ',');
    if (!arrow || (comma && (comma > arrow || strchr(comma + 1, ',')))) return false;
    char a[MAX_LABELS], b[MAX_LABELS], y[MAX_LABELS];
    const char *a_end = comma ? comma : arrow;
    int32_t na = term_labels(eq, (size_t)(a_end - eq), a);
    int32_t ny = term_labels(arrow + 2, strlen(arrow + 2), y);
    if (!comma) return na >= 1 && ny >= 1 && !vb && plan_single(a, na, y, ny, pl);
    int32_t nb = term_labels(comma + 1, (size_t)(arrow - comma - 1), b);
    if (na < 1 || nb < 1 || ny < 0 || !vb) return false;
    char batch[MAX_LABELS], left[MAX_LABELS], right[MAX_LABELS], con[MAX_LABELS];
    int32_t n_batch = 0, n_left = 0, n_right = 0, n_con = 0;
    for (int32_t i = 0; i < ny; i++) {
        bool in_a = find(a, na, y[i]) >= 0, in_b = find(b, nb, y[i]) >= 0;
        if (in_a && in_b) batch[n_batch++] = y[i];
        else if (in_a) left[n_left++] = y[i];
        else if (in_b) right[n_right++] = y[i];
        else return false; /* a label from nowhere */
    }
    for (int32_t i = 0; i < na; i++) {
        if (find(y, ny, a[i]) >= 0) continue;
        if (find(b, nb, a[i]) < 0) return false; /* summed on one side */
        con[n_con++] = a[i];
    }
    for (int32_t i = 0; i < nb; i++)
        if (find(y, ny, b[i]) < 0 && find(con, n_con, b[i]) < 0) return false;
    int64_t size_of[256];
    for (int i = 0; i < 256; i++) size_of[i] = -1;
    for (int32_t i = 0; i < na; i++)
        if ((size_of[(unsigned char)a[i]] = label_size(a[i], a, na, va, b, nb, vb)) == -2) return false;
    for (int32_t i = 0; i < nb; i++)
        if ((size_of[(unsigned char)b[i]] = label_size(b[i], a, na, va, b, nb, vb)) == -2) return false;
    /* the transposes */
    char order_a[MAX_LABELS], order_b[MAX_LABELS], order_p[MAX_LABELS];
    int32_t k = 0;
    for (int32_t i = 0; i < n_batch; i++) order_a[k++] = batch[i];
    for (int32_t i = 0; i < n_left; i++) order_a[k++] = left[i];
    for (int32_t i = 0; i < n_con; i++) order_a[k++] = con[i];
    k = 0;
    for (int32_t i = 0; i < n_batch; i++) order_b[k++] = batch[i];
    for (int32_t i = 0; i < n_con; i++) order_b[k++] = con[i];
    for (int32_t i = 0; i < n_right; i++) order_b[k++] = right[i];
    pl->rank_a = na, pl->rank_b = nb, pl->rank_y = ny;
    for (int32_t i = 0; i < na; i++) pl->perm_a[i] = find(a, na, order_a[i]);
    for (int32_t i = 0; i < nb; i++) pl->perm_b[i] = find(b, nb, order_b[i]);
    /* A as [batch, left (at least one), K]: copy batch and left dims (a 1
     * for no left label), merge the contracted ones (a 1 for none) */
    int32_t keep_a = n_batch + n_left;
    if (n_con != 1 || n_left == 0) {
        for (int32_t i = 0; i < keep_a; i++) pl->shape_a[i] = 0;
        pl->rank_ra = keep_a;
        if (n_left == 0) pl->shape_a[pl->rank_ra++] = 1;
        pl->shape_a[pl->rank_ra++] = n_con ? -1 : 1;
    }
    /* B as [batch, 1 per left label but the last (with batch labels), K, R] */
    int32_t ones = n_batch && n_left > 1 ? n_left - 1 : 0;
    if (n_con != 1 || n_right != 1 || ones) {
        int64_t kk = sizes_product(con, n_con, size_of), rr = sizes_product(right, n_right, size_of);
        if (kk < 0 && rr < 0) return false;
        int32_t r = 0;
        for (int32_t i = 0; i < n_batch; i++) pl->shape_b[r++] = 0;
        for (int32_t i = 0; i < ones; i++) pl->shape_b[r++] = 1;
        pl->shape_b[r++] = rr >= 0 ? -1 : kk;
        pl->shape_b[r++] = rr >= 0 ? rr : -1;
        pl->rank_rb = r;
    }
    /* the product [batch, left or 1, R] unmerged to [batch, left, right] */
    k = 0;
    for (int32_t i = 0; i < n_batch; i++) order_p[k++] = batch[i];
    for (int32_t i = 0; i < n_left; i++) order_p[k++] = left[i];
    for (int32_t i = 0; i < n_right; i++) order_p[k++] = right[i];
    if (n_left == 0 || n_right != 1) {
        int32_t unknown = 0;
        for (int32_t i = 0; i < n_right; i++) unknown += size_of[(unsigned char)right[i]] < 0;
        if (unknown > 1) return false;
        int32_t r = 0;
        for (int32_t i = 0; i < keep_a; i++) pl->shape_p[r++] = 0;
        for (int32_t i = 0; i < n_right; i++) {
            int64_t d = size_of[(unsigned char)right[i]];
            pl->shape_p[r++] = d < 0 ? -1 : d;
        }
        pl->rank_rp = r;
        pl->reshape_p = true;
    }
    for (int32_t i = 0; i < ny; i++) pl->perm_y[i] = find(order_p, ny, y[i]);
    return true;
}

/* Appends `op`(in) -> out to g, named "<einsum>/<op><suffix>", with a perm
 * attribute when perm is given. */
static tsr_status *add(ir_graph *g, const ir_node *einsum, const char *op, const char *suffix, ir_value *in0,
                       ir_value *in1, const int64_t *perm, int32_t rank, ir_value *out) {
    ir_node *n;
    TSR_TRY(ir_graph_add_node(g, &n));
    const char *base = einsum->name[0] ? einsum->name : einsum->outputs[0]->name;
    size_t cap = strlen(base) + strlen(op) + strlen(suffix) + 2;
    if (!(n->name = malloc(cap))) return TSR_NO_MEMORY();
    snprintf(n->name, cap, "%s/%s%s", base, op, suffix);
    if (!(n->op_type = strdup(op)) || !(n->domain = strdup("")) ||
        !(n->origin = strdup(einsum->origin ? einsum->origin : base)))
        return TSR_NO_MEMORY();
    n->opset = einsum->opset;
    if (!(n->inputs = calloc(3, sizeof *n->inputs)) || !(n->outputs = calloc(2, sizeof *n->outputs)))
        return TSR_NO_MEMORY();
    n->inputs[0] = in0;
    n->inputs[1] = in1;
    n->n_inputs = in1 ? 2 : 1;
    n->outputs[0] = out;
    n->n_outputs = 1;
    out->producer = n;
    out->producer_output = 0;
    if (perm) {
        if (!(n->attrs = calloc(1, sizeof *n->attrs))) return TSR_NO_MEMORY();
        n->n_attrs = 1;
        ir_attr *a = &n->attrs[0];
        a->type = TSR_ATTR_INTS;
        a->count = (size_t)rank;
        if (!(a->name = strdup("perm")) || !(a->ints = malloc((size_t)rank * sizeof *a->ints))) return TSR_NO_MEMORY();
        memcpy(a->ints, perm, (size_t)rank * sizeof *a->ints);
    }
    return NULL;
}

/* A new constant 1-D int64 value holding shape[0..rank), named after the
 * Einsum's output. */
static tsr_status *shape_value(ir_graph *g, const char *base, const char *what, const int64_t *shape, int32_t rank,
                               ir_value **out) {
    int64_t dims[1] = {rank};
    ir_tensor *t;
    TSR_TRY(ir_tensor_new(TSR_INT64, 1, dims, &t));
    if (rank) memcpy(t->data, shape, (size_t)rank * sizeof *shape);
    tsr_status *st = ir_graph_new_named_value(g, base, what, out);
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    (*out)->constant = t;
    (*out)->type.kind = IR_TYPE_TENSOR;
    (*out)->type.elem_type = TSR_INT64;
    (*out)->type.rank = 1;
    if (!((*out)->type.dims = calloc(1, sizeof *(*out)->type.dims))) return TSR_NO_MEMORY();
    (*out)->type.dims[0].value = rank;
    return NULL;
}

/* in -> Transpose(perm) -> *io, unless perm is the identity. */
static tsr_status *maybe_transpose(ir_graph *g, const ir_node *e, const char *what, const char *suffix,
                                   const int64_t *perm, int32_t rank, ir_value **io) {
    if (is_identity(perm, rank)) return NULL;
    ir_value *t;
    TSR_TRY(ir_graph_new_named_value(g, e->outputs[0]->name, what, &t));
    TSR_TRY(add(g, e, "Transpose", suffix, *io, NULL, perm, rank, t));
    *io = t;
    return NULL;
}

/* *io -> Reshape(shape) -> a new value, or into `to` when given. */
static tsr_status *reshape(ir_graph *g, const ir_node *e, const char *what, const char *suffix, const int64_t *shape,
                           int32_t rank, ir_value *to, ir_value **io) {
    const char *base = e->outputs[0]->name;
    ir_value *sv, *t = to;
    char shape_what[64];
    snprintf(shape_what, sizeof shape_what, "%s_shape", what);
    TSR_TRY(shape_value(g, base, shape_what, shape, rank, &sv));
    if (!t) TSR_TRY(ir_graph_new_named_value(g, base, what, &t));
    TSR_TRY(add(g, e, "Reshape", suffix, *io, sv, NULL, 0, t));
    *io = t;
    return NULL;
}

/* The nodes replacing one lowered Einsum, appended to g. */
static tsr_status *lower_one(ir_graph *g, const ir_node *e, const einsum_plan *pl) {
    const char *base = e->outputs[0]->name;
    ir_value *a = e->inputs[0], *y = e->outputs[0];
    if (pl->single) return add(g, e, "Transpose", "", a, NULL, pl->perm_a, pl->rank_a, y);
    ir_value *b = e->inputs[1];
    TSR_TRY(maybe_transpose(g, e, "einsum_a", "_a", pl->perm_a, pl->rank_a, &a));
    if (pl->rank_ra) TSR_TRY(reshape(g, e, "einsum_a2", "_a", pl->shape_a, pl->rank_ra, NULL, &a));
    TSR_TRY(maybe_transpose(g, e, "einsum_b", "_b", pl->perm_b, pl->rank_b, &b));
    if (pl->rank_rb) TSR_TRY(reshape(g, e, "einsum_b2", "_b", pl->shape_b, pl->rank_rb, NULL, &b));
    bool last_transpose = !is_identity(pl->perm_y, pl->rank_y);
    ir_value *p = y;
    if (pl->reshape_p || last_transpose) TSR_TRY(ir_graph_new_named_value(g, base, "einsum_product", &p));
    TSR_TRY(add(g, e, "MatMul", "", a, b, NULL, 0, p));
    if (pl->reshape_p)
        TSR_TRY(reshape(g, e, "einsum_unmerged", "_y", pl->shape_p, pl->rank_rp, last_transpose ? NULL : y, &p));
    return last_transpose ? add(g, e, "Transpose", "_y", p, NULL, pl->perm_y, pl->rank_y, y) : NULL;
}

static bool lowerable(const ir_node *n, einsum_plan *pl) {
    if (strcmp(n->op_type, "Einsum") != 0 || n->domain[0] || n->n_inputs < 1 || n->n_inputs > 2 || n->n_outputs != 1 ||
        !n->inputs[0] || (n->n_inputs == 2 && !n->inputs[1]) || !n->outputs[0])
        return false;
    const ir_attr *eq = ir_node_attr(n, "equation");
    if (!eq || eq->type != TSR_ATTR_STRING || !eq->s || eq->ref_attr_name) return false;
    if (!plan_of(eq->s, n->inputs[0], n->n_inputs == 2 ? n->inputs[1] : NULL, pl)) return false;
    /* the operands' ranks, where known, must be the terms' */
    int32_t ra = n->inputs[0]->type.rank, rb = n->n_inputs == 2 ? n->inputs[1]->type.rank : -1;
    return (ra < 0 || ra == pl->rank_a) && (pl->single || rb < 0 || rb == pl->rank_b);
}

static tsr_status *lower_subgraphs(ir_node *n, bool (*keep)(const ir_node *, void *), void *ctx) {
    for (size_t i = 0; i < n->n_attrs; i++) {
        ir_attr *a = &n->attrs[i];
        if (a->g) TSR_TRY(ir_graph_lower_einsum_except(a->g, keep, ctx));
        for (size_t k = 0; a->graphs && k < a->count; k++)
            TSR_TRY(ir_graph_lower_einsum_except(a->graphs[k], keep, ctx));
    }
    return NULL;
}

tsr_status *ir_graph_lower_einsum(ir_graph *g) { return ir_graph_lower_einsum_except(g, NULL, NULL); }

tsr_status *ir_graph_lower_einsum_except(ir_graph *g, bool (*keep)(const ir_node *, void *), void *ctx) {
    size_t count = 0, n_before = g->n_nodes;
    einsum_plan pl;
    for (size_t i = 0; i < n_before; i++) {
        TSR_TRY(lower_subgraphs(g->nodes[i], keep, ctx));
        if (!(keep && keep(g->nodes[i], ctx)) && lowerable(g->nodes[i], &pl)) count++;
    }
    if (!count) return NULL;
    ir_node **olds = malloc(count * sizeof *olds);
    size_t *first_new = malloc((count + 1) * sizeof *first_new);
    tsr_status *st = olds && first_new ? NULL : TSR_NO_MEMORY();
    size_t k = 0;
    for (size_t i = 0; i < n_before && !st; i++) {
        ir_node *n = g->nodes[i];
        if ((keep && keep(n, ctx)) || !lowerable(n, &pl)) continue;
        olds[k] = n;
        first_new[k++] = g->n_nodes;
        st = lower_one(g, n, &pl);
    }
    if (!st) {
        first_new[count] = g->n_nodes;
        st = ir_graph_splice_nodes(g, count, olds, first_new);
    }
    free(olds);
    free(first_new);
    return st;
}
