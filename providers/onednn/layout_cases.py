#!/usr/bin/python3
"""Backend-style cases for paths of the oneDNN provider that depend on
layouts and constants, which the suite does not reach: a 3x3 convolution of
64 channels followed by SiLU or HardSwish inside a piece (odn_conv_wino.c
runs it as Winograd with the activation after it, where the CPU has
Winograd); a spatial ReduceMean after a convolution, with and without
keepdims and as a piece output or before a MatMul (odn_build_reduce.c runs
it as global pooling); a MatMul by the Transpose of an initializer, as a
tied LM head does (the transposed view is reordered
once, as constant weights); a channel softmax written as Transpose ->
(Log)Softmax -> Transpose back, after a convolution, and softmax over a
middle axis with -inf entries (odn_fuse_softmax.c, odn_softmax_loop.c: one
vectorised loop over the contiguous positions); an NHWC image normalised
per channel after a Transpose to NCHW, as tf2onnx exports it (a C loop
instead of oneDNN's slow binary on 3 channels-last channels); squeeze-
excitation scales folded into the next 1x1 convolution or applied by a C
loop in the tensor's layout, and Add/Sub/Div of per-channel constants. Expected
values are computed
in float64 numpy from the ONNX formulas.
usage: layout_cases.py OUT_DIR (prints the case dirs)
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extra_cases import save_typed_case  # noqa: E402

rng = np.random.default_rng(20261203)


def conv3x3(x, w, b):
    """Conv with pads 1, stride 1: x [N,C,H,W], w [M,C,3,3], b [M]."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("mc,nchw->nmhw", w[:, :, i, j], xp[:, :, i:i + h, j:j + wd])
    return y + b.reshape(1, -1, 1, 1)


def conv1x1(x, w):
    return np.einsum("oc,nc...->no...", w, x)


def silu(x):
    return x / (1.0 + np.exp(-x))


def hardswish(x):
    return x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)


def wino_cases(out_dir):
    for name, act, opset in (("odn_conv3x3_silu_chain", "silu", 13), ("odn_conv3x3_hardswish_chain", "hardswish", 14)):
        x = rng.standard_normal((1, 64, 10, 12)).astype(np.float32)
        w1 = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
        b1 = (rng.standard_normal(64) * 0.1).astype(np.float32)
        w2 = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
        b2 = np.zeros(64, np.float32)
        c = conv3x3(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64))
        a = silu(c) if act == "silu" else hardswish(c)
        y = conv3x3(a, w2.astype(np.float64), b2.astype(np.float64))
        nodes = [helper.make_node("Conv", ["X", "W1", "B1"], ["C"], pads=[1, 1, 1, 1])]
        if act == "silu":
            nodes += [helper.make_node("Sigmoid", ["C"], ["S"]), helper.make_node("Mul", ["C", "S"], ["A"])]
        else:
            nodes += [helper.make_node("HardSwish", ["C"], ["A"])]
        nodes += [helper.make_node("Conv", ["A", "W2", "B2"], ["Y"], pads=[1, 1, 1, 1])]
        save_typed_case(out_dir, name, nodes, [("X", x)], [("Y", y.astype(np.float32))],
                        [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2)], opset=opset)


