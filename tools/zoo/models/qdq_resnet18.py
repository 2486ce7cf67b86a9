"""ResNet-18 quantized the way ONNX Runtime's quantize_static writes QDQ models
(QuantFormat.QDQ, opset 13, per-channel int8 weights, uint8 activations).

Imitates: torchvision resnet18 -> torch.onnx (opset 13, BN folded) -> onnxruntime.quantization
.quantize_static(quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QUInt8,
weight_type=QInt8, calibrate_method=MinMax).
Covers: input QuantizeLinear -> DequantizeLinear; weights as int8 initializers ("_quantized")
-> DequantizeLinear(per-channel scale, int8 zero point 0, axis=0); biases as int32 initializers
(scale = input scale * weight scale, zero point 0) -> DequantizeLinear(axis=0); Conv (BN folded)
-> Relu -> QuantizeLinear/DequantizeLinear (uint8, per-tensor scale and zero point); MaxPool and
Flatten between QDQ pairs that share their input's parameters; BasicBlocks with 1x1 stride-2
downsample Conv; residual Add with QDQ on both inputs and its output, then Relu -> QDQ;
GlobalAveragePool -> QDQ; Gemm (transB=1) with per-channel int8 weights and int32 bias, output
QDQ. Activation ranges are MinMax-calibrated on a seeded uniform [-1, 1) batch (TracedGraph).
full: 1x3x224x224, widths 64..512, 1000 classes (~1.8 GMAC). small: 1x3x32x32, widths 8..64,
10 classes.
"""
import numpy as np
from zoolib import TracedGraph, _np_conv, _q16, set_output

META = {
    "about": "ResNet-18 QDQ (ORT quantize_static format, opset 13): int8 per-channel weights, uint8 activations",
    "dims_small": {"batch": 1}, "dims_full": {"batch": 1},
    # ~3 uint8 steps of the logits' scale (0.025 at full size): a near-tie x/scale inside the
    # network rounds the other way under another accumulation order, and the flip propagates
    # (ONNX Runtime vs Tessera's reference: 2 steps at most on the full model)
    "rtol": 1e-3, "atol": 0.08,
}


class Q:
    """Emits ORT-style QDQ pieces on a TracedGraph."""

    def __init__(self, g, weight_qmax=127):
        self.g = g
        self.weight_qmax = weight_qmax  # 64 with reduce_range (7-bit weights)

    def params(self, value, name):
        """MinMax uint8 asymmetric (range always includes 0), as ORT's calibrator computes it."""
        a = self.g.val[value]
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        scale = float(_q16((hi - lo) / 255.0)) or 1.0
        zp = int(np.clip(round(-lo / scale), 0, 255))
        return (self.g.const(np.array(scale, np.float32), name + "_scale"),
                self.g.const(np.array(zp, np.uint8), name + "_zero_point"))

    def qdq(self, x, params=None):
        s, z = params or self.params(x, x)
        q = self.g.node("QuantizeLinear", [x, s, z], name=x + "_QuantizeLinear")
        return self.g.node("DequantizeLinear", [q, s, z], name=x + "_DequantizeLinear"), (s, z)

    def weight_dq(self, w, name, axis=0):
        """per-channel symmetric int8 (zero point 0) along axis 0."""
        m = np.abs(w).reshape(w.shape[0], -1).max(axis=1)
        qmax = self.weight_qmax
        scale = (_q16(np.maximum(m, 1e-8) / float(qmax))).astype(np.float32)
        q = np.clip(np.rint(w / scale.reshape((-1,) + (1,) * (w.ndim - 1))), -qmax, qmax).astype(np.int8)
        g = self.g
        ins = [g.const(q, name + "_quantized"), g.const(scale, name + "_scale"),
               g.const(np.zeros(w.shape[0], np.int8), name + "_zero_point")]
        return g.node("DequantizeLinear", ins, name=name + "_DequantizeLinear", axis=axis), scale

    def bias_dq(self, b, in_scale_name, w_scale, name):
        """int32 bias with scale = input scale * weight scale (per channel), zero point 0."""
        g = self.g
        scale = (float(g.val[in_scale_name]) * w_scale).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        ins = [g.const(q, name + "_quantized"), g.const(scale, name + "_quantized_scale"),
               g.const(np.zeros(len(b), np.int32), name + "_quantized_zero_point")]
        return g.node("DequantizeLinear", ins, name=name + "_quantized_DequantizeLinear", axis=0)


