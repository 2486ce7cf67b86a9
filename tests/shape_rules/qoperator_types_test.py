#!/usr/bin/env python3
"""The `qoperator_types` ctest: core/shape_ops_domains.c types the
com.microsoft ops ONNX Runtime's quantizer writes in QOperator format, so a
QLinearConv fed by a QLinearAdd, a QLinearConcat or a
QLinearGlobalAveragePool is claimed by the oneDNN provider (it needs its
input's type and channels before run time); without the rules those
QLinearConvs went to the reference provider. Skipped (77) without the
oneDNN plugin.

usage: qoperator_types_test.py --tessera BIN --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

U8, I8, F = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT


def model(path):
    rng = np.random.default_rng(3)
    c = lambda name, v: numpy_helper.from_array(v, name)
    w = rng.integers(-60, 60, (8, 16, 3, 3)).astype(np.int8)
    w2 = rng.integers(-60, 60, (8, 8, 1, 1)).astype(np.int8)
    inits = [c("s", np.array(0.05, np.float32)), c("z", np.array(128, np.uint8)), c("w", w), c("w2", w2),
             c("ws", np.array(0.01, np.float32)), c("wz", np.array(0, np.int8))]
    nodes = [
        helper.make_node("QLinearAdd", ["a", "s", "z", "b", "s", "z", "s", "z"], ["sum"], domain="com.microsoft",
                         name="add"),
        helper.make_node("QLinearConcat", ["s", "z", "sum", "s", "z", "b", "s", "z"], ["cat"], axis=1,
                         domain="com.microsoft", name="concat"),
        helper.make_node("QLinearConv", ["cat", "s", "z", "w", "ws", "wz", "s", "z"], ["conv"], pads=[1, 1, 1, 1],
                         name="conv_after_concat"),
        helper.make_node("QLinearGlobalAveragePool", ["conv", "s", "z", "s", "z"], ["pool"], domain="com.microsoft",
                         name="pool"),
        helper.make_node("QLinearConv", ["pool", "s", "z", "w2", "ws", "wz", "s", "z"], ["y"],
                         name="conv_after_pool"),
    ]
    t = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "qop", [t("a", U8, [1, 8, 6, 6]), t("b", U8, [1, 8, 6, 6])],
                          [t("y", U8, [1, 8, 1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    prov = subprocess.run([a.tessera, "providers"], capture_output=True).stdout.decode()
    if "onednn" not in prov.split():
        print("qoperator_types: no oneDNN plugin, skipped")
        return 77
    path = os.path.join(a.work, "qop_types.onnx")
    model(path)
    p = subprocess.run([a.tessera, "partition", path, "-p", "onednn,reference", "--format", "json"],
                       capture_output=True)
    if p.returncode != 0:
        print("FAIL: partition exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")))
        return 1
    where = {n: pc["provider"] for pc in json.loads(p.stdout)["pieces"] for n in pc["nodes"]}
    bad = [n for n in ("conv_after_concat", "conv_after_pool") if where.get(n) != "onednn"]
    for n in bad:
        print("FAIL: %s runs on %s, want onednn (its input untyped?)" % (n, where.get(n)))
    r = subprocess.run([a.tessera, "run", path, "-p", "onednn,reference", "--fill", "a=200", "--fill", "b=90"],
                       capture_output=True)
    if r.returncode != 0:
        print("FAIL: run exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace")))
        bad.append("run")
    if bad:
        return 1
    print("qoperator_types: both QLinearConvs on onednn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
