#!/usr/bin/python3
"""QDQ cases for the oneDNN provider's int8 fusion (odn_qdq.c): models laid
out as ONNX Runtime's quantize_static(QuantFormat.QDQ) writes them, i.e.
float ops between QuantizeLinear/DequantizeLinear pairs, with int8
initializer weights behind a DequantizeLinear (per-tensor or per output
channel, zero point 0) and int32 biases behind a DequantizeLinear of scale
x_scale * w_scale. Cases: a Conv -> Relu -> Conv chain, a residual Add
(with Relu fused, none, or Relu between its own QDQ pairs), a depthwise Conv, int8 activations, MatMul and
Gemm (transB, per-column and per-tensor weights), MaxPool (int8) and
GlobalAveragePool (float) before a Gemm, patterns left to the float graph
(a weight zero point that is not 0, a DequantizeLinear also read by a
float op), and a lone Q -> DQ round trip on exact ties.

Expected outputs come from numpy following the ONNX definition of the
float graph: DequantizeLinear (x - zp) * scale in float32, the float op
(in float64, then float32), QuantizeLinear as round-half-to-even of
x / scale (float32 division), plus the zero point, saturated.

The provider computes the fused layers as int8 convolutions/matmuls (exact
int32 sums, one float multiply by x_scale * w_scale / y_scale), so where
the float graph's x / y_scale lies within float rounding error of a
rounding boundary the two may land one quantization step apart (as ONNX
Runtime's own fused int8 kernels do against its float graph). Every case
ends in a DequantizeLinear with scale OUT_SCALE, and run_claimed_ops.sh
checks them with --rtol 0 --atol ATOL (one step plus float slack); the
Q -> DQ round trip (no fused layer) must match within the same bound and
in fact matches exactly.
usage: qdq_cases.py OUT_DIR (prints the case dirs)
"""
import itertools
import os
import sys

import numpy as np
from onnx import helper

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extra_cases import save_typed_case  # noqa: E402

OUT_SCALE = np.float32(0.05)  # the last DequantizeLinear of every case
ATOL = 0.0501                 # one step of OUT_SCALE, plus float slack
OPSET = 13
rng = np.random.default_rng(20260514)
f32 = np.float32


def quantize(x, s, zp, axis=None):
    """ONNX QuantizeLinear: rint(x / s) (float32, ties to even) + zp, saturated."""
    x = np.asarray(x, f32)
    s = np.asarray(s, f32)
    if axis is not None and s.ndim == 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        s = s.reshape(shape)
    q = np.rint(np.divide(x, s, dtype=f32)).astype(np.float64) + float(zp)
    info = np.iinfo(np.asarray(zp).dtype)
    return np.clip(q, info.min, info.max).astype(np.asarray(zp).dtype)


def dequantize(q, s, zp=0, axis=None):
    """ONNX DequantizeLinear: (q - zp) * s in float32."""
    s = np.asarray(s, f32)
    if axis is not None and s.ndim == 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s = s.reshape(shape)
    return ((q.astype(np.float64) - float(zp)).astype(f32) * s).astype(f32)


def conv_f(x, w, strides, pads, group):
    """Float Conv (NCHW, float64 sums), zero padding, groups."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    sp = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + sp]) for i in range(sp)])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - k[i]) // strides[i] + 1 for i in range(sp)]
    cg, mg = x.shape[1] // group, w.shape[0] // group
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for g in range(group):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * mg:(g + 1) * mg]
        for off in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(off[i], off[i] + (out[i] - 1) * strides[i] + 1, strides[i]) for i in range(sp))
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", xs[(slice(None), slice(None)) + sl],
                                                   ws[(slice(None), slice(None)) + off])
    return y


def calibrate(y, dtype=np.uint8):
    """Scale and zero point covering y's range (as a min/max calibrator)."""
    lo, hi = min(float(y.min()), 0.0), max(float(y.max()), 0.0)
    info = np.iinfo(dtype)
    s = f32((hi - lo) / (info.max - info.min)) if hi > lo else f32(1)
    zp = np.array(np.clip(round(info.min - lo / float(s)), info.min, info.max), dtype)
    return s, zp


