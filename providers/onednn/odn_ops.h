/* The oneDNN provider's op table (odn_ops.c): one row per ONNX op type it
 * claims, naming the claim check and the builder, so the claim path
 * (odn_claim_check) and the plan (odn_build_node) read one list. */
#ifndef TESSERA_ODN_OPS_H
#define TESSERA_ODN_OPS_H

#include "odn.h"

typedef struct odn_op {
    const char *op;
    /* 0 when the node is one we compute exactly; otherwise a
     * tsr_decline_reason with `why` filled. Runs for every node of every
     * claim, after the domain check. */
    int (*check)(const tsr_node *n, char *why, size_t why_size);
    /* Turns node `index` (and what it absorbs) into steps; runs after the
     * QDQ hook (odn_qdq_build). NULL where that hook builds every node of
     * the op. */
    tsr_status *(*build)(odn_plan *p, size_t index);
} odn_op;

/* The row of `op_type` (a default-domain op), or NULL when oneDNN has none. */
const odn_op *odn_op_find(const char *op_type);

/* Claim checks of float ops (odn_claim.c): each checks the node's operand
 * types (float32, or float16 computed in float32) and then its own
 * attributes and shapes. */
int odn_claim_conv(const tsr_node *n, char *why, size_t size);
int odn_claim_deconv(const tsr_node *n, char *why, size_t size);
int odn_claim_matmul(const tsr_node *n, char *why, size_t size); /* bfloat16 too */
int odn_claim_gemm(const tsr_node *n, char *why, size_t size);   /* bfloat16 too */
int odn_claim_pool(const tsr_node *n, char *why, size_t size);
int odn_claim_binary(const tsr_node *n, char *why, size_t size);
int odn_claim_variadic(const tsr_node *n, char *why, size_t size); /* Sum, Mean, Max, Min */
/* Unary ops oneDNN's eltwise computes (odn_eltwise_of), Clip among them. */
int odn_claim_eltwise(const tsr_node *n, char *why, size_t size);
int odn_claim_clip(const tsr_node *n, char *why, size_t size);
int odn_claim_reshape(const tsr_node *n, char *why, size_t size);
/* Identity, Flatten, Transpose, Erf: the input's rank must be known. */
int odn_claim_ranked(const tsr_node *n, char *why, size_t size);
int odn_claim_reduce(const tsr_node *n, char *why, size_t size); /* Reduce*, ReduceLogSum* */
int odn_claim_pad(const tsr_node *n, char *why, size_t size);
int odn_claim_slice(const tsr_node *n, char *why, size_t size);
int odn_claim_instnorm(const tsr_node *n, char *why, size_t size);
int odn_claim_lrn(const tsr_node *n, char *why, size_t size);
int odn_claim_resize(const tsr_node *n, char *why, size_t size);
int odn_claim_upsample(const tsr_node *n, char *why, size_t size);
int odn_claim_split(const tsr_node *n, char *why, size_t size);
int odn_claim_concat(const tsr_node *n, char *why, size_t size);
int odn_claim_batchnorm(const tsr_node *n, char *why, size_t size);
int odn_claim_softmax(const tsr_node *n, char *why, size_t size); /* Softmax, LogSoftmax */
int odn_claim_layernorm(const tsr_node *n, char *why, size_t size);
int odn_claim_prelu(const tsr_node *n, char *why, size_t size);
/* Where (bool condition, float32 operands) as a C loop (odn_where.c). */
int odn_claim_where(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_where(odn_plan *p, size_t index);
/* DepthToSpace and SpaceToDepth as one 6-D reorder (odn_build_depth_space.c). */
int odn_claim_depth_space(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_depth_space(odn_plan *p, size_t index);

/* Builders that pick among others by what the node turns out to be
 * (odn_build.c). */
/* Mul, Div, Add: a written-out activation starting here, else a binary. */
tsr_status *odn_build_act_or_binary(odn_plan *p, size_t index);
/* Pow, Sigmoid, HardSigmoid: a written-out activation, else an eltwise. */
tsr_status *odn_build_act_or_eltwise(odn_plan *p, size_t index);
/* Other unary ops: an eltwise where odn_eltwise_of maps the node. */
tsr_status *odn_build_unary(odn_plan *p, size_t index);
/* MatMul, Gemm: the bfloat16 builder by output type, else the float one. */
tsr_status *odn_build_matmul_typed(odn_plan *p, size_t index);
tsr_status *odn_build_gemm_typed(odn_plan *p, size_t index);
/* MatMul, Gemm of constant weights with a BatchNormalization after: that
 * folded into the weights (odn_build_bn1d.c); else the two above. */
tsr_status *odn_build_matmul_bn(odn_plan *p, size_t index);
tsr_status *odn_build_gemm_bn(odn_plan *p, size_t index);
/* MatMulInteger, ConvInteger: in float where int8 sums are not exact
 * (odn_int8_exact), else oneDNN's int8 primitives. */
tsr_status *odn_build_matmulinteger(odn_plan *p, size_t index);
tsr_status *odn_build_convinteger(odn_plan *p, size_t index);
/* ReduceMean: a written-out LayerNorm starting here, else a reduction. */
tsr_status *odn_build_reducemean(odn_plan *p, size_t index);
tsr_status *odn_build_reduce_minmax(odn_plan *p, size_t index); /* ReduceMax, ReduceMin: odn_build_minmax.c */
/* The com.microsoft QOperator ops (odn_qop.c, odn_qop_gemm.c): whether an
 * op type is one of them (a row claimed only in that domain), their claim
 * check and their builder. */
bool odn_qop_is_ms(const char *op_type);
int odn_qop_check(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_qop(odn_plan *p, size_t index);
/* Reshape and Flatten: 8-bit data (whose claim odn_qop_q8_view allows) as
 * a view of its buffer, else odn_build_reshape. */
bool odn_qop_q8_view(const tsr_node *n);
tsr_status *odn_build_reshape_any(odn_plan *p, size_t index);

#endif
