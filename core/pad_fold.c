/*
 * A zero Pad in front of a Conv becomes the Conv's own padding. Exporters
 * write explicit Pads where the framework's padding is asymmetric or "SAME"
 * (tf2onnx: every strided convolution of a Keras model; PyTorch's
 * ZeroPad2d), and a Pad on its own is a full copy of the activation, a
 * piece boundary for providers that do not run Pad, and for oneDNN a
 * plain-layout tensor in the middle of a blocked chain. Conv pads with
 * zeros, so  Conv(Pad(x, p), pads=q) == Conv(x, pads=p+q)  exactly.
 *
 * Before that, a Pad between two Transposes that cancel moves out from
 * between them: tf2onnx converts a Keras model with an NHWC input into NCHW
 * Convs, but Keras' ZeroPadding2D stays in NHWC, so the graph reads
 *   Transpose(0,2,3,1) -> Pad(NHWC pads) -> Transpose(0,3,1,2) -> Conv
 * A Pad of any mode and value commutes with a transpose (its pads move with
 * their dims), so the three nodes become one Pad of the original tensor with
 * the pads permuted back, which the fold above then takes into the Conv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "rewrite_util.h"
#include "status.h"
#include "tessera/tessera.h"

/* a string attribute equal to s (a malformed one of another type is not) */
static bool attr_is(const ir_attr *a, const char *s) {
    return a->type == TSR_ATTR_STRING && a->s && strcmp(a->s, s) == 0;
}

/* The Pad's pads (2*rank values) when it is a constant zero pad of the
 * spatial dims only; NULL otherwise. */
static const int64_t *zero_spatial_pads(const ir_node *pad, int32_t rank) {
    const ir_attr *mode = ir_node_attr(pad, "mode");
    if (mode && !attr_is(mode, "constant")) return NULL;
    const int64_t *pads = NULL;
    size_t count = 0;
    if (pad->opset < 11) {
        const ir_attr *a = ir_node_attr(pad, "pads"), *value = ir_node_attr(pad, "value");
        if (!a || a->type != TSR_ATTR_INTS || (value && (value->type != TSR_ATTR_FLOAT || value->f != 0.0f)))
            return NULL;
        pads = a->ints;
        count = a->count;
    } else {
        if (pad->n_inputs < 2 || !pad->inputs[1] || !pad->inputs[1]->constant) return NULL;
        if (pad->n_inputs > 3 && pad->inputs[3]) return NULL; /* axes */
        const ir_tensor *t = pad->inputs[1]->constant;
        if (t->elem_type != TSR_INT64 || t->rank != 1) return NULL;
        pads = t->data;
        count = (size_t)t->dims[0];
        if (pad->n_inputs > 2 && pad->inputs[2]) {
            const ir_tensor *c = pad->inputs[2]->constant;
            if (!c || c->elem_type != TSR_FLOAT || c->nbytes != sizeof(float) || *(const float *)c->data != 0.0f)
                return NULL;
        }
    }
    if (count != 2 * (size_t)rank) return NULL;
    for (int32_t d = 0; d < rank; d++) {
        if (pads[d] < 0 || pads[rank + d] < 0) return NULL;
        if (d < 2 && (pads[d] || pads[rank + d])) return NULL;
    }
    return pads;
}

/* Adds the Pad's spatial pads to the Conv's; false when the Conv's padding
 * is not explicit (auto_pad) or its attribute is malformed. */
static bool widen_conv_pads(ir_node *conv, const int64_t *pads, int32_t rank) {
    const ir_attr *auto_pad = ir_node_attr(conv, "auto_pad");
    if (auto_pad && !attr_is(auto_pad, "NOTSET")) return false;
    int32_t sp = rank - 2;
    ir_attr *a = (ir_attr *)ir_node_attr(conv, "pads");
    if (a && (a->type != TSR_ATTR_INTS || a->count != 2 * (size_t)sp)) return false;
    for (int32_t i = 0; a && i < sp; i++) /* the sums must not overflow (pads are >= 0) */
        if (a->ints[i] > INT64_MAX - pads[2 + i] || a->ints[sp + i] > INT64_MAX - pads[rank + 2 + i]) return false;
    if (!a) {
        ir_attr *grown = realloc(conv->attrs, (conv->n_attrs + 1) * sizeof *grown);
        if (!grown) return false;
        conv->attrs = grown;
        a = &conv->attrs[conv->n_attrs];
        memset(a, 0, sizeof *a);
        if (!(a->name = strdup("pads")) || !(a->ints = calloc(2 * (size_t)sp, sizeof *a->ints))) {
            free(a->name);
            return false;
        }
        a->type = TSR_ATTR_INTS;
        a->count = 2 * (size_t)sp;
        conv->n_attrs++;
    }
    for (int32_t i = 0; i < sp; i++) {
        a->ints[i] += pads[2 + i];
        a->ints[sp + i] += pads[rank + 2 + i];
    }
    return true;
}

