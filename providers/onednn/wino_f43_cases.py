#!/usr/bin/python3
"""Backend-style cases for 3x3 stride-1 convolutions on the oneDNN
provider's AVX2 Winograd F(4x4, 3x3) step (odn_build_conv_wino_f43.c),
taken where oneDNN has no Winograd kernel (CPUs without AVX-512): a ResNet
basic block (BatchNormalization folded, ReLU in the kernel, the residual
Add accumulated into the residual's buffer, ReLU after it), bias with SiLU
and with Clip (oneDNN eltwise steps after the loop), pads 0 and 2 and
asymmetric, sizes that leave partial 4x4 tiles, batch 2, 24 and 40
channels, an NHWC producer (a tiled ConvTranspose), a dynamic-shape piece
run at two sizes in one session, and dilations 2-4 (as interleaved
sub-grids; asymmetric pads, batch 2). Left to oneDNN, and still right: a
piece output (plain layout), 8 channels, stride 2, dilation 2 with pads
of 1, a per-channel
Mul after the convolution (a binary post-op), an Add whose other operand is
the convolution's own input. Expected outputs from numpy in float64.

usage: wino_f43_cases.py OUT_DIR        (prints the case dirs)
       wino_f43_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails, onednn does not claim every node, or the Winograd step
         runs (or not) other than each case expects; on a CPU with AVX-512
         (oneDNN's own Winograd) only the results are checked. Exit 77
         without onnx or onednn.
"""
import os
import sys

try:
    import numpy as np
    from onnx import TensorProto, helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import (cpu_flags, float_conv, has_onednn, save_declared_case, save_typed_case,
                             step_placement_failures, test_cases, written_cases)

    rng = np.random.default_rng(20261208)

OURS = "winograd_f43:avx2"


def f32(a):
    return np.asarray(a).astype(np.float32)


def weights(m, c, k=3):
    return f32(rng.standard_normal((m, c, k, k)) * np.sqrt(2.0 / (c * k * k)))


def conv(x, w, b=None, pads=(1, 1, 1, 1)):
    """ONNX Conv, stride 1; pads top, left, bottom, right."""
    y = float_conv(x, w, [1, 1], [pads[0], pads[1], pads[2], pads[3]])
    return y if b is None else y + b.astype(np.float64).reshape(1, -1, 1, 1)


def bn(x, p):
    s, t, mean, var = [a.astype(np.float64).reshape(1, -1, 1, 1) for a in p]
    return (x - mean) / np.sqrt(var + 1e-5) * s + t


def bn_params(m):
    return [f32(rng.uniform(0.5, 1.5, m)), f32(rng.standard_normal(m) * 0.1),
            f32(rng.standard_normal(m) * 0.1), f32(rng.uniform(0.5, 1.5, m))]


def relu(a):
    return np.maximum(a, 0)


