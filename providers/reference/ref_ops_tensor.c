/*
 * The reference provider's shape and data-movement operators: the table
 * that ref_registry.c lists. The kernels live in ref_tensor_*.c, one file
 * per group of ops; ref_tensor_util.c holds what they share (element moves,
 * the view engine, the claim-time checks).
 */

#include <stddef.h>

#include "ref_tensor.h"

/* min_opset is where the operator (in the form these kernels implement)
 * first appears in its domain; every later version is covered. */
const ref_op ref_ops_tensor[] = {
    {"", "Identity", 1, ref_tensor_identity, ref_tensor_check_movable},
    {"", "Reshape", 1, ref_tensor_reshape, ref_tensor_check_movable},
    {"", "Flatten", 1, ref_tensor_flatten, ref_tensor_check_movable},
    {"", "Squeeze", 1, ref_tensor_squeeze, ref_tensor_check_movable},
    {"", "Unsqueeze", 1, ref_tensor_unsqueeze, ref_tensor_check_movable},
    {"", "Shape", 1, ref_tensor_shape, NULL},
    {"", "Size", 1, ref_tensor_size, NULL},
    {"", "Transpose", 1, ref_tensor_transpose, ref_tensor_check_movable},
    {"", "DepthToSpace", 1, ref_tensor_depth_to_space, ref_tensor_check_movable},
    {"", "SpaceToDepth", 1, ref_tensor_space_to_depth, ref_tensor_check_movable},
    {"", "Concat", 1, ref_tensor_concat, ref_tensor_check_movable},
    {"", "Split", 1, ref_tensor_split, ref_tensor_check_movable},
    {"", "Slice", 1, ref_tensor_slice, ref_tensor_check_movable},
    {"", "Expand", 8, ref_tensor_expand, ref_tensor_check_movable},
    {"", "Tile", 1, ref_tensor_tile, ref_tensor_check_movable},
    {"", "Pad", 1, ref_tensor_pad, ref_tensor_check_movable},
    {"", "Gather", 1, ref_tensor_gather, ref_tensor_check_movable},
    {"", "GatherElements", 11, ref_tensor_gather_elements, ref_tensor_check_movable},
    {"", "GatherND", 11, ref_tensor_gather_nd, ref_tensor_check_movable},
    {"", "Scatter", 9, ref_tensor_scatter_elements, ref_tensor_check_scatter},
    {"", "ScatterElements", 11, ref_tensor_scatter_elements, ref_tensor_check_scatter},
    {"", "ScatterND", 11, ref_tensor_scatter_nd, ref_tensor_check_scatter},
    {"", "Constant", 1, ref_tensor_constant, ref_tensor_check_constant},
    {"", "ConstantOfShape", 9, ref_tensor_constant_of_shape, NULL},
    {"", "EyeLike", 9, ref_tensor_eye_like, ref_tensor_check_movable},
    {"", "Range", 11, ref_tensor_range, ref_tensor_check_numeric},
    {"", "OneHot", 9, ref_tensor_one_hot, ref_tensor_check_movable},
    {"", "Trilu", 14, ref_tensor_trilu, ref_tensor_check_movable},
    {"", "CumSum", 11, ref_tensor_cumsum, ref_tensor_check_numeric},
    {"", "CumProd", 26, ref_tensor_cumprod, ref_tensor_check_numeric},
    {"", "CenterCropPad", 18, ref_tensor_center_crop_pad, ref_tensor_check_movable},
    {"", "TensorScatter", 24, ref_tensor_tensor_scatter, ref_tensor_check_movable},
    {"", "Unique", 11, ref_tensor_unique, ref_tensor_check_movable},
    {"", "NonZero", 9, ref_tensor_nonzero, ref_tensor_check_movable},
    {"", "Compress", 9, ref_tensor_compress, ref_tensor_check_movable},
    {"", "ReverseSequence", 10, ref_tensor_reverse_sequence, ref_tensor_check_movable},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, ref_tensor_array_feature_extractor, ref_tensor_check_movable},
    {NULL, NULL, 0, NULL, NULL},
};
