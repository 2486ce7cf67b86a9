#!/usr/bin/python3
"""Backend-style cases for the reference provider's typed fast paths that
must keep the plain definition's results bit for bit:

- TopK on float32 (ref_misc_topk.c, topk_f32): a heap of the best k words
  scanned against a threshold when k * 8 <= n, a radix sort of the slice
  otherwise. Largest and smallest, sorted 1 and 0, last / middle / first
  axis, k = 0, 1, small, large and n, opset 1 (k attribute) and 10 (no
  largest); inputs with many ties, NaNs (more NaNs than k, a NaN run at the
  start), -0 and +0 mixed, +-inf, ascending and descending runs. Expected:
  a stable lexsort of (NaN flag, value, index) in numpy; values taken from
  the input, so -0 and +0 keep their sign. float64, int32 and float16 cases
  check the general path alike.
- ArgMax / ArgMin over the last axis and a middle axis (ref_math_reduce.c;
  inner sizes 6, 15 and 1030: column blocks of 512, 4 lanes, tails),
  select_last_index 0 and 1, ties, NaNs (the kernel's own rule, transcribed:
  an element replaces the best when (u > v), or with select_last_index when
  !(u < v); min with the comparisons turned round).
- MatMul in float64 (ref_nn_util.c): sums over k in order, mul and add
  rounded each (no FMA), k in blocks of 256 added to C in order (the last
  n % 8 columns summed into C directly); transcribed in numpy elementwise,
  so bit for bit.
- Cast float32 <-> float64 (ref_math_cast.c): numpy astype.

`tessera test -p reference --rtol 0 --atol 0` runs them (ctest
`reference_speed`).
usage: reference_speed_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from case_io import save_case

rng = np.random.default_rng(20261209)


# ---------------------------------------------------------------- TopK

def topk_ref(x, k, axis, largest):
    """Sorted by value (NaN above every number, -0 equal to +0), ties to
    the lower index."""
    x = np.moveaxis(x, axis, -1)
    key = x.astype(np.float64)
    nan = np.isnan(key)
    key = np.where(nan, 0.0, key) + 0.0  # -0 -> +0
    index = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    if largest:
        order = np.lexsort((index, -key, ~nan), axis=-1)
    else:
        order = np.lexsort((index, key, nan), axis=-1)
    idx = order[..., :k]
    vals = np.take_along_axis(x, idx, axis=-1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx.astype(np.int64), -1, axis)


def topk_input(shape, kind, dtype=np.float32):
    n = int(np.prod(shape))
    if kind == "ties":
        x = np.round(rng.standard_normal(n) * 3) / 4
    elif kind == "special":
        x = np.round(rng.standard_normal(n) * 2) / 2
        sel = rng.choice(n, max(1, n // 20), replace=False)
        x[sel] = rng.choice([np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan], sel.size)
    elif kind == "manynan":
        x = rng.standard_normal(n)
        x[rng.random(n) < 0.4] = np.nan
    elif kind == "nanhead":  # the first elements all NaN: the heap starts full of them
        x = rng.standard_normal(n)
        x[: n // 3] = np.nan
        x[rng.random(n) < 0.05] = np.nan
    elif kind == "zeros":  # -0 and +0 only, plus a few ones
        x = rng.choice([-0.0, 0.0, 0.0, 1.0, -1.0], n)
    elif kind == "ascending":
        x = np.arange(n, dtype=np.float64) / 7
    elif kind == "descending":
        x = -np.arange(n, dtype=np.float64) / 7
    else:
        x = rng.standard_normal(n)
    return x.astype(dtype).reshape(shape)


def topk_cases(out_dir):
    cases = []
    # name, shape, k, axis, largest, sorted, kind
    for largest in (1, 0):
        lg = "largest" if largest else "smallest"
        for kind in ("ties", "special", "manynan", "nanhead", "zeros", "ascending", "descending", "plain"):
            cases.append(("f32_heap_%s_%s" % (lg, kind), (3, 1000), 17, -1, largest, 1, kind))
            cases.append(("f32_sort_%s_%s" % (lg, kind), (2, 300), 120, -1, largest, 1, kind))
        cases.append(("f32_axis1_%s" % lg, (2, 517, 3), 9, 1, largest, 1, "special"))
        cases.append(("f32_axis0_%s" % lg, (700, 5), 40, 0, largest, 0, "ties"))
        cases.append(("f32_axis1_sort_%s" % lg, (2, 70, 4), 30, 1, largest, 1, "special"))
        cases.append(("f32_k_n_%s" % lg, (4, 211), 211, -1, largest, 1, "special"))
        cases.append(("f32_k_1_%s" % lg, (5, 333), 1, -1, largest, 1, "special"))
        cases.append(("f32_k_0_%s" % lg, (3, 50), 0, -1, largest, 1, "plain"))
        cases.append(("f32_small_n_%s" % lg, (6, 13), 5, -1, largest, 1, "special"))
        cases.append(("f32_unsorted_%s" % lg, (2, 4099), 100, -1, largest, 0, "ties"))
        cases.append(("f32_big_%s" % lg, (1, 100003), 300, -1, largest, 1, "plain"))
    for name, shape, k, axis, largest, srt, kind in cases:
        x = topk_input(shape, kind)
        v, i = topk_ref(x, k, axis, largest)
        node = helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=axis, largest=largest, sorted=srt)
        save_case(out_dir, "ref_speed_topk_" + name, node, [("X", x)], [("V", v), ("I", i)],
                  [("K", np.array([k], dtype=np.int64))], opset=11)
    # opset 1 (k attribute) and 10 (K input, always largest)
    x = topk_input((4, 260), "special")
    v, i = topk_ref(x, 7, -1, 1)
    save_case(out_dir, "ref_speed_topk_f32_opset1", helper.make_node("TopK", ["X"], ["V", "I"], axis=-1, k=7),
              [("X", x)], [("V", v), ("I", i)], opset=1)
    save_case(out_dir, "ref_speed_topk_f32_opset10", helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=1),
              [("X", x)], [("V", v), ("I", i)], [("K", np.array([7], dtype=np.int64))], opset=10)
    # the general path: float64, float16, int32
    for dt, nm in ((np.float64, "f64"), (np.float16, "f16"), (np.int32, "i32")):
        for largest in (1, 0):
            if dt == np.int32:
                x = rng.integers(-30, 30, (3, 500)).astype(np.int32)
            else:
                x = topk_input((3, 500), "special", dt)
            v, i = topk_ref(x, 11, -1, largest)
            node = helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=-1, largest=largest)
            save_case(out_dir, "ref_speed_topk_%s_%s" % (nm, "largest" if largest else "smallest"), node,
                      [("X", x)], [("V", v), ("I", i)], [("K", np.array([11], dtype=np.int64))], opset=11)


# ---------------------------------------------------------------- ArgMax / ArgMin

def arg_ref(x, axis, is_max, last):
    """The kernel's sequential rule, over the axis."""
    x = np.moveaxis(x, axis, -1)
    best = x[..., 0].copy()
    bi = np.zeros(best.shape, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        for k in range(1, x.shape[-1]):
            u = x[..., k]
            if is_max:
                take = (u > best) | (last & ~(u < best))
            else:
                take = (u < best) | (last & ~(u > best))
            best = np.where(take, u, best)
            bi = np.where(take, k, bi)
    return bi


def arg_input(shape, kind):
    if kind == "ties":
        x = np.round(rng.standard_normal(shape) * 2)
    elif kind == "nan":
        x = rng.standard_normal(shape)
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.02] = np.nan
        x = flat.reshape(shape)
        x[..., 0][rng.random(x[..., 0].shape) < 0.3] = np.nan  # a NaN first on some rows
    elif kind == "ascending":
        x = np.broadcast_to(np.arange(shape[-1], dtype=np.float64), shape).copy()
    else:
        x = rng.standard_normal(shape)
    return x.astype(np.float32)


