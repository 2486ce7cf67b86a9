#!/usr/bin/python3
"""Cases for 1-D convolutions ([N,C,T], as speech, audio and text models
export Conv1d), which the oneDNN provider computes as 2-D convolutions over
[N,C,1,T] (odn_build_conv.c): a depthwise k=31 over 256 channels with bias,
a folded BatchNormalization and SiLU (a conformer's convolution module,
also as the whole module: pointwise -> GLU -> depthwise -> BN -> SiLU ->
pointwise); pointwise 256->512->256 with Relu and a residual Add of the
piece input (a binary post-op) and of an intermediate (a sum post-op); a
strided k=3 s=2 80->384 (whisper's front end) with Gelu; dilated k=3 d=2
with causal (asymmetric) pads and a residual (a TCN block); a grouped
convolution without bias; a per-channel Mul and Add after a convolution
(broadcast binary post-ops); a BatchNormalization that is not folded (the
convolution's output has a second reader) and one on a piece output. Two
cases have a symbolic time dim, with data sets of several lengths run in one
session. Expected outputs come from a direct numpy convolution in float64.
usage: conv1d_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import math
import sys

import numpy as np
from onnx import helper

from dynamic_cases import save_dynamic_case as save_case

rng = np.random.default_rng(20261210)


def conv1d(x, w, b=None, stride=1, pads=(0, 0), dil=1, group=1):
    """Direct grouped 1-D convolution in float64: x [N,C,T], w [M,C/group,K]."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, c, t = x.shape
    m, cg, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1])))
    to = (t + pads[0] + pads[1] - (k - 1) * dil - 1) // stride + 1
    xg = xp.reshape(n, group, cg, -1)
    wg = w.reshape(group, m // group, cg, k)
    y = np.zeros((n, group, m // group, to))
    for j in range(k):
        seg = xg[:, :, :, j * dil:j * dil + (to - 1) * stride + 1:stride]
        y += np.einsum("gmc,ngct->ngmt", wg[:, :, :, j], seg)
    y = y.reshape(n, m, to)
    return y if b is None else y + np.asarray(b, np.float64).reshape(1, -1, 1)


def batchnorm(x, scale, shift, mean, var, eps=1e-5):
    r = lambda v: np.asarray(v, np.float64).reshape(1, -1, 1)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(shift)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def relu(x):
    return np.maximum(x, 0.0)


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def weights(m, cg, k):
    w = (rng.standard_normal((m, cg, k)) / np.sqrt(cg * k)).astype(np.float32)
    b = (0.1 * rng.standard_normal(m)).astype(np.float32)
    return w, b


def bn_params(c):
    return [(rng.uniform(0.5, 1.5, c)).astype(np.float32), (0.1 * rng.standard_normal(c)).astype(np.float32),
            (0.1 * rng.standard_normal(c)).astype(np.float32), rng.uniform(0.5, 2.0, c).astype(np.float32)]


def data(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv_node(ins, out, k, group=1, stride=1, pads=None, dil=1):
    pads = pads or [k // 2 * dil, k // 2 * dil]
    return helper.make_node("Conv", ins, [out], kernel_shape=[k], strides=[stride], pads=pads, dilations=[dil],
                            group=group)


def silu_nodes(x, out):
    return [helper.make_node("Sigmoid", [x], [out + "_s"]), helper.make_node("Mul", [x, out + "_s"], [out])]


def depthwise_bn_silu(out_dir):
    """Depthwise k=31 over 256 channels, bias, folded BN, SiLU: a piece output."""
    w, b = weights(256, 1, 31)
    bn = bn_params(256)
    x = data(1, 256, 200)
    nodes = [conv_node(["X", "W", "B"], "c", 31, group=256),
             helper.make_node("BatchNormalization", ["c", "s", "h", "m", "v"], ["n"])] + silu_nodes("n", "Y")
    y = silu(batchnorm(conv1d(x, w, b, pads=(15, 15), group=256), *bn))
    save_case(out_dir, "odn_conv1d_depthwise_k31_bn_silu", nodes, [("X", x.shape)], [("Y", y.shape)], [([x], [y])],
              [("W", w), ("B", b)] + list(zip("shmv", bn)))


def depthwise_strided_dilated(out_dir):
    """Depthwise k=31, stride 2, dilation 2, pads (20, 33), no bias, 64
    channels, of two lengths in one session (where oneDNN has only its im2col
    kernel for it, AVX2, a C loop: odn_build_dwconv1d.c)."""
    w, _ = weights(64, 1, 31)
    sets = []
    for t in (57, 100):
        x = data(2, 64, t)
        sets.append(([x], [conv1d(x, w, stride=2, pads=(20, 33), dil=2, group=64)]))
    nodes = [conv_node(["X", "W"], "Y", 31, group=64, stride=2, pads=[20, 33], dil=2)]
    save_case(out_dir, "odn_conv1d_depthwise_strided_dilated", nodes, [("X", [2, 64, "T"])], [("Y", [2, 64, "U"])],
              sets, [("W", w)])


def conformer_module(out_dir):
    """Pointwise 256->512, GLU (Split, Sigmoid, Mul), depthwise k=31, BN,
    SiLU, pointwise 256->256, residual Add; time symbolic."""
    d = 256
    w1, b1 = weights(2 * d, d, 1)
    w2, b2 = weights(d, 1, 31)
    w3, b3 = weights(d, d, 1)
    bn = bn_params(d)
    nodes = [conv_node(["X", "W1", "B1"], "p1", 1),
             helper.make_node("Split", ["p1", "sp"], ["ga", "gb"], axis=1),
             helper.make_node("Sigmoid", ["gb"], ["gs"]),
             helper.make_node("Mul", ["ga", "gs"], ["glu"]),
             conv_node(["glu", "W2", "B2"], "dw", 31, group=d),
             helper.make_node("BatchNormalization", ["dw", "s", "h", "m", "v"], ["bn"])] + silu_nodes("bn", "act") + [
             conv_node(["act", "W3", "B3"], "p2", 1),
             helper.make_node("Add", ["p2", "X"], ["Y"])]
    sets = []
    for t in (200, 37, 200):
        x = data(1, d, t)
        p1 = conv1d(x, w1, b1)
        glu = p1[:, :d] * sigmoid(p1[:, d:])
        a = silu(batchnorm(conv1d(glu, w2, b2, pads=(15, 15), group=d), *bn))
        sets.append(([x], [conv1d(a, w3, b3) + x]))
    save_case(out_dir, "odn_conv1d_conformer_module_dyn_time", nodes, [("X", [1, d, "T"])], [("Y", [1, d, "T"])],
              sets, [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2), ("W3", w3), ("B3", b3)] +
              list(zip("shmv", bn)) + [("sp", np.array([d, d], np.int64))])


def pointwise_residual(out_dir):
    """256->512 (bias, Relu) -> 512->256 -> + X (a binary post-op: X is a
    piece input, plain), e = 256->256 read by a Relu and a residual Add:
    256->256 of that Relu -> + e (a sum post-op into e's buffer) -> Relu ->
    256->64."""
    w1, b1 = weights(512, 256, 1)
    w2, b2 = weights(256, 512, 1)
    w3, b3 = weights(256, 256, 1)
    w4, b4 = weights(256, 256, 1)
    w5, b5 = weights(64, 256, 1)
    x = data(2, 256, 50)
    nodes = [conv_node(["X", "W1", "B1"], "a", 1), helper.make_node("Relu", ["a"], ["r"]),
             conv_node(["r", "W2", "B2"], "c", 1), helper.make_node("Add", ["c", "X"], ["s"]),
             conv_node(["s", "W3", "B3"], "e", 1), helper.make_node("Relu", ["e"], ["t"]),
             conv_node(["t", "W4", "B4"], "g", 1), helper.make_node("Add", ["g", "e"], ["f"]),
             helper.make_node("Relu", ["f"], ["h"]), conv_node(["h", "W5", "B5"], "Y", 1)]
    s = conv1d(relu(conv1d(x, w1, b1)), w2, b2) + x
    e = conv1d(s, w3, b3)
    y = conv1d(relu(conv1d(relu(e), w4, b4) + e), w5, b5)
    save_case(out_dir, "odn_conv1d_pointwise_256_512_residual", nodes, [("X", x.shape)], [("Y", y.shape)],
              [([x], [y])], [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2), ("W3", w3), ("B3", b3), ("W4", w4),
                             ("B4", b4), ("W5", w5), ("B5", b5)])


def whisper_front(out_dir):
    """Whisper's front end: k=3 80->384 Gelu, then k=3 stride 2 Gelu; time
    symbolic (odd and even lengths)."""
    w1, b1 = weights(384, 80, 3)
    w2, b2 = weights(384, 384, 3)
    nodes = [conv_node(["X", "W1", "B1"], "c1", 3)]
    # Gelu written out as torch exports it before opset 20
    def gelu_nodes(x, out):
        return [helper.make_node("Div", [x, "sqrt2"], [out + "_d"]),
                helper.make_node("Erf", [out + "_d"], [out + "_e"]),
                helper.make_node("Add", [out + "_e", "one"], [out + "_a"]),
                helper.make_node("Mul", [x, out + "_a"], [out + "_m"]),
                helper.make_node("Mul", [out + "_m", "half"], [out])]
    nodes += gelu_nodes("c1", "g1") + [conv_node(["g1", "W2", "B2"], "c2", 3, stride=2)] + gelu_nodes("c2", "Y")
    sets = []
    for t in (300, 51):
        x = data(1, 80, t)
        y = gelu(conv1d(gelu(conv1d(x, w1, b1, pads=(1, 1))), w2, b2, stride=2, pads=(1, 1)))
        sets.append(([x], [y]))
    save_case(out_dir, "odn_conv1d_whisper_strided_dyn_time", nodes, [("X", [1, 80, "T"])], [("Y", [1, 384, "To"])],
              sets, [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2), ("sqrt2", np.array(math.sqrt(2.0), np.float32)),
                     ("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))])


def strided_only(out_dir):
    """k=3 stride 2 80->384 with bias straight from the piece input to the output."""
    w, b = weights(384, 80, 3)
    x = data(1, 80, 120)
    y = conv1d(x, w, b, stride=2, pads=(1, 1))
    save_case(out_dir, "odn_conv1d_strided_80_384", [conv_node(["X", "W", "B"], "Y", 3, stride=2)],
              [("X", x.shape)], [("Y", y.shape)], [([x], [y])], [("W", w), ("B", b)])


def tcn_block(out_dir):
    """A TCN block: causal dilated k=3 d=2 (pads 4,0) -> Relu -> k=3 d=4
    (pads 8,0) -> Relu -> + X."""
    w1, b1 = weights(64, 64, 3)
    w2, b2 = weights(64, 64, 3)
    x = data(1, 64, 90)
    nodes = [conv_node(["X", "W1", "B1"], "a", 3, dil=2, pads=[4, 0]), helper.make_node("Relu", ["a"], ["r"]),
             conv_node(["r", "W2", "B2"], "c", 3, dil=4, pads=[8, 0]), helper.make_node("Relu", ["c"], ["r2"]),
             helper.make_node("Add", ["r2", "X"], ["Y"])]
    y = relu(conv1d(relu(conv1d(x, w1, b1, pads=(4, 0), dil=2)), w2, b2, pads=(8, 0), dil=4)) + x
    save_case(out_dir, "odn_conv1d_tcn_dilated_causal", nodes, [("X", x.shape)], [("Y", y.shape)], [([x], [y])],
              [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2)])


def grouped_broadcast(out_dir):
    """Grouped (4 groups) k=5 48->64 without bias, then * per-channel
    [64,1] and + [64,1] constants (broadcast binary post-ops), then a
    depthwise k=3 dilated 3."""
    w1, _ = weights(64, 12, 5)
    w2, b2 = weights(64, 1, 3)
    sc = rng.uniform(0.5, 1.5, (64, 1)).astype(np.float32)
    sh = (0.1 * rng.standard_normal((64, 1))).astype(np.float32)
    x = data(2, 48, 33)
    nodes = [conv_node(["X", "W1"], "a", 5, group=4), helper.make_node("Mul", ["a", "sc"], ["b"]),
             helper.make_node("Add", ["b", "sh"], ["c"]), conv_node(["c", "W2", "B2"], "Y", 3, group=64, dil=3)]
    y = conv1d(conv1d(x, w1, group=4, pads=(2, 2)) * sc + sh, w2, b2, pads=(3, 3), dil=3, group=64)
    save_case(out_dir, "odn_conv1d_grouped_broadcast", nodes, [("X", x.shape)], [("Y", y.shape)], [([x], [y])],
              [("W1", w1), ("sc", sc), ("sh", sh), ("W2", w2), ("B2", b2)])


def bn_unfused(out_dir):
    """BN not folded: the depthwise output also feeds an Add (two readers),
    and a second BN reads a convolution's piece output."""
    w1, b1 = weights(256, 1, 31)
    w2, b2 = weights(64, 256, 1)
    bn1, bn2 = bn_params(256), bn_params(64)
    x = data(1, 256, 40)
    nodes = [conv_node(["X", "W1", "B1"], "c", 31, group=256),
             helper.make_node("BatchNormalization", ["c", "s1", "h1", "m1", "v1"], ["n"]),
             helper.make_node("Add", ["n", "c"], ["a"]),
             conv_node(["a", "W2", "B2"], "Y1", 1),
             helper.make_node("BatchNormalization", ["Y1", "s2", "h2", "m2", "v2"], ["Y2"])]
    c = conv1d(x, w1, b1, pads=(15, 15), group=256)
    y1 = conv1d(batchnorm(c, *bn1) + c, w2, b2)
    y2 = batchnorm(y1, *bn2)
    save_case(out_dir, "odn_conv1d_bn_unfused", nodes, [("X", x.shape)], [("Y1", y1.shape), ("Y2", y2.shape)],
              [([x], [y1, y2])], [("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2)] +
              [(k + "1", v) for k, v in zip("shmv", bn1)] + [(k + "2", v) for k, v in zip("shmv", bn2)])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for f in (depthwise_bn_silu, depthwise_strided_dilated, conformer_module, pointwise_residual, whisper_front, strided_only, tcn_block,
              grouped_broadcast, bn_unfused):
        f(out)


if __name__ == "__main__":
    main()
