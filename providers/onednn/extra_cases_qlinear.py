#!/usr/bin/python3
"""QLinearConv and QLinearMatMul with constant weights, as QOperator-format
models (ONNX Runtime's quantize_static with QuantFormat.QOperator) hold
them: on CPUs without VNNI the oneDNN provider runs them as a float
convolution / packed GEMM of the centered integers plus a requantizing C
loop (odn_qlinear_float.c), with VNNI as int8 primitives. Cases: per-tensor
and per-channel w_scale/w_zero_point, uint8 and int8 x and w, int32 bias,
pads, strides, dilations, groups and depthwise, 1-D and 2-D, ties (power of
two scales, odd zero points), saturation, weights whose float sums would
pass 2^24 (split into 16 * hi + lo), and QLinearMatMul with per-tensor and
per-column b scales, 2-D and 3-D A. Expected outputs: the integer
convolution / matmul in int64, then ONNX's requantization in float64 (the
multiplier rounded in the scales' type, round half to even, then the zero
point, then saturation).
usage: extra_cases_qlinear.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper

# the same folder's case writer and integer references
from extra_cases import int_conv_grouped, save_typed_case

rng = np.random.default_rng(20261207)
f32 = np.float32


def q8(dtype, shape, lo=None, hi=None):
    info = np.iinfo(dtype)
    return rng.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1, shape).astype(dtype)


def requant(acc, bias, sx, sw, sy, zy):
    """ONNX QLinearMatMul's requantization of acc (..., N): the multiplier
    per column (or one) in the scales' type, round half to even, then the
    zero point, then saturation."""
    st = sx.dtype.type
    sw = np.asarray(sw).reshape(-1)
    mul = np.array([st(st(sx * s) / sy) for s in sw], np.float64)
    v = acc.astype(np.float64) + (0 if bias is None else bias.astype(np.float64))
    q = np.rint(v * mul) + int(zy)
    info = np.iinfo(zy.dtype)
    return np.clip(q, info.min, info.max).astype(zy.dtype)


def conv_case(out_dir, name, x, zx, w, zw, sx, sw, sy, zy, bias=None, strides=None, dil=None, pads=None, group=1):
    sp = x.ndim - 2
    st, dl, pd = strides or [1] * sp, dil or [1] * sp, pads or [0] * (2 * sp)
    acc = int_conv_grouped(x, zx, w, zw, st, dl, pd, group)
    shape = (1, -1) + (1,) * sp
    b = None if bias is None else bias.reshape(shape)
    swb = np.asarray(sw).reshape(-1)
    st_t = sx.dtype.type
    mul = np.array([st_t(st_t(sx * s) / sy) for s in swb], np.float64).reshape(shape)
    v = acc.astype(np.float64) + (0 if b is None else b.astype(np.float64))
    q = np.rint(v * mul) + int(zy)
    info = np.iinfo(zy.dtype)
    y = np.clip(q, info.min, info.max).astype(zy.dtype)
    ins = ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"] + (["B"] if bias is not None else [])
    attrs = dict(kernel_shape=list(w.shape[2:]))
    if strides: attrs["strides"] = strides
    if dil: attrs["dilations"] = dil
    if pads: attrs["pads"] = pads
    if group != 1: attrs["group"] = group
    inits = [("sx", sx), ("zx", zx), ("w", w), ("sw", sw), ("zw", zw), ("sy", sy), ("zy", zy)]
    if bias is not None: inits.append(("B", bias))
    save_typed_case(out_dir, name, [helper.make_node("QLinearConv", ins, ["y"], **attrs)], [("x", x)], [("y", y)],
                    inits)


def matmul_case(out_dir, name, a, za, b, zb, sa, sb, sy, zy):
    # zb per tensor or per column (broadcast along B's rows)
    acc = np.matmul(a.astype(np.int64) - int(za), b.astype(np.int64) - np.asarray(zb, np.int64).reshape(1, -1))
    y = requant(acc, None, sa, sb, sy, zy)
    save_typed_case(out_dir, name,
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a)], [("y", y)],
                    [("sa", sa), ("za", za), ("b", b), ("sb", sb), ("zb", zb), ("sy", sy), ("zy", zy)])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    u8, s8 = np.uint8, np.int8
    bias = lambda m: rng.integers(-3000, 3000, m).astype(np.int32)
    # per tensor, uint8 x and w, bias, symmetric pads, stride 2
    conv_case(out_dir, "odn_qlinearconv_u8_per_tensor", q8(u8, (2, 8, 9, 9)), u8(120), q8(u8, (6, 8, 3, 3)),
              u8(131), f32(0.02), f32(0.005), f32(0.3), u8(117), bias(6), strides=[2, 2], pads=[1, 1, 1, 1])
    # per channel int8 w (zero points 0), int8 x, asymmetric pads, int8 y
    m = 10
    conv_case(out_dir, "odn_qlinearconv_s8_per_channel", q8(s8, (1, 7, 8, 11)), s8(-5), q8(s8, (m, 7, 3, 2)),
              np.zeros(m, s8), f32(0.03), rng.uniform(0.001, 0.01, m).astype(f32), f32(0.4), s8(3), bias(m),
              pads=[0, 1, 2, 1])
    # per-channel nonzero uint8 weight zero points
    conv_case(out_dir, "odn_qlinearconv_u8_per_channel_zw", q8(u8, (1, 5, 7, 7)), u8(7), q8(u8, (4, 5, 3, 3)),
              q8(u8, (4,), 100, 150), f32(0.05), rng.uniform(0.002, 0.02, 4).astype(f32), f32(0.7), u8(1), bias(4),
              strides=[1, 2], pads=[1, 1, 1, 1])
    # two groups, dilation
    conv_case(out_dir, "odn_qlinearconv_group2", q8(u8, (1, 8, 10, 10)), u8(128), q8(s8, (6, 4, 3, 3)),
              np.zeros(6, s8), f32(0.02), rng.uniform(0.002, 0.01, 6).astype(f32), f32(0.25), u8(130), bias(6),
              dil=[2, 2], pads=[2, 2, 2, 2], group=2)
    # depthwise, stride 2, no bias, int8 y
    conv_case(out_dir, "odn_qlinearconv_depthwise", q8(u8, (1, 12, 9, 9)), u8(64), q8(s8, (12, 1, 3, 3)),
              np.zeros(12, s8), f32(0.04), rng.uniform(0.003, 0.02, 12).astype(f32), f32(0.2), s8(-7),
              strides=[2, 2], pads=[1, 1, 1, 1], group=12)
    # 1-D: int8 x, uint8 w per tensor, bias, pads, stride
    conv_case(out_dir, "odn_qlinearconv_1d", q8(s8, (2, 6, 30)), s8(10), q8(u8, (5, 6, 4)), u8(128), f32(0.03),
              f32(0.004), f32(0.2), u8(100), bias(5), strides=[2], pads=[1, 2])
    # ties: power-of-two scales (mul = 1/8), odd zero point
    conv_case(out_dir, "odn_qlinearconv_ties", q8(u8, (1, 3, 6, 6), 0, 20), u8(3), q8(s8, (4, 3, 2, 2), -9, 9),
              np.zeros(4, s8), f32(0.5), f32(0.25), f32(1.0), u8(77), pads=[1, 1, 1, 1])
    # float sums past 2^24 (full-range weights, 128 x 3 x 3 window, x near
    # 255): split into hi and lo; a bias brings the sums (some past 2^24)
    # back near 0 and mul = 1/8 makes sums of 4 mod 8 ties, so any rounding
    # of the float sums would show
    x = (255 - (rng.random((1, 128, 6, 6)) < 0.01)).astype(u8)
    w = q8(s8, (8, 128, 3, 3))
    w[:4] = np.where(w[:4] < 0, -128, 127)  # |w| sums of ~147,000: 255 x that is past 2^24
    w[:2] = np.abs(w[:2].astype(np.int64)).clip(0, 127).astype(s8)  # all positive: sums near 2^25
    acc = int_conv_grouped(x, 0, w, 0, [1, 1], [1, 1], [1, 1, 1, 1], 1)
    b = (-acc[0, :, 3, 3]).astype(np.int32)
    conv_case(out_dir, "odn_qlinearconv_split", x, u8(0), w, np.zeros(8, s8), f32(1.0), np.full(8, 0.125, f32),
              f32(1.0), u8(128), b, pads=[1, 1, 1, 1])
    # QLinearMatMul: per tensor uint8; per column int8 on a 3-D A; split
    matmul_case(out_dir, "odn_qlinearmatmul_u8_per_tensor", q8(u8, (5, 40)), u8(113), q8(u8, (40, 17)), u8(140),
                f32(0.02), f32(0.01), f32(0.5), u8(120))
    matmul_case(out_dir, "odn_qlinearmatmul_s8_per_column", q8(s8, (2, 3, 33)), s8(-3), q8(s8, (33, 9)),
                np.zeros(9, s8), f32(0.05), rng.uniform(0.001, 0.01, 9).astype(f32), f32(0.3), s8(5))
    # split B (full-range columns of 1500); A near its zero point
    b = np.where(q8(s8, (1500, 6)) < 0, -128, 127).astype(s8)
    a = (255 - (rng.random((4, 1500)) < 0.05) * rng.integers(1, 4, (4, 1500))).astype(u8)
    matmul_case(out_dir, "odn_qlinearmatmul_split", a, u8(255), b, s8(0), f32(0.5), f32(0.25), f32(4.0), u8(128))

if __name__ == "__main__":
    main(sys.argv[1])
