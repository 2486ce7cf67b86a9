#!/usr/bin/python3
"""QDQ cases for the int16 path of AVX2 CPUs without VNNI (odn_qdq_i16.c,
odn_igemm.c): full-range int8 weights, so the plan has no int8 primitives
and Conv/MatMul/Gemm run on the exact int16 GEMM. Shapes that hit its
edges: batch 2, stride 2 with asymmetric pads, dilation 2, 1x1 kernels at
stride 1 (read in place) and 2 (gathered), channel counts short of the
16-column panel and the 6-row tile, depths past the 512-row K slice, int8
activations, no bias, a Conv writing the graph's uint8 output itself
(a reorder from NHWC), MatMul on a 3-D input and Gemm(transB); and sums a
saturating 16-bit pair kernel would get wrong (every x - zx = 255 against
every w = -127: pair sums of -64,770; uint8 output).

Expected outputs come from numpy following ONNX's float graph
(qdq_cases.py's helpers: DequantizeLinear, the float op in float64,
QuantizeLinear rounding half to even). The int16 path sums exactly and
scales once, so an output may land one quantization step away where the
float graph lies within rounding of a boundary: the float-output cases
are checked with --atol ATOL (one step of the output scale), the
uint8-output case with --atol 1.
usage: qdq_i16_cases.py OUT_DIR (writes OUT_DIR/float.list and
OUT_DIR/u8.list: the case dirs of each group)
"""
import os
import sys

import numpy as np
from onnx import helper

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qdq_cases as q  # noqa: E402
from extra_cases import save_typed_case  # noqa: E402

rng = np.random.default_rng(20261207)
f32 = np.float32
ATOL = q.ATOL


def dilate(w, d):
    """A kernel with d - 1 zeros between taps: the dilated convolution as a
    plain one."""
    if d == 1:
        return w
    k = w.shape[2]
    out = np.zeros(w.shape[:2] + ((k - 1) * d + 1,) * 2, w.dtype)
    out[:, :, ::d, ::d] = w
    return out


def conv(g, x_name, x, sx, cout, k, strides=(1, 1), pads=(0, 0, 0, 0), dil=1, bias=True, wq=None):
    """Conv with full-range per-channel int8 weights (and an int32 bias)."""
    cin = x.shape[1]
    if wq is None:
        wq = rng.integers(-128, 128, (cout, cin, k, k)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, cout) / (127 * np.sqrt(cin * k * k))).astype(f32)
    wn, wf = g.weight(wq, sw, 0)
    ins = [x_name, wn]
    y = q.conv_f(x, dilate(wf, dil), strides, pads, 1)
    if bias:
        bn, bf = g.bias(rng.uniform(-0.3, 0.3, cout), sx, sw)
        ins.append(bn)
        y = y + bf.astype(np.float64).reshape(1, -1, 1, 1)
    out = g.name("conv")
    g.nodes.append(helper.make_node("Conv", ins, [out], kernel_shape=[k, k], strides=list(strides),
                                    pads=list(pads), dilations=[dil, dil]))
    return out, y.astype(f32)


def requant(g, name, v, dtype=np.uint8):
    s, z = q.calibrate(v, dtype)
    h, hv = g.qdq(name, v, s, z)
    return h, hv, s


def geometry(out_dir):
    # batch 2: Conv 3x3 stride 2, pads (1, 0, 2, 1), 5 -> 19 channels ->
    # Relu -> Conv 3x3 dilation 2, pads 2, 19 -> 70 -> Conv 1x1 (in place)
    # 70 -> 33, no bias -> Conv 1x1 stride 2 (gathered) 33 -> 17
    x = rng.uniform(-1, 1, (2, 5, 13, 11)).astype(f32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x, zp=131)
    c, cv = conv(g, h, hv, s, 19, 3, (2, 2), (1, 0, 2, 1))
    c, cv = g.relu(c, cv)
    h, hv, s = requant(g, c, cv)
    c, cv = conv(g, h, hv, s, 70, 3, pads=(2, 2, 2, 2), dil=2)
    h, hv, s = requant(g, c, cv)
    c, cv = conv(g, h, hv, s, 33, 1, bias=False)
    h, hv, s = requant(g, c, cv)
    c, cv = conv(g, h, hv, s, 17, 1, (2, 2))
    g.save(out_dir, "qdq_i16_geometry", [("x", x)], c, cv)