/* --- Transpose(p) -> Pad -> Transpose(q), q after p the identity ---------- */

/* A constant 1-D tensor value of g that the session cannot override. */
static const ir_tensor *fixed_vector(const ir_value *v) {
    if (!v || !v->constant || v->is_graph_input || v->constant->rank != 1) return NULL;
    return v->constant;
}

/* A new constant value of g holding the int64 vector vals[n], named after
 * `base` ("<base>_permuted", then "_2", "_3", ... until no value has it). */
static tsr_status *new_pads_value(ir_graph *g, const char *base, const int64_t *vals, int32_t n, ir_value **out) {
    size_t cap = strlen(base) + 40;
    char *name = malloc(cap);
    if (!name) return TSR_NO_MEMORY();
    snprintf(name, cap, "%s_permuted", base);
    for (unsigned k = 2; ir_graph_find(g, name); k++) snprintf(name, cap, "%s_permuted_%u", base, k);
    int64_t dim = n;
    ir_tensor *t = NULL;
    ir_value *v = NULL;
    ir_dim *dims = calloc(1, sizeof *dims);
    tsr_status *st = dims ? ir_tensor_new(TSR_INT64, 1, &dim, &t) : TSR_NO_MEMORY();
    if (!st) st = ir_graph_value(g, name, &v);
    free(name);
    if (st) {
        free(dims);
        ir_tensor_free(t);
        return st;
    }
    memcpy(t->data, vals, (size_t)n * sizeof *vals);
    dims[0].value = n;
    ir_type_clear(&v->type);
    v->type = (ir_type){.kind = IR_TYPE_TENSOR, .elem_type = TSR_INT64, .rank = 1, .dims = dims};
    v->constant = t;
    *out = v;
    return NULL;
}

/* Rewrites the Pad's pads (given for the dims of Transpose(x, p)) for the
 * dims of x: what dim i of the transposed tensor gets goes to dim p[i]. An
 * axes input (opset 18) is folded into full pads, so the Conv fold sees
 * them. *done is false, and nothing changed, when the pads are not constant
 * or are malformed. */
static tsr_status *permute_pads(ir_graph *g, ir_node *pad, const int64_t *p, int32_t r, bool *done) {
    int64_t full[2 * IR_MAX_RANK] = {0};
    *done = false;
    if (pad->opset < 11) {
        ir_attr *a = (ir_attr *)ir_node_attr(pad, "pads");
        if (!a || a->type != TSR_ATTR_INTS || a->count != 2 * (size_t)r) return NULL;
        for (int32_t i = 0; i < r; i++) {
            full[p[i]] = a->ints[i];
            full[r + p[i]] = a->ints[r + i];
        }
        memcpy(a->ints, full, 2 * (size_t)r * sizeof *full); /* the node's own attribute */
        *done = true;
        return NULL;
    }
    const ir_tensor *pt = pad->n_inputs > 1 ? fixed_vector(pad->inputs[1]) : NULL;
    if (!pt || pt->elem_type != TSR_INT64 || pt->dims[0] < 0 || pt->nbytes != (size_t)pt->dims[0] * sizeof(int64_t))
        return NULL;
    const int64_t *pads = pt->data;
    bool has_axes = pad->n_inputs > 3 && pad->inputs[3];
    if (has_axes) {
        const ir_tensor *at = fixed_vector(pad->inputs[3]);
        if (!at || (at->elem_type != TSR_INT64 && at->elem_type != TSR_INT32)) return NULL;
        int64_t m = at->dims[0];
        size_t esz = at->elem_type == TSR_INT64 ? sizeof(int64_t) : sizeof(int32_t);
        if (m < 0 || m > r || at->nbytes != (size_t)m * esz || pt->dims[0] != 2 * m) return NULL;
        bool seen[IR_MAX_RANK] = {false};
        for (int64_t k = 0; k < m; k++) {
            int64_t ax = at->elem_type == TSR_INT64 ? ((const int64_t *)at->data)[k] : ((const int32_t *)at->data)[k];
            if (ax < -r || ax >= r) return NULL;
            if (ax < 0) ax += r;
            if (seen[ax]) return NULL;
            seen[ax] = true;
            full[p[ax]] = pads[k];
            full[r + p[ax]] = pads[m + k];
        }
    } else {
        if (pt->dims[0] != 2 * (int64_t)r) return NULL;
        for (int32_t i = 0; i < r; i++) {
            full[p[i]] = pads[i];
            full[r + p[i]] = pads[r + i];
        }
    }
    ir_value *v = NULL;
    TSR_TRY(new_pads_value(g, pad->inputs[1]->name, full, 2 * r, &v));
    pad->inputs[1] = v; /* the old value may have other readers: it stays */
    if (has_axes) pad->inputs[3] = NULL;
    *done = true;
    return NULL;
}

/* Replaces each Transpose(p) -> Pad -> Transpose(q) whose permutations
 * cancel, and whose two middle values have no reader but the next node (and
 * are no graph outputs), by the Pad alone, reading the first Transpose's
 * input and writing the second's output with its pads permuted back. */
