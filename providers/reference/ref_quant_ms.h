/*
 * The com.microsoft quantized operators that ONNX Runtime's quantizer
 * writes in its QOperator format (quantize_static(...,
 * quant_format=QuantFormat.QOperator)): QLinearAdd, QLinearMul,
 * QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
 * QLinearAveragePool, QLinearConcat, QLinearSoftmax and QGemm, plus
 * MatMulIntegerToFloat and DynamicQuantizeMatMul (what quantize_dynamic
 * leaves after ONNX Runtime's graph optimizations). ref_quant_ms.c holds
 * the kernels, their claim-time checks and the table ref_registry.c reads.
 *
 * Each kernel computes what ONNX Runtime's CPU kernel computes on an
 * x86-64 machine with AVX2 and FMA, in the same float operations and the
 * same order (see the comment above each kernel), so results are equal bit
 * for bit; ref_quant_ms.c's header comment lists where they are not.
 */
#ifndef TESSERA_REF_QUANT_MS_H
#define TESSERA_REF_QUANT_MS_H

#include "ref.h"

extern const ref_op ref_ops_quant_ms[];

#endif