def deep(out_dir):
    # depths 576 and 1152 (past the 512-row slice), int8 activations in
    x = rng.uniform(-1, 1, (1, 64, 9, 9)).astype(f32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x, np.int8, zp=-3)
    c, cv = conv(g, h, hv, s, 128, 3, pads=(1, 1, 1, 1))
    c, cv = g.relu(c, cv)
    h, hv, s = requant(g, c, cv, np.int8)
    c, cv = conv(g, h, hv, s, 40, 3, (2, 2), (1, 1, 1, 1))
    g.save(out_dir, "qdq_i16_deep", [("x", x)], c, cv, np.int8)


def extremes(out_dir):
    # every x - zx = 255 (uint8 255, zero point 0) against every w = -127:
    # pair sums of -64,770, where a 16-bit saturating pair sum stops at
    # -32,768; the output (uint8, the graph's) is scaled for the exact sums
    x = np.full((1, 32, 6, 6), 2.0, f32)
    g = q.Graph()
    h, hv = g.qdq("x", x, f32(2.0 / 255), np.array(0, np.uint8))
    wq = np.full((24, 32, 3, 3), -127, np.int8)
    c, cv = conv(g, h, hv, f32(2.0 / 255), 24, 3, pads=(1, 1, 1, 1), bias=False, wq=wq)
    sy, zy = f32(float(-cv.min()) / 250.0), np.array(255, np.uint8)
    qn, sn, zn = "y", g.init("s", np.array(sy, f32)), g.init("zp", zy)
    g.nodes.append(helper.make_node("QuantizeLinear", [c, sn, zn], [qn]))
    save_typed_case(out_dir, "qdq_i16_extremes", g.nodes, [("x", x)], [("y", q.quantize(cv, sy, zy))], g.inits,
                    opset=q.OPSET)


def matmul_gemm(out_dir):
    # MatMul [2, 3, 600] x [600, 37] (per-column weights) -> Q/DQ ->
    # Reshape [6, 37] -> Q/DQ -> Gemm transB [6, 37] x [21, 37]^T, float bias
    x = rng.uniform(-1, 1, (2, 3, 600)).astype(f32)
    g = q.Graph()
    h, hv, sx = q.input_qdq(g, x, zp=7)
    wq = rng.integers(-128, 128, (600, 37)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, 37) / (127 * np.sqrt(600))).astype(f32)
    wn, wf = g.weight(wq, sw, 1)
    m = g.name("matmul")
    g.nodes.append(helper.make_node("MatMul", [h, wn], [m]))
    mv = np.matmul(hv.astype(np.float64), wf.astype(np.float64)).astype(f32)
    h, hv, s = requant(g, m, mv)
    r = g.name("reshape")
    g.nodes.append(helper.make_node("Reshape", [h, g.init("shape", np.array([6, 37], np.int64))], [r]))
    hv = hv.reshape(6, 37)
    h, hv, s = requant(g, r, hv)
    wq2 = rng.integers(-128, 128, (21, 37)).astype(np.int8)
    sw2 = (rng.uniform(0.5, 1.5, 21) / (127 * np.sqrt(37))).astype(f32)
    wn2, wf2 = g.weight(wq2, sw2, 0)
    b = rng.uniform(-0.3, 0.3, 21).astype(f32)
    gm = g.name("gemm")
    g.nodes.append(helper.make_node("Gemm", [h, wn2, g.init("bf", b)], [gm], transB=1))
    gv = (np.matmul(hv.astype(np.float64), wf2.astype(np.float64).T) + b).astype(f32)
    g.save(out_dir, "qdq_i16_matmul_gemm", [("x", x)], gm, gv)


def u8_output(out_dir):
    # the graph's output is a Conv's QuantizeLinear output (uint8)
    x = rng.uniform(-1, 1, (1, 8, 7, 7)).astype(f32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x)
    c, cv = conv(g, h, hv, s, 20, 3, pads=(1, 1, 1, 1))
    c, cv = g.relu(c, cv)
    sy, zy = q.calibrate(cv)
    qn, sn, zn = "y", g.init("s", np.array(sy, f32)), g.init("zp", zy)
    g.nodes.append(helper.make_node("QuantizeLinear", [c, sn, zn], [qn]))
    save_typed_case(out_dir, "qdq_i16_u8_output", g.nodes, [("x", x)], [("y", q.quantize(cv, sy, zy))], g.inits,
                    opset=q.OPSET)


