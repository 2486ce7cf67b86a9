/*
 * Type rules for ops outside the default domain, after the inference
 * functions of ONNX's schemas: ai.onnx.ml (ArrayFeatureExtractor,
 * Binarizer, LabelEncoder, TreeEnsemble), ai.onnx.preview.training
 * (Adagrad, Adam, Momentum), ai.onnx.preview (FlexAttention and its
 * modifier bodies) and com.microsoft's quantized ops that ONNX Runtime's
 * quantizer writes in QOperator format (QLinearAdd & co., after ONNX
 * Runtime's contrib schemas): without their types the QLinearConvs they
 * feed could not be claimed by the oneDNN provider. Rows name their domain (shape_domain_op); the driver looks
 * them up only for nodes of that domain.
 */
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* Same type and shape as input 0. */
static tsr_status *rule_same(shape_ctx *c, const ir_node *n) { return shape_same_as_in(c, n, 0, 0); }

/* ArrayFeatureExtractor: X's type; the last axis becomes the selected
 * indices (as many as Y holds); a 1-D X gives no shape (as in ONNX). */
static tsr_status *rule_array_feature_extractor(shape_ctx *c, const ir_node *n) {
    shape_dims x, y;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &y);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 2) return shape_set_out(c, n, 0, elem, NULL);
    shape_dim count = y.rank > 0 ? shape_known(1) : shape_unknown();
    for (int32_t d = 0; d < y.rank; d++)
        count = shape_is_known(y.dims[d]) ? shape_dim_mul(count, y.dims[d]) : shape_unknown();
    x.dims[x.rank - 1] = count;
    return shape_set_out(c, n, 0, elem, &x);
}

static bool has_attr(const ir_node *n, const char *name) { return shape_attr(n, name) != NULL; }

/* LabelEncoder: X's shape; the type of the values. Version 1 maps strings
 * to int64 and int64 to strings; from version 2 the values_* attribute
 * present says (values_tensor, version 4, first: its tensor's type). */
static tsr_status *rule_label_encoder(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = 0;
    if (shape_opset(n) < 2) {
        int32_t in = shape_in_elem(c, n, 0);
        elem = in == TSR_STRING ? TSR_INT64 : in == TSR_INT64 ? TSR_STRING : 0;
    } else {
        const ir_attr *t = shape_attr(n, "values_tensor");
        if (t && t->type == TSR_ATTR_TENSOR && t->t) elem = t->t->elem_type;
        else if (has_attr(n, "values_strings")) elem = TSR_STRING;
        else if (has_attr(n, "values_int64s")) elem = TSR_INT64;
        else if (has_attr(n, "values_floats")) elem = TSR_FLOAT;
    }
    return shape_set_out_ex(c, n, 0, elem, x.rank >= 0 ? &x : NULL, elem ? SHAPE_ELEM_CERTAIN : 0);
}

/* TreeEnsemble: [N, n_targets] of X's type. */
static tsr_status *rule_tree_ensemble(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank != 2) return shape_err(n, "X has rank %d, not 2", (int)x.rank);
    int64_t targets = shape_attr_int(n, "n_targets", -1);
    out.rank = 2;
    out.dims[0] = x.rank == 2 ? x.dims[0] : shape_unknown();
    out.dims[1] = targets >= 0 ? shape_known(targets) : shape_unknown();
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &out);
}

/* The optimizers: inputs R, T, then `groups` lists of n tensors (X, G, then
 * the optimizer's state lists); outputs the new X list and each state
 * list, each new tensor like the one it replaces. `from` gives, per output
 * list, which input list it replaces. */
static tsr_status *optimizer(shape_ctx *c, const ir_node *n, size_t groups, const size_t *from, size_t n_out_lists) {
    if (n->n_inputs < 2 || (n->n_inputs - 2) % groups) return NULL;
    size_t count = (n->n_inputs - 2) / groups;
    for (size_t l = 0; l < n_out_lists; l++)
        for (size_t k = 0; k < count; k++) TSR_TRY(shape_same_as_in(c, n, l * count + k, 2 + from[l] * count + k));
    return NULL;
}

