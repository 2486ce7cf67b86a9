#!/usr/bin/python3
"""Backend-style cases for the oneDNN provider's pooling on a plain layout
(odn_build_pool.c: a piece input, or a value that is also a graph output,
pooled in oneDNN's blocked layout and reordered back) and its LSTM/GRU at
small batches (odn_build_rnn.c: weights in the layout oneDNN picks).

Pooling: MaxPool and AveragePool with pads (asymmetric too), strides, ceil_mode,
count_include_pad 0/1, channel counts that do not fill a block (5, 12),
rank 3, 4 and 5, on a piece input, as a graph output, and reading a Conv
output that is itself a graph output; GlobalAveragePool/GlobalMaxPool on a
piece input (a dilated window has only oneDNN's reference kernel in any
layout and is declined). RNN: LSTM and GRU (linear_before_reset 0 and 1) at batch 2 and
5, forward, reverse and bidirectional, layout 0 and 1. Expected values are
float64 numpy: the ONNX pooling formulas below and rnn_cases.rnn_ref.
usage: extra_cases_pool_rnn.py OUT_DIR (prints the case dirs, one a line)
"""
import itertools
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extra_cases import save_case  # noqa: E402  the same folder's case writer
from rnn_cases import rnn_ref  # noqa: E402  float64 LSTM/GRU/RNN

rng = np.random.default_rng(20261207)


