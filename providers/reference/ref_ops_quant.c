/*
 * The reference provider's quantization operators: the table that
 * ref_registry.c picks up, and the claim-time checks. The kernels live in
 * ref_quant_linear.c, ref_quant_matmul.c and ref_quant_conv.c; what they
 * share is in ref_quant.h.
 */
#include <stdio.h>
#include <string.h>

#include "ref_quant.h"

/* Element type of node input i, 0 when absent or not yet known. */
static int32_t input_type(const tsr_host_api *h, const tsr_node *node, size_t i) {
    const tsr_value_info *v = tsr_util_node_input(h, node, i);
    return v ? h->value_elem_type(v) : 0;
}

static int decline_type(const tsr_host_api *h, const tsr_node *node, size_t i, int32_t t, char *why, size_t why_size) {
    snprintf(why, why_size, "%s input %zu of element type %s is not supported", h->node_op_type(node), i,
             rq_type_name(t));
    return TSR_DECLINE_TYPE;
}

static bool is_8bit_int(int32_t t) { return t == TSR_INT8 || t == TSR_UINT8; }

static bool is_qmatmul_type(int32_t t) {
    return is_8bit_int(t) || t == TSR_FLOAT8E4M3FN || t == TSR_FLOAT8E4M3FNUZ || t == TSR_FLOAT8E5M2 ||
        t == TSR_FLOAT8E5M2FNUZ;
}

/* Declines when any of `count` listed inputs has a known type that
 * `ok` rejects. */
static int check_input_types(const tsr_host_api *h, const tsr_node *node, const size_t *inputs, size_t count,
                             bool (*ok)(int32_t), char *why, size_t why_size) {
    for (size_t j = 0; j < count; j++) {
        int32_t t = input_type(h, node, inputs[j]);
        if (t && !ok(t)) return decline_type(h, node, inputs[j], t, why, why_size);
    }
    return 0;
}

static int64_t attr_int(const tsr_host_api *h, const tsr_node *node, const char *name) {
    const tsr_attr *a = h->node_attr_find(node, name);
    return a ? h->attr_int(a) : 0;
}

static bool is_quantize_input(int32_t t) { return ref_is_float(t) || t == TSR_INT32; }
static bool is_dequantize_input(int32_t t) { return rq_is_quant_type(t) || t == TSR_INT32; }

static int check_quantize(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t x[] = {0}, zp[] = {2};
    int r = check_input_types(h, node, x, 1, is_quantize_input, why, why_size);
    if (!r) r = check_input_types(h, node, zp, 1, rq_is_quant_type, why, why_size);
    if (r) return r;
    int64_t opset = h->node_opset(node);
    int64_t dtype = opset >= 21 ? attr_int(h, node, "output_dtype") : 0;
    if (dtype && !rq_is_quant_type((int32_t)dtype)) {
        snprintf(why, why_size, "QuantizeLinear to %s is not supported", rq_type_name((int32_t)dtype));
        return TSR_DECLINE_ATTRIBUTE;
    }
    int64_t precision = opset >= 23 ? attr_int(h, node, "precision") : 0;
    if (precision && !rq_is_float_out_type((int32_t)precision)) {
        snprintf(why, why_size, "QuantizeLinear precision %s is not supported", rq_type_name((int32_t)precision));
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

static int check_dequantize(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t x[] = {0, 2}, scale[] = {1};
    int r = check_input_types(h, node, x, 2, is_dequantize_input, why, why_size);
    if (!r) r = check_input_types(h, node, scale, 1, rq_is_scale_type, why, why_size);
    if (r) return r;
    int64_t dtype = h->node_opset(node) >= 23 ? attr_int(h, node, "output_dtype") : 0;
    if (dtype && !rq_is_float_out_type((int32_t)dtype)) {
        snprintf(why, why_size, "DequantizeLinear to %s is not supported", rq_type_name((int32_t)dtype));
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

static bool is_float32(int32_t t) { return t == TSR_FLOAT; }

static int check_dynamic_quantize(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t x[] = {0};
    return check_input_types(h, node, x, 1, is_float32, why, why_size);
}

/* MatMulInteger and ConvInteger: inputs 0-3 are 8-bit integers. */
static int check_integer_op(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t ins[] = {0, 1, 2, 3};
    return check_input_types(h, node, ins, 4, is_8bit_int, why, why_size);
}

static int check_qlinear_matmul(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t q[] = {0, 2, 3, 5, 7}, s[] = {1, 4, 6};
    int r = check_input_types(h, node, q, 5, is_qmatmul_type, why, why_size);
    if (!r) r = check_input_types(h, node, s, 3, rq_is_float_out_type, why, why_size);
    return r;
}

static int check_qlinear_conv(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    static const size_t q[] = {0, 2, 3, 5, 7}, s[] = {1, 4, 6};
    int r = check_input_types(h, node, q, 5, is_8bit_int, why, why_size);
    if (!r) r = check_input_types(h, node, s, 3, rq_is_float_out_type, why, why_size);
    return r;
}

/* min_opset is where the operator first appears in ai.onnx; the kernels
 * read each attribute only from the opset that introduced it. */
const ref_op ref_ops_quant[] = {
    {"", "QuantizeLinear", 10, ref_quant_quantize_linear, check_quantize},
    {"", "DequantizeLinear", 10, ref_quant_dequantize_linear, check_dequantize},
    {"", "DynamicQuantizeLinear", 11, ref_quant_dynamic_quantize_linear, check_dynamic_quantize},
    {"", "MatMulInteger", 10, ref_quant_matmul_integer, check_integer_op},
    {"", "ConvInteger", 10, ref_quant_conv_integer, check_integer_op},
    {"", "QLinearMatMul", 10, ref_quant_qlinear_matmul, check_qlinear_matmul},
    {"", "QLinearConv", 10, ref_quant_qlinear_conv, check_qlinear_conv},
    {NULL, NULL, 0, NULL, NULL},
};
