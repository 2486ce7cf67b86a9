/* The low-precision builders: int8 (odn_build_quant.c: MatMulInteger,
 * QLinearMatMul; odn_build_qconv.c: ConvInteger, QLinearConv) and bfloat16
 * (odn_build_bf16.c: MatMul, Gemm), and the int8 helpers. The int8 C
 * loops read zero points and scales through the memories' handles at run
 * time, since the ONNX cases feed them as inputs. */
#ifndef TESSERA_ODN_QUANT_H
#define TESSERA_ODN_QUANT_H

#include "odn.h"
#include "odn_iwino_f23.h"

tsr_status *odn_build_quant_conv(odn_plan *p, size_t index);
/* MatMulInteger through the float packed GEMM on CPUs without VNNI
 * (odn_build_intgemm.c): its claim check and builder. */
int odn_intgemm_check(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_intgemm(odn_plan *p, size_t index);
/* Shared by those two (odn_int_float.c): a step writing float(src) - zero
 * point (input 2 of n, read at run time) into dst; one rounding the float
 * result src back to int32 into dst; and quantize_dynamic's Cast to float
 * when it alone reads y (its output value, *cast set), else NULL. */
tsr_status *odn_int_widen_step(odn_plan *p, const tsr_node *n, dnnl_memory_t src, int32_t type, size_t count,
                               dnnl_memory_t dst);
tsr_status *odn_int_narrow_step(odn_plan *p, const tsr_node *n, size_t count, dnnl_memory_t src, dnnl_memory_t dst);
odn_value *odn_int_float_reader(odn_plan *p, const odn_value *y, const tsr_node **cast);
/* ConvInteger as a float convolution on CPUs without VNNI
 * (odn_build_convint.c). */
tsr_status *odn_build_convint(odn_plan *p, size_t index);
int odn_qconv_check(const tsr_node *n, char *why, size_t size);
/* QLinearConv/QLinearMatMul on those float paths (odn_qlinear_float.c):
 * how many passes keep the float sums of constant weights w (less zw, per
 * output channel: w's dim 0 when `conv`, else its last) exact: 1, 2 (the
 * weights split as 16 * hi + lo, lo = odn_qlin_split_lo(w - zw)), 0 none;
 * and the loop adding the bias and requantizing the float accumulator
 * `acc` (outer x channels * passes x inner; when split, each group's
 * per_group channels hi then lo) into vy, ONNX's formula. */
int odn_qlin_passes(const tsr_tensor *w, const tsr_tensor *zw, bool conv);
int32_t odn_qlin_split_lo(int32_t v);
tsr_status *odn_qlin_requant_step(odn_plan *p, const tsr_node *n, bool conv, int64_t outer, int64_t channels,
                                  int64_t inner, int64_t per_group, int passes, dnnl_memory_t acc, odn_value *vy);
/* Whether QLinearConv/QLinearMatMul node n uses oneDNN's int8 primitives
 * in plan p (with VNNI only). */
bool odn_qlin_int8_ok(const odn_plan *p, const tsr_node *n);
/* bfloat16 MatMul/Gemm: claim check, builder, and whether the CPU has
 * native bf16 (avx512_core_bf16 or later). */
int odn_bf16_check(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_bf16(odn_plan *p, size_t index);
bool odn_bf16_native(void);
/* True where oneDNN's int8 kernels sum exactly (VNNI); int8 ops are declined elsewhere. */
bool odn_int8_exact(void);
/* True where they sum exactly for every int8 op of plan `p`: with VNNI, or
 * when all its weights are constant int8 within [-64, 64] (odn_quant_util.c). */
bool odn_int8_exact_plan(const odn_plan *p);

/* The handle of `m`, or NULL. */
void *odn_q_handle(dnnl_memory_t m);
/* Element i of a memory holding TSR_UINT8/INT8/INT32/FLOAT16/FLOAT values,
 * as a double; 0 when `m` is NULL. */
double odn_q_value(dnnl_memory_t m, int32_t type, size_t i);
/* `v` rounded to float32 or (TSR_FLOAT16) to float16: products and
 * quotients of scales round in the scales' own type, as ONNX's do. */
double odn_q_round_prec(int32_t type, double v);
/* Rounds q half to even, adds zp, saturates to uint8/int8 and stores
 * element i of y: ONNX's order (oneDNN's own output zero point is added
 * before rounding, which differs on ties). */
void odn_q_store(int32_t y_type, void *y, size_t i, double q, double zp);
/* uint8 b as int8 b - 128. */
void odn_q_shift_u8(const uint8_t *src, int8_t *dst, size_t count);
/* Memory of input k's plain data and its type; NULL and 0 when absent. */
tsr_status *odn_q_input(odn_plan *p, const tsr_node *n, size_t k, dnnl_memory_t *m, int32_t *type);
/* A one-element s32 memory the plan owns (a runtime zero point). */
tsr_status *odn_q_s32_scalar(odn_plan *p, const tsr_node *n, dnnl_memory_t *m);

/* QDQ (odn_claim_qdq.c, odn_build_qdq.c, odn_fuse_qdq.c): the claim check
 * of QuantizeLinear/DequantizeLinear; the hook odn_build_node calls first
 * for every node (sets *handled when it built the node); whether node `n`
 * is a Conv/MatMul/Gemm/Add between DequantizeLinear and QuantizeLinear
 * that odn_qdq_fuse turns into one int8 primitive (*handled false, nothing
 * added, when oneDNN has no such primitive); the node writing a value; the
 * float outputs of deferred DequantizeLinear nodes that `n` reads. */
int odn_qdq_check(const tsr_node *n, char *why, size_t size);
tsr_status *odn_qdq_build(odn_plan *p, size_t index, bool *handled);
bool odn_qdq_fusable(odn_plan *p, const tsr_node *n);
tsr_status *odn_qdq_fuse(odn_plan *p, size_t index, bool *handled);
int odn_qdq_producer(const odn_plan *p, const tsr_value_info *vi);
tsr_status *odn_qdq_materialize_inputs(odn_plan *p, const tsr_node *n);
/* QuantizeLinear node `index` and the DequantizeLinear that alone reads it
 * as one float loop (odn_build_fakequant.c), on CPUs without VNNI; sets
 * *handled when it built both. */
tsr_status *odn_fake_quant_try(odn_plan *p, size_t index, bool *handled);
/* Conv/MatMul/Gemm of a QDQ pattern with full-range int8 weights, exact,
 * on the int16 GEMM (odn_qdq_i16.c, odn_igemm.c) where the plan has no
 * int8 primitives (AVX2 without VNNI): whether the plan uses it; whether a
 * convolution's shape fits it (else odn_fuse_qdq.c leaves the float path);
 * the builders (*handled false, nothing added, when they decline: a piece
 * output, a shape the kernel does not take). x: the integer input; y: the
 * QuantizeLinear output; bias: the float graph's bias per channel or NULL. */
/* y: requantized (QDQ: scales from the layer), the int32 sums, them as
 * float, or requantized as QLinearConv/QLinearMatMul (node inputs 1, 4,
 * 6, 7, 8: sx, sw, sy, zy, bias, read at run time; odn_qlinear_float.c's
 * formula, bit for bit) */
enum { ODN_I16_Q8, ODN_I16_S32, ODN_I16_F32, ODN_I16_QLIN };
typedef struct odn_i16_layer {
    const tsr_node *node, *y_node; /* y_node: the node writing y (a Cast absorbed), else node */
    odn_value *x, *y;
    int out; /* ODN_I16_* */
    float sx, sy;
    int32_t zx, zy, y_type;
    dnnl_memory_t zx_mem; /* x's zero point read at run time (type zx_type), else NULL: zx */
    int32_t zx_type;
    bool relu, conv, trans_b;
    bool clip;              /* a Clip between the layer and y's QuantizeLinear */
    float clip_lo, clip_hi; /* its bounds (-inf/inf when open) */
    const tsr_tensor *w; /* constant int8/uint8 */
    const int32_t *zw;   /* its zero point, 1 or per output channel (zw_count); NULL: 0 */
    int64_t zw_count;
    const float *w_scale;
    int64_t w_scale_count;
    const float *bias;
} odn_i16_layer;
bool odn_i16_usable(const odn_plan *p);
/* A QDQ 3x3 stride-1 convolution's exact int32 sums on the integer
 * Winograd kernel (odn_qdq_i16_wino.c; shape as odn_iwino_f23.h has it):
 * *out NULL when the shape does not fit it, the im2col GEMM then. */
struct odn_i16_wino;
tsr_status *odn_i16_wino_new(odn_plan *p, const odn_i16_layer *l, const odn_iwino_shape *shape,
                             const struct odn_i16_wino **out);
void odn_i16_wino_run(const struct odn_i16_wino *w, const void *x, bool x_unsigned, int32_t zx, int32_t *sums,
                      int threads);
/* The weights' zero point (constant zt, uint8 or int8; NULL: 0) widened
 * into l->zw / l->zw_count, in plan memory (odn_qdq_i16.c). */
tsr_status *odn_i16_weight_zp(odn_plan *p, const tsr_node *n, const tsr_tensor *zt, odn_i16_layer *l);
/* The requantized integers' clamp: y's range, Relu at zy, a Clip at
 * [Q(lo), Q(hi)] (odn_qdq_i16.c; the GEMM and depthwise layers alike). */
void odn_i16_clamps(const odn_i16_layer *l, bool y_unsigned, float *lo, float *hi);
/* QuantizeLinear of n float32 values by one scale and zero point into
 * uint8 (u8) or int8 y, AVX2 (odn_quantize_row.c): whole groups of 8, the
 * count done returned; exactly the standalone loop's values. */
bool odn_quantize_row_supported(void);
size_t odn_quantize_row(const float *x, size_t n, float scale, float zp, bool u8, void *y);
bool odn_i16_conv_fits(int32_t rank, int64_t group, int64_t depth);
/* Depthwise layers (group = in = out channels, at most 512 taps) on the
 * same integer NHWC path, summed exactly in float (odn_qdq_i16_dw.c). */
bool odn_i16_dw_fits(int32_t rank, int64_t group, int64_t in_channels, int64_t out_channels, int64_t taps);
tsr_status *odn_i16_dwconv(odn_plan *p, const odn_i16_layer *l, bool *handled);
tsr_status *odn_i16_conv(odn_plan *p, const odn_i16_layer *l, bool *handled);
tsr_status *odn_i16_matmul(odn_plan *p, const odn_i16_layer *l, bool *handled);
/* MatMulInteger's product on the int16 GEMM (odn_i16_intgemm.c): whether
 * it takes depth k on this CPU; the step C = (A - za)(B - zb) for A
 * (rows x k plain memory `a` of va's type, za input 2 of n read at run
 * time), constant B (vb, K x N) less zero point zbt (constant, NULL: 0), C
 * as int32 or (as_float) float. */
bool odn_i16_intgemm_usable(int64_t k);
tsr_status *odn_i16_intgemm_add(odn_plan *p, const tsr_node *n, const odn_value *va, const odn_value *vb,
                                const tsr_tensor *zbt, int64_t rows, dnnl_memory_t a, bool as_float, dnnl_memory_t c);
/* Whether a MatMulInteger the plan could give oneDNN's int8 primitives
 * runs on the u8 x s8 kernel instead (odn_i16_intgemm.c). */
bool odn_i16_intgemm_instead(odn_plan *p, const tsr_node *n);
/* Pooling node `n` from x to y (odn_build_pool.c; y's element type: f32,
 * or u8/s8 for a QDQ MaxPool). */
tsr_status *odn_build_pool_values(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y);

#endif
