/*
 * Einsum written as a batched matrix product becomes Transpose -> MatMul ->
 * Transpose at load. torch.onnx exports torch.einsum as it stands, so an
 * attention written "bihd,bjhd->bhij" reaches every provider as an Einsum,
 * which only the naive reference kernel runs (about 40x slower than a
 * MatMul on the same data); as MatMul it fuses and runs where matmuls do,
 * and the Transposes are strided views to the providers that read them so.
 *
 * Lowered: two operands, an explicit output ("->"), no ellipsis, no label
 * repeated within an operand, every label in the output or in both
 * operands, and exactly one label each of the kinds
 *   left (A and output), right (B and output), contracted (A and B only),
 * any number of batch labels (A, B and output); or, with no batch labels,
 * several labels of A and the output (the last one the left label, the
 * others batch dims of A alone, which MatMul broadcasts over a 2-D B:
 * "bij,jk->bik", x times a weight matrix as torch.einsum writes it, ran
 * 1.3 s on the reference kernel for 256x256x256 against 0.39 ms lowered).
 * Anything else stays an Einsum. The sum over the contracted label is the
 * same sum, in the MatMul's order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"
#include "tessera/tessera.h"

#define MAX_LABELS IR_MAX_RANK

typedef struct einsum_plan {
    int32_t rank_a, rank_b, rank_y;
    int64_t perm_a[MAX_LABELS], perm_b[MAX_LABELS], perm_y[MAX_LABELS];
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
static bool plan_of(const char *eq, einsum_plan *pl) {
    const char *arrow = strstr(eq, "->");
    const char *comma = strchr(eq, ',');
    if (!arrow || !comma || comma > arrow || strchr(comma + 1, ',')) return false;
    char a[MAX_LABELS], b[MAX_LABELS], y[MAX_LABELS];
    int32_t na = term_labels(eq, (size_t)(comma - eq), a);
    int32_t nb = term_labels(comma + 1, (size_t)(arrow - comma - 1), b);
    int32_t ny = term_labels(arrow + 2, strlen(arrow + 2), y);
    if (na < 1 || nb < 1 || ny < 2) return false;
    /* batch: labels of y in both operands; a_only: y's labels of A alone,
     * the last of them the product's rows, any before it batch dims of A
     * alone (bij,jk->bik), which MatMul broadcasts over a 2-D B */
    char batch[MAX_LABELS], a_only[MAX_LABELS], right = 0, contracted = 0;
    int32_t nbatch = 0, n_a_only = 0;
    for (int32_t i = 0; i < ny; i++) {
        bool in_a = find(a, na, y[i]) >= 0, in_b = find(b, nb, y[i]) >= 0;
        if (in_a && in_b) batch[nbatch++] = y[i];
        else if (in_a) a_only[n_a_only++] = y[i];
        else if (in_b && !right) right = y[i];
        else return false; /* a second right label, or one from nowhere */
    }
    for (int32_t i = 0; i < na; i++) {
        if (find(y, ny, a[i]) >= 0) continue;
        if (find(b, nb, a[i]) < 0 || contracted) return false; /* summed alone, or two contracted */
        contracted = a[i];
    }
    for (int32_t i = 0; i < nb; i++)
        if (find(y, ny, b[i]) < 0 && b[i] != contracted) return false;
    if (!n_a_only || !right || !contracted || (n_a_only > 1 && nbatch > 0)) return false;
    if (na != nbatch + n_a_only + 1 || nb != nbatch + 2) return false;
    char left = a_only[n_a_only - 1];
    char order_a[MAX_LABELS], order_b[MAX_LABELS], order_p[MAX_LABELS];
    int32_t lead = 0; /* the product's leading (batch) dims */
    for (int32_t i = 0; i < nbatch; i++) order_a[lead] = order_b[i] = order_p[lead] = batch[i], lead++;
    for (int32_t i = 0; i + 1 < n_a_only; i++) order_a[lead] = order_p[lead] = a_only[i], lead++;
    order_a[lead] = left, order_a[lead + 1] = contracted;
    order_b[nbatch] = contracted, order_b[nbatch + 1] = right;
    order_p[lead] = left, order_p[lead + 1] = right;
    pl->rank_a = na, pl->rank_b = nb, pl->rank_y = ny;
    for (int32_t i = 0; i < na; i++) pl->perm_a[i] = find(a, na, order_a[i]);
    for (int32_t i = 0; i < nb; i++) pl->perm_b[i] = find(b, nb, order_b[i]);
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