def mean_pool_cases(out_dir):
    for name, shape, keep, head in (("odn_conv_mean_pool_keepdims0", (2, 32, 5, 5), 0, False),
                                    ("odn_conv_mean_pool_keepdims1_out", (1, 16, 7, 6), 1, False),
                                    ("odn_conv_mean_pool_head_matmul", (2, 24, 4, 4), 0, True)):
        x = rng.standard_normal(shape).astype(np.float32)
        wc = rng.standard_normal((shape[1], shape[1])).astype(np.float32)
        c = conv1x1(x.astype(np.float64), wc.astype(np.float64))
        m = c.mean(axis=(2, 3), keepdims=bool(keep))
        nodes = [helper.make_node("Conv", ["X", "WC"], ["C"]),
                 helper.make_node("ReduceMean", ["C"], ["M" if head else "Y"], axes=[2, 3], keepdims=keep)]
        inits = [("WC", wc.reshape(shape[1], shape[1], 1, 1).copy())]
        y = m
        if head:
            wm = rng.standard_normal((shape[1], 5)).astype(np.float32)
            nodes.append(helper.make_node("MatMul", ["M", "WM"], ["Y"]))
            inits.append(("WM", wm))
            y = m @ wm.astype(np.float64)
        # opset 13: axes as the attribute tf2onnx and PyTorch write
        save_typed_case(out_dir, name, nodes, [("X", x)], [("Y", y.astype(np.float32))], inits, opset=13)


def tied_head_cases(out_dir):
    for name, shape in (("odn_tied_head_rank3", (2, 5, 8)), ("odn_tied_head_rank2", (6, 8))):
        emb = rng.standard_normal((12, 8)).astype(np.float32)
        x = rng.standard_normal(shape).astype(np.float32)
        nodes = [helper.make_node("Transpose", ["E"], ["ET"], perm=[1, 0]),
                 helper.make_node("MatMul", ["X", "ET"], ["L"]),
                 helper.make_node("Relu", ["L"], ["Y"])]
        y = np.maximum(x.astype(np.float64) @ emb.T.astype(np.float64), 0)
        save_typed_case(out_dir, name, nodes, [("X", x)],
                        [("Y", y.astype(np.float32))], [("E", emb)], opset=13)


def softmax(x, axis, log=False):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return (x - m - np.log(s)) if log else e / s


def softmax_cases(out_dir):
    # channel softmax through NHWC, as an FCN head exports it; 5x7 positions
    # (35: two 16-lane vectors and a tail of 3), 21 classes
    for name, op, opset in (("odn_transposed_softmax_opset9", "Softmax", 9),
                            ("odn_transposed_logsoftmax_opset13", "LogSoftmax", 13)):
        x = rng.standard_normal((2, 8, 5, 7)).astype(np.float32)
        w = rng.standard_normal((21, 8)).astype(np.float32)
        c = conv1x1(x.astype(np.float64), w.astype(np.float64))
        y = softmax(c, 1, log=op == "LogSoftmax")
        nodes = [helper.make_node("Conv", ["X", "W"], ["C"]),
                 helper.make_node("Transpose", ["C"], ["T"], perm=[0, 2, 3, 1]),
                 helper.make_node(op, ["T"], ["S"], axis=3),
                 helper.make_node("Transpose", ["S"], ["Y"], perm=[0, 3, 1, 2])]
        save_typed_case(out_dir, name, nodes, [("X", x)], [("Y", y.astype(np.float32))],
                        [("W", w.reshape(21, 8, 1, 1).copy())], opset=opset)
    # a middle axis over 70 positions (block of 64 and a tail of 6), with
    # masked (-inf) entries and one row large enough to underflow the rest
    x = rng.standard_normal((3, 9, 70)).astype(np.float32) * 4
    x[:, 2, :] = -np.inf
    x[1, 4, 5] = 200.0
    nodes = [helper.make_node("Softmax", ["X"], ["Y"], axis=1)]
    save_typed_case(out_dir, "odn_softmax_middle_axis_masked", nodes, [("X", x)],
                    [("Y", softmax(x.astype(np.float64), 1).astype(np.float32))], [], opset=13)


