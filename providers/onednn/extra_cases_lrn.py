#!/usr/bin/python3
"""Backend-style LRN cases for the oneDNN provider's even-size path (an
asymmetrically padded average pool over channels, odn_build_lrn.c): sizes
2, 4 and 6 on 3, 5 and 8 channels (windows wider than C included), with
non-default alpha, beta and bias, on rank 3, 4 and 5 inputs and after a
Conv (whose output oneDNN keeps blocked), plus odd size 3 on the same data
for comparison. Expected outputs: the ONNX spec's formula in float64,
written here from the spec text (window [c - floor((size-1)/2),
c + ceil((size-1)/2)] clipped to [0, C-1]).
usage: extra_cases_lrn.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

OPSET = 13
rng = np.random.default_rng(20261204)


def save_case(out_dir, name, nodes, inputs, outputs, inits=()):
    """inputs/outputs: lists of (name, array); inits: (name, array) constants."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for prefix, arrs in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrs):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(numpy_helper.from_array(a.astype(np.float32), n).SerializeToString())
    print(d)


def lrn_ref(x, size, alpha, beta, bias):
    """ONNX LRN in float64, one output channel at a time."""
    x = x.astype(np.float64)
    c = x.shape[1]
    y = np.empty_like(x)
    for k in range(c):
        lo = max(0, k - (size - 1) // 2)
        hi = min(c - 1, k + int(np.ceil((size - 1) / 2)))
        square_sum = np.sum(x[:, lo:hi + 1] ** 2, axis=1)
        y[:, k] = x[:, k] / (bias + alpha / size * square_sum) ** beta
    return y


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    attrs = dict(alpha=0.3, beta=0.65, bias=1.7)
    # every size on every channel count, rank 4; values up to ~6 so the
    # alpha term is not negligible next to the bias
    for c in (3, 5, 8):
        x = (rng.standard_normal((2, c, 3, 4)) * 2.0).astype(np.float32)
        for size in (2, 3, 4, 6):
            save_case(out_dir, "odn_lrn_c%d_size%d" % (c, size),
                      [helper.make_node("LRN", ["X"], ["Y"], size=size, **attrs)], [("X", x)],
                      [("Y", lrn_ref(x, size, **attrs))])
    # rank 3 and 5, other attributes
    for name, shape, size, a in (("odn_lrn_rank3_size2", (2, 5, 7), 2, dict(alpha=1.0, beta=0.5, bias=2.0)),
                                 ("odn_lrn_rank5_size4", (1, 8, 2, 3, 2), 4, dict(alpha=0.05, beta=1.2, bias=0.8))):
        x = (rng.standard_normal(shape) * 2.0).astype(np.float32)
        save_case(out_dir, name, [helper.make_node("LRN", ["X"], ["Y"], size=size, **a)], [("X", x)],
                  [("Y", lrn_ref(x, size, **a))])
    # default alpha/beta/bias (only size is required)
    x = (rng.standard_normal((1, 5, 3, 3)) * 10.0).astype(np.float32)
    save_case(out_dir, "odn_lrn_defaults_size2", [helper.make_node("LRN", ["X"], ["Y"], size=2)], [("X", x)],
              [("Y", lrn_ref(x, 2, 1e-4, 0.75, 1.0))])
    # Conv -> LRN (size 4) -> Relu: the LRN input arrives in oneDNN's blocked
    # layout, 16 channels
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    conv = np.einsum("oc,nchw->nohw", w.astype(np.float64), x.astype(np.float64))
    y = np.maximum(lrn_ref(conv, 4, **attrs), 0.0)
    save_case(out_dir, "odn_lrn_size4_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("LRN", ["C"], ["L"], size=4, **attrs),
               helper.make_node("Relu", ["L"], ["Y"])],
              [("X", x)], [("Y", y)], [("W", w.reshape(16, 3, 1, 1))])
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
