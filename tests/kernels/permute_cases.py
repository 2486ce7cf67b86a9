#!/usr/bin/python3
"""Backend-style cases for the reference provider's axis permutation
(ref_tensor_permute.c: a strided copy for 1-, 2-, 4- and 8-byte elements,
the view engine for strings): Transpose of rank 6 with odd sizes and size-1
axes under several permutations (inner swap, outer swap that keeps long
contiguous rows, reversal by default, identity), a rank-4 one whose
strided block leaves partial 16x16 tiles both ways, rank 0, 1 and an
empty tensor, for uint8, bool, int8, int16, float16, int32, float, int64, double
and string; DepthToSpace (DCR, CRD) and SpaceToDepth with blocksizes 2 and
3, batch 2, on int8, float16 and int64. Expected outputs: numpy's
transpose, and np.reshape/np.transpose as the ONNX spec defines
DepthToSpace and SpaceToDepth. `tessera test -p reference --rtol 0 --atol 0`
runs them (ctest `reference_permute`).
usage: permute_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

import case_io

case_io.TYPES[np.dtype(np.int16)] = TensorProto.INT16
rng = np.random.default_rng(20261209)

TYPES = [np.uint8, np.bool_, np.int8, np.int16, np.float16, np.int32, np.float32, np.int64, np.float64, object]


def values(shape, t):
    if t is object:
        flat = np.array(["s%d" % i for i in range(int(np.prod(shape)))], dtype=object)
        return flat.reshape(shape)
    if t is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(t, np.integer):
        info = np.iinfo(t)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(t)
    return rng.standard_normal(shape).astype(t)


def tname(t):
    return "string" if t is object else np.dtype(t).name


def transpose_cases(out_dir):
    shapes_perms = [
        ("r6_mixed", (3, 1, 5, 2, 7, 3), [5, 2, 0, 4, 1, 3]),
        ("r6_inner_swap", (2, 3, 1, 5, 3, 7), [0, 1, 2, 3, 5, 4]),
        ("r6_outer_swap", (3, 5, 1, 1, 2, 41), [1, 0, 2, 3, 4, 5]),
        ("r6_default", (3, 2, 5, 1, 7, 3), None),
        ("r6_identity", (3, 2, 5, 1, 7, 3), [0, 1, 2, 3, 4, 5]),
        ("r4_tiles", (2, 37, 21, 3), [0, 2, 3, 1]),  # a 63 x 37 strided block: partial tiles both ways
        ("r1", (7,), [0]),
        ("r0", (), []),
        ("empty", (3, 0, 2), [2, 0, 1]),
    ]
    for t in TYPES:
        for label, shape, perm in shapes_perms:
            if t is object and label in ("r0", "empty"):
                continue
            x = values(shape, t)
            kw = {} if perm is None else {"perm": perm}
            y = np.transpose(x, perm if perm is not None else None)
            case_io.save_case(out_dir, "ref_permute_transpose_%s_%s" % (label, tname(t)),
                              helper.make_node("Transpose", ["x"], ["y"], **kw), [("x", x)], [("y", y)])


def d2s(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def s2d(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


def depth_space_cases(out_dir):
    for t in (np.int8, np.float16, np.int64):
        for b in (2, 3):
            for mode in ("DCR", "CRD"):
                x = values((2, 2 * b * b, 3, 5), t)
                case_io.save_case(out_dir, "ref_permute_d2s_%s_b%d_%s" % (mode.lower(), b, tname(t)),
                                  helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode),
                                  [("x", x)], [("y", d2s(x, b, mode))])
            x = values((2, 3, 3 * b, 5 * b), t)
            case_io.save_case(out_dir, "ref_permute_s2d_b%d_%s" % (b, tname(t)),
                              helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b), [("x", x)],
                              [("y", s2d(x, b))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    transpose_cases(out_dir)
    depth_space_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
