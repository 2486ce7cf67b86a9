#!/usr/bin/python3
"""Backend-style cases for what the oneDNN provider newly claims and the ONNX
suite does not reach: Resize with constant scales/sizes on the attribute
combinations it takes (round_prefer_ceil ties, pytorch_half_pixel, rank 3
and 5, a blocked input from a Conv), LRN of other sizes and ranks and after
a Conv, and ReduceLogSumExp on large, infinite and NaN values. Expected
outputs come from numpy: ONNX's own resize reference (interpolate_nd in
onnx.backend.test.case.node.resize), the LRN formula of the ONNX spec, and
log-sum-exp in float64. usage: extra_cases.py OUT_DIR (prints the case dirs)
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.backend.test.case.node.resize import interpolate_nd, linear_coeffs, nearest_coeffs

OPSET = 18
rng = np.random.default_rng(20261203)


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


def resize_case(out_dir, name, shape, mode, scales=None, sizes=None, **attrs):
    x = rng.standard_normal(shape).astype(np.float32)
    coeffs = linear_coeffs if mode == "linear" else (
        lambda r: nearest_coeffs(r, mode=attrs.get("nearest_mode", "round_prefer_floor")))
    kw = {}
    if "coordinate_transformation_mode" in attrs:
        kw["coordinate_transformation_mode"] = attrs["coordinate_transformation_mode"]
    if scales is not None:
        y = interpolate_nd(x, coeffs, scale_factors=np.array(scales, dtype=np.float32), **kw)
        inits = [("scales", np.array(scales, dtype=np.float32))]
        ins = ["X", "", "scales"]
    else:
        y = interpolate_nd(x, coeffs, output_size=sizes, **kw)
        inits = [("sizes", np.array(sizes, dtype=np.int64))]
        ins = ["X", "", "", "sizes"]
    node = helper.make_node("Resize", ins, ["Y"], mode=mode, **attrs)
    save_case(out_dir, name, [node], [("X", x)], [("Y", y.astype(np.float32))], inits)


def conv1x1(x, w):
    return np.einsum("oc,nc...->no...", w, x)


def lrn_ref(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """The ONNX spec's LRN, in float64."""
    x = x.astype(np.float64)
    c = x.shape[1]
    sq = np.zeros_like(x)
    lo_off, hi_off = (size - 1) // 2, size - 1 - (size - 1) // 2
    for k in range(c):
        lo, hi = max(0, k - lo_off), min(c - 1, k + hi_off)
        sq[:, k] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    # nearest ties at a dyadic scale: round_prefer_ceil rounds up, as oneDNN does
    resize_case(out_dir, "odn_resize_nearest_ceil_down2", (1, 2, 4, 6), "nearest", sizes=[1, 2, 2, 3],
                nearest_mode="round_prefer_ceil")
    resize_case(out_dir, "odn_resize_linear_pytorch_up", (2, 3, 5, 4), "linear", sizes=[2, 3, 10, 8],
                coordinate_transformation_mode="pytorch_half_pixel")
    resize_case(out_dir, "odn_resize_linear_down_half", (1, 1, 6, 8), "linear", scales=[1, 1, 0.5, 0.5])
    resize_case(out_dir, "odn_resize_nearest_rank3", (1, 2, 5), "nearest", scales=[1, 1, 3.0])
    resize_case(out_dir, "odn_resize_linear_rank5", (1, 1, 2, 3, 4), "linear", scales=[1, 1, 2, 2, 2])
    # Conv (blocked output inside the piece) -> Resize linear -> Relu
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    r = interpolate_nd(c, linear_coeffs, scale_factors=np.array([1, 1, 2, 2], dtype=np.float32))
    save_case(out_dir, "odn_resize_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("Resize", ["C", "", "scales"], ["R"], mode="linear"),
               helper.make_node("Relu", ["R"], ["Y"])],
              [("X", x)], [("Y", np.maximum(r, 0).astype(np.float32))],
              [("W", w.reshape(16, 3, 1, 1)), ("scales", np.array([1, 1, 2, 2], dtype=np.float32))])
    # LRN: size 5 and 1, rank 3 and 5, after a Conv
    for name, shape, size, attrs in (("odn_lrn_size5", (2, 7, 3, 3), 5, dict(alpha=0.01, beta=0.6, bias=1.5)),
                                     ("odn_lrn_size1", (1, 4, 3, 3), 1, {}),
                                     ("odn_lrn_rank3", (2, 6, 5), 3, dict(alpha=0.1)),
                                     ("odn_lrn_rank5", (1, 5, 2, 3, 2), 3, dict(beta=0.9))):
        x = rng.standard_normal(shape).astype(np.float32)
        y = lrn_ref(x, size, **attrs)
        save_case(out_dir, name, [helper.make_node("LRN", ["X"], ["Y"], size=size, **attrs)], [("X", x)],
                  [("Y", y.astype(np.float32))])
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    save_case(out_dir, "odn_lrn_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("LRN", ["C"], ["Y"], size=5, alpha=0.05)],
              [("X", x)], [("Y", lrn_ref(c, 5, alpha=0.05).astype(np.float32))], [("W", w.reshape(16, 3, 1, 1))])
    # ReduceLogSumExp over rows that overflow a naive exp, hold +inf, are
    # all -inf, hold NaN, or are ordinary
    inf, nan = np.inf, np.nan
    x = np.array([[1000.0, 999.0, 998.0, 0.0], [1.0, inf, 2.0, 3.0], [-inf, -inf, -inf, -inf],
                  [1.0, nan, 2.0, 3.0], [-1.5, 0.25, 2.0, -3.0], [-100.0, -101.0, -99.0, -100.5]], dtype=np.float32)
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(xd, axis=1, keepdims=True)
        mf = np.where(np.isfinite(m), m, 0.0)
        y = np.log(np.sum(np.exp(xd - mf), axis=1, keepdims=True)) + mf
    save_case(out_dir, "odn_reduce_log_sum_exp_extremes",
              [helper.make_node("ReduceLogSumExp", ["X", "axes"], ["Y"], keepdims=1)],
              [("X", x)], [("Y", y.astype(np.float32))], [("axes", np.array([1], dtype=np.int64))])
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
