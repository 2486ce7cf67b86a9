"""DistilBERT dynamically quantized the way ONNX Runtime's quantize_dynamic writes it.

Imitates: the distilbert zoo model (torch.onnx, opset 11) passed through
`onnxruntime.quantization.quantize_dynamic(model, out, weight_type=QuantType.QInt8)`
(per-tensor, symmetric int8 weights, zero point 0): every MatMul whose B is a
float initializer becomes
    DynamicQuantizeLinear(A) -> A_quantized, A_scale, A_zero_point   (one per A, shared by
                                                                      the q/k/v projections)
    MatMulInteger(A_quantized, B_quantized, A_zero_point, B_zero_point)
    Cast(to float) -> Mul(cast, Mul(A_scale, B_scale))
with the graph's opset raised to 11 (MatMulInteger and DynamicQuantizeLinear's own)
and the bias Add, the attention MatMuls and everything else left in float, as the
quantizer leaves them. The rows of every quantized matmul are symbolic ([batch, seq, K]).
Full: 6 layers, dim 768 (seq 128); small: 2 layers, dim 64 (seq 16), as distilbert.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distilbert  # noqa: E402

META = {
    "about": "DistilBERT quantize_dynamic (QInt8): DynamicQuantizeLinear/MatMulInteger/Cast/Mul, symbolic rows",
    "dims_small": distilbert.META["dims_small"],
    "dims_full": distilbert.META["dims_full"],
    # Each activation is rounded to 8 bits: a float difference of one ulp before a
    # DynamicQuantizeLinear (ONNX Runtime's LayerNormalization and Tessera's sum in
    # another order) moves a value across a rounding boundary and the step
    # propagates; the outputs (LayerNorm'ed, O(1)) then differ by a few hundredths
    # (full size: up to 0.09 on 3-5 of 98,304 values, reference provider and onednn alike).
    "rtol": 1e-3, "atol": 0.15,
}


def quantize_weight(w, reduce_range=False):
    """QInt8 symmetric, as quantize_data does: scale = 2 max|w| / 255, zero point 0; with
    reduce_range (7-bit weights, ORT's advice for CPUs without VNNI) [-64, 64] and 2 max|w| / 128."""
    rmax = float(np.abs(w).max()) or 1.0
    qmax, span = (64, 128) if reduce_range else (127, 255)
    scale = np.float32(2 * rmax / span)
    return np.clip(np.rint(w / scale), -qmax, qmax).astype(np.int8), scale


def build(size, reduce_range=False):
    m = distilbert.build(size)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes, quantized_inputs, new_inits = [], {}, []
    for n in g.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        if b is None or len(b.dims) != 2:
            nodes.append(n)
            continue
        a = n.input[0]
        if a not in quantized_inputs:
            quantized_inputs[a] = (a + "_quantized", a + "_scale", a + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(quantized_inputs[a]),
                                          name=a + "_QuantizeLinear"))
        aq, ascale, azp = quantized_inputs[a]
        wq, ws = quantize_weight(numpy_helper.to_array(b), reduce_range)
        new_inits += [numpy_helper.from_array(wq, b.name + "_quantized"),
                      numpy_helper.from_array(np.array(ws, np.float32), b.name + "_scale"),
                      numpy_helper.from_array(np.array(0, np.int8), b.name + "_zero_point")]
        out = n.output[0]
        nodes += [helper.make_node("MatMulInteger", [aq, b.name + "_quantized", azp, b.name + "_zero_point"],
                                   [out + "_output_quantized"], name=n.name + "_quant"),
                  helper.make_node("Mul", [ascale, b.name + "_scale"], [out + "_scales_mul"],
                                   name=n.name + "_scales_mul"),
                  helper.make_node("Cast", [out + "_output_quantized"], [out + "_output_quantized_cast"],
                                   to=TensorProto.FLOAT, name=n.name + "_output_quantized_cast"),
                  helper.make_node("Mul", [out + "_output_quantized_cast", out + "_scales_mul"], [out],
                                   name=n.name + "_output_quantized_mul")]
        del inits[b.name]
    del g.node[:]
    g.node.extend(nodes)
    kept = [t for t in g.initializer if t.name in inits]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    m.producer_name, m.producer_version = "onnx.quantize", "0.1.0"
    return m