def stem(x, c):
    """A 3x3 convolution + ReLU from 4 channels to c: the case's convolution
    then reads oneDNN's blocked output, as inside a network."""
    w0 = weights(c, x.shape[1])
    return [helper.make_node("Conv", ["x", "w0"], ["s0"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["s0"], ["s"])], \
        [("w0", w0)], f32(relu(conv(x, w0)))


def basic_block(out):
    """ResNet basic block: relu(bn(conv(relu(bn(conv(s))))) + s), pooled
    (so the block's output is not the piece's)."""
    c = 64
    x = f32(rng.standard_normal((1, 4, 14, 14)))
    nodes, inits, s = stem(x, c)
    w1, w2, p1, p2 = weights(c, c), weights(c, c), bn_params(c), bn_params(c)
    names = ["g", "b", "m", "v"]
    inits += [("w1", w1), ("w2", w2)] + [(n + "1", a) for n, a in zip(names, p1)] + \
        [(n + "2", a) for n, a in zip(names, p2)]
    nodes += [helper.make_node("Conv", ["s", "w1"], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("BatchNormalization", ["c1", "g1", "b1", "m1", "v1"], ["n1"]),
              helper.make_node("Relu", ["n1"], ["r1"]),
              helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
              helper.make_node("BatchNormalization", ["c2", "g2", "b2", "m2", "v2"], ["n2"]),
              helper.make_node("Add", ["n2", "s"], ["a"]),
              helper.make_node("Relu", ["a"], ["r2"]),
              helper.make_node("MaxPool", ["r2"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    r1 = relu(bn(conv(s, w1), p1))
    y = relu(bn(conv(r1, w2), p2) + s).reshape(1, c, 7, 2, 7, 2).max(axis=(3, 5))
    save_typed_case(out, "odn_wino_resnet_block", nodes, [("x", x)], [("y", f32(y))], inits)


def single(out, name, c, m, h, w, pads=(1, 1, 1, 1), bias=True, act=None, batch=1, producer=True, tail=None):
    """stem (when producer) -> Conv 3x3 -> act -> tail (a last op that keeps
    the result off the piece output: the Conv's output feeds it)."""
    x = f32(rng.standard_normal((batch, 4 if producer else c, h, w)))
    nodes, inits, s = stem(x, c) if producer else ([], [], x)
    src = "s" if producer else "x"
    wt, bt = weights(m, c), (f32(rng.standard_normal(m) * 0.1) if bias else None)
    inits += [("w", wt)] + ([("bias", bt)] if bias else [])
    nodes.append(helper.make_node("Conv", [src, "w"] + (["bias"] if bias else []), ["c"],
                                  pads=[pads[0], pads[1], pads[2], pads[3]]))
    y = conv(s, wt, bt, pads)
    last = "c"
    if act == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["ca"]))
        y, last = relu(y), "ca"
    elif act == "silu":
        nodes += [helper.make_node("Sigmoid", ["c"], ["sg"]), helper.make_node("Mul", ["c", "sg"], ["ca"])]
        y, last = y / (1 + np.exp(-y)), "ca"
    elif act == "clip":
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["ca"]))
        inits += [("lo", f32(0.0)), ("hi", f32(6.0))]
        y, last = np.clip(y, 0, 6), "ca"
    elif act == "scale":  # a per-channel Mul: a binary post-op
        sc = f32(rng.uniform(0.5, 2, (1, m, 1, 1)))
        nodes.append(helper.make_node("Mul", ["c", "sc"], ["ca"]))
        inits.append(("sc", sc))
        y, last = y * sc, "ca"
    elif act == "self_add":  # conv(s) + s: the residual is the input
        nodes.append(helper.make_node("Add", ["c", src], ["ca"]))
        y, last = y + s, "ca"
    if tail == "pool":
        nodes.append(helper.make_node("MaxPool", [last], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
        hh, ww = y.shape[2] // 2 * 2, y.shape[3] // 2 * 2
        y = y[:, :, :hh, :ww].reshape(y.shape[0], y.shape[1], hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
    else:
        nodes[-1].output[0] = "y"
    save_typed_case(out, name, nodes, [("x", x)], [("y", f32(y))], inits)


def nhwc_producer(out):
    """A tiled ConvTranspose of 16 channels (it leaves NHWC) feeding the
    3x3 convolution."""
    x = f32(rng.standard_normal((1, 8, 7, 9)))
    w0 = f32(rng.standard_normal((8, 16, 2, 2)) * 0.3)
    t = np.einsum("nchw,cmij->nmhiwj", x.astype(np.float64), w0.astype(np.float64)).reshape(1, 16, 14, 18)
    wt = weights(32, 16)
    y = relu(conv(t, wt))
    nodes = [helper.make_node("ConvTranspose", ["x", "w0"], ["t"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["t", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    y = y.reshape(1, 32, 7, 2, 9, 2).max(axis=(3, 5))
    save_typed_case(out, "odn_wino_nhwc_input", nodes, [("x", x)], [("y", f32(y))], [("w0", w0), ("w", wt)])


def strided(out, name, stride, dil, pads=(2, 2, 2, 2), hw=(15, 15), batch=1):
    """3x3 strided or dilated (pads top, left, bottom, right): dilated ones
    run as dil x dil interleaved sub-grids when the pads are multiples of
    dil, others stay oneDNN's."""
    c = 32
    x = f32(rng.standard_normal((batch, 4) + hw))
    nodes, inits, s = stem(x, c)
    wt = weights(c, c)
    inits.append(("w", wt))
    nodes += [helper.make_node("Conv", ["s", "w"], ["c"], pads=list(pads), strides=[stride, stride],
                               dilations=[dil, dil]),
              helper.make_node("Relu", ["c"], ["r"]),
              # a 1x1 pooling keeps the convolution off the piece output
              helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[1, 1])]
    sp = np.pad(s.astype(np.float64), [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    k = (3 - 1) * dil + 1
    oh, ow = (sp.shape[2] - k) // stride + 1, (sp.shape[3] - k) // stride + 1
    y = np.zeros((batch, c, oh, ow))
    for i in range(3):
        for j in range(3):
            patch = sp[:, :, i * dil:i * dil + (oh - 1) * stride + 1:stride, j * dil:j * dil + (ow - 1) * stride + 1:stride]
            y += np.einsum("nchw,mc->nmhw", patch, wt[:, :, i, j].astype(np.float64))
    save_typed_case(out, name, nodes, [("x", x)], [("y", f32(relu(y)))], inits)


def dynamic(out):
    """Symbolic H and W: one session plans two sizes (the transformed filter
    made by the first plan, found by the second)."""
    c = 32
    w0, w1 = weights(c, 4), weights(c, c)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["s0"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["s0"], ["s"]),
             helper.make_node("Conv", ["s", "w1"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    sets = []
    for h, w in ((12, 16), (18, 10)):
        x = f32(rng.standard_normal((1, 4, h, w)))
        y = relu(conv(relu(conv(x, w0)), w1)).reshape(1, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        sets.append(([("x", x)], [("y", f32(y))]))
    print(save_declared_case(out, "odn_wino_dynamic_hw", nodes, [("x", TensorProto.FLOAT, [1, 4, "H", "W"])],
                             [("y", TensorProto.FLOAT)], [("w0", w0), ("w1", w1)], sets, 13, 7))


def write(out):
    os.makedirs(out, exist_ok=True)
    basic_block(out)
    single(out, "odn_wino_bias_silu", 32, 48, 20, 20, act="silu", tail="pool")
    single(out, "odn_wino_clip_pad0", 16, 16, 13, 11, pads=(0, 0, 0, 0), act="clip", tail="pool")
    single(out, "odn_wino_pad2_batch2", 24, 40, 9, 6, pads=(2, 2, 2, 2), act="relu", batch=2, tail="pool")
    single(out, "odn_wino_asym_pads", 32, 32, 7, 10, pads=(0, 1, 2, 1), bias=False, act="relu", tail="pool")
    single(out, "odn_wino_tiny_map", 64, 64, 2, 3, act="relu", tail="pool")
    nhwc_producer(out)
    dynamic(out)
    # left to oneDNN
    single(out, "odn_wino_no_piece_output", 32, 32, 10, 10, act="relu")
    single(out, "odn_wino_no_8_channels", 8, 16, 10, 10, act="relu", tail="pool")
    single(out, "odn_wino_no_scale_post_op", 32, 32, 10, 10, act="scale", tail="pool")
    single(out, "odn_wino_no_self_add", 32, 32, 10, 10, act="self_add", tail="pool")
    strided(out, "odn_wino_no_stride2", 2, 1)
    strided(out, "odn_wino_no_dilation2_odd_pads", 1, 2, pads=(1, 1, 1, 1))
    strided(out, "odn_wino_dilation2", 1, 2)
    strided(out, "odn_wino_dilation3_batch2", 1, 3, pads=(3, 3, 3, 3), hw=(17, 14), batch=2)
    strided(out, "odn_wino_dilation2_asym", 1, 2, pads=(0, 2, 2, 4), hw=(13, 10))
    strided(out, "odn_wino_dilation4", 1, 4, pads=(4, 4, 4, 4), hw=(22, 19))


def expected_ours(case):
    return "_no_" not in os.path.basename(case)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    ours_possible = "avx512f" not in cpu_flags() and "avx2" in cpu_flags() and "fma" in cpu_flags()
    bad += step_placement_failures(tessera, cases, out, OURS, expected_ours, ours_possible)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
