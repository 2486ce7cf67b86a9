#!/usr/bin/python3
"""Backend-style cases for the oneDNN provider's convolution of at most 4
output channels (odn_conv_small_oc.c): an image model's output layer after
a producing convolution (its input then arrives channel-blocked) and as a
piece input (plain, reordered); 1 to 4 output channels; strides 2,
dilation 2, asymmetric pads, auto_pad SAME_UPPER, batch 2, windows wider
than the input, outputs narrower than a block of pixels, with and without
bias, followed by Tanh; and a 1x1 head, left to oneDNN's kernel (it must
not take the loop). ConvTranspose whose kernel equals its stride with
kh*kw*M <= 4 (a DB head's 2x upsampling to one channel, then Sigmoid; 1x4;
2x1 of 2 channels) after a convolution or after a ConvTranspose that leaves
NHWC; one of 8 columns stays the matmul. Expected outputs from numpy in float64 (a direct
convolution written here).

usage: extra_cases_small_oc.py OUT_DIR        (prints the case dirs)
       extra_cases_small_oc.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails, onednn does not claim every node, or a small-channel
         convolution does not run as its loop (exit 77 without onnx)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import claimed_whole, explain, save_typed_case, test_cases, written_cases

    rng = np.random.default_rng(20261207)


def f32(a):
    return np.asarray(a).astype(np.float32)


def conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1)):
    """ONNX Conv (group 1) in float64; pads = top, left, bottom, right."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]))
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dil[1] - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dil[0], j * dil[1]
            patch = xp[:, :, r0:r0 + (oh - 1) * strides[0] + 1:strides[0], c0:c0 + (ow - 1) * strides[1] + 1:strides[1]]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    if b is not None:
        y += b.astype(np.float64).reshape(1, -1, 1, 1)
    return y


