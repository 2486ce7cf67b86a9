#!/usr/bin/python3
"""Backend-style cases for the reference provider's fast paths, whose
results must equal the plain definition bit for bit: TopK keeping k of n
through a heap when k is small (ties to the lower index, NaN above every
number, largest and smallest, float and int64, axis not last), and ArgMax /
ArgMin over the channel axis of a segmentation map (first occurrence on
ties, select_last_index), and Tile (rows copied as runs). Expected outputs: numpy (a stable argsort of
(key, index), argmax). HardSigmoid on NaN, +-inf and its clamping ends
(NaN stays NaN, as ONNX Runtime gives; fmax/fmin alone turned it into 1).
`tessera test -p reference --rtol 0 --atol 0` runs
them (ctest `reference_kernels`).
usage: kernel_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper

from case_io import save_case

rng = np.random.default_rng(20261207)


def topk_ref(x, k, axis, largest):
    """Sorted by value (NaN above all), ties by lower index."""
    x = np.moveaxis(x, axis, -1)
    key = x.astype(np.float64)
    if largest:
        key = np.where(np.isnan(key), -np.inf, -key)  # NaN first when largest
        nan_first = np.isnan(x.astype(np.float64))
        order = np.lexsort((np.broadcast_to(np.arange(x.shape[-1]), x.shape), key, ~nan_first), axis=-1)
    else:
        nan_last = np.isnan(key)
        order = np.lexsort((np.broadcast_to(np.arange(x.shape[-1]), x.shape), np.where(nan_last, 0, key), nan_last),
                           axis=-1)
    idx = order[..., :k]
    vals = np.take_along_axis(x, idx, axis=-1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx.astype(np.int64), -1, axis)


def topk_cases(out_dir):
    for name, shape, k, axis, largest, kind in (("ref_topk_heap_largest", (3, 1000), 10, -1, 1, "float"),
                                                ("ref_topk_heap_smallest", (2, 1500), 17, 1, 0, "float"),
                                                ("ref_topk_heap_axis0", (800, 3), 5, 0, 1, "float"),
                                                ("ref_topk_heap_int64", (2, 900), 9, -1, 1, "int")):
        if kind == "int":
            x = rng.integers(-40, 40, shape).astype(np.int64)  # many ties
        else:
            x = np.round(rng.standard_normal(shape) * 4).astype(np.float32) / 4  # ties too
            flat = x.reshape(-1)
            flat[rng.choice(flat.size, 6, replace=False)] = np.nan
        v, i = topk_ref(x, k, axis, largest)
        node = helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=axis, largest=largest)
        save_case(out_dir, name, node, [("X", x)], [("V", v), ("I", i)], [("K", np.array([k], dtype=np.int64))])


def argmax_cases(out_dir):
    x = np.round(rng.standard_normal((2, 21, 33, 40)) * 2).astype(np.float32)  # ties between classes
    save_case(out_dir, "ref_argmax_channels", helper.make_node("ArgMax", ["X"], ["Y"], axis=1, keepdims=0),
              [("X", x)], [("Y", np.argmax(x, axis=1).astype(np.int64))])
    last = x.shape[1] - 1 - np.argmin(x[:, ::-1], axis=1)
    save_case(out_dir, "ref_argmin_channels_last", helper.make_node("ArgMin", ["X"], ["Y"], axis=1, keepdims=1,
                                                                    select_last_index=1),
              [("X", x)], [("Y", last[:, None].astype(np.int64))])


def tile_cases(out_dir):
    """Tile, whose rows the copy loop now moves as runs of consecutive
    elements: repeats on the last axis and on others, and a Slice-like
    single repeat."""
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    for name, reps in (("ref_tile_last_axis", [1, 1, 1, 3]), ("ref_tile_all_axes", [2, 1, 3, 2]),
                       ("ref_tile_once", [1, 1, 1, 1])):
        save_case(out_dir, name, helper.make_node("Tile", ["X", "R"], ["Y"]), [("X", x)],
                  [("Y", np.tile(x, reps))], [("R", np.array(reps, dtype=np.int64))])


def hard_sigmoid_cases(out_dir):
    """HardSigmoid with ONNX's defaults and with alpha 0.5, beta 0.25:
    max(0, min(1, alpha * x + beta)) in float64 rounded once, NaN kept."""
    edge = np.array([np.nan, np.inf, -np.inf, -2.5, 2.5, 0.0, -0.0, 1e-30], np.float32)
    x = np.concatenate([edge, rng.uniform(-6, 6, 40).astype(np.float32)]).reshape(6, 8)
    for name, alpha, beta in (("ref_hard_sigmoid_nan", 0.2, 0.5), ("ref_hard_sigmoid_nan_attrs", 0.5, 0.25)):
        a, b = float(np.float32(alpha)), float(np.float32(beta))
        with np.errstate(invalid="ignore"):
            y = np.clip(a * x.astype(np.float64) + b, 0.0, 1.0)  # np.clip keeps NaN
        save_case(out_dir, name, helper.make_node("HardSigmoid", ["X"], ["Y"], alpha=alpha, beta=beta),
                  [("X", x)], [("Y", y.astype(np.float32))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    topk_cases(out_dir)
    argmax_cases(out_dir)
    tile_cases(out_dir)
    hard_sigmoid_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
