#!/usr/bin/env python3
"""The `einsum_lower` ctest: core/einsum_lower.c at session creation.

An Einsum that is a batched matrix product (one right, one contracted
label, any batch labels; several labels of A alone when there are no
shared batch labels, which MatMul broadcasts over a 2-D B) must become
Transpose/MatMul nodes, so
that no Einsum is left in the partition and oneDNN claims the whole model;
any other equation stays an Einsum. Every model is run on each provider set
and its output compared with numpy's einsum in float64.

usage: einsum_lower_test.py --tessera BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from rewrite_check import FAILURES, check, ops_of, partition, run_and_compare

# equation, operand shapes, lowered?
CASES = [
    ("bihd,bjhd->bhij", [(2, 5, 3, 4), (2, 6, 3, 4)], True),   # attention scores, torch style
    ("bhij,bjhd->bihd", [(2, 3, 5, 6), (2, 6, 3, 4)], True),   # attention context
    ("ij,jk->ik", [(5, 7), (7, 3)], True),                      # plain matmul: no Transpose
    ("bij,bkj->bik", [(2, 4, 6), (2, 5, 6)], True),             # B transposed
    ("ik,kj->ji", [(4, 6), (6, 5)], True),                      # output transposed
    ("bij,jk->bik", [(2, 4, 6), (6, 5)], True),                 # x @ W: batch dims of A alone
    ("bchw,dc->bdhw", [(2, 3, 4, 5), (6, 3)], True),            # a 1x1 convolution, channels contracted
    ("nchw,nmc->nmhw", [(1, 3, 2, 4), (1, 5, 3)], False),       # two left labels
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)], False),             # i summed on one side
    ("ii,ij->ij", [(4, 4), (4, 3)], False),                     # a diagonal
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], False),      # ellipsis
    ("i,i->", [(6,), (6,)], False),                             # no left/right label
]


def case_model(work, k, eq, shapes, out_shape):
    ins = ["a", "b"]
    node = helper.make_node("Einsum", ins, ["y"], equation=eq, name="einsum%d" % k)
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu%d" % k)  # something after it in the same piece
    g = helper.make_graph([node, relu], "einsum%d" % k,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(ins, shapes)],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="einsum_lower_test")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(work, "einsum%d.onnx" % k)
    onnx.save(m, path)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    prov = subprocess.run([a.tessera, "providers"], capture_output=True).stdout.decode()
    sets = ["reference"] + [p + ",reference" for p in ("onednn", "opencl") if p in prov.split()]
    rng = np.random.default_rng(11)
    for k, (eq, shapes, lowered) in enumerate(CASES):
        xs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        want = np.maximum(np.einsum(eq, *[x.astype(np.float64) for x in xs]), 0)
        model = case_model(a.work, k, eq, shapes, list(want.shape))
        for ps in sets:
            run_and_compare(a.tessera, a.work, model, {"a": xs[0], "b": xs[1]}, {"z": want}, ps, tol=1e-5)
        part = partition(a.tessera, model, "reference")
        if part:
            ops = ops_of(part)
            if lowered:
                check("Einsum" not in ops and "MatMul" in ops, "%s: -p reference ops %s, want MatMul, no Einsum" % (eq, ops))
            else:
                check("Einsum" in ops, "%s: -p reference ops %s, want the Einsum kept" % (eq, ops))
        if lowered and "onednn,reference" in sets:
            part = partition(a.tessera, model, "onednn,reference")
            if part:
                provs = sorted({pc["provider"] for pc in part["pieces"]})
                check(provs == ["onednn"], "%s: -p onednn,reference providers %s, want onednn alone" % (eq, provs))
    if FAILURES:
        print("einsum_lower: %d failure(s)" % len(FAILURES))
        return 1
    print("einsum_lower: all %d cases pass (%s)" % (len(CASES), ", ".join(sets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
