#!/usr/bin/env python3
"""The `loop_growing` ctest: a Loop-carried tensor that changes shape from
one iteration to the next (acc = Concat(acc, f(acc)), as a greedy decoder
appends tokens; a 2-D state that gains a row), with the initial value's
dims fixed. Loop inference once fed the body the initial shape, so the
second iteration failed the output check ("produced 't' with dimension 0
of 2; inference says 1"); ONNX's inference feeds carried tensors without
their shapes (core/shape_ops_control.c now forgets the dims body and
initial value disagree on). A carried value of fixed shape rides along.
Expected outputs from numpy, on the reference provider and with each
other provider found in front of it.

usage: loop_growing_test.py --tessera BIN --work DIR
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper


def grow_model(path, n_iter):
    body = helper.make_graph(
        [helper.make_node("Tanh", ["acc_in"], ["t"]),
         helper.make_node("Mul", ["t", "k"], ["u"]),
         helper.make_node("ReduceSum", ["u"], ["s"], keepdims=1),
         helper.make_node("Concat", ["acc_in", "s"], ["acc_out"], axis=0),
         helper.make_node("Unsqueeze", ["s", "ax"], ["row_piece"]),
         helper.make_node("Tile", ["row_piece", "reps"], ["row"]),
         helper.make_node("Concat", ["m_in", "row"], ["m_out"], axis=0),
         helper.make_node("Relu", ["fixed_in"], ["fixed_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
         helper.make_tensor_value_info("acc_in", T.FLOAT, None),
         helper.make_tensor_value_info("m_in", T.FLOAT, None),
         helper.make_tensor_value_info("fixed_in", T.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []),
         helper.make_tensor_value_info("acc_out", T.FLOAT, None),
         helper.make_tensor_value_info("m_out", T.FLOAT, None),
         helper.make_tensor_value_info("fixed_out", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(0.5, np.float32), "k"), numpy_helper.from_array(np.array([0], np.int64), "ax"),
         numpy_helper.from_array(np.array([1, 3], np.int64), "reps")])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "a0", "m0", "f0"], ["a", "m", "f"], body=body)], "grow",
        [helper.make_tensor_value_info("a0", T.FLOAT, [2]), helper.make_tensor_value_info("m0", T.FLOAT, [1, 3]),
         helper.make_tensor_value_info("f0", T.FLOAT, [2, 2])],
        [helper.make_tensor_value_info(v, T.FLOAT, None) for v in ("a", "m", "f")],
        [numpy_helper.from_array(np.array(n_iter, np.int64), "n")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def expected(a0, m0, f0, n_iter):
    a, m = a0.astype(np.float64), m0.astype(np.float64)
    for _ in range(n_iter):
        s = np.sum(np.tanh(a) * 0.5)
        a = np.concatenate([a, [s]])
        m = np.concatenate([m, np.full((1, 3), s)])
    return a, m, np.maximum(f0, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    n_iter = 5
    path = os.path.join(args.work, "grow.onnx")
    grow_model(path, n_iter)
    rng = np.random.default_rng(11)
    a0 = rng.standard_normal(2).astype(np.float32)
    m0 = rng.standard_normal((1, 3)).astype(np.float32)
    f0 = rng.standard_normal((2, 2)).astype(np.float32)
    case = os.path.join(args.work, "case")
    sd = os.path.join(case, "test_data_set_0")
    os.makedirs(sd, exist_ok=True)
    os.replace(path, os.path.join(case, "model.onnx"))
    for i, (n, v) in enumerate((("a0", a0), ("m0", m0), ("f0", f0))):
        open(os.path.join(sd, "input_%d.pb" % i), "wb").write(numpy_helper.from_array(v, n).SerializeToString())
    for i, (n, v) in enumerate(zip(("a", "m", "f"), expected(a0, m0, f0, n_iter))):
        open(os.path.join(sd, "output_%d.pb" % i), "wb").write(
            numpy_helper.from_array(v.astype(np.float32), n).SerializeToString())
    provs = subprocess.run([args.tessera, "providers"], capture_output=True, text=True).stdout
    sets = ["reference"] + ["%s,reference" % p for p in ("onednn", "opencl") if ("\n%s " % p) in "\n" + provs]
    bad = 0
    for p in sets:
        r = subprocess.run([args.tessera, "test", "-p", p, case], capture_output=True, text=True)
        print(p, (r.stdout + r.stderr).strip().splitlines()[-1] if (r.stdout + r.stderr).strip() else "")
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