class Graph:
    """Builds a QDQ model and its numpy reference side by side."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def init(self, base, a):
        n = self.name(base)
        self.inits.append((n, np.asarray(a)))
        return n

    def qdq(self, x_name, x, s, zp):
        """x -> QuantizeLinear -> DequantizeLinear; returns (name, value)."""
        q, d = self.name("q"), self.name("dq")
        sn, zn = self.init("s", np.array(s, f32)), self.init("zp", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [x_name, sn, zn], [q]))
        self.nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [d]))
        return d, dequantize(quantize(x, s, zp), s, zp)

    def requant(self, x_name, x, dtype=np.uint8, s=None, zp=None):
        if s is None:
            s, zp = calibrate(x, dtype)
        return self.qdq(x_name, x, s, zp)

    def weight(self, wq, sw, axis):
        """int8 initializer -> DequantizeLinear (zero point 0)."""
        d = self.name("w")
        wn, sn = self.init("wq", wq), self.init("ws", np.asarray(sw, f32))
        zn = self.init("wz", np.zeros(np.asarray(sw).shape, np.int8))
        attrs = {"axis": axis} if np.asarray(sw).ndim == 1 else {}
        self.nodes.append(helper.make_node("DequantizeLinear", [wn, sn, zn], [d], **attrs))
        return d, dequantize(wq, sw, 0, axis if np.asarray(sw).ndim == 1 else None)

    def bias(self, b, sx, sw):
        """int32 initializer -> DequantizeLinear of scale sx * sw."""
        bs = (f32(sx) * np.asarray(sw, f32)).astype(f32)
        bq = np.rint(b / bs.astype(np.float64)).astype(np.int32)
        bs_full = np.broadcast_to(bs, bq.shape).astype(f32)
        d = self.name("b")
        bn, sn = self.init("bq", bq), self.init("bs", bs_full)
        zn = self.init("bz", np.zeros(bq.shape, np.int32))
        self.nodes.append(helper.make_node("DequantizeLinear", [bn, sn, zn], [d], axis=0))
        return d, dequantize(bq, bs_full, 0, 0)

    def conv(self, x_name, x, sx, cout, k, strides=(1, 1), pads=(0, 0, 0, 0), group=1, per_channel=True,
             bias="int32"):
        cin = x.shape[1] // group
        wq = rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8)
        sw = (rng.uniform(0.5, 1.5, cout) / (127 * np.sqrt(cin * k * k))).astype(f32) if per_channel else \
            f32(1 / (127 * np.sqrt(cin * k * k)))
        wn, wf = self.weight(wq, sw, 0)
        ins = [x_name, wn]
        y = conv_f(x, wf, strides, pads, group)
        b = rng.uniform(-0.3, 0.3, cout)
        if bias == "int32":
            bn, bf = self.bias(b, sx, sw)
        elif bias == "float":
            bf = b.astype(f32)
            bn = self.init("bf", bf)
        if bias:
            ins.append(bn)
            y = y + bf.astype(np.float64).reshape(1, -1, 1, 1)
        out = self.name("conv")
        self.nodes.append(helper.make_node("Conv", ins, [out], kernel_shape=[k, k], strides=list(strides),
                                           pads=list(pads), group=group))
        return out, y.astype(f32)

    def relu(self, x_name, x):
        out = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [x_name], [out]))
        return out, np.maximum(x, 0).astype(f32)

    def save(self, out_dir, name, inputs, y_name, y, dtype=np.uint8):
        """Ends the graph with Q (calibrated) -> DQ of scale OUT_SCALE: the
        output's step is OUT_SCALE whatever its range."""
        _, zp = calibrate(y, dtype)
        lo, hi = float(y.min()), float(y.max())
        info = np.iinfo(dtype)
        zp = np.array(np.clip(round(info.min - min(lo, 0) / float(OUT_SCALE)), info.min, info.max), dtype)
        q, d = self.name("q"), "y"
        sn, zn = self.init("s", np.array(OUT_SCALE, f32)), self.init("zp", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [y_name, sn, zn], [q]))
        self.nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [d]))
        yv = dequantize(quantize(y, OUT_SCALE, zp), OUT_SCALE, zp)
        save_typed_case(out_dir, name, self.nodes, inputs, [("y", yv)], self.inits, opset=OPSET)