def argmax_cases(out_dir):
    for op in ("ArgMax", "ArgMin"):
        is_max = op == "ArgMax"
        for kind in ("ties", "nan", "ascending", "plain"):
            for last in (0, 1):
                for shape, axis in (((5, 1003), -1), ((2, 3, 37), 2), ((3, 41, 6), 1), ((4, 16), -1),
                                    ((2, 7, 1030), 1), ((21, 3, 5), 0)):
                    x = arg_input(shape, kind)
                    if not is_max and kind == "ascending":
                        x = -x
                    y = arg_ref(x, axis, is_max, bool(last))
                    node = helper.make_node(op, ["X"], ["Y"], axis=axis, keepdims=0, select_last_index=last)
                    save_case(out_dir, "ref_speed_%s_%s_last%d_%s" % (op.lower(), kind, last,
                                                                     "x".join(map(str, shape))),
                              node, [("X", x)], [("Y", y)])


# ---------------------------------------------------------------- float64 MatMul, Cast

def matmul_ref(a, b):
    """C = A B with each element summed over k in order: k in blocks of 256,
    each block summed from 0 and then added to C, except in the last n % 8
    columns, summed into C directly."""
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (m, n)
    nw = n - n % 8
    c = np.zeros(shape)
    for k0 in range(0, k, 256):
        acc = np.zeros(shape)
        for p in range(k0, min(k, k0 + 256)):
            prod = a[..., :, p:p + 1] * b[..., p:p + 1, :]
            acc[..., :nw] = acc[..., :nw] + prod[..., :nw]
            c[..., nw:] = c[..., nw:] + prod[..., nw:]
        c[..., :nw] = c[..., :nw] + acc[..., :nw]
    return c


