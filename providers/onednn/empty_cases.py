#!/usr/bin/python3
"""Cases for zero-size tensors that appear only at run time in oneDNN
pieces: a detector's post-processing when NMS or a score filter keeps
nothing (an image without detections), fed after a non-empty set in one
session. Expected outputs from numpy.

  empty_nms_offset   torchvision's batched NMS offset: Cast(classes) ->
                     Mul(max coordinate) -> Unsqueeze -> Add(boxes); n = 3, then 0
  empty_rows_const   [n, 4] rows against a [4] / [1, 4] constant with Mul,
                     Sub (constant first) and Div; n = 2, then 0
  empty_matmul_batch a stack of n [4, 8] matrices times a [1, 8, 5] weight,
                     then Relu; n = 2, then 0
  empty_matmul_rows  [n, 8] x [8, 5] then Relu (a box head over no boxes);
                     n = 2, then 0
  bad_broadcast      hostile: [n, 4] + [m, 4] fed n = 0, m = 2, which do
                     not broadcast: the run fails naming the node

usage: empty_cases.py --check TESSERA OUT_DIR   (exit 77 without onnx or onednn)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper, TensorProto as T
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import extra_cases as ec
except ImportError:
    np = None

OPSET = 13


def save(out, name, nodes, inputs, outputs, inits, sets):
    """inputs: (name, elem type, dims with symbols); sets: (inputs, outputs) arrays per test_data_set."""
    return ec.save_declared_case(out, name, nodes, inputs, outputs, inits, sets, OPSET, 7)


def nms_offset(out, rng):
    nodes = [
        helper.make_node("Cast", ["classes"], ["cf"], to=T.FLOAT),
        helper.make_node("Mul", ["cf", "max_coord"], ["off"], name="offset_mul"),
        helper.make_node("Unsqueeze", ["off", "ax1"], ["off1"]),
        helper.make_node("Add", ["boxes", "off1"], ["y"], name="offset_add"),
    ]
    inits = [("max_coord", np.array(4096.0, np.float32)), ("ax1", np.array([1], np.int64))]
    sets = []
    for n in (3, 0):
        cls = rng.integers(0, 80, n).astype(np.int64)
        boxes = rng.uniform(0, 640, (n, 4)).astype(np.float32)
        y = boxes.astype(np.float64) + (cls.astype(np.float64) * 4096.0)[:, None]
        sets.append(([("classes", cls), ("boxes", boxes)], [("y", y.astype(np.float32))]))
    return save(out, "empty_nms_offset", nodes, [("classes", T.INT64, ["n"]), ("boxes", T.FLOAT, ["n", 4])],
                [("y", T.FLOAT)], inits, sets)


def rows_const(out, rng):
    scale = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    shift = rng.uniform(-1.0, 1.0, (1, 4)).astype(np.float32)
    div = rng.uniform(1.0, 3.0, (1, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Mul", ["x", "scale"], ["a"], name="rows_mul"),
        helper.make_node("Sub", ["shift", "a"], ["b"], name="rows_sub"),
        helper.make_node("Div", ["b", "div"], ["y"], name="rows_div"),
    ]
    sets = []
    for n in (2, 0):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        y = (shift.astype(np.float64) - x * scale.astype(np.float64)) / div
        sets.append(([("x", x)], [("y", y.astype(np.float32))]))
    return save(out, "empty_rows_const", nodes, [("x", T.FLOAT, ["n", 4])], [("y", T.FLOAT)],
                [("scale", scale), ("shift", shift), ("div", div)], sets)


def matmul_batch(out, rng):
    # a stack of n matrices times one [1, K, N] weight, n 2 then 0
    w = rng.standard_normal((1, 8, 5)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="batch_matmul"),
             helper.make_node("Relu", ["m"], ["y"])]
    sets = []
    for n in (2, 0):
        x = rng.standard_normal((n, 4, 8)).astype(np.float32)
        y = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
        sets.append(([("x", x)], [("y", y.astype(np.float32))]))
    return save(out, "empty_matmul_batch", nodes, [("x", T.FLOAT, ["n", 4, 8])], [("y", T.FLOAT)], [("w", w)], sets)


def matmul_rows(out, rng):
    # a box head over n boxes, n 2 then 0 (oneDNN 2.6 divided by zero
    # creating the 0-row matmul: SIGFPE)
    w = rng.standard_normal((8, 5)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="rows_matmul"),
             helper.make_node("Relu", ["m"], ["y"])]
    sets = []
    for n in (2, 0):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        sets.append(([("x", x)], [("y", np.maximum(x.astype(np.float64) @ w, 0).astype(np.float32))]))
    return save(out, "empty_matmul_rows", nodes, [("x", T.FLOAT, ["n", 8])], [("y", T.FLOAT)], [("w", w)], sets)


def bad_broadcast(out):
    nodes = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Add", ["r", "b"], ["y"], name="bad_add")]
    a, b = np.zeros((0, 4), np.float32), np.ones((2, 4), np.float32)
    return save(out, "empty_bad_broadcast", nodes, [("a", T.FLOAT, ["n", 4]), ("b", T.FLOAT, ["m", 4])],
                [("y", T.FLOAT)], [], [([("a", a), ("b", b)], [("y", a)])])


def onednn_nodes(tessera, case):
    total = [line for line in ec.partition(tessera, case).splitlines() if line.startswith("total:")]
    words = total[0].replace(",", "").split() if total else []
    return int(words[words.index("onednn") + 1]) if "onednn" in words else 0


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not ec.has_onednn(tessera):
        return 77
    rng = np.random.default_rng(20261207)
    cases = [nms_offset(out, rng), rows_const(out, rng), matmul_batch(out, rng), matmul_rows(out, rng)]
    bad = 0 if ec.test_cases(tessera, cases) else 1
    for c in cases:
        if onednn_nodes(tessera, c) < 2:
            print("%s: expected onednn to run the binary nodes" % os.path.basename(c))
            bad += 1
    bad += not ec.fails_naming(tessera, bad_broadcast(out), "'bad_add'")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.stderr.write(__doc__)
    sys.exit(2)