def input_qdq(g, x, dtype=np.uint8, zp=None):
    """The float input through QuantizeLinear -> DequantizeLinear."""
    s = f32(2.0 / 255)
    if zp is None:
        zp = 128 if dtype == np.uint8 else 0
    return g.qdq("x", x, s, np.array(zp, dtype)) + (s,)


def conv_chain(out_dir):
    # Conv 3x3 (pads, per-channel, int32 bias) -> Relu -> Q/DQ -> Conv 3x3
    # stride 2 (per-tensor weights, float bias) -> Q/DQ -> Conv 1x1 (no bias)
    x = rng.uniform(-1, 1, (1, 8, 10, 10)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x, zp=131)  # odd zero point
    h, hv = g.conv(h, hv, sx, 16, 3, pads=(1, 1, 1, 1))
    h, hv = g.relu(h, hv)
    s1, z1 = calibrate(hv)
    h, hv = g.qdq(h, hv, s1, z1)
    h, hv = g.conv(h, hv, s1, 24, 3, strides=(2, 2), pads=(1, 1, 1, 1), per_channel=False, bias="float")
    s2, z2 = calibrate(hv)
    h, hv = g.qdq(h, hv, s2, z2)
    h, hv = g.conv(h, hv, s2, 8, 1, bias=None)
    g.save(out_dir, "qdq_conv_relu_chain", [("x", x)], h, hv)


def residual(out_dir, with_relu):
    x = rng.uniform(-1, 1, (2, 16, 6, 6)).astype(f32)
    g = Graph()
    h0, hv0, sx = input_qdq(g, x)
    h, hv = g.conv(h0, hv0, sx, 16, 1)
    h, hv = g.relu(h, hv)
    s1, z1 = calibrate(hv)
    h, hv = g.qdq(h, hv, s1, z1)
    h, hv = g.conv(h, hv, s1, 16, 3, pads=(1, 1, 1, 1))
    s2, z2 = calibrate(hv)
    h, hv = g.qdq(h, hv, s2, z2)
    a = g.name("add")
    g.nodes.append(helper.make_node("Add", [h, h0], [a]))
    av = (hv + hv0).astype(f32)
    if with_relu == "qdq":  # as ONNX Runtime's quantizer: Add -> Q/DQ -> Relu -> Q/DQ
        s3, z3 = calibrate(av)
        a, av = g.qdq(a, av, s3, z3)
    if with_relu:
        a, av = g.relu(a, av)
    s3, z3 = calibrate(av)
    a, av = g.qdq(a, av, s3, z3)
    h, hv = g.conv(a, av, s3, 8, 1)
    name = {False: "", True: "_relu", "qdq": "_qdq_relu"}[with_relu]
    g.save(out_dir, "qdq_residual_add" + name, [("x", x)], h, hv)


def depthwise(out_dir):
    x = rng.uniform(-1, 1, (1, 12, 9, 9)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x, zp=100)
    h, hv = g.conv(h, hv, sx, 24, 3, pads=(1, 1, 1, 1))
    h, hv = g.relu(h, hv)
    s1, z1 = calibrate(hv)
    h, hv = g.qdq(h, hv, s1, z1)
    h, hv = g.conv(h, hv, s1, 24, 3, strides=(2, 2), pads=(1, 1, 1, 1), group=24)
    h, hv = g.relu(h, hv)
    g.save(out_dir, "qdq_depthwise", [("x", x)], h, hv)


def int8_activations(out_dir):
    x = rng.uniform(-1, 1, (1, 4, 7, 7)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x, np.int8, zp=-3)
    h, hv = g.conv(h, hv, sx, 8, 3, pads=(0, 1, 0, 1))
    s1, z1 = calibrate(hv, np.int8)
    h, hv = g.qdq(h, hv, s1, z1)
    h, hv = g.conv(h, hv, s1, 8, 3)
    g.save(out_dir, "qdq_conv_s8_activations", [("x", x)], h, hv, np.int8)