/* Adagrad: X, G, H lists -> X_new, H_new. */
static tsr_status *rule_adagrad(shape_ctx *c, const ir_node *n) {
    static const size_t from[] = {0, 2};
    return optimizer(c, n, 3, from, 2);
}

/* Adam: X, G, V, H lists -> X_new, V_new, H_new. */
static tsr_status *rule_adam(shape_ctx *c, const ir_node *n) {
    static const size_t from[] = {0, 2, 3};
    return optimizer(c, n, 4, from, 3);
}

/* Momentum: X, G, V lists -> X_new, V_new. */
static tsr_status *rule_momentum(shape_ctx *c, const ir_node *n) {
    static const size_t from[] = {0, 2};
    return optimizer(c, n, 3, from, 2);
}

/* FlexAttention: Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] ->
 * Y [B, Hq, L, Ev] of Q's type. The modifier bodies (score_mod, prob_mod)
 * each take and give the scores [B, Hq, L, S] in the softmax precision:
 * softmax_precision when given, else double for double inputs and float
 * for all others. */
static tsr_status *rule_flex_attention(shape_ctx *c, const ir_node *n) {
    shape_dims q, k, v, y;
    shape_in_shape(c, n, 0, &q);
    shape_in_shape(c, n, 1, &k);
    shape_in_shape(c, n, 2, &v);
    int32_t elem = shape_in_elem(c, n, 0);
    shape_dim u = shape_unknown();
    shape_dim b = q.rank == 4 ? q.dims[0] : u, hq = q.rank == 4 ? q.dims[1] : u, l = q.rank == 4 ? q.dims[2] : u;
    shape_dim s = k.rank == 4 ? k.dims[2] : v.rank == 4 ? v.dims[2] : u;
    y.rank = 4;
    y.dims[0] = b, y.dims[1] = hq, y.dims[2] = l, y.dims[3] = v.rank == 4 ? v.dims[3] : u;
    const ir_attr *prec = shape_attr(n, "softmax_precision");
    shape_feed f;
    memset(&f, 0, sizeof f);
    f.elem = prec && prec->type == TSR_ATTR_INT ? (int32_t)prec->i
        : elem == TSR_DOUBLE                    ? TSR_DOUBLE
        : elem                                  ? TSR_FLOAT
                                                : 0;
    f.shape.rank = 4;
    f.shape.dims[0] = b, f.shape.dims[1] = hq, f.shape.dims[2] = l, f.shape.dims[3] = s;
    static const char *const bodies[] = {"score_mod", "prob_mod"};
    for (size_t i = 0; i < 2; i++) {
        const ir_attr *a = shape_attr(n, bodies[i]);
        if (a && a->type == TSR_ATTR_GRAPH) TSR_TRY(shape_infer_subgraph(c, n, a->g, 1, &f));
    }
    return shape_set_out(c, n, 0, elem, &y);
}

/* QLinearAdd, QLinearMul: A and B (inputs 0 and 3) broadcast, A's type. */
static tsr_status *rule_qlinear_binary(shape_ctx *c, const ir_node *n) {
    shape_dims a, b, y;
    shape_in_shape(c, n, 0, &a);
    shape_in_shape(c, n, 3, &b);
    TSR_TRY(shape_broadcast(c, n, &a, &b, &y));
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &y);
}

/* QLinearAveragePool / QLinearGlobalAveragePool: the float pools' rules
 * in NCHW; channels_last moves C last. */
static tsr_status *rule_qlinear_pool(shape_ctx *c, const ir_node *n) {
    bool global = strcmp(n->op_type, "QLinearGlobalAveragePool") == 0;
    if (!shape_attr_int(n, "channels_last", 0)) return global ? shape_rule_global_pool(c, n) : shape_rule_pool(c, n);
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    if (!global || x.rank < 3) return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), NULL);
    for (int32_t d = 1; d + 1 < x.rank; d++) x.dims[d] = shape_known(1);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x);
}

