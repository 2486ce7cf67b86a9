#!/usr/bin/python3
"""Cases for the oneDNN provider's pooling of tensors with fewer channels
than a block (odn_build_pool.c's plane loop: RAFT's [2852,1,46,62]
pyramid) and its Concat of tiny pieces (odn_build_concat.c's row copy:
RAFT's grid, pieces of one element). Pooling: AveragePool with
count_include_pad 0 and 1, pads, strides, ceil_mode, MaxPool with pads,
stride 1, ceil_mode and dilation, 1-D and 3-D windows, the global forms,
C = 1, 2, 3, 5 and N up to 64, plus C = 8 and 16 that stay on oneDNN's
blocked kernel. Concat: last and middle axes with pieces of 1, 2, 3, 7 and
64 elements, many inputs, and a few long rows that are split. Expected
outputs from numpy in float64, written here from the ONNX definitions.

usage: pool_concat_cases.py OUT_DIR        (prints the case dirs)
       pool_concat_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails, onednn does not claim every node or a pooling takes the
         wrong kernel (exit 77 without
         onnx or without the onednn provider)
"""
import math
import os
import subprocess
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


def pool_ref(x, kind, kernel, strides, pads, dil, ceil, include_pad):
    """ONNX MaxPool / AveragePool over the trailing len(kernel) dims, float64.
    pads = begins then ends. ceil_mode drops a window that starts in the
    right padding."""
    sp = len(kernel)
    x = x.astype(np.float64)
    ins = x.shape[2:]
    outs = []
    for i in range(sp):
        span = (kernel[i] - 1) * dil[i] + 1
        room = ins[i] + pads[i] + pads[sp + i] - span
        o = (math.ceil(room / strides[i]) if ceil else room // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= ins[i] + pads[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for pos in np.ndindex(*outs):
        idx = []
        for i in range(sp):
            taps = [pos[i] * strides[i] - pads[i] + k * dil[i] for k in range(kernel[i])]
            idx.append([t for t in taps if 0 <= t < ins[i]])
        win = x[(slice(None), slice(None)) + np.ix_(*idx)].reshape(x.shape[0], x.shape[1], -1)
        sl = (slice(None), slice(None)) + pos
        if kind == "MaxPool":
            y[sl] = win.max(axis=2)
        elif include_pad:
            y[sl] = win.sum(axis=2) / np.prod(kernel)
        else:
            y[sl] = win.mean(axis=2)
    return y


def pool_case(out, name, kind, shape, kernel, strides=None, pads=None, dil=None, ceil=0, include_pad=0):
    sp = len(kernel)
    strides = strides or [1] * sp
    pads = pads or [0] * (2 * sp)
    dil = dil or [1] * sp
    x = rng.standard_normal(shape).astype(np.float32) - 0.5
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=ceil)
    if kind == "MaxPool" and dil != [1] * sp:
        attrs["dilations"] = dil
    if kind == "AveragePool":
        attrs["count_include_pad"] = include_pad
    nodes = [helper.make_node(kind, ["x"], ["y"], **attrs)]
    y = pool_ref(x, kind, kernel, strides, pads, dil, ceil, include_pad)
    save_typed_case(out, name, nodes, [("x", x)], [("y", y.astype(np.float32))])


