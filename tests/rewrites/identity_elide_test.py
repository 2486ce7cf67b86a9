#!/usr/bin/env python3
"""The `identity_elide` ctest: core/identity_elide.c at session creation.

A Loop whose body passes values through Identity nodes, as torch.onnx
exports loops (cond_out = Identity(cond_in)), plus an unchanged carried
tensor, a scan output taken through an Identity, and an Identity of a
body constant: the body must hold no Identity after load (they were a
piece each, every iteration), and the outputs must equal numpy's loop on
each provider set. An If inside the body reading an outer value through
an Identity keeps working (the captured value is not removed).

Dropouts that pass their input through (opset-7+ semantics, training_mode
a constant false) go from the main graph as well; one whose mask is read
or whose output is a graph output stays. Outputs equal numpy's.

usage: identity_elide_test.py --tessera BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from rewrite_check import FAILURES, check, partition, run_and_compare

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
TRIPS = 5


def body_graph(w):
    t = helper.make_tensor_value_info
    then_g = helper.make_graph([helper.make_node("Relu", ["held"], ["r"], name="relu_then")], "then", [],
                               [t("r", F, [1, 8])])
    else_g = helper.make_graph([helper.make_node("Neg", ["held"], ["r2"], name="neg_else")], "else", [],
                               [t("r2", F, [1, 8])])
    nodes = [
        helper.make_node("MatMul", ["s_in", "w"], ["mm"], name="body_matmul"),
        helper.make_node("Tanh", ["mm"], ["s_out"], name="body_tanh"),
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="id_cond"),
        helper.make_node("Add", ["k_in", "one"], ["k_out"], name="body_count"),
        helper.make_node("Identity", ["c_in"], ["c_out"], name="id_carry"),
        helper.make_node("Identity", ["s_out"], ["scan"], name="id_scan"),
        helper.make_node("Identity", ["s_out"], ["held"], name="id_captured"),  # read by the If's branches
        helper.make_node("Greater", ["k_in", "two"], ["gt"], name="body_gt"),
        helper.make_node("If", ["gt"], ["branch"], name="body_if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Identity", ["seven"], ["const_out"], name="id_const"),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.full((1, 8), 7.0, np.float32), "seven")]
    return helper.make_graph(
        nodes, "body",
        [t("i", I64, []), t("cond_in", B, []), t("s_in", F, [1, 8]), t("k_in", I64, []), t("c_in", F, [1, 8])],
        [t("cond_out", B, []), t("s_out", F, [1, 8]), t("k_out", I64, []), t("c_out", F, [1, 8]),
         t("scan", F, [1, 8]), t("branch", F, [1, 8]), t("const_out", F, [1, 8])], inits)


def model(work, w):
    t = helper.make_tensor_value_info
    loop = helper.make_node("Loop", ["trips", "", "x", "k0", "c"], ["s", "k", "c_last", "scans", "branches", "consts"],
                            name="loop0", body=body_graph(w))
    g = helper.make_graph([loop], "g", [t("x", F, [1, 8]), t("c", F, [1, 8])],
                          [t("s", F, [1, 8]), t("k", I64, []), t("c_last", F, [1, 8]), t("scans", F, [TRIPS, 1, 8]),
                           t("branches", F, [TRIPS, 1, 8]), t("consts", F, [TRIPS, 1, 8])],
                          [numpy_helper.from_array(np.array(TRIPS, np.int64), "trips"),
                           numpy_helper.from_array(np.array(0, np.int64), "k0")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="identity_elide_test")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(work, "loop_identities.onnx")
    onnx.save(m, path)
    return path


def expected(x, c, w):
    s, k = x.astype(np.float64), 0
    scans, branches = [], []
    for _ in range(TRIPS):
        s_new = np.tanh(s @ w.astype(np.float64))
        branches.append(np.maximum(s_new, 0) if k > 2 else -s_new)
        scans.append(s_new)
        s, k = s_new, k + 1
    return {"s": s, "k": np.array(k, np.int64), "c_last": c.astype(np.float64), "scans": np.stack(scans),
            "branches": np.stack(branches), "consts": np.full((TRIPS, 1, 8), 7.0)}


def dropout_model(work):
    """Main graph: x -> Dropout -> Relu -> Dropout(ratio 0.5, training_mode a
    constant false) -> Sigmoid = y; a Dropout whose mask is a graph output
    and one whose output is a graph output stay."""
    t = helper.make_tensor_value_info
    nodes = [helper.make_node("Dropout", ["x"], ["d1"], name="drop_plain"),
             helper.make_node("Relu", ["d1"], ["r"], name="relu"),
             helper.make_node("Dropout", ["r", "ratio", "training"], ["d2"], name="drop_training_false"),
             helper.make_node("Sigmoid", ["d2"], ["y"], name="sigmoid"),
             helper.make_node("Dropout", ["x"], ["d3", "mask"], name="drop_mask_read"),
             helper.make_node("Neg", ["d3"], ["n"], name="neg"),
             helper.make_node("Dropout", ["x"], ["z"], name="drop_is_output")]
    g = helper.make_graph(nodes, "dropouts", [t("x", F, [2, 8])],
                          [t("y", F, [2, 8]), t("n", F, [2, 8]), t("mask", B, [2, 8]), t("z", F, [2, 8])],
                          [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
                           numpy_helper.from_array(np.array(False), "training")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="identity_elide_test")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(work, "dropouts.onnx")
    onnx.save(m, path)
    return path


def body_nodes(piece_list):
    for p in piece_list:
        for b in p.get("subgraphs", []):
            for q in b["pieces"]:
                yield from q["nodes"]
                yield from body_nodes([q])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((8, 8)) * 0.5).astype(np.float32)
    x, c = rng.uniform(-1, 1, (1, 8)).astype(np.float32), rng.uniform(-1, 1, (1, 8)).astype(np.float32)
    path = model(a.work, w)
    want = expected(x, c, w)
    prov = subprocess.run([a.tessera, "providers"], capture_output=True).stdout.decode()
    sets = ["reference"] + [p + ",reference" for p in ("onednn", "opencl") if p in prov.split()]
    for ps in sets:
        run_and_compare(a.tessera, a.work, path, {"x": x, "c": c}, want, ps, tol=1e-5)
    part = partition(a.tessera, path, "reference")
    if part:
        nodes = sorted(set(body_nodes(part["pieces"])))
        check(not [n for n in nodes if n.startswith("id_") and n != "id_captured"],
              "body Identities left: %s" % nodes)
        check("id_captured" in nodes, "the Identity an If branch reads stays: %s" % nodes)
    # Dropouts that pass their input through go from the main graph too
    dpath = dropout_model(a.work)
    x2 = np.concatenate([x, c]).astype(np.float32)
    sig = 1 / (1 + np.exp(-np.maximum(x2.astype(np.float64), 0)))
    for ps in sets:
        run_and_compare(a.tessera, a.work, dpath, {"x": x2}, {"y": sig, "n": -x2.astype(np.float64),
                                                             "z": x2.astype(np.float64)}, ps, tol=1e-5)
    part = partition(a.tessera, dpath, "reference")
    if part:
        left = sorted(n for p in part["pieces"] for n, op in zip(p["nodes"], p["ops"]) if op == "Dropout")
        check(left == ["drop_is_output", "drop_mask_read"], "Dropouts left: %s" % left)
    if FAILURES:
        print("identity_elide: %d failure(s)" % len(FAILURES))
        return 1
    print("identity_elide: all checks pass (%s)" % ", ".join(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
