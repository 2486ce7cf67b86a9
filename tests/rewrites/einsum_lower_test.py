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
from onnx import TensorProto, helper, numpy_helper

from rewrite_check import FAILURES, check, ops_of, partition, run_and_compare

# equation, operand shapes, lowered?, options: "const_b" (B an initializer, as
# weights are), "sym_a"/"sym_b" (the declared shape, strings symbolic),
# "mixed" (the piece may not be onednn's alone)
CASES = [
    ("bihd,bjhd->bhij", [(2, 5, 3, 4), (2, 6, 3, 4)], True, {}),   # attention scores, torch style
    ("bhij,bjhd->bihd", [(2, 3, 5, 6), (2, 6, 3, 4)], True, {}),   # attention context
    ("ij,jk->ik", [(5, 7), (7, 3)], True, {}),                      # plain matmul: no Transpose
    ("bij,bkj->bik", [(2, 4, 6), (2, 5, 6)], True, {}),             # B transposed
    ("ik,kj->ji", [(4, 6), (6, 5)], True, {}),                      # output transposed
    ("bij,jk->bik", [(2, 4, 6), (6, 5)], True, {}),                 # x @ W: batch dims of A alone
    ("bchw,dc->bdhw", [(2, 3, 4, 5), (6, 3)], True, {}),            # a 1x1 convolution, channels contracted
    ("nchw,nmc->nmhw", [(1, 3, 2, 4), (1, 5, 3)], True, {}),        # two left labels and a batch one: B gets a 1
    ("bnd,khed->kbhne", [(2, 5, 8), (3, 4, 6, 8)], True,            # q/k/v projection, three right labels
     {"const_b": True, "sym_a": ["batch", "seq", 8]}),
    ("bhne,hed->bnd", [(2, 4, 5, 6), (4, 6, 8)], True,              # output projection, two contracted labels
     {"const_b": True, "sym_a": ["batch", 4, "seq", 6]}),
    ("abc,cde->abde", [(2, 5, 8), (8, 3, 4)], True,                 # Keras EinsumDense (tf2onnx)
     {"const_b": True, "sym_a": ["batch", "seq", 8]}),
    ("abcd,cde->abe", [(2, 5, 3, 4), (3, 4, 8)], True,
     {"const_b": True, "sym_a": ["batch", "seq", 3, 4]}),
    ("bnd,bnd->bn", [(2, 5, 8), (2, 5, 8)], True, {}),             # row dot products
    ("bn,bnd->bd", [(2, 5), (2, 5, 8)], True, {}),                  # no left label
    ("i,j->ij", [(4,), (5,)], True, {}),                            # outer product: nothing contracted
    ("i,i->", [(6,), (6,)], True, {"mixed": True}),                 # a scalar
    ("bdn->bnd", [(2, 3, 4)], True, {}),                            # one operand, a permutation
    ("abc,abd->cd", [(3, 4, 5), (3, 4, 6)], False,                  # merged sizes unknown at load
     {"sym_a": ["x", "y", 5], "sym_b": ["x", "y", "z"]}),
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)], False, {}),             # i summed on one side
    ("ii,ij->ij", [(4, 4), (4, 3)], False, {}),                     # a diagonal
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], False, {}),      # ellipsis
]


def case_model(work, k, eq, xs, out_shape, opts):
    names = ["a", "b"][:len(xs)]
    node = helper.make_node("Einsum", names, ["y"], equation=eq, name="einsum%d" % k)
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu%d" % k)  # something after it in the same piece
    declared = [opts.get("sym_" + n, list(x.shape)) for n, x in zip(names, xs)]
    fed = [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in zip(names, declared)]
    inits = []
    if opts.get("const_b"):
        fed = fed[:1]
        inits = [numpy_helper.from_array(xs[1], "b")]
    g = helper.make_graph([node, relu], "einsum%d" % k, fed,
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, out_shape)], inits)
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
    for k, (eq, shapes, lowered, opts) in enumerate(CASES):
        xs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        want = np.maximum(np.einsum(eq, *[x.astype(np.float64) for x in xs]), 0)
        model = case_model(a.work, k, eq, xs, list(want.shape), opts)
        feed = {"a": xs[0]} if len(xs) == 1 or opts.get("const_b") else {"a": xs[0], "b": xs[1]}
        for ps in sets:
            run_and_compare(a.tessera, a.work, model, feed, {"z": want}, ps, tol=1e-5)
        part = partition(a.tessera, model, "reference")
        if part:
            ops = ops_of(part)
            if lowered:
                want_op = "Transpose" if len(shapes) == 1 else "MatMul"
                check("Einsum" not in ops and want_op in ops,
                      "%s: -p reference ops %s, want %s, no Einsum" % (eq, ops, want_op))
            else:
                check("Einsum" in ops, "%s: -p reference ops %s, want the Einsum kept" % (eq, ops))
        if lowered and not opts.get("mixed") and "onednn,reference" in sets:
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
