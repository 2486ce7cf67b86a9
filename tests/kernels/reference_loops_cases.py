#!/usr/bin/python3
"""Backend-style cases for reference kernels that took a general path per
output element and now run typed loops; the results must stay bit for bit:

- OneHot (ref_tensor_constant.c): a vocabulary-wide one-hot of token ids
  (depth 5000) with ids at both ends, negative ids counting from the end,
  and ids outside [-depth, depth) that select nothing; a middle axis with
  float indices; int32 values on axis 0. Expected from the ONNX definition
  in numpy.
- Max and Min of float32 (ref_math_binary.c, f32_loop), two and three
  inputs, same shapes and broadcast ones, NaN in either operand (NaN out),
  +-inf. Expected: numpy.maximum / numpy.minimum folded left to right.
- Sum and Mean of float32 (ref_math_binary.c, sum_wide): inputs of the
  output's size, one-element inputs and broadcast ones mixed, summed in
  float64 and rounded once (docs/conformance.md, "Precision"); a float16
  Mean on the general path. Expected: numpy float64 sums rounded once.

`tessera test -p reference --rtol 0 --atol 0` runs them (ctest
`reference_loops`).
usage: reference_loops_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper

from case_io import save_case

rng = np.random.default_rng(20261207)


def onehot_ref(ind, depth, values, axis):
    """ONNX OneHot: out[..., d, ...] = on where (ind < 0 ? ind + depth : ind) == d, else off."""
    v = ind.astype(np.int64)
    v = np.where(v < 0, v + depth, v)
    hot = np.arange(depth).reshape([depth] + [1] * ind.ndim) == v[None]
    out = np.where(hot, values[1], values[0]).astype(values.dtype)
    return np.moveaxis(out, 0, axis if axis >= 0 else ind.ndim + 1 + axis)


def onehot_cases(out_dir):
    depth = 5000
    ids = rng.integers(0, depth, (2, 16)).astype(np.int64)
    ids[0, :6] = [depth - 1, 0, -1, -depth, depth, -depth - 1]
    vals = np.array([-0.5, 3.25], np.float32)
    save_case(out_dir, "ref_onehot_vocab", helper.make_node("OneHot", ["I", "D", "V"], ["Y"], axis=-1),
              [("I", ids)], [("Y", onehot_ref(ids, depth, vals, -1))],
              inits=[("D", np.array(depth, np.int64)), ("V", vals)])
    ind = np.array([[0, 6, -7, 3], [7, -8, 2, 2], [1, 5, -1, 4]], np.float32)
    vals = np.array([-2.5, 7.25], np.float32)
    save_case(out_dir, "ref_onehot_axis1_float_ind", helper.make_node("OneHot", ["I", "D", "V"], ["Y"], axis=1),
              [("I", ind)], [("Y", onehot_ref(ind, 7, vals, 1))],
              inits=[("D", np.array([7], np.int64)), ("V", vals)])
    ind = rng.integers(-9, 12, (5, 3)).astype(np.int32)
    vals = np.array([11, -4], np.int32)
    save_case(out_dir, "ref_onehot_axis0_int32", helper.make_node("OneHot", ["I", "D", "V"], ["Y"], axis=0),
              [("I", ind)], [("Y", onehot_ref(ind, 9, vals, 0))],
              inits=[("D", np.array(9, np.int32)), ("V", vals)])


def wide_sum(arrs, mean, dtype):
    acc = np.zeros(np.broadcast_shapes(*[a.shape for a in arrs]), np.float64)
    for a in arrs:
        acc = acc + a.astype(np.float64)
    return (acc / len(arrs) if mean else acc).astype(dtype)


def sum_cases(out_dir):
    f = lambda *s: (rng.standard_normal(s) * 10 ** rng.uniform(-3, 3, s)).astype(np.float32)
    same = [f(1, 64, 40, 40) for _ in range(3)]
    scalar = np.array(0.1, np.float32)
    chan = f(1, 64, 1, 1)
    for op, mean in (("Sum", False), ("Mean", True)):
        cases = (("same3", same), ("scalar", [same[0], scalar]), ("mixed", [same[0], chan, scalar, same[1]]),
                 ("one_elem_first", [np.array([2.5], np.float32), same[2], same[0]]))
        for nm, arrs in cases:
            names = ["X%d" % i for i in range(len(arrs))]
            save_case(out_dir, "ref_%s_%s" % (op.lower(), nm), helper.make_node(op, names, ["Y"]),
                      list(zip(names, arrs)), [("Y", wide_sum(arrs, mean, np.float32))])
    h = [rng.standard_normal((3, 17)).astype(np.float16) for _ in range(3)]
    save_case(out_dir, "ref_mean_f16", helper.make_node("Mean", ["A", "B", "C"], ["Y"]),
              [("A", h[0]), ("B", h[1]), ("C", h[2])], [("Y", wide_sum(h, True, np.float16))])


def minmax_cases(out_dir):
    def vals(*shape):
        x = rng.standard_normal(shape).astype(np.float32)
        flat = x.reshape(-1)
        k = flat.size
        flat[rng.integers(0, k, max(1, k // 50))] = np.nan
        flat[rng.integers(0, k, max(1, k // 50))] = np.inf
        flat[rng.integers(0, k, max(1, k // 50))] = -np.inf
        return x
    for op, fn in (("Max", np.maximum), ("Min", np.minimum)):
        a, b, z = vals(1, 16, 9, 40), vals(1, 16, 9, 40), vals(1, 16, 1, 1)
        r = vals(40)
        cases = (("same", [a, b]), ("three_bcast", [a, b, z]), ("row_first", [r, a]), ("scalar", [a, np.array(0.0, np.float32)]))
        for nm, arrs in cases:
            names = ["X%d" % i for i in range(len(arrs))]
            y = arrs[0]
            for x in arrs[1:]:
                y = fn(y, x)
            save_case(out_dir, "ref_%s_%s" % (op.lower(), nm), helper.make_node(op, names, ["Y"]),
                      list(zip(names, arrs)), [("Y", y.astype(np.float32))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    onehot_cases(out_dir)
    minmax_cases(out_dir)
    sum_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