def clip_act(out_dir):
    # Conv -> Clip(0, hi) -> Q (ReLU6 as MobileNet exports write it), the Q
    # calibrated on the unclipped range so both bounds bite; then Conv ->
    # Clip(max only) on int8 activations: the int16 layer clamps its
    # requantized integers at Q(lo), Q(hi)
    x = rng.uniform(-1, 1, (1, 16, 10, 10)).astype(f32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x)
    c, cv = conv(g, h, hv, s, 24, 3, pads=(1, 1, 1, 1))
    hi = float(np.percentile(cv, 70))
    clipped = g.name("clip")
    g.nodes.append(helper.make_node("Clip", [c, g.init("lo", np.array(0, f32)), g.init("hi", np.array(hi, f32))],
                                    [clipped]))
    sq, zq = q.calibrate(cv)
    h, hv = g.qdq(clipped, np.clip(cv, 0, hi).astype(f32), sq, zq)
    c, cv = conv(g, h, hv, sq, 12, 1)
    top = float(np.percentile(cv, 40))
    clipped = g.name("clip")
    g.nodes.append(helper.make_node("Clip", [c, "", g.init("hi", np.array(top, f32))], [clipped]))
    sq, zq = q.calibrate(cv, np.int8)
    h, hv = g.qdq(clipped, np.minimum(cv, top).astype(f32), sq, zq)
    c, cv = conv(g, h, hv, sq, 8, 1)
    g.save(out_dir, "qdq_i16_clip", [("x", x)], c, cv)


def dwconv(g, x_name, x, sx, k, strides=(1, 1), pads=(0, 0, 0, 0), dil=1, bias=True):
    """Depthwise Conv (group = channels) with full-range per-channel int8
    weights."""
    cin = x.shape[1]
    wq = rng.integers(-128, 128, (cin, 1, k, k)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, cin) / (127 * k)).astype(f32)
    wn, wf = g.weight(wq, sw, 0)
    ins = [x_name, wn]
    y = q.conv_f(x, dilate(wf, dil), strides, pads, cin)
    if bias:
        bn, bf = g.bias(rng.uniform(-0.3, 0.3, cin), sx, sw)
        ins.append(bn)
        y = y + bf.astype(np.float64).reshape(1, -1, 1, 1)
    out = g.name("dw")
    g.nodes.append(helper.make_node("Conv", ins, [out], kernel_shape=[k, k], strides=list(strides), pads=list(pads),
                                    dilations=[dil, dil], group=cin))
    return out, y.astype(f32)


def depthwise(out_dir):
    # MobileNet blocks, batch 2: Conv 1x1 6 -> 20 -> Q -> depthwise 3x3
    # stride 2, pads 1 (20 channels: a tail of 4 lanes) -> Relu -> Q (int8)
    # -> depthwise 5x5 dilation 2, pads 4, no bias -> Q -> Conv 1x1 -> 7
    x = rng.uniform(-1, 1, (2, 6, 15, 13)).astype(f32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x)
    c, cv = conv(g, h, hv, s, 20, 1)
    h, hv, s = requant(g, c, cv)
    c, cv = dwconv(g, h, hv, s, 3, (2, 2), (1, 1, 1, 1))
    c, cv = g.relu(c, cv)
    h, hv, s = requant(g, c, cv, np.int8)
    c, cv = dwconv(g, h, hv, s, 5, pads=(4, 4, 4, 4), dil=2, bias=False)
    h, hv, s = requant(g, c, cv)
    c, cv = conv(g, h, hv, s, 7, 1)
    g.save(out_dir, "qdq_i16_depthwise", [("x", x)], c, cv)


def main(out_dir):
    geometry(out_dir)
    depthwise(out_dir)
    clip_act(out_dir)
    deep(out_dir)
    extremes(out_dir)
    matmul_gemm(out_dir)
    u8_output(out_dir)
    lists = {"float.list": ["qdq_i16_geometry", "qdq_i16_deep", "qdq_i16_matmul_gemm", "qdq_i16_clip",
                           "qdq_i16_depthwise"],
             "u8.list": ["qdq_i16_extremes", "qdq_i16_u8_output"]}
    for f, names in lists.items():
        with open(os.path.join(out_dir, f), "w") as fh:
            fh.write(" ".join(os.path.join(out_dir, n) for n in names) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
