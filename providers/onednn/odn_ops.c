/* Every ONNX op type the oneDNN provider takes: its claim check and its
 * builder. Claims look a row up for every node of every partition round, so
 * the rows are sorted by strcmp (C-locale `sort` order) for a binary
 * search; a row out of order is never found, and its op's conformance
 * cases then show it declined. */
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_quant.h"

static const odn_op ops[] = {
    {"Abs", odn_claim_eltwise, odn_build_unary},
    {"Add", odn_claim_binary, odn_build_act_or_binary},
    {"AveragePool", odn_claim_pool, odn_build_pool},
    {"BatchNormalization", odn_claim_batchnorm, odn_build_batchnorm},
    {"Cast", odn_dynquant_check, odn_build_cast},
    {"Clip", odn_claim_clip, odn_build_unary},
    {"Concat", odn_claim_concat, odn_build_concat},
    {"Conv", odn_claim_conv, odn_build_conv},
    {"ConvInteger", odn_qconv_check, odn_build_convinteger},
    {"ConvTranspose", odn_claim_deconv, odn_build_deconv},
    {"DepthToSpace", odn_claim_depth_space, odn_build_depth_space}, /* odn_build_depth_space.c */
    {"DequantizeLinear", odn_qdq_check, NULL}, /* odn_qdq_build */
    {"Div", odn_claim_binary, odn_build_act_or_binary},
    {"DynamicQuantizeLinear", odn_dynquant_check, odn_build_dynquant},
    {"Elu", odn_claim_eltwise, odn_build_unary},
    {"Erf", odn_claim_ranked, odn_build_erf},
    {"Exp", odn_claim_eltwise, odn_build_unary}, /* a C loop (odn_loops.c) */
    {"Expand", odn_claim_expand, odn_build_expand},
    {"Flatten", odn_claim_ranked, odn_build_reshape_any},
    {"GRU", odn_rnn_check, odn_build_rnn},
    {"Gelu", odn_claim_eltwise, odn_build_unary},
    {"Gemm", odn_claim_gemm, odn_build_gemm_bn},
    {"GlobalAveragePool", odn_claim_pool, odn_build_pool},
    {"GlobalMaxPool", odn_claim_pool, odn_build_pool},
    {"HardSigmoid", odn_claim_eltwise, odn_build_act_or_eltwise},
    {"HardSwish", odn_claim_eltwise, odn_build_unary},
    {"Identity", odn_claim_ranked, odn_build_reshape},
    {"InstanceNormalization", odn_claim_instnorm, odn_build_instnorm},
    {"LRN", odn_claim_lrn, odn_build_lrn},
    {"LSTM", odn_rnn_check, odn_build_rnn},
    {"LayerNormalization", odn_claim_layernorm, odn_build_layernorm},
    {"LeakyRelu", odn_claim_eltwise, odn_build_unary},
    {"Log", odn_claim_eltwise, odn_build_unary},
    {"LogSoftmax", odn_claim_softmax, odn_build_softmax},
    {"MatMul", odn_claim_matmul, odn_build_matmul_bn},
    {"MatMulInteger", odn_quant_check, odn_build_matmulinteger},
    {"MatMulIntegerToFloat", odn_qop_check, odn_build_qop}, /* com.microsoft: odn_qop*.c */
    {"Max", odn_claim_variadic, odn_build_variadic},
    {"MaxPool", odn_claim_pool, odn_build_pool},
    {"Mean", odn_claim_variadic, odn_build_variadic},
    {"Min", odn_claim_variadic, odn_build_variadic},
    {"Mish", odn_claim_eltwise, odn_build_unary},
    {"Mul", odn_claim_binary, odn_build_act_or_binary},
    {"Neg", odn_claim_eltwise, odn_build_unary},
    {"PRelu", odn_claim_prelu, odn_build_prelu},
    {"Pad", odn_claim_pad, odn_build_pad},
    {"Pow", odn_claim_eltwise, odn_build_act_or_eltwise},
    {"QGemm", odn_qop_check, odn_build_qop},
    {"QLinearAdd", odn_qop_check, odn_build_qop},
    {"QLinearAveragePool", odn_qop_check, odn_build_qop},
    {"QLinearConcat", odn_qop_check, odn_build_qop},
    {"QLinearConv", odn_qconv_check, odn_build_convinteger},
    {"QLinearGlobalAveragePool", odn_qop_check, odn_build_qop},
    {"QLinearLeakyRelu", odn_qop_check, odn_build_qop},
    {"QLinearMatMul", odn_quant_check, odn_build_matmulinteger},
    {"QLinearMul", odn_qop_check, odn_build_qop},
    {"QLinearSigmoid", odn_qop_check, odn_build_qop},
    {"QuantizeLinear", odn_qdq_check, NULL}, /* odn_qdq_build */
    {"RNN", odn_rnn_check, odn_build_rnn},
    {"Reciprocal", odn_claim_eltwise, odn_build_unary},
    {"ReduceL1", odn_claim_reduce, odn_build_reduce},
    {"ReduceL2", odn_claim_reduce, odn_build_reduce},
    {"ReduceLogSum", odn_claim_reduce, odn_build_logsum},
    {"ReduceLogSumExp", odn_claim_reduce, odn_build_logsum},
    {"ReduceMax", odn_claim_reduce, odn_build_reduce_minmax},
    {"ReduceMean", odn_claim_reduce, odn_build_reducemean},
    {"ReduceMin", odn_claim_reduce, odn_build_reduce_minmax},
    {"ReduceProd", odn_claim_reduce, odn_build_reduce},
    {"ReduceSum", odn_claim_reduce, odn_build_reduce},
    {"ReduceSumSquare", odn_claim_reduce, odn_build_reduce},
    {"Relu", odn_claim_eltwise, odn_build_unary},
    {"Reshape", odn_claim_reshape, odn_build_reshape_any},
    {"Resize", odn_claim_resize, odn_build_resize},
    {"Sigmoid", odn_claim_eltwise, odn_build_act_or_eltwise},
    {"Slice", odn_claim_slice, odn_build_slice},
    {"Softmax", odn_claim_softmax, odn_build_softmax},
    {"Softplus", odn_claim_eltwise, odn_build_act_or_eltwise},
    {"SpaceToDepth", odn_claim_depth_space, odn_build_depth_space},
    {"Split", odn_claim_split, odn_build_split},
    {"Sqrt", odn_claim_eltwise, odn_build_unary},
    {"Sub", odn_claim_binary, odn_build_binary},
    {"Sum", odn_claim_variadic, odn_build_variadic},
    {"Tanh", odn_claim_eltwise, odn_build_unary},
    {"Transpose", odn_claim_ranked, odn_build_transpose},
    {"Upsample", odn_claim_upsample, odn_build_resize},
    {"Where", odn_claim_where, odn_build_where}, /* odn_where.c */
};

static int by_name(const void *key, const void *row) { return strcmp(key, ((const odn_op *)row)->op); }

const odn_op *odn_op_find(const char *op_type) {
    return bsearch(op_type, ops, sizeof ops / sizeof ops[0], sizeof ops[0], by_name);
}
