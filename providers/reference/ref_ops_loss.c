/*
 * Loss functions for the reference provider: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss.
 *
 * Both read an input of shape (N, C, d1..dk) and a target of shape
 * (N, d1..dk) holding class indices. SoftmaxCrossEntropyLoss first turns
 * its scores into log-probabilities along axis 1 (and may output them), then
 * both take loss[n, d] = -logp[n, target[n, d], d] * weight[target[n, d]].
 * Elements whose target equals ignore_index contribute nothing and weigh
 * nothing, so "mean" divides by the summed weight of the rest (0/0 is NaN,
 * as in the ONNX reference and PyTorch).
 *
 * The work goes one sample (a C x D block) at a time in double, so memory
 * stays bounded by one sample whatever N is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

typedef enum loss_reduction { LOSS_NONE, LOSS_SUM, LOSS_MEAN } loss_reduction;

/* a * b into *out; false when it would not fit in int64. */
static bool mul_fits(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return false;
    if (a != 0 && b > INT64_MAX / a) return false;
    *out = a * b;
    return true;
}

static tsr_status *read_reduction(ref_ctx *c, loss_reduction *out) {
    const char *r = ref_attr_str(c, "reduction", "mean");
    if (strcmp(r, "none") == 0) *out = LOSS_NONE;
    else if (strcmp(r, "sum") == 0) *out = LOSS_SUM;
    else if (strcmp(r, "mean") == 0) *out = LOSS_MEAN;
    else return ref_err(c, TSR_ERR_INVALID_MODEL, "reduction '%s' is not one of 'none', 'sum', 'mean'", r);
    return NULL;
}

/* Checks input, target and weight against each other; fills N, C and D
 * (the product of the trailing dimensions). */
static tsr_status *check_shapes(ref_ctx *c, const tsr_tensor *X, const tsr_tensor *T, const tsr_tensor *W, int64_t *n,
                                int64_t *cls, int64_t *d) {
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input has element type %d, not a float type", (int)X->elem_type);
    if (T->elem_type != TSR_INT32 && T->elem_type != TSR_INT64)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "target has element type %d, not int32 or int64",
                       (int)T->elem_type);
    if (X->rank < 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input has rank %d; it needs (N, C, ...)", (int)X->rank);
    if (T->rank != X->rank - 1 || T->dims[0] != X->dims[0])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "target must have the shape of input without its class axis");
    int64_t trailing = 1;
    for (int32_t i = 2; i < X->rank; i++) {
        if (T->dims[i - 1] != X->dims[i])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "target dimension %d is %lld, input's is %lld", (int)(i - 1),
                           (long long)T->dims[i - 1], (long long)X->dims[i]);
        if (!mul_fits(trailing, X->dims[i], &trailing))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input shape is too large");
    }
    int64_t block;
    if (!mul_fits(trailing, X->dims[1], &block) || (uint64_t)block > SIZE_MAX / sizeof(double))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input shape is too large");
    if (W) {
        if (W->rank != 1 || W->dims[0] != X->dims[1])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "weight must have shape (C) = (%lld)", (long long)X->dims[1]);
        if (!ref_is_float(W->elem_type))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "weight has element type %d, not a float type",
                           (int)W->elem_type);
    }
    *n = X->dims[0];
    *cls = X->dims[1];
    *d = trailing;
    return NULL;
}

/* In place: each of the d columns of a (cls x d) block becomes its
 * log-softmax (shifted by the column's maximum so exp cannot overflow). */
static void log_softmax_columns(double *b, int64_t cls, int64_t d) {
    for (int64_t j = 0; j < d; j++) {
        double mx = -INFINITY;
        for (int64_t k = 0; k < cls; k++)
            if (b[k * d + j] > mx) mx = b[k * d + j];
        double sum = 0;
        for (int64_t k = 0; k < cls; k++) sum += exp(b[k * d + j] - mx);
        double lse = mx + log(sum);
        for (int64_t k = 0; k < cls; k++) b[k * d + j] -= lse;
    }
}

