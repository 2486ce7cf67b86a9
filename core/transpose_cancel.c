/*
 * Elementwise ops between two Transposes that cancel run on the
 * untransposed tensor, and the Transposes go. tf2onnx writes a Keras model
 * with NHWC tensors as NCHW Convs wrapped in Transposes, and whatever
 * Keras applies between two layers stays in NHWC:
 *   Conv -> Transpose(0,2,3,1) -> Clip (ReLU6) -> Transpose(0,3,1,2) -> Conv
 * Each Transpose is a full copy (for oneDNN a reorder between blocked and
 * plain layouts) and the activation is not fused into the Conv. An
 * elementwise op commutes with any transpose, so the chain becomes
 *   Conv -> Clip -> Conv
 * which ONNX Runtime's transpose optimizer does too.
 *
 * Between the Transposes: a run of ops that each take one tensor and give
 * one of the same shape (unary activations, Cast, Clip with scalar bounds,
 * binary ops whose other operand is one element), each middle value read
 * by the next op alone and no graph output. Its values take the
 * untransposed dims (their element types unchanged).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "rewrite_util.h"
#include "status.h"
#include "tessera/tessera.h"

static bool unary_elementwise(const ir_node *n) {
    static const char *const ops[] = {
        "Abs",         "Cast",      "Ceil",           "Celu",      "Elu",  "Erf",  "Exp", "Floor",    "Gelu",
        "HardSigmoid", "HardSwish", "Identity",       "LeakyRelu", "Log",  "Mish", "Neg", "Not",      "Reciprocal",
        "Relu",        "Round",     "Selu",           "Sigmoid",   "Sign", "Sin",  "Cos", "Softplus", "Softsign",
        "Sqrt",        "Tanh",      "ThresholdedRelu"};
    if (n->domain[0]) return false;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return n->n_inputs == 1;
    return false;
}

/* A value holding one element whatever the layout: every dim 1, rank at
 * most `rank` (so broadcasting adds no dim). */
static bool one_element(const ir_value *v, int32_t rank) {
    if (!v || v->type.rank < 0 || v->type.rank > rank) return false;
    for (int32_t d = 0; d < v->type.rank; d++)
        if (v->type.dims[d].value != 1) return false;
    return true;
}

/* An op that maps its input `in` elementwise to an output of the same
 * shape: unary ones, Clip with scalar bounds, a binary op whose other
 * operand is one element. */
static bool passes_through(const ir_node *n, const ir_value *in, int32_t rank) {
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    if (n->domain[0] || n->n_outputs != 1 || !n->outputs[0] || n->n_inputs < 1) return false;
    if (unary_elementwise(n)) return n->inputs[0] == in;
    if (rewrite_is_op(n, "Clip")) {
        for (size_t k = 1; k < n->n_inputs; k++)
            if (n->inputs[k] && !one_element(n->inputs[k], 0)) return false;
        return n->inputs[0] == in;
    }
    for (size_t i = 0; i < sizeof binary / sizeof *binary && n->n_inputs == 2; i++)
        if (strcmp(n->op_type, binary[i]) == 0)
            return (n->inputs[0] == in && one_element(n->inputs[1], rank)) ||
                (n->inputs[1] == in && one_element(n->inputs[0], rank));
    return false;
}

static bool is_transpose(const ir_node *n) {
    return n && rewrite_is_op(n, "Transpose") && n->n_inputs >= 1 && n->inputs[0] && n->n_outputs == 1 && n->outputs[0];
}

/* A value of g (made by a node, not a constant) read by one node alone. */
static ir_node *sole_reader(const ir_graph *g, const reader_table *r, const ir_value *v) {
    if (v->index >= g->n_values || g->values[v->index] != v || v->is_graph_output || v->observed) return NULL;
    return r->count[v->index] == 1 ? r->last[v->index] : NULL;
}

#define MAX_CHAIN 16

/* From Transpose t1: the chain of ops up to a Transpose that cancels it;
 * its length, 0 when there is none. */
static size_t chain_from(const ir_graph *g, const reader_table *r, ir_node *t1, ir_node **chain, ir_node **t2) {
    int64_t p[IR_MAX_RANK], q[IR_MAX_RANK];
    int32_t rank = transpose_perm(t1, p);
    if (rank < 1 || t1->inputs[0]->type.rank != rank) return 0;
    ir_value *v = t1->outputs[0];
    size_t n = 0;
    for (;;) {
        ir_node *next = sole_reader(g, r, v);
        if (!next) return 0;
        if (is_transpose(next) && next->inputs[0] == v) {
            if (!n || transpose_perm(next, q) != rank) return 0;
            for (int32_t j = 0; j < rank; j++)
                if (p[q[j]] != j) return 0;
            *t2 = next;
            return n;
        }
        if (n == MAX_CHAIN || !passes_through(next, v, rank)) return 0;
        chain[n++] = next;
        v = next->outputs[0];
        if (v->type.rank != rank) return 0;
    }
}

/* The values between the ops take x's dims: they hold untransposed data now. */
static tsr_status *untranspose_types(ir_node *const *chain, size_t n, const ir_value *x) {
    for (size_t i = 0; i + 1 < n; i++) {
        ir_value *v = chain[i]->outputs[0];
        ir_type t;
        TSR_TRY(ir_type_copy(&t, &x->type));
        t.elem_type = v->type.elem_type;
        ir_type_clear(&v->type);
        v->type = t;
    }
    return NULL;
}

static tsr_status *rewrite(ir_node *t1, ir_node **chain, size_t n, ir_node *t2) {
    ir_value *x = t1->inputs[0], *a = t1->outputs[0], *b = t2->inputs[0], *y = t2->outputs[0];
    TSR_TRY(untranspose_types(chain, n, x));
    ir_node *first = chain[0], *last = chain[n - 1];
    for (size_t k = 0; k < first->n_inputs; k++)
        if (first->inputs[k] == a) first->inputs[k] = x;
    last->outputs[0] = y;
    y->producer = last;
    y->producer_output = 0;
    a->producer = b->producer = NULL; /* read by nothing now */
    a->producer_output = b->producer_output = 0;
    return NULL;
}

tsr_status *ir_graph_cancel_transposes(ir_graph *g) {
    reader_table r = {0};
    ir_node **olds = malloc((g->n_nodes + 1) * sizeof *olds);
    if (!olds || !reader_table_make(g, &r)) {
        free(olds);
        return TSR_NO_MEMORY();
    }
    size_t count_old = 0;
    tsr_status *st = NULL;
    for (size_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *t1 = g->nodes[i], *t2 = NULL, *chain[MAX_CHAIN];
        if (!is_transpose(t1) || t1->outputs[0]->producer != t1) continue;
        size_t n = chain_from(g, &r, t1, chain, &t2);
        if (!n) continue;
        st = rewrite(t1, chain, n, t2);
        if (st) break;
        olds[count_old++] = t1;
        olds[count_old++] = t2;
    }
    if (count_old) { /* also after an error: the Transposes rewritten so far must go */
        size_t *first_new = malloc((count_old + 1) * sizeof *first_new);
        tsr_status *sp = first_new ? NULL : TSR_NO_MEMORY();
        for (size_t k = 0; first_new && k <= count_old; k++) first_new[k] = g->n_nodes;
        if (first_new) sp = ir_graph_splice_nodes(g, count_old, olds, first_new);
        free(first_new);
        if (!st) st = sp;
        else tsr_status_free(sp);
    }
    free(olds);
    reader_table_free(&r);
    return st;
}