def conv(q, x, xparams, cin, cout, k, stride, name, relu=None):
    """Conv (BN folded, calibrated) with QDQ weight and bias; Relu (node-name prefix relu, or
    none); then the output QDQ."""
    g = q.g
    pad = k // 2
    w = (g.rng.standard_normal((cout, cin, k, k)) * np.sqrt(1.0 / (cin * k * k))).astype(np.float32)
    y = _np_conv(g.val[x], w, None, [stride] * 2, [pad] * 4, 1, 1)
    mean, std = _q16(y.mean(axis=(0, 2, 3))), _q16(np.sqrt(y.var(axis=(0, 2, 3)) + 1e-3))
    gamma, beta = 1.0 + 0.1 * g.rng.standard_normal(cout), 0.1 * g.rng.standard_normal(cout)
    w = (w * (gamma / std).reshape(-1, 1, 1, 1)).astype(np.float32)
    b = (beta - mean * gamma / std).astype(np.float32)
    wn = name.strip("/").replace("/", ".")
    wdq, wscale = q.weight_dq(w, "onnx::Conv_" + wn + ".weight")
    bdq = q.bias_dq(b, xparams[0], wscale, "onnx::Conv_" + wn + ".bias")
    y = g.node("Conv", [x, wdq, bdq], name=name + "/Conv", kernel_shape=[k, k], strides=[stride] * 2,
               pads=[pad] * 4, group=1, dilations=[1, 1])
    if relu:
        y = g.node("Relu", [y], name=relu + "/Relu")
    return q.qdq(y)


def basic_block(q, x, xp, cin, cout, stride, name):
    y, yp = conv(q, x, xp, cin, cout, 3, stride, name + "/conv1", relu=name + "/relu")
    y, yp = conv(q, y, yp, cout, cout, 3, 1, name + "/conv2")
    if stride != 1 or cin != cout:
        x, _ = conv(q, x, xp, cin, cout, 1, stride, name + "/downsample/downsample.0")
    g = q.g
    s = g.node("Add", [y, x], name=name + "/Add")
    s, _ = q.qdq(s)
    s = g.node("Relu", [s], name=name + "/relu_1/Relu")
    return q.qdq(s)


def build(size="small", reduce_range=False):
    full = size == "full"
    res, classes = (224, 1000) if full else (32, 10)
    w = [64, 128, 256, 512] if full else [8, 16, 32, 64]
    g = TracedGraph("main_graph", 13, seed=19, dims={"batch": 4 if full else 32})
    q = Q(g, 64 if reduce_range else 127)
    x = g.input("input", ["batch", 3, res, res])
    x, xp = q.qdq(x)
    y, yp = conv(q, x, xp, 3, w[0], 7, 2, "/conv1", relu="/relu")
    y = g.node("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               ceil_mode=0, dilations=[1, 1])
    y, yp = q.qdq(y, yp)  # MaxPool keeps its input's quantization parameters
    cin = w[0]
    for li, c in enumerate(w):
        for bi in range(2):
            y, yp = basic_block(q, y, yp, cin, c, 2 if (bi == 0 and li > 0) else 1, "/layer%d/layer%d.%d" % (li + 1, li + 1, bi))
            cin = c
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y, yp = q.qdq(y)
    y = g.node("Flatten", [y], name="/Flatten", axis=1)
    y, yp = q.qdq(y, yp)
    rms = max(float(np.sqrt(np.mean(g.val[y] ** 2))), 1e-3)  # logits ~N(0, 1): one uint8 step ~0.03
    fw = (g.rng.standard_normal((classes, cin)) * np.sqrt(1.0 / cin) / rms).astype(np.float32)
    fb = (0.02 * g.rng.standard_normal(classes)).astype(np.float32)
    wdq, wscale = q.weight_dq(fw, "fc.weight")
    bdq = q.bias_dq(fb, yp[0], wscale, "fc.bias")
    y = g.node("Gemm", [y, wdq, bdq], name="/fc/Gemm", alpha=1.0, beta=1.0, transB=1)
    s, z = q.params(y, y)
    y = g.node("QuantizeLinear", [y, s, z], name=y + "_QuantizeLinear")
    y = g.node("DequantizeLinear", [y, s, z], name="output_DequantizeLinear")
    set_output(g, y, "output", ["batch", classes])  # ORT keeps the float output's name on the last DQ
    return g.model(producer="onnx.quantize", producer_version="0.1.0")
