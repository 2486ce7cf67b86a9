#!/usr/bin/python3
"""Dynamically quantized matmuls as ONNX Runtime's quantize_dynamic writes
them: DynamicQuantizeLinear -> MatMulInteger (constant int8 or uint8
weights) -> Cast(float) -> Mul(x_scale * w_scale) -> Add(bias), on
activations whose rows are symbolic ([batch, seq, K]), and the same on a
CNN (ConvInteger on [N, C, H, W] with N, H, W symbolic). oneDNN must claim
each case whole (odn_build_dynquant.c, odn_build_quant.c): the plan is built
at the first run for the rows that arrive, with several data sets of
different sizes in one session. Expected outputs are numpy, following the
ONNX definitions in float32 (the int32 sums are exact).
usage: dynquant_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from extra_cases import cpu_flags
from shape_cases import save_case

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
rng = np.random.default_rng(20261207)


def dql(x):
    """DynamicQuantizeLinear in float32, ties to even."""
    lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
    scale = np.float32((np.float32(1) if hi == lo else np.float32(hi - lo)) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)))
    q = np.clip(np.rint((x / scale).astype(np.float32)) + zp, 0, 255).astype(np.uint8)
    return q, scale, np.uint8(zp)


def qmatmul(x, wq, wz, ws, b):
    q, s, z = dql(x)
    acc = (q.astype(np.int64) - int(z)) @ (wq.astype(np.int64) - int(wz))
    return (acc.astype(np.float32) * np.float32(s * ws)).astype(np.float32) + b


def weights(k, n, kind):
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    ws = np.float32(np.abs(w).max() / 127)
    if kind == "int8":  # symmetric, zero point 0 (quantize_dynamic's default)
        return np.clip(np.rint(w / ws), -127, 127).astype(np.int8), np.int8(0), ws
    # uint8 weights with a zero point that is not the shift oneDNN applies
    return np.clip(np.rint(w / ws) + 121, 0, 255).astype(np.uint8), np.uint8(121), ws


def node_chain(tag, x, nodes):
    nodes += [helper.make_node("DynamicQuantizeLinear", [x], [tag + "_q", tag + "_s", tag + "_z"], name=tag + "_dql"),
              helper.make_node("MatMulInteger", [tag + "_q", tag + "_w", tag + "_z", tag + "_wz"], [tag + "_i"],
                               name=tag + "_mmi"),
              helper.make_node("Cast", [tag + "_i"], [tag + "_f"], to=F, name=tag + "_cast"),
              helper.make_node("Mul", [tag + "_s", tag + "_ws"], [tag + "_sw"], name=tag + "_scale"),
              helper.make_node("Mul", [tag + "_f", tag + "_sw"], [tag + "_m"], name=tag + "_mul"),
              helper.make_node("Add", [tag + "_m", tag + "_b"], [tag + "_o"], name=tag + "_bias")]
    return tag + "_o"


def mlp_case(out_dir):
    """Two quantized layers (int8 then uint8 weights) with Relu between, on
    [batch, seq, 48]; data sets [1,5], [2,3] and [1,1] rows."""
    k, h, n = 48, 96, 40
    w1, z1, s1 = weights(k, h, "int8")
    w2, z2, s2 = weights(h, n, "uint8")
    b1 = (rng.standard_normal(h) * 0.1).astype(np.float32)
    b2 = (rng.standard_normal(n) * 0.1).astype(np.float32)
    nodes = []
    a = node_chain("fc1", "x", nodes)
    nodes.append(helper.make_node("Relu", [a], ["act"], name="relu"))
    y = node_chain("fc2", "act", nodes)
    nodes.append(helper.make_node("Identity", [y], ["y"], name="out"))
    inits = [("fc1_w", w1), ("fc1_wz", np.array(z1)), ("fc1_ws", np.array(s1)), ("fc1_b", b1),
             ("fc2_w", w2), ("fc2_wz", np.array(z2)), ("fc2_ws", np.array(s2)), ("fc2_b", b2)]
    sets = []
    for shape in ((1, 5), (2, 3), (1, 1)):
        x = rng.uniform(-2, 2, shape + (k,)).astype(np.float32)
        y1 = np.maximum(qmatmul(x, w1, z1, s1, b1), 0)
        sets.append(([x], [qmatmul(y1, w2, z2, s2, b2)]))
    save_case(out_dir, "odn_dynquant_mlp", nodes, [("x", F, ["batch", "seq", k])], [("y", F, ["batch", "seq", n])],
              sets, inits)


def conv_int(q, zq, w, zw, pad):
    """ConvInteger, NCHW, stride 1, square pads, in exact integers."""
    x = np.pad(q.astype(np.int64) - int(zq), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    wk = w.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
    n, _, h, wd = x.shape
    m, _, kh, kw = wk.shape
    y = np.zeros((n, m, h - kh + 1, wd - kw + 1), np.int64)
    for i in range(y.shape[2]):
        for j in range(y.shape[3]):
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", x[:, :, i:i + kh, j:j + kw], wk)
    return y


def conv_case(out_dir):
    """quantize_dynamic on a CNN: DynamicQuantizeLinear -> ConvInteger (uint8
    weights, a zero point per output channel) -> Cast -> Mul(scale) -> Relu,
    twice, on [N, 3, H, W] with N, H and W symbolic; data sets 1x9x7 and
    2x5x6."""
    nodes, inits, x, cin = [], [], "x", 3
    layers = []
    for i, cout in enumerate((8, 6)):
        w = rng.standard_normal((cout, cin, 3, 3)).astype(np.float32) / np.sqrt(cin * 9)
        ws = np.float32((w.max() - w.min()) / 255)
        wz = np.clip(np.rint(-w.min(axis=(1, 2, 3)) / ws), 0, 255).astype(np.uint8)
        wq = np.clip(np.rint(w / ws) + wz.reshape(-1, 1, 1, 1), 0, 255).astype(np.uint8)
        t = "conv%d" % i
        inits += [(t + "_w", wq), (t + "_wz", wz), (t + "_ws", np.array(ws))]
        nodes += [helper.make_node("DynamicQuantizeLinear", [x], [t + "_q", t + "_s", t + "_z"], name=t + "_dql"),
                  helper.make_node("ConvInteger", [t + "_q", t + "_w", t + "_z", t + "_wz"], [t + "_i"], pads=[1, 1, 1, 1],
                                   name=t + "_convint"),
                  helper.make_node("Cast", [t + "_i"], [t + "_f"], to=F, name=t + "_cast"),
                  helper.make_node("Mul", [t + "_s", t + "_ws"], [t + "_sw"], name=t + "_scale"),
                  helper.make_node("Mul", [t + "_f", t + "_sw"], [t + "_m"], name=t + "_mul"),
                  helper.make_node("Relu", [t + "_m"], [t + "_r"], name=t + "_relu")]
        layers.append((wq, wz, ws))
        x, cin = t + "_r", cout
    nodes.append(helper.make_node("Identity", [x], ["y"], name="out"))
    sets = []
    for shape in ((1, 3, 9, 7), (2, 3, 5, 6)):
        x0 = rng.uniform(-2, 2, shape).astype(np.float32)
        a = x0
        for wq, wz, ws in layers:
            q, s, z = dql(a)
            a = np.maximum((conv_int(q, z, wq, wz, 1).astype(np.float32) * np.float32(s * ws)).astype(np.float32), 0)
        sets.append(([x0], [a]))
    save_case(out_dir, "odn_dynquant_conv", nodes, [("x", F, ["N", 3, "H", "W"])], [("y", F, ["N", 6, "H", "W"])],
              sets, inits)


def cast_case(out_dir):
    """The exact Casts oneDNN takes: int32, int8 and uint8 to float32, int8
    and uint8 widened to int32; values at the ends of each range."""
    nodes = [helper.make_node("Cast", ["a"], ["af"], to=F, name="i32_f32"),
             helper.make_node("Cast", ["b"], ["bf"], to=F, name="i8_f32"),
             helper.make_node("Cast", ["c"], ["cf"], to=F, name="u8_f32"),
             helper.make_node("Cast", ["b"], ["bi"], to=I32, name="i8_i32"),
             helper.make_node("Cast", ["c"], ["ci"], to=I32, name="u8_i32")]
    a = np.array([[-2**31, -2**24 - 1, -1, 0, 7, 2**24 + 1, 2**31 - 1]], np.int32)
    b = np.array([[-128, -1, 0, 1, 127, 5, -7]], np.int8)
    c = np.array([[0, 1, 128, 254, 255, 3, 9]], np.uint8)
    outs = [a.astype(np.float32), b.astype(np.float32), c.astype(np.float32), b.astype(np.int32), c.astype(np.int32)]
    save_case(out_dir, "odn_dynquant_cast", nodes, [("a", I32, ["r", 7]), ("b", I8, ["r", 7]), ("c", U8, ["r", 7])],
              [("af", F, ["r", 7]), ("bf", F, ["r", 7]), ("cf", F, ["r", 7]), ("bi", I32, ["r", 7]),
               ("ci", I32, ["r", 7])], [([a, b, c], outs)])


def int32_case(out_dir):
    """MatMulInteger whose int32 product is read as int32 (no Cast after
    it): uint8 A with zero point 3 over symbolic rows, constant int8 B with
    zero point -2; numpy's exact integer product."""
    b = rng.integers(-128, 128, (40, 24)).astype(np.int8)
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])]
    sets = []
    for rows in (7, 13):
        a = rng.integers(0, 256, (rows, 40)).astype(np.uint8)
        sets.append(([a], [(a.astype(np.int32) - 3) @ (b.astype(np.int32) + 2)]))
    save_case(out_dir, "odn_dynquant_int32_product", nodes, [("a", U8, ["r", 40])], [("y", I32, ["r", 24])], sets,
              [("b", b), ("za", np.array(3, np.uint8)), ("zb", np.array(-2, np.int8))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    # every case here must be claimed whole: with VNNI as int8 primitives,
    # without it in float (odn_build_intgemm.c, odn_build_convint.c), where
    # MatMulInteger needs AVX2 (odn_sgemm.c)
    flags = cpu_flags()
    if "avx512_vnni" in flags or "avx_vnni" in flags or ("avx2" in flags and "fma" in flags):
        mlp_case(out_dir)
        int32_case(out_dir)
    conv_case(out_dir)
    cast_case(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