def pool_ref(x, kind, kernel, strides=None, pads=None, dilations=None, ceil_mode=0, count_include_pad=0):
    """ONNX MaxPool/AveragePool (explicit pads) in float64 over x [N, C, ...]."""
    x = x.astype(np.float64)
    sp = x.ndim - 2
    strides = strides or [1] * sp
    pads = pads or [0] * (2 * sp)
    dilations = dilations or [1] * sp
    out = []
    for i in range(sp):
        span = (kernel[i] - 1) * dilations[i] + 1
        room = x.shape[2 + i] + pads[i] + pads[sp + i] - span
        o = (-(-room // strides[i]) if ceil_mode else room // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= x.shape[2 + i] + pads[i]:
            o -= 1
        out.append(o)
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        vals, inside = [], []
        for off in itertools.product(*[range(k) for k in kernel]):
            idx = [pos[i] * strides[i] - pads[i] + off[i] * dilations[i] for i in range(sp)]
            # a window position in the explicit pads counts for count_include_pad
            in_pads = all(-pads[i] <= idx[i] < x.shape[2 + i] + pads[sp + i] for i in range(sp))
            if all(0 <= idx[i] < x.shape[2 + i] for i in range(sp)):
                vals.append(x[(slice(None), slice(None)) + tuple(idx)])
            inside.append(in_pads)
        v = np.stack(vals)
        if kind == "MaxPool":
            y[(slice(None), slice(None)) + pos] = v.max(0)
        else:
            count = sum(inside) if count_include_pad else len(vals)
            y[(slice(None), slice(None)) + pos] = v.sum(0) / count
    return y


def pool_node(kind, x, y, kernel, strides=None, pads=None, dilations=None, ceil_mode=0, count_include_pad=0):
    attrs = dict(kernel_shape=kernel)
    if strides:
        attrs["strides"] = strides
    if pads:
        attrs["pads"] = pads
    if dilations:
        attrs["dilations"] = dilations
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if count_include_pad:
        attrs["count_include_pad"] = 1
    return helper.make_node(kind, [x], [y], **attrs)


def pool_cases(out_dir):
    # (name, kind, shape, attributes): each pools a piece input into a graph
    # output, both plain
    alone = [
        ("max_3x3_s2_p1", "MaxPool", (1, 16, 13, 11), dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("max_ceil_c5", "MaxPool", (2, 5, 10, 9), dict(kernel=[3, 3], strides=[2, 2], ceil_mode=1)),
        ("max_asym_pads", "MaxPool", (1, 12, 11, 12), dict(kernel=[3, 2], strides=[1, 2], pads=[2, 0, 1, 1])),
        ("avg_3x3_s2_p1_excl", "AveragePool", (1, 12, 9, 10), dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("avg_3x3_s2_p1_incl", "AveragePool", (2, 8, 9, 10),
         dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
        ("avg_ceil_pads", "AveragePool", (1, 9, 7, 8), dict(kernel=[2, 3], strides=[2, 2], pads=[1, 0, 0, 1],
                                                               ceil_mode=1)),
        ("max_rank3", "MaxPool", (2, 6, 17), dict(kernel=[3], strides=[2], pads=[1, 1])),
        ("avg_rank5", "AveragePool", (1, 10, 5, 6, 7), dict(kernel=[2, 3, 3], strides=[2, 2, 2], pads=[0, 1, 1, 1, 1, 0])),
        ("max_rank5_ceil", "MaxPool", (1, 8, 5, 7, 6), dict(kernel=[2, 2, 3], strides=[2, 2, 2], ceil_mode=1)),
    ]
    for name, kind, shape, a in alone:
        x = rng.standard_normal(shape).astype(np.float32)
        save_case(out_dir, "odn_pool_plain_" + name, [pool_node(kind, "X", "Y", **a)], [("X", x)],
                  [("Y", pool_ref(x, kind, **a))])
    # a piece input pooled into a value the piece goes on with: Relu(pool)
    x = rng.standard_normal((1, 12, 14, 15)).astype(np.float32)
    a = dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    save_case(out_dir, "odn_pool_plain_max_then_relu",
              [pool_node("MaxPool", "X", "P", **a), helper.make_node("Relu", ["P"], ["Y"])], [("X", x)],
              [("Y", np.maximum(pool_ref(x, "MaxPool", **a), 0.0))])
    # Conv -> C (a graph output, so kept plain) -> MaxPool -> Conv 1x1 -> Y,
    # and an AveragePool of C that is a graph output itself
    x = rng.standard_normal((1, 3, 12, 13)).astype(np.float32)
    w1 = (rng.standard_normal((12, 3)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((7, 12)) * 0.5).astype(np.float32)
    c = np.einsum("oc,nchw->nohw", w1.astype(np.float64), x.astype(np.float64))
    am = dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    aa = dict(kernel=[2, 2], strides=[2, 2], ceil_mode=1)
    y = np.einsum("oc,nchw->nohw", w2.astype(np.float64), pool_ref(c, "MaxPool", **am))
    save_case(out_dir, "odn_pool_plain_conv_output_read",
              [helper.make_node("Conv", ["X", "W1"], ["C"]), pool_node("MaxPool", "C", "M", **am),
               helper.make_node("Conv", ["M", "W2"], ["Y"]), pool_node("AveragePool", "C", "A", **aa)],
              [("X", x)], [("C", c), ("Y", y), ("A", pool_ref(c, "AveragePool", **aa))],
              [("W1", w1.reshape(12, 3, 1, 1)), ("W2", w2.reshape(7, 12, 1, 1))])
    # global pooling of a piece input
    x = rng.standard_normal((2, 13, 6, 7)).astype(np.float32)
    save_case(out_dir, "odn_pool_plain_global",
              [helper.make_node("GlobalAveragePool", ["X"], ["A"]), helper.make_node("GlobalMaxPool", ["X"], ["M"])],
              [("X", x)], [("A", x.astype(np.float64).mean((2, 3), keepdims=True)),
                           ("M", x.astype(np.float64).max((2, 3), keepdims=True))])


def rnn_case(out_dir, name, cell, steps, batch, inp, hidden, direction, layout=0, lbr=0):
    gates = {"LSTM": 4, "GRU": 3}[cell]
    dirs = 2 if direction == "bidirectional" else 1
    s = 1.0 / np.sqrt(hidden)
    u = lambda *shape: rng.uniform(-s * 2, s * 2, shape).astype(np.float32)
    x = rng.standard_normal((batch, steps, inp) if layout else (steps, batch, inp)).astype(np.float32)
    w, r, b = u(dirs, gates * hidden, inp), u(dirs, gates * hidden, hidden), u(dirs, 2 * gates * hidden)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    h0 = (rng.standard_normal(state) * 0.5).astype(np.float32)
    c0 = (rng.standard_normal(state) * 0.5).astype(np.float32) if cell == "LSTM" else None
    y, yh, yc = rnn_ref(cell, x, w, r, b, h0, c0, None, direction, layout, lbr)
    ins = ["X", "W", "R", "B", "", "initial_h"] + (["initial_c"] if cell == "LSTM" else [])
    outs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    attrs = dict(hidden_size=hidden, direction=direction)
    if layout:
        attrs["layout"] = 1
    if cell == "GRU":
        attrs["linear_before_reset"] = lbr
    inputs = [("X", x), ("initial_h", h0)] + ([("initial_c", c0)] if cell == "LSTM" else [])
    outputs = [("Y", y), ("Y_h", yh)] + ([("Y_c", yc)] if cell == "LSTM" else [])
    save_case(out_dir, name, [helper.make_node(cell, ins, outs, **attrs)], inputs, outputs,
              [("W", w), ("R", r), ("B", b)])


def rnn_cases(out_dir):
    # hidden sizes past a vector width, so oneDNN's packed weights and
    # its post-gemm kernels' tails are both exercised
    for batch in (2, 5):
        for direction in ("forward", "reverse", "bidirectional"):
            rnn_case(out_dir, "odn_lstm_b%d_%s" % (batch, direction), "LSTM", 7, batch, 11, 20, direction)
            rnn_case(out_dir, "odn_gru_b%d_%s" % (batch, direction), "GRU", 6, batch, 9, 19, direction)
        rnn_case(out_dir, "odn_gru_lbr_b%d_bidir" % batch, "GRU", 5, batch, 10, 24, "bidirectional", lbr=1)
        rnn_case(out_dir, "odn_lstm_b%d_bidir_layout1" % batch, "LSTM", 5, batch, 8, 33, "bidirectional", layout=1)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    pool_cases(out_dir)
    rnn_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
