#!/usr/bin/env python3
"""The `reference_einsum` ctest: the reference provider's Einsum kernel
(providers/reference/ref_math_einsum*.c), the Einsum pinned to the
reference provider (`--assign Einsum=reference`), which keeps
core/einsum_lower.c from lowering it to MatMul: dot products, two contracted labels,
several left and right labels, no left label, outer products, labels summed
on one side only, diagonals, ellipses (broadcast included), the implicit
output, one and three operands, a scalar operand, an empty dimension, and
integer, float16 and double types. Each model runs on -p reference and its
output is compared with numpy's einsum in float64 (integers exactly).

usage: einsum_test.py --tessera BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rewrites"))
from rewrite_check import FAILURES, check, ops_of, partition, run_and_compare  # noqa: E402

# An Einsum pinned to a provider stays an Einsum (core/einsum_lower.c lowers
# the others to MatMul), so these reach the kernel whatever the lowering takes.
PIN = ("--assign", "Einsum=reference")

F32, F64, F16, I32, I64, I8, U8 = (np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8)

# equation, operand shapes, element type
CASES = [
    ("bnd,bnd->bn", [(2, 5, 7), (2, 5, 7)], F32),              # a dot product per (b, n)
    ("bhne,hed->bnd", [(2, 3, 5, 4), (3, 4, 6)], F32),         # two contracted labels
    ("bhne,hed->bnd", [(2, 4, 37, 80), (4, 80, 70)], F32),     # k = 320 > one GEMM block, odd n
    ("bnd,khed->kbhne", [(2, 5, 6), (3, 2, 4, 6)], F32),       # several left and right labels
    ("bn,bnd->bd", [(2, 5), (2, 5, 3)], F32),                  # no left label
    ("i,j->ij", [(4,), (5,)], F32),                            # outer product
    ("nchw,nmc->nmhw", [(2, 3, 4, 5), (2, 6, 3)], F32),        # two left labels, a batch label
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)], F32),              # i summed on A's side only
    ("ij,kl->", [(3, 4), (5, 2)], F32),                        # everything summed, no shared label
    ("ii,ij->ij", [(4, 4), (4, 3)], F32),                      # a diagonal
    ("iij,jk->ik", [(3, 3, 4), (4, 5)], F32),                  # a diagonal beside other labels
    ("ijk,ikj->ij", [(3, 4, 5), (3, 5, 4)], F32),              # labels in other orders
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], F32),       # ellipsis
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 6)], F32),           # ellipsis broadcast, implicit output
    ("...i,...i->...", [(3, 2, 4), (3, 1, 4)], F32),           # ellipsis with a size-1 broadcast
    ("ij,jk", [(3, 4), (4, 5)], F32),                          # implicit output: ik
    ("ij,ij", [(3, 4), (3, 4)], F32),                          # implicit output: a scalar
    ("ba,cb", [(3, 4), (5, 3)], F32),                          # implicit output, letters sorted: ac
    ("i,i->", [(6,), (6,)], F32),
    ("ii->i", [(5, 5)], F32),                                  # one operand: diagonal
    ("ii", [(5, 5)], F32),                                     # trace, implicit
    ("bdn->bnd", [(2, 6, 7)], F32),                            # transpose
    ("ijk->ki", [(3, 4, 5)], F32),                             # transpose and sum
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)], F32),           # a chain of three
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)], F32),
    ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)], F32),             # a cycle
    ("a,b,c->abc", [(2,), (3,), (4,)], F32),                   # outer product of three
    (",ij->ij", [(), (3, 4)], F32),                            # a scalar operand
    ("bij,bjk->bk", [(2, 3, 0), (2, 0, 5)], F32),              # an empty contraction: zeros
    ("bhne,hed->bnd", [(2, 3, 5, 4), (3, 4, 6)], F64),
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)], F64),
    ("bnd,khed->kbhne", [(2, 5, 6), (3, 2, 4, 6)], F16),
    ("bn,bnd->bd", [(2, 5), (2, 5, 3)], F16),
    ("bnd,bnd->bn", [(2, 5, 7), (2, 5, 7)], I32),
    ("nchw,nmc->nmhw", [(2, 3, 4, 5), (2, 6, 3)], I64),
    ("ii,ij->ij", [(4, 4), (4, 3)], I64),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 6)], I32),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)], I64),
    ("i,j->ij", [(4,), (5,)], I8),
    ("bij,bjk->bk", [(2, 3, 2), (2, 2, 2)], U8),
]

ELEM = {F32: onnx.TensorProto.FLOAT, F64: onnx.TensorProto.DOUBLE, F16: onnx.TensorProto.FLOAT16,
        I32: onnx.TensorProto.INT32, I64: onnx.TensorProto.INT64, I8: onnx.TensorProto.INT8,
        U8: onnx.TensorProto.UINT8}
# Absolute tolerance per unit of the largest expected magnitude; integers exact.
TOL = {F32: 1e-6, F64: 1e-12, F16: 2e-3}


def case_model(work, k, eq, shapes, dt, out_shape):
    names = ["x%d" % i for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=eq, name="einsum%d" % k)
    g = helper.make_graph([node], "einsum%d" % k,
                          [helper.make_tensor_value_info(n, ELEM[dt], list(s)) for n, s in zip(names, shapes)],
                          [helper.make_tensor_value_info("y", ELEM[dt], list(out_shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="einsum_test")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(work, "einsum%d.onnx" % k)
    onnx.save(m, path)
    return path, names


def operand(rng, shape, dt):
    if dt == U8:
        return rng.integers(0, 4, shape).astype(dt)
    if dt in (I8, I32, I64):
        return rng.integers(-3, 4, shape).astype(dt)
    return rng.uniform(-1, 1, shape).astype(dt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rng = np.random.default_rng(20261208)
    for k, (eq, shapes, dt) in enumerate(CASES):
        xs = [operand(rng, s, dt) for s in shapes]
        want = np.einsum(eq, *[x.astype(np.float64) for x in xs])
        want = np.asarray(want)
        if dt in TOL:
            tol = TOL[dt] * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
        else:
            want = want.astype(dt).astype(np.float64)  # integers wrap as numpy's astype does
            tol = 0.0
        model, names = case_model(a.work, k, eq, shapes, dt, want.shape)
        run_and_compare(a.tessera, a.work, model, dict(zip(names, xs)), {"y": want}, "reference", tol=tol,
                        extra=PIN)
        part = partition(a.tessera, model, "reference", extra=PIN)
        if part:
            check("Einsum" in ops_of(part), "%s: lowered to %s although pinned, so the Einsum kernel is not "
                  "tested" % (eq, ops_of(part)))
    if FAILURES:
        print("reference_einsum: %d failure(s)" % len(FAILURES))
        return 1
    print("reference_einsum: all %d cases pass" % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