static tsr_status *loss_run(ref_ctx *c, bool softmax) {
    const tsr_tensor *X = ref_in(c, 0), *T = ref_in(c, 1), *W = ref_in(c, 2);
    if (!X || !T) return ref_err(c, TSR_ERR_INVALID_MODEL, "needs an input and a target");
    loss_reduction red = LOSS_MEAN;
    int64_t n = 0, cls = 0, d = 0;
    tsr_status *st = read_reduction(c, &red);
    if (st || (st = check_shapes(c, X, T, W, &n, &cls, &d))) return st;
    bool has_ignore = ref_attr_has(c, "ignore_index");
    int64_t ignore = ref_attr_int(c, "ignore_index", 0);

    tsr_tensor *L, *LP = NULL;
    if (red == LOSS_NONE) st = ref_out(c, 0, X->elem_type, T->rank, T->dims, &L);
    else st = ref_out(c, 0, X->elem_type, 0, NULL, &L);
    if (st) return st;
    if (softmax && ref_out_wanted(c, 1) && (st = ref_out(c, 1, X->elem_type, X->rank, X->dims, &LP))) return st;

    size_t block = (size_t)(cls * d);
    double *b = malloc((block ? block : 1) * sizeof *b);
    if (!b) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    double total = 0, weight_sum = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t base = (size_t)i * block;
        for (size_t k = 0; k < block; k++) b[k] = ref_load(X->elem_type, X->data, base + k);
        if (softmax) {
            log_softmax_columns(b, cls, d);
            if (LP)
                for (size_t k = 0; k < block; k++) ref_store(LP->elem_type, LP->data, base + k, b[k]);
        }
        for (int64_t j = 0; j < d; j++) {
            size_t at = (size_t)(i * d + j);
            int64_t t = ref_load_i64(T->elem_type, T->data, at);
            double loss = 0, w = 0;
            if (!has_ignore || t != ignore) {
                if (t < 0 || t >= cls) {
                    free(b);
                    return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "target %lld at element %zu is outside [0, %lld)",
                                   (long long)t, at, (long long)cls);
                }
                w = W ? ref_load(W->elem_type, W->data, (size_t)t) : 1.0;
                /* 0 * -inf would be NaN: a zero weight means "no loss". */
                loss = w == 0 ? 0 : -b[t * d + j] * w;
            }
            if (red == LOSS_NONE) ref_store(L->elem_type, L->data, at, loss);
            total += loss;
            weight_sum += w;
        }
    }
    free(b);
    if (red == LOSS_SUM) ref_store(L->elem_type, L->data, 0, total);
    else if (red == LOSS_MEAN) ref_store(L->elem_type, L->data, 0, total / weight_sum);
    return NULL;
}

static tsr_status *ref_loss_nll_loss(ref_ctx *c) { return loss_run(c, false); }
static tsr_status *ref_loss_softmax_cross_entropy(ref_ctx *c) { return loss_run(c, true); }

/* Declines element types the kernel does not compute in: the scores and
 * weight are float types, the target int32 or int64. */
static int check_loss(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    size_t n = h->node_input_count(node);
    for (size_t i = 0; i < n && i < 3; i++) {
        const tsr_value_info *v = h->node_input(node, i);
        int32_t t = v ? h->value_elem_type(v) : 0;
        if (t == 0) continue;
        bool ok = i == 1 ? (t == TSR_INT32 || t == TSR_INT64) : ref_is_float(t);
        if (!ok) {
            snprintf(why, why_size, "%s input %zu of element type %d is not implemented", h->node_op_type(node), i,
                     (int)t);
            return TSR_DECLINE_TYPE;
        }
    }
    return 0;
}

const ref_op ref_ops_loss[] = {{"", "NegativeLogLikelihoodLoss", 12, ref_loss_nll_loss, check_loss},
                               {"", "SoftmaxCrossEntropyLoss", 12, ref_loss_softmax_cross_entropy, check_loss},
                               {NULL, NULL, 0, NULL, NULL}};
