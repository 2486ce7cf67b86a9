/*
 * Private to the reference provider's ai.onnx.ml kernels (ref_ops_ml.c and
 * ref_ml_*.c).
 */
#ifndef TESSERA_REF_ML_H
#define TESSERA_REF_ML_H

#include "ref.h"

tsr_status *ref_ml_label_encoder(ref_ctx *c);
tsr_status *ref_ml_tree_ensemble(ref_ctx *c);
int ref_ml_check_tree_ensemble(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* Applies a tree ensemble's post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC,
 * 3 SOFTMAX_ZERO, 4 PROBIT) to one row of n scores, in place. */
void ref_ml_post_transform(int64_t transform, double *row, size_t n);

#endif
