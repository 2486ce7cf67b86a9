/*
 * The reference provider's neural-network operators: the table that
 * ref_registry.c lists. The kernels live in ref_nn_*.c, one file per
 * family; ref_nn_util.c holds what they share (working buffers, GEMM).
 */
#include <stddef.h>

#include "ref_nn.h"

/* min_opset is where the operator (in the form these kernels implement)
 * first appears in ai.onnx; every later version is covered. */
const ref_op ref_ops_nn[] = {
    {"", "Conv", 1, ref_nn_conv, ref_nn_check_conv},
    {"", "ConvTranspose", 1, ref_nn_conv_transpose, ref_nn_check_conv},
    {"", "MatMul", 1, ref_nn_matmul, ref_nn_check_matmul},
    {"", "Gemm", 1, ref_nn_gemm, ref_nn_check_matmul},
    {"", "MaxPool", 1, ref_nn_maxpool, ref_nn_check_pool},
    {"", "AveragePool", 1, ref_nn_avgpool, ref_nn_check_pool},
    {"", "LpPool", 1, ref_nn_lppool, ref_nn_check_pool},
    {"", "GlobalMaxPool", 1, ref_nn_global_maxpool, ref_nn_check_pool},
    {"", "GlobalAveragePool", 1, ref_nn_global_avgpool, ref_nn_check_pool},
    {"", "GlobalLpPool", 1, ref_nn_global_lppool, ref_nn_check_pool},
    {"", "BatchNormalization", 1, ref_nn_batchnorm, ref_check_float},
    {"", "LayerNormalization", 17, ref_nn_layernorm, ref_check_float},
    {"", "InstanceNormalization", 1, ref_nn_instancenorm, ref_check_float},
    {"", "GroupNormalization", 18, ref_nn_groupnorm, ref_check_float},
    {"", "LRN", 1, ref_nn_lrn, ref_check_float},
    {"", "Resize", 10, ref_nn_resize, ref_nn_check_numeric},
    {"", "Upsample", 1, ref_nn_upsample, ref_nn_check_numeric},
    {"", "Dropout", 1, ref_nn_dropout, ref_check_float},
    {NULL, NULL, 0, NULL, NULL},
};