def matmul_gemm(out_dir):
    # MatMul [2,5,32] x [32,24] (per-column weights, axis 1) -> Q/DQ ->
    # Gemm transB (per-row of B = per output column, int32 bias) -> Relu
    x = rng.uniform(-1, 1, (2, 5, 32)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x, zp=125)
    wq = rng.integers(-127, 128, (32, 24)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, 24) / (127 * np.sqrt(32))).astype(f32)
    wn, wf = g.weight(wq, sw, 1)
    m = g.name("matmul")
    g.nodes.append(helper.make_node("MatMul", [h, wn], [m]))
    mv = np.matmul(hv.astype(np.float64), wf.astype(np.float64)).astype(f32)
    s1, z1 = calibrate(mv)
    h, hv = g.qdq(m, mv, s1, z1)
    r = g.name("reshape")
    g.nodes.append(helper.make_node("Reshape", [h, g.init("shape", np.array([10, 24], np.int64))], [r]))
    hv = hv.reshape(10, 24)
    s2, z2 = calibrate(hv)
    h, hv = g.qdq(r, hv, s2, z2)  # ORT puts Q/DQ around the Reshape
    wq2 = rng.integers(-127, 128, (16, 24)).astype(np.int8)
    sw2 = (rng.uniform(0.5, 1.5, 16) / (127 * np.sqrt(24))).astype(f32)
    wn2, wf2 = g.weight(wq2, sw2, 0)
    bn, bf = g.bias(rng.uniform(-0.3, 0.3, 16), s2, sw2)
    gm = g.name("gemm")
    g.nodes.append(helper.make_node("Gemm", [h, wn2, bn], [gm], transB=1))
    gv = (np.matmul(hv.astype(np.float64), wf2.astype(np.float64).T) + bf).astype(f32)
    gm, gv = g.relu(gm, gv)
    g.save(out_dir, "qdq_matmul_gemm", [("x", x)], gm, gv)


def gemm_per_tensor(out_dir):
    x = rng.uniform(-1, 1, (3, 40)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x)
    wq = rng.integers(-127, 128, (40, 20)).astype(np.int8)
    sw = f32(1 / (127 * np.sqrt(40)))
    wn, wf = g.weight(wq, sw, 0)
    b = rng.uniform(-0.3, 0.3, 20).astype(f32)
    gm = g.name("gemm")
    g.nodes.append(helper.make_node("Gemm", [h, wn, g.init("bf", b)], [gm]))
    gv = (np.matmul(hv.astype(np.float64), wf.astype(np.float64)) + b).astype(f32)
    g.save(out_dir, "qdq_gemm_per_tensor", [("x", x)], gm, gv)


def maxpool_f(x, k, stride, pad):
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)], constant_values=-np.inf)
    oh, ow = (xp.shape[2] - k) // stride + 1, (xp.shape[3] - k) // stride + 1
    y = np.full((x.shape[0], x.shape[1], oh, ow), -np.inf, x.dtype)
    for i, j in itertools.product(range(k), range(k)):
        y = np.maximum(y, xp[:, :, i:i + (oh - 1) * stride + 1:stride, j:j + (ow - 1) * stride + 1:stride])
    return y