def global_case(out, name, kind, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    axes = tuple(range(2, len(shape)))
    y = x.astype(np.float64).max(axis=axes, keepdims=True) if "Max" in kind else \
        x.astype(np.float64).mean(axis=axes, keepdims=True)
    save_typed_case(out, name, [helper.make_node(kind, ["x"], ["y"])], [("x", x)], [("y", y.astype(np.float32))])


def concat_case(out, name, shapes, axis, dtype=np.float32):
    """Concat of inputs each doubled first (so the pieces are produced
    inside the piece, as in RAFT)."""
    xs = [(rng.standard_normal(s) * 100).astype(dtype) for s in shapes]
    two = np.array(2, dtype=dtype)
    nodes = [helper.make_node("Mul", ["x%d" % i, "two"], ["m%d" % i]) for i in range(len(xs))]
    nodes.append(helper.make_node("Concat", ["m%d" % i for i in range(len(xs))], ["y"], axis=axis))
    y = np.concatenate([x.astype(np.float64) * 2 for x in xs], axis=axis).astype(dtype)
    save_typed_case(out, name, nodes, [("x%d" % i, x) for i, x in enumerate(xs)], [("y", y)], [("two", two)])


def write(out):
    P = "odn_pool_fewc_"
    # the RAFT pyramid level, N = 64
    pool_case(out, P + "avg_c1_k2s2_n64", "AveragePool", (64, 1, 46, 62), [2, 2], [2, 2])
    pool_case(out, P + "avg_c2_k3_pad_incl", "AveragePool", (5, 2, 9, 11), [3, 3], [1, 1], [1, 1, 1, 1], include_pad=1)
    pool_case(out, P + "avg_c3_k3_pad_excl", "AveragePool", (4, 3, 9, 11), [3, 3], [1, 1], [1, 1, 1, 1])
    pool_case(out, P + "avg_c5_s2_asym_ceil_excl", "AveragePool", (3, 5, 10, 9), [3, 3], [2, 2], [1, 0, 0, 1], ceil=1)
    pool_case(out, P + "avg_c1_k2x3_s21_ceil_n64", "AveragePool", (64, 1, 7, 9), [2, 3], [2, 1], ceil=1)
    pool_case(out, P + "avg_c2_k3s2_pad_incl", "AveragePool", (7, 2, 12, 13), [3, 3], [2, 2], [1, 1, 1, 1],
              include_pad=1)
    pool_case(out, P + "max_c3_k3s2_pad", "MaxPool", (2, 3, 33, 35), [3, 3], [2, 2], [1, 1, 1, 1])
    pool_case(out, P + "max_c1_k3s1_pad", "MaxPool", (6, 1, 13, 13), [3, 3], [1, 1], [1, 1, 1, 1])
    pool_case(out, P + "max_c1_k2s1_yolo", "MaxPool", (1, 1, 13, 13), [2, 2], [1, 1], [0, 0, 1, 1])
    pool_case(out, P + "max_c2_k2s2_ceil", "MaxPool", (3, 2, 9, 7), [2, 2], [2, 2], ceil=1)
    pool_case(out, P + "max_c5_dil2", "MaxPool", (2, 5, 11, 12), [2, 3], [1, 2], [1, 0, 1, 1], dil=[2, 2])
    pool_case(out, P + "max_c3_1d", "MaxPool", (4, 3, 29), [3], [2], [1, 1])
    pool_case(out, P + "avg_c1_1d_excl_n64", "AveragePool", (64, 1, 17), [4], [3], [2, 1], ceil=1)
    pool_case(out, P + "avg_c2_3d", "AveragePool", (2, 2, 6, 7, 5), [2, 2, 2], [2, 2, 2], [0, 1, 0, 1, 0, 1])
    pool_case(out, P + "max_c1_3d", "MaxPool", (3, 1, 5, 6, 7), [3, 3, 3], [2, 2, 2], [1, 1, 1, 1, 1, 1])
    global_case(out, P + "gavg_c3", "GlobalAveragePool", (5, 3, 7, 9))
    global_case(out, P + "gmax_c1", "GlobalMaxPool", (9, 1, 6, 5))
    # whole channel blocks: oneDNN's own kernel, as before
    pool_case(out, P + "avg_c8_k3_pad_excl", "AveragePool", (2, 8, 9, 11), [3, 3], [2, 2], [1, 1, 1, 1])
    pool_case(out, P + "max_c16_k3s2_pad", "MaxPool", (2, 16, 15, 13), [3, 3], [2, 2], [1, 1, 1, 1])

    C = "odn_concat_small_"
    # RAFT's grid: 231k rows of two 1-element pieces
    concat_case(out, C + "last_1x2_raft", [(2852, 9, 9, 1)] * 2, -1)
    concat_case(out, C + "last_mixed", [(3, 5, 7, 1), (3, 5, 7, 2), (3, 5, 7, 3), (3, 5, 7, 7), (3, 5, 7, 64)], 3)
    concat_case(out, C + "last_many", [(4, 33, k) for k in (1, 2, 3, 7, 64, 1, 1, 2, 3, 7, 1, 5)], -1)
    concat_case(out, C + "mid_axis", [(6, k, 3, 1) for k in (1, 2, 3, 7, 64)], 1)
    concat_case(out, C + "mid_axis2", [(5, 4, k, 2) for k in (1, 3, 7)], 2)
    concat_case(out, C + "last_rows_big", [(1, 46, 62, 81)] * 4, -1)
    # few rows of long pieces: each split across threads
    concat_case(out, C + "long_rows", [(2, 300001), (2, 70000), (2, 3)], 1)
    concat_case(out, C + "axis0", [(1, 3), (2, 3), (7, 3)], 0)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    prov = subprocess.run([tessera, "providers"], capture_output=True, text=True).stdout
    if not any(line.startswith("onednn ") for line in prov.splitlines()):
        print("no onednn provider: skipped")
        return 77
    cases = written_cases(write, out)
    bad = ["tests at %s threads" % t for t in ("1", "2")
           if not test_cases(tessera, cases, "-t", t, "--rtol", "1e-5", "--atol", "1e-5")]
    for c in cases:
        run = explain(tessera, c)
        whole = claimed_whole(run)
        name = os.path.basename(c)
        # fewer channels than a block: the plane loop; whole blocks: oneDNN's kernel
        loop = "loop MaxPool" in run or "loop AveragePool" in run or "loop Global" in run
        want_loop = name.startswith("odn_pool_fewc_") and "_c8_" not in name and "_c16_" not in name
        if not whole or (name.startswith("odn_pool_") and loop != want_loop):
            print("not claimed whole by onednn, or the wrong pooling kernel: %s\n%s" % (name, run))
            bad.append(c)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
