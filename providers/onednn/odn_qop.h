/* com.microsoft QOperator ops on the oneDNN provider (odn_qop*.c), shared
 * among their files. Every op is a C loop over plain 8-bit memories that
 * computes what the reference provider's ref_quant_ms.c does (ONNX
 * Runtime's CPU kernels) bit for bit; scales and zero points are read
 * through their memories when the step runs. */
#ifndef TESSERA_ODN_QOP_H
#define TESSERA_ODN_QOP_H

#include "odn_quant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ODN_QOP_X86 1
#define ODN_QOP_AVX2 __attribute__((target("avx2,fma")))
#else
#define ODN_QOP_X86 0
#endif

/* True when the CPU runs the AVX2+FMA kernels (checked once). */
bool odn_qop_avx2(void);

/* A per-tensor scale or zero point read at run time. */
typedef struct odn_qop_param {
    dnnl_memory_t mem; /* NULL: absent (zero point 0) */
    int32_t type;
} odn_qop_param;
float odn_qop_scale(const odn_qop_param *q);
int32_t odn_qop_zp(const odn_qop_param *q);

/* Input k of node n as a parameter, its memory added to reads[*count]
 * unless it is a constant (the arena keeps intermediates alive up to the
 * step that names them). */
tsr_status *odn_qop_param_in(odn_plan *p, const tsr_node *n, size_t k, odn_qop_param *q, dnnl_memory_t *reads,
                             size_t *count);
/* The plain memory of data input k of n (which must be produced). */
tsr_status *odn_qop_data_in(odn_plan *p, const tsr_node *n, size_t k, odn_value **v, dnnl_memory_t *m);

/* round half to even of v, plus zp, saturated to the 8-bit type t; NaN
 * counts as 0 (the reference provider's q8_store). */
static inline int32_t odn_qop_sat(int32_t t, float v, int32_t zp) {
    double r = v != v ? 0.0 : __builtin_nearbyint((double)v) + zp;
    double lo = t == TSR_INT8 ? -128 : 0, hi = t == TSR_INT8 ? 127 : 255;
    return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}
static inline void odn_qop_put(int32_t t, void *y, size_t i, float v, int32_t zp) {
    int32_t q = odn_qop_sat(t, v, zp);
    if (t == TSR_INT8) ((int8_t *)y)[i] = (int8_t)q;
    else ((uint8_t *)y)[i] = (uint8_t)q;
}
static inline int32_t odn_qop_get(int32_t t, const void *x, size_t i) {
    return t == TSR_INT8 ? (int32_t)((const int8_t *)x)[i] : (int32_t)((const uint8_t *)x)[i];
}

/* The builders by family: QLinearAdd/QLinearMul (odn_qop_binary.c),
 * QLinearSigmoid/QLinearLeakyRelu and QLinearConcat (odn_qop_table.c), the
 * average pools (odn_qop_pool.c). */
tsr_status *odn_qop_build_binary(odn_plan *p, size_t index);
tsr_status *odn_qop_build_table(odn_plan *p, size_t index);
tsr_status *odn_qop_build_concat(odn_plan *p, size_t index);
tsr_status *odn_qop_build_pool(odn_plan *p, size_t index);

/* QGemm and MatMulIntegerToFloat (odn_qop_gemm.c). */
int odn_qop_gemm_check(const tsr_node *n, char *why, size_t size);
tsr_status *odn_qop_build_gemm(odn_plan *p, size_t index);

#endif
