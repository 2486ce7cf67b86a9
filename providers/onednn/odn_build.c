/* Which builder turns a node into steps. */
#include <string.h>

#include "odn_quant.h"

tsr_status *odn_build_node(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    const char *op = odn_host->node_op_type(n);
    odn_eltwise el[2];
    p->done[index] = true;
    bool handled;
    tsr_status *qs = odn_qdq_build(p, index, &handled); /* QDQ: odn_build_qdq.c */
    if (qs || handled) return qs;
    if (strcmp(op, "Mul") == 0 || strcmp(op, "Pow") == 0 || strcmp(op, "Div") == 0 || strcmp(op, "Sigmoid") == 0 ||
        strcmp(op, "HardSigmoid") == 0 || strcmp(op, "Add") == 0) {
        tsr_status *as = odn_build_written_act(p, index, &handled);
        if (as || handled) return as;
    }
    if ((strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0) && odn_host->node_output_count(n) &&
        odn_host->value_elem_type(odn_host->node_output(n, 0)) == TSR_BFLOAT16)
        return odn_build_bf16(p, index);
    if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0 || strcmp(op, "RNN") == 0) return odn_build_rnn(p, index);
    if (strcmp(op, "Conv") == 0) return odn_build_conv(p, index);
    if (strcmp(op, "ConvTranspose") == 0) return odn_build_deconv(p, index);
    if (strcmp(op, "MatMul") == 0) return odn_build_matmul(p, index);
    if (strcmp(op, "Gemm") == 0) return odn_build_gemm(p, index);
    if (strcmp(op, "MatMulInteger") == 0 && !odn_int8_exact()) return odn_build_intgemm(p, index);
    if (strcmp(op, "MatMulInteger") == 0 || strcmp(op, "QLinearMatMul") == 0) return odn_build_quant_matmul(p, index);
    if (strcmp(op, "DynamicQuantizeLinear") == 0) return odn_build_dynquant(p, index);
    if (strcmp(op, "Cast") == 0) return odn_build_cast(p, index);
    if (strcmp(op, "ConvInteger") == 0 && !odn_int8_exact()) return odn_build_convint(p, index);
    if (strcmp(op, "ConvInteger") == 0 || strcmp(op, "QLinearConv") == 0) return odn_build_quant_conv(p, index);
    if (strstr(op, "Pool")) return odn_build_pool(p, index);
    if (strcmp(op, "BatchNormalization") == 0) return odn_build_batchnorm(p, index);
    if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0) return odn_build_softmax(p, index);
    if (strcmp(op, "LayerNormalization") == 0) return odn_build_layernorm(p, index);
    if (strcmp(op, "InstanceNormalization") == 0) return odn_build_instnorm(p, index);
    if (strcmp(op, "Pad") == 0) return odn_build_pad(p, index);
    if (strcmp(op, "Slice") == 0) return odn_build_slice(p, index);
    if (strcmp(op, "Reshape") == 0 || strcmp(op, "Flatten") == 0 || strcmp(op, "Identity") == 0)
        return odn_build_reshape(p, index);
    if (strcmp(op, "Transpose") == 0) return odn_build_transpose(p, index);
    if (strcmp(op, "Erf") == 0) return odn_build_erf(p, index);
    if (strcmp(op, "Concat") == 0) return odn_build_concat(p, index);
    if (strcmp(op, "Split") == 0) return odn_build_split(p, index);
    if (strcmp(op, "ReduceMean") == 0) {
        tsr_status *ls = odn_fuse_layernorm(p, index, &handled);
        if (ls || handled) return ls;
    }
    if (odn_reduce_known(op)) return odn_build_reduce(p, index);
    if (odn_logsum_known(op)) return odn_build_logsum(p, index);
    if (strcmp(op, "LRN") == 0) return odn_build_lrn(p, index);
    if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0) return odn_build_resize(p, index);
    if (odn_binary_alg(op)) return odn_build_binary(p, index);
    if (odn_eltwise_of(n, el) > 0) return odn_build_eltwise(p, index);
    return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no builder");
}