def pool_head(out_dir):
    # Conv -> Relu -> Q/DQ -> MaxPool -> Q/DQ (same scale: int8 pooling) ->
    # Conv -> Q/DQ -> GlobalAveragePool (float, between standalone Q/DQ) ->
    # Q/DQ -> Flatten -> Gemm(transB, float bias)
    x = rng.uniform(-1, 1, (1, 3, 16, 16)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x)
    h, hv = g.conv(h, hv, sx, 16, 3, strides=(2, 2), pads=(1, 1, 1, 1))
    h, hv = g.relu(h, hv)
    s1, z1 = calibrate(hv)
    h, hv = g.qdq(h, hv, s1, z1)
    mp = g.name("maxpool")
    g.nodes.append(helper.make_node("MaxPool", [h], [mp], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    h, hv = g.qdq(mp, maxpool_f(hv, 3, 2, 1), s1, z1)
    h, hv = g.conv(h, hv, s1, 32, 3, pads=(1, 1, 1, 1))
    s2, z2 = calibrate(hv)
    h, hv = g.qdq(h, hv, s2, z2)
    gp = g.name("gap")
    g.nodes.append(helper.make_node("GlobalAveragePool", [h], [gp]))
    gv = hv.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(f32)
    s3, z3 = calibrate(gv)
    h, hv = g.qdq(gp, gv, s3, z3)
    fl = g.name("flatten")
    g.nodes.append(helper.make_node("Flatten", [h], [fl]))
    hv = hv.reshape(1, -1)
    wq = rng.integers(-127, 128, (10, 32)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, 10) / (127 * np.sqrt(32))).astype(f32)
    wn, wf = g.weight(wq, sw, 0)
    b = rng.uniform(-0.3, 0.3, 10).astype(f32)
    gm = g.name("gemm")
    g.nodes.append(helper.make_node("Gemm", [fl, wn, g.init("bf", b)], [gm], transB=1))
    gv = (np.matmul(hv.astype(np.float64), wf.astype(np.float64).T) + b).astype(f32)
    g.save(out_dir, "qdq_pool_head", [("x", x)], gm, gv)


def unfused(out_dir):
    # patterns the int8 fusion leaves to the float graph (standalone Q/DQ
    # loops around float primitives): a weight zero point that is not 0,
    # an activation DequantizeLinear also read by a float op (Sigmoid)
    x = rng.uniform(-1, 1, (1, 4, 6, 6)).astype(f32)
    g = Graph()
    h, hv, sx = input_qdq(g, x)
    wq = rng.integers(-100, 100, (8, 4, 3, 3)).astype(np.int8)
    sw = f32(1 / (127 * 6))
    d = g.name("w")
    g.nodes.append(helper.make_node("DequantizeLinear", [g.init("wq", wq), g.init("ws", np.array(sw)),
                                                         g.init("wz", np.array(3, np.int8))], [d]))
    wf = dequantize(wq, sw, 3)
    c = g.name("conv")
    g.nodes.append(helper.make_node("Conv", [h, d], [c], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    cv = conv_f(hv, wf, (1, 1), (1, 1, 1, 1), 1).astype(f32)
    s1, z1 = calibrate(cv)
    h1, hv1 = g.qdq(c, cv, s1, z1)
    sg = g.name("sigmoid")
    g.nodes.append(helper.make_node("Sigmoid", [h1], [sg]))
    sv = (1 / (1 + np.exp(-hv1.astype(np.float64)))).astype(f32)
    h2, hv2 = g.conv(h1, hv1, s1, 8, 1)
    a = g.name("add")
    g.nodes.append(helper.make_node("Add", [h2, sg], [a]))
    g.save(out_dir, "qdq_unfused_fallbacks", [("x", x)], a, (hv2 + sv).astype(f32))


def round_trip(out_dir):
    # exact ties: x / s lands on k + 0.5, with an odd zero point (ties to
    # even happen before the zero point is added), and saturation
    s = f32(0.25)
    x = np.concatenate([(np.arange(-12, 12) + 0.5) * 0.25, [-1000, 1000, 0.1, -0.1, 0.37]]).astype(f32)
    x = x.reshape(1, -1)
    zp = np.array(3, np.uint8)
    g = Graph()
    q, d = "q", "y"
    g.nodes += [helper.make_node("QuantizeLinear", ["x", "s", "zp"], [q]),
                helper.make_node("DequantizeLinear", [q, "s", "zp"], [d])]
    y = dequantize(quantize(x, s, zp), s, zp)
    save_typed_case(out_dir, "qdq_round_trip_ties", g.nodes, [("x", x)], [("y", y)],
                    [("s", np.array(s)), ("zp", zp)], opset=OPSET)


def main(out_dir):
    # every case here must be claimed whole: with VNNI the patterns become
    # int8 primitives, without it float layers between Q/DQ loops
    # (odn_build_fakequant.c)
    round_trip(out_dir)
    conv_chain(out_dir)
    residual(out_dir, False)
    residual(out_dir, True)
    residual(out_dir, "qdq")
    depthwise(out_dir)
    int8_activations(out_dir)
    matmul_gemm(out_dir)
    gemm_per_tensor(out_dir)
    pool_head(out_dir)
    unfused(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