def same_upper(size, k, s, d=1):
    o = -(-size // s)
    total = max((o - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def case(out, name, n, c, h, w, m, k, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), bias=True, producer=True,
         tanh=False, auto_pad=None):
    x = f32(rng.standard_normal((n, 4 if producer else c, h, w)))
    wt = f32(rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k))
    bt = f32(rng.standard_normal(m)) if bias else None
    inits, nodes = [("w", wt)], []
    src, xin = "x", x
    if producer:
        w0 = f32(rng.standard_normal((c, 4, 3, 3)) * 0.3)
        inits.append(("w0", w0))
        nodes += [helper.make_node("Conv", ["x", "w0"], ["p"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["p"], ["pr"])]
        src, xin = "pr", f32(np.maximum(conv(x, w0, pads=(1, 1, 1, 1)), 0))
    if bt is not None:
        inits.append(("b", bt))
    attrs = dict(kernel_shape=[k, k], strides=list(strides), dilations=list(dil))
    if auto_pad:
        attrs["auto_pad"] = auto_pad
        t, bo = same_upper(h, k, strides[0], dil[0])
        l, r = same_upper(w, k, strides[1], dil[1])
        pads = (t, l, bo, r)
    else:
        attrs["pads"] = [pads[0], pads[1], pads[2], pads[3]]
    nodes.append(helper.make_node("Conv", [src, "w"] + (["b"] if bias else []), ["c" if tanh else "y"], **attrs))
    y = conv(xin, wt, bt, strides, pads, dil)
    if tanh:
        nodes.append(helper.make_node("Tanh", ["c"], ["y"]))
        y = np.tanh(y)
    save_typed_case(out, name, nodes, [("x", x)], [("y", f32(y))], inits)


def deconv_tiles(x, w, b=None):
    """ConvTranspose whose kernel equals its stride, in float64."""
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    t = np.einsum("nchw,cmij->nmhiwj", x.astype(np.float64), w.astype(np.float64))
    y = t.reshape(n, m, h * kh, wd * kw)
    return y + (0 if b is None else b.astype(np.float64).reshape(1, -1, 1, 1))


def deconv_case(out, name, c, h, w, m, kh, kw, bias=True, nhwc_producer=False, sigmoid=False):
    """After a 3x3 convolution (nChw8c input) or, nhwc_producer, after a
    tiled ConvTranspose of 16 output channels (which leaves NHWC)."""
    x = f32(rng.standard_normal((1, 4, h, w)))
    if nhwc_producer:
        w0 = f32(rng.standard_normal((4, c, 2, 2)) * 0.3)
        first = helper.make_node("ConvTranspose", ["x", "w0"], ["p"], kernel_shape=[2, 2], strides=[2, 2])
        xin = deconv_tiles(x, w0)
    else:
        w0 = f32(rng.standard_normal((c, 4, 3, 3)) * 0.3)
        first = helper.make_node("Conv", ["x", "w0"], ["p"], pads=[1, 1, 1, 1])
        xin = conv(x, w0, pads=(1, 1, 1, 1))
    xin = f32(np.maximum(xin, 0))
    wt = f32(rng.standard_normal((c, m, kh, kw)) / np.sqrt(c))
    bt = f32(rng.standard_normal(m)) if bias else None
    inits = [("w0", w0), ("w", wt)] + ([("b", bt)] if bias else [])
    nodes = [first, helper.make_node("Relu", ["p"], ["pr"]),
             helper.make_node("ConvTranspose", ["pr", "w"] + (["b"] if bias else []), ["d" if sigmoid else "y"],
                              kernel_shape=[kh, kw], strides=[kh, kw])]
    y = deconv_tiles(xin, wt, bt)
    if sigmoid:
        nodes.append(helper.make_node("Sigmoid", ["d"], ["y"]))
        y = 1 / (1 + np.exp(-y))
    save_typed_case(out, name, nodes, [("x", x)], [("y", f32(y))], inits)


def write(out):
    os.makedirs(out, exist_ok=True)
    case(out, "odn_small_oc_rgb_9x9_tanh", 1, 32, 40, 44, 3, 9, pads=(4, 4, 4, 4), tanh=True)
    case(out, "odn_small_oc_depth_plain_input", 1, 64, 33, 29, 1, 3, pads=(1, 1, 1, 1), bias=False, producer=False)
    case(out, "odn_small_oc_stride2_asym_pads", 1, 16, 23, 31, 2, 3, strides=(2, 2), pads=(0, 1, 1, 0))
    case(out, "odn_small_oc_dilation2_batch2", 2, 8, 21, 26, 4, 5, pads=(4, 4, 4, 4), dil=(2, 2))
    case(out, "odn_small_oc_same_upper_stride2", 1, 24, 9, 7, 3, 7, strides=(2, 2), auto_pad="SAME_UPPER")
    case(out, "odn_small_oc_narrow_output", 1, 16, 12, 7, 1, 3)
    case(out, "odn_small_oc_1x1_head", 1, 32, 30, 30, 4, 1)  # left to oneDNN
    case(out, "odn_small_oc_window_wider_than_input", 1, 8, 3, 3, 2, 5, pads=(2, 2, 2, 2))
    case(out, "odn_small_oc_rect_stride", 1, 40, 17, 50, 3, 3, strides=(1, 3), pads=(1, 2, 0, 1))
    deconv_case(out, "odn_small_oc_deconv_db_head", 24, 20, 23, 1, 2, 2, sigmoid=True)
    deconv_case(out, "odn_small_oc_deconv_nhwc_input", 16, 9, 11, 1, 2, 2, nhwc_producer=True)
    deconv_case(out, "odn_small_oc_deconv_1x4_m1", 32, 7, 13, 1, 1, 4, bias=False)
    deconv_case(out, "odn_small_oc_deconv_2x1_m2", 8, 6, 17, 2, 2, 1)
    deconv_case(out, "odn_small_oc_deconv_2x2_m2_matmul", 16, 6, 9, 2, 2, 2)  # 8 columns: the matmul


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    for c in cases:
        run = explain(tessera, c)
        loop = "loop Conv x1" in run or "loop ConvTranspose x1" in run
        if not claimed_whole(run) or loop == (c.endswith("_1x1_head") or c.endswith("_matmul")):
            print("not claimed whole by onednn, or not the small-channel loop: %s\n%s" % (os.path.basename(c), run))
            bad.append(c)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