def normalise_cases(out_dir):
    x = rng.uniform(0, 255, (2, 9, 11, 3)).astype(np.float32)
    mean = np.array([123.7, 116.3, 103.5], np.float32).reshape(1, 3, 1, 1)
    std = np.array([58.4, 57.1, 57.4], np.float32).reshape(1, 3, 1, 1)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    t = x.astype(np.float64).transpose(0, 3, 1, 2)
    y = conv1x1((t - mean) / std, w.astype(np.float64))
    nodes = [helper.make_node("Transpose", ["X"], ["T"], perm=[0, 3, 1, 2]),
             helper.make_node("Sub", ["T", "MEAN"], ["S"]),
             helper.make_node("Div", ["S", "STD"], ["N"]),
             helper.make_node("Conv", ["N", "W"], ["Y"])]
    save_typed_case(out_dir, "odn_nhwc_image_normalised", nodes, [("X", x)], [("Y", y.astype(np.float32))],
                    [("MEAN", mean), ("STD", std), ("W", w.reshape(8, 3, 1, 1).copy())], opset=13)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def se_cases(out_dir):
    """Squeeze-excitation scales: Conv -> GlobalAveragePool -> Sigmoid ->
    Mul(x, s) -> 1x1 Conv. One image and a map larger than the projection's
    outputs: the Mul is folded into the projection's weights
    (odn_fold_scale.c). A 4x4 map, or two images: a C loop in the tensor's
    layout (odn_channel_loop.c), also for Add/Sub/Div of a constant
    [1,C,1,1] operand."""
    for name, shape, m in (("odn_se_scale_folded", (1, 32, 20, 20), 16),
                           ("odn_se_scale_small_map", (1, 64, 4, 4), 64),
                           ("odn_se_scale_two_images", (2, 32, 8, 8), 16)):
        x = rng.standard_normal(shape).astype(np.float32)
        c = shape[1]
        w1 = (rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32)
        b1 = (rng.standard_normal(c) * 0.1).astype(np.float32)
        w2 = (rng.standard_normal((m, c)) * 0.1).astype(np.float32)
        b2 = (rng.standard_normal(m) * 0.1).astype(np.float32)
        a = conv3x3(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64))
        sc = sigmoid(a.mean(axis=(2, 3), keepdims=True))
        y = conv1x1(a * sc, w2.astype(np.float64)) + b2.reshape(1, -1, 1, 1)
        nodes = [helper.make_node("Conv", ["X", "W1", "B1"], ["A"], pads=[1, 1, 1, 1]),
                 helper.make_node("GlobalAveragePool", ["A"], ["G"]),
                 helper.make_node("Sigmoid", ["G"], ["S"]),
                 helper.make_node("Mul", ["A", "S"], ["M"]),
                 helper.make_node("Conv", ["M", "W2", "B2"], ["Y"])]
        save_typed_case(out_dir, name, nodes, [("X", x)], [("Y", y.astype(np.float32))],
                        [("W1", w1), ("B1", b1), ("W2", w2.reshape(m, c, 1, 1).copy()), ("B2", b2)], opset=13)
    for op in ("Add", "Sub", "Div"):
        x = rng.standard_normal((2, 32, 6, 6)).astype(np.float32)
        w1 = (rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32)
        b1 = np.zeros(32, np.float32)
        k = rng.uniform(0.5, 2.0, (1, 32, 1, 1)).astype(np.float32)
        a = conv3x3(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64))
        y = {"Add": a + k, "Sub": a - k, "Div": a / k}[op]
        nodes = [helper.make_node("Conv", ["X", "W1"], ["A"], pads=[1, 1, 1, 1]),
                 helper.make_node(op, ["A", "K"], ["B"]),
                 helper.make_node("Relu", ["B"], ["Y0"]),
                 helper.make_node("Sub", ["Y0", "Y0"], ["Z"]),
                 helper.make_node("Add", ["B", "Z"], ["Y"])]
        save_typed_case(out_dir, "odn_channel_operand_" + op.lower(), nodes, [("X", x)], [("Y", y.astype(np.float32))],
                        [("W1", w1), ("K", k)], opset=13)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    se_cases(out_dir)
    wino_cases(out_dir)
    mean_pool_cases(out_dir)
    tied_head_cases(out_dir)
    softmax_cases(out_dir)
    normalise_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
