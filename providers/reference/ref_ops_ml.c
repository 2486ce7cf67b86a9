/*
 * Reference kernels for the ai.onnx.ml domain that the conformance suite
 * exercises: Binarizer (here), LabelEncoder (ref_ml_label_encoder.c) and
 * TreeEnsemble (ref_ml_tree_ensemble.c). ArrayFeatureExtractor, which only
 * moves elements, lives with the data-movement kernels (ref_ops_tensor.c,
 * ref_tensor_gather.c).
 */
#include "ref_ml.h"

/* Binarizer: 1 where X > threshold, else 0 (NaN gives 0), in X's type. */
static tsr_status *ref_ml_binarizer(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input X is missing");
    if (!ref_is_float(X->elem_type) && !ref_is_int(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must be numeric (type %d)", (int)X->elem_type);
    double threshold = ref_attr_float(c, "threshold", 0.0f);
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    size_t n = (size_t)ref_numel(X);
    for (size_t i = 0; i < n; i++) ref_store(X->elem_type, Y->data, i, ref_load(X->elem_type, X->data, i) > threshold);
    return NULL;
}

const ref_op ref_ops_ml[] = {
    {"ai.onnx.ml", "Binarizer", 1, ref_ml_binarizer, NULL},
    {"ai.onnx.ml", "LabelEncoder", 1, ref_ml_label_encoder, NULL},
    {"ai.onnx.ml", "TreeEnsemble", 5, ref_ml_tree_ensemble, ref_ml_check_tree_ensemble},
    {NULL, NULL, 0, NULL, NULL},
};