static tsr_status *pads_out_of_transposes(ir_graph *g) {
    size_t count = 0;
    ir_node **olds = malloc((g->n_nodes + 1) * sizeof *olds);
    reader_table t = {0};
    if (!olds || !reader_table_make(g, &t)) {
        free(olds);
        return TSR_NO_MEMORY();
    }
    size_t n_values = g->n_values; /* values made below are not in the table */
    tsr_status *st = NULL;
    for (size_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *pad = g->nodes[i];
        if (!rewrite_is_op(pad, "Pad") || pad->opset < 2 || pad->n_inputs < 1 || !pad->inputs[0] ||
            pad->n_outputs != 1 || !pad->outputs[0])
            continue;
        ir_value *a = pad->inputs[0], *b = pad->outputs[0];
        /* a Transpose removed earlier in this pass no longer produces anything */
        ir_node *t1 = a->producer;
        if (!t1 || t1->graph != g || !rewrite_is_op(t1, "Transpose") || t1->n_inputs < 1 || !t1->inputs[0] ||
            t1->n_outputs != 1 || t1->outputs[0] != a)
            continue;
        if (a->index >= n_values || b->index >= n_values || g->values[a->index] != a || g->values[b->index] != b)
            continue;
        /* the counts include graph outputs and subgraph captures */
        if (t.count[a->index] != 1 || t.last[a->index] != pad || t.count[b->index] != 1) continue;
        ir_node *t2 = t.last[b->index];
        if (!t2 || !rewrite_is_op(t2, "Transpose") || t2->n_inputs < 1 || t2->inputs[0] != b || t2->n_outputs != 1 ||
            !t2->outputs[0])
            continue;
        int64_t p[IR_MAX_RANK], q[IR_MAX_RANK];
        int32_t r = transpose_perm(t1, p);
        if (r < 1 || transpose_perm(t2, q) != r) continue;
        bool cancel = true;
        for (int32_t j = 0; j < r && cancel; j++) cancel = p[q[j]] == j;
        if (!cancel) continue;
        bool done;
        st = permute_pads(g, pad, p, r, &done);
        if (st || !done) continue;
        ir_value *y = t2->outputs[0];
        pad->inputs[0] = t1->inputs[0];
        pad->outputs[0] = y;
        y->producer = pad;
        y->producer_output = 0;
        a->producer = b->producer = NULL; /* read by nothing now */
        a->producer_output = b->producer_output = 0;
        olds[count++] = t1;
        olds[count++] = t2;
    }
    if (count) { /* also after an error: the Transposes rewritten so far must go */
        size_t *first_new = malloc((count + 1) * sizeof *first_new);
        tsr_status *sp = first_new ? NULL : TSR_NO_MEMORY();
        for (size_t k = 0; first_new && k <= count; k++) first_new[k] = g->n_nodes;
        if (first_new) sp = ir_graph_splice_nodes(g, count, olds, first_new);
        free(first_new);
        if (!st) st = sp;
        else tsr_status_free(sp);
    }
    free(olds);
    reader_table_free(&t);
    return st;
}

tsr_status *ir_graph_fold_pads(ir_graph *g) {
    TSR_TRY(pads_out_of_transposes(g));
    size_t count = 0;
    ir_node **olds = malloc((g->n_nodes + 1) * sizeof *olds);
    reader_table t = {0};
    if (!olds || !reader_table_make(g, &t)) {
        free(olds);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *pad = g->nodes[i];
        if (!rewrite_is_op(pad, "Pad") || pad->n_inputs < 1 || !pad->inputs[0] || pad->n_outputs != 1 ||
            !pad->outputs[0])
            continue;
        ir_value *x = pad->inputs[0], *y = pad->outputs[0];
        int32_t rank = x->type.rank;
        if (rank < 3 || rank != y->type.rank) continue;
        /* y is g's own (a node output), so its index is into g */
        const ir_node *reader = t.last[y->index];
        if (t.count[y->index] != 1 || !reader || !rewrite_is_op(reader, "Conv") || reader->inputs[0] != y) continue;
        const int64_t *pads = zero_spatial_pads(pad, rank);
        if (!pads || !widen_conv_pads((ir_node *)reader, pads, rank)) continue;
        ((ir_node *)reader)->inputs[0] = x;
        y->producer = NULL; /* the Pad is freed below; y is read by nothing now */
        y->producer_output = 0;
        olds[count++] = pad;
    }
    tsr_status *st = NULL;
    if (count) {
        size_t *first_new = malloc((count + 1) * sizeof *first_new);
        if (!first_new) st = TSR_NO_MEMORY();
        for (size_t k = 0; first_new && k <= count; k++) first_new[k] = g->n_nodes;
        if (first_new) st = ir_graph_splice_nodes(g, count, olds, first_new);
        free(first_new);
    }
    free(olds);
    reader_table_free(&t);
    return st;
}