/* The nodes replacing one lowered Einsum, appended to g. */
static tsr_status *lower_one(ir_graph *g, const ir_node *e, const einsum_plan *pl) {
    const char *base = e->outputs[0]->name;
    ir_value *a = e->inputs[0], *b = e->inputs[1], *y = e->outputs[0];
    if (!is_identity(pl->perm_a, pl->rank_a)) {
        ir_value *t;
        TSR_TRY(ir_graph_new_named_value(g, base, "einsum_a", &t));
        TSR_TRY(add(g, e, "Transpose", "_a", a, NULL, pl->perm_a, pl->rank_a, t));
        a = t;
    }
    if (!is_identity(pl->perm_b, pl->rank_b)) {
        ir_value *t;
        TSR_TRY(ir_graph_new_named_value(g, base, "einsum_b", &t));
        TSR_TRY(add(g, e, "Transpose", "_b", b, NULL, pl->perm_b, pl->rank_b, t));
        b = t;
    }
    if (is_identity(pl->perm_y, pl->rank_y)) return add(g, e, "MatMul", "", a, b, NULL, 0, y);
    ir_value *p;
    TSR_TRY(ir_graph_new_named_value(g, base, "einsum_product", &p));
    TSR_TRY(add(g, e, "MatMul", "", a, b, NULL, 0, p));
    return add(g, e, "Transpose", "_y", p, NULL, pl->perm_y, pl->rank_y, y);
}

static bool lowerable(const ir_node *n, einsum_plan *pl) {
    if (strcmp(n->op_type, "Einsum") != 0 || n->domain[0] || n->n_inputs != 2 || n->n_outputs != 1 || !n->inputs[0] ||
        !n->inputs[1] || !n->outputs[0])
        return false;
    const ir_attr *eq = ir_node_attr(n, "equation");
    if (!eq || eq->type != TSR_ATTR_STRING || !eq->s || eq->ref_attr_name) return false;
    /* the operands' ranks, where known, must be the terms' */
    if (!plan_of(eq->s, pl)) return false;
    int32_t ra = n->inputs[0]->type.rank, rb = n->inputs[1]->type.rank;
    return (ra < 0 || ra == pl->rank_a) && (rb < 0 || rb == pl->rank_b);
}

static tsr_status *lower_subgraphs(ir_node *n) {
    for (size_t i = 0; i < n->n_attrs; i++) {
        ir_attr *a = &n->attrs[i];
        if (a->g) TSR_TRY(ir_graph_lower_einsum(a->g));
        for (size_t k = 0; a->graphs && k < a->count; k++) TSR_TRY(ir_graph_lower_einsum(a->graphs[k]));
    }
    return NULL;
}

tsr_status *ir_graph_lower_einsum(ir_graph *g) {
    size_t count = 0, n_before = g->n_nodes;
    einsum_plan pl;
    for (size_t i = 0; i < n_before; i++) {
        TSR_TRY(lower_subgraphs(g->nodes[i]));
        if (lowerable(g->nodes[i], &pl)) count++;
    }
    if (!count) return NULL;
    ir_node **olds = malloc(count * sizeof *olds);
    size_t *first_new = malloc((count + 1) * sizeof *first_new);
    tsr_status *st = olds && first_new ? NULL : TSR_NO_MEMORY();
    size_t k = 0;
    for (size_t i = 0; i < n_before && !st; i++) {
        ir_node *n = g->nodes[i];
        if (!lowerable(n, &pl)) continue;
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