def matmul_cases(out_dir):
    for name, sa, sb in (("square", (64, 64), (64, 64)), ("odd", (37, 53), (53, 29)),
                         ("batched", (2, 33, 40), (40, 23)), ("batch_both", (3, 9, 17), (3, 17, 41)),
                         ("deep_k", (6, 600), (600, 19)), ("wide", (5, 8), (8, 301)),
                         ("row", (1, 70), (70, 70)), ("tall", (130, 3), (3, 16))):
        a = rng.standard_normal(sa)
        b = rng.standard_normal(sb)
        save_case(out_dir, "ref_speed_matmul_f64_" + name, helper.make_node("MatMul", ["A", "B"], ["Y"]),
                  [("A", a), ("B", b)], [("Y", matmul_ref(a, b))])
    a = rng.standard_normal((4, 40))
    b = rng.standard_normal((40, 7))
    a[1, 3] = np.nan
    b[5, 2] = np.inf
    with np.errstate(invalid="ignore"):
        y = matmul_ref(a, b)
    save_case(out_dir, "ref_speed_matmul_f64_nan_inf", helper.make_node("MatMul", ["A", "B"], ["Y"]),
              [("A", a), ("B", b)], [("Y", y)])


def cast_cases(out_dir):
    x = rng.standard_normal((3, 1001)).astype(np.float32) * 1e3
    x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38]
    save_case(out_dir, "ref_speed_cast_f32_f64", helper.make_node("Cast", ["X"], ["Y"], to=TensorProto.DOUBLE),
              [("X", x)], [("Y", x.astype(np.float64))])
    d = rng.standard_normal((3, 1001)) * 1e3
    d.reshape(-1)[:9] = [np.nan, np.inf, -np.inf, -0.0, 1e-300, 1e300, 3.5e38, 1.0000000596046448, 1e-46]
    with np.errstate(over="ignore"):
        save_case(out_dir, "ref_speed_cast_f64_f32", helper.make_node("Cast", ["X"], ["Y"], to=TensorProto.FLOAT),
                  [("X", d)], [("Y", d.astype(np.float32))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    topk_cases(out_dir)
    argmax_cases(out_dir)
    matmul_cases(out_dir)
    cast_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