/* QLinearConcat(Y_scale, Y_zero_point, (X, scale, zero_point)...): the Xs
 * joined along axis, Y_zero_point's type. */
static tsr_status *rule_qlinear_concat(shape_ctx *c, const ir_node *n) {
    int32_t elem = shape_in_elem(c, n, 1);
    shape_dims y, x;
    shape_dims_unknown(&y);
    for (size_t i = 2; i < n->n_inputs; i += 3) {
        shape_in_shape(c, n, i, &x);
        if (!elem) elem = shape_in_elem(c, n, i);
        int32_t axis;
        if (x.rank < 0 || !shape_axis(shape_attr_int(n, "axis", 0), x.rank, &axis) || (y.rank >= 0 && y.rank != x.rank))
            return shape_set_out(c, n, 0, elem, NULL);
        if (y.rank < 0) {
            y = x;
            continue;
        }
        y.dims[axis] = shape_is_known(y.dims[axis]) && shape_is_known(x.dims[axis])
            ? shape_known(y.dims[axis].value + x.dims[axis].value)
            : shape_unknown();
    }
    return shape_set_out(c, n, 0, elem, y.rank >= 0 ? &y : NULL);
}

/* QGemm: [M, N] from A and B with transA/transB; y_zero_point's type, or
 * float when there is no y_scale. */
static tsr_status *rule_qgemm(shape_ctx *c, const ir_node *n) {
    shape_dims a, b, y;
    shape_in_shape(c, n, 0, &a);
    shape_in_shape(c, n, 3, &b);
    int32_t elem = !shape_has_in(n, 7) ? TSR_FLOAT : shape_has_in(n, 8) ? shape_in_elem(c, n, 8) : TSR_UINT8;
    if (a.rank != 2 || b.rank != 2) return shape_set_out(c, n, 0, elem, NULL);
    y.rank = 2;
    y.dims[0] = a.dims[shape_attr_int(n, "transA", 0) ? 1 : 0];
    y.dims[1] = b.dims[shape_attr_int(n, "transB", 0) ? 0 : 1];
    return shape_set_out(c, n, 0, elem, &y);
}

/* MatMulIntegerToFloat, DynamicQuantizeMatMul: float; the shape is left to
 * run time. */
static tsr_status *rule_float_out(shape_ctx *c, const ir_node *n) { return shape_set_out(c, n, 0, TSR_FLOAT, NULL); }

const shape_domain_op shape_ops_domains[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, rule_array_feature_extractor},
    {"ai.onnx.ml", "Binarizer", 1, rule_same},
    {"ai.onnx.ml", "LabelEncoder", 1, rule_label_encoder},
    {"ai.onnx.ml", "TreeEnsemble", 5, rule_tree_ensemble},
    {"ai.onnx.preview.training", "Adagrad", 1, rule_adagrad},
    {"ai.onnx.preview.training", "Adam", 1, rule_adam},
    {"ai.onnx.preview.training", "Momentum", 1, rule_momentum},
    {"ai.onnx.preview", "FlexAttention", 1, rule_flex_attention},
    {"com.microsoft", "DynamicQuantizeMatMul", 1, rule_float_out},
    {"com.microsoft", "MatMulIntegerToFloat", 1, rule_float_out},
    {"com.microsoft", "QGemm", 1, rule_qgemm},
    {"com.microsoft", "QLinearAdd", 1, rule_qlinear_binary},
    {"com.microsoft", "QLinearAveragePool", 1, rule_qlinear_pool},
    {"com.microsoft", "QLinearConcat", 1, rule_qlinear_concat},
    {"com.microsoft", "QLinearGlobalAveragePool", 1, rule_qlinear_pool},
    {"com.microsoft", "QLinearLeakyRelu", 1, rule_same},
    {"com.microsoft", "QLinearMul", 1, rule_qlinear_binary},
    {"com.microsoft", "QLinearSigmoid", 1, rule_same},
    {"com.microsoft", "QLinearSoftmax", 1, rule_same},
};
const size_t shape_ops_domains_count = sizeof shape_ops_domains / sizeof shape_ops_domains[0];
