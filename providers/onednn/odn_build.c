/* Which builder turns a node into steps: the QDQ hook first, for every node,
 * then the op's row of the table (odn_ops.c). The dispatchers below are the
 * rows whose builder depends on the node itself (its output type, a
 * pattern starting at it) or on the CPU. */
#include <string.h>

#include "odn_ops.h"
#include "odn_quant.h"

tsr_status *odn_build_node(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    p->done[index] = true;
    p->building = n;
    bool handled;
    /* int8 fusion and deferred DequantizeLinear outputs (odn_build_qdq.c)
     * come before any op's own builder */
    tsr_status *qs = odn_qdq_build(p, index, &handled);
    if (qs || handled) return qs;
    if (odn_shape_calc_node(p, n)) return odn_build_shape_calc(p, index);
    const odn_op *op = odn_op_find(odn_host->node_op_type(n));
    if (!op || !op->build) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no builder");
    return op->build(p, index);
}

/* A written-out activation (x*Sigmoid(x), HardSwish, Gelu...) is one
 * eltwise when the node starts one nothing absorbed already; a squaring
 * Pow or Mul may start a written-out RMSNorm (odn_fuse_rmsnorm.c). */
tsr_status *odn_build_act_or_binary(odn_plan *p, size_t index) {
    bool handled;
    tsr_status *s = odn_fuse_rmsnorm(p, index, &handled); /* Mul(x, x) */
    if (s || handled) return s;
    s = odn_build_written_act(p, index, &handled);
    return s || handled ? s : odn_build_binary(p, index);
}

tsr_status *odn_build_unary(odn_plan *p, size_t index) {
    odn_eltwise el[2];
    if (odn_eltwise_of(p->nodes[index], el) > 0) return odn_build_eltwise(p, index);
    return odn_node_error(p->nodes[index], TSR_ERR_NOT_SUPPORTED, "no builder");
}

tsr_status *odn_build_act_or_eltwise(odn_plan *p, size_t index) {
    bool handled;
    tsr_status *s = odn_fuse_rmsnorm(p, index, &handled); /* Pow(x, 2) */
    if (s || handled) return s;
    s = odn_build_written_act(p, index, &handled);
    return s || handled ? s : odn_build_unary(p, index);
}

/* bfloat16 MatMul/Gemm have their own builder (odn_build_bf16.c); the
 * output's type decides, as the claim let only all-bf16 nodes through. */
static bool bf16_out(const tsr_node *n) {
    return odn_host->node_output_count(n) && odn_host->value_elem_type(odn_host->node_output(n, 0)) == TSR_BFLOAT16;
}

tsr_status *odn_build_matmul_typed(odn_plan *p, size_t index) {
    return bf16_out(p->nodes[index]) ? odn_build_bf16(p, index) : odn_build_matmul(p, index);
}

tsr_status *odn_build_gemm_typed(odn_plan *p, size_t index) {
    return bf16_out(p->nodes[index]) ? odn_build_bf16(p, index) : odn_build_gemm(p, index);
}

/* Without VNNI oneDNN's int8 sums may saturate unless the weights fit in
 * 7 bits (odn_int8_exact_plan): the claim took only what the float paths
 * compute exactly (odn_build_intgemm.c, odn_build_convint.c). These also
 * build QLinearMatMul/QLinearConv, which use the int8 primitives only with
 * VNNI (odn_qlin_int8_ok) and the float paths otherwise. */
tsr_status *odn_build_matmulinteger(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool int8 = strcmp(odn_host->node_op_type(n), "QLinearMatMul") == 0
        ? odn_qlin_int8_ok(p, n)
        : p->int8_primitives && !odn_i16_intgemm_instead(p, n);
    return int8 ? odn_build_quant_matmul(p, index) : odn_build_intgemm(p, index);
}

tsr_status *odn_build_convinteger(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool int8 = strcmp(odn_host->node_op_type(n), "QLinearConv") == 0 ? odn_qlin_int8_ok(p, n) : p->int8_primitives;
    return int8 ? odn_build_quant_conv(p, index) : odn_build_convint(p, index);
}

/* A LayerNorm written out as ReduceMean/Sub/Pow/... starts at a ReduceMean
 * (odn_fuse_layernorm.c): one layer normalization instead of seven steps. */
tsr_status *odn_build_reducemean(odn_plan *p, size_t index) {
    bool handled;
    tsr_status *s = odn_fuse_layernorm(p, index, &handled);
    return s || handled ? s : odn_build_reduce(p, index);
}
