#!/usr/bin/python3
"""Backend-style cases for DepthToSpace (DCR and CRD) and SpaceToDepth on
the oneDNN provider (odn_build_depth_space.c: one reorder from a 6-D
strided view of the input): blocksizes 2, 3 and 4, batch 2, after a Conv
(a blocked input layout), as a piece output and inside the piece, after a
Transpose (a strided view as input), a SpaceToDepth -> DepthToSpace(DCR)
round trip, float16, and symbolic H and W run at two sizes in one session.
Each must pass and be claimed whole by onednn. Hostile: an input of unknown
rank, an int32 input and a mode other than DCR/CRD are declined with a
reason and run on the reference provider (still right, or, for the bad
mode, failing with an error naming the node); channels not divisible by
blocksize^2, known only at run time, fail naming the node.
Expected outputs from numpy: np.reshape/np.transpose as the ONNX spec
defines the ops, convolutions in float64.

usage: depth_space_cases.py OUT_DIR        (prints the case dirs)
       depth_space_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails or is not claimed (or declined) as it expects. Exit 77
         without onnx or onednn.
"""
import contextlib
import io
import os
import sys

try:
    import numpy as np
    from onnx import TensorProto, helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import (claimed_whole, fails_naming, float_conv, has_onednn, partition, save_declared_case,
                             save_typed_case, test_cases, written_cases)

    rng = np.random.default_rng(20261209)


def f32(a):
    return np.asarray(a).astype(np.float32)


def d2s(x, b, mode):
    """DepthToSpace as the ONNX spec writes it."""
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def s2d(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def op_node(op, src, dst, b, mode, name=None):
    kw = {"mode": mode} if op == "DepthToSpace" else {}
    return helper.make_node(op, [src], [dst], blocksize=b, name=name or op.lower(), **kw)


def apply(op, x, b, mode):
    return d2s(x, b, mode) if op == "DepthToSpace" else s2d(x, b)


def after_conv(out, name, op, b, mode, c, hw, inside, batch=2):
    """Conv 3x3 (oneDNN leaves a blocked layout) -> the op -> a 1x1 Conv
    when `inside` (the op's output stays in the piece), else the op's
    output is the piece's."""
    x = f32(rng.standard_normal((batch, 4) + hw))
    w0 = f32(rng.standard_normal((c, 4, 3, 3)) * 0.3)
    s = f32(float_conv(x, w0, [1, 1], [1, 1, 1, 1]))
    t = apply(op, s.astype(np.float64), b, mode)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["s"], pads=[1, 1, 1, 1]),
             op_node(op, "s", "t" if inside else "y", b, mode)]
    inits = [("w0", w0)]
    y = t
    if inside:
        w1 = f32(rng.standard_normal((8, t.shape[1], 1, 1)) * 0.3)
        nodes.append(helper.make_node("Conv", ["t", "w1"], ["y"]))
        inits.append(("w1", w1))
        y = float_conv(t, w1, [1, 1], [0, 0, 0, 0])
    save_typed_case(out, name, nodes, [("x", x)], [("y", f32(y))], inits)


def after_transpose(out):
    """Transpose (a view with permuted strides) -> DepthToSpace(CRD) -> Relu."""
    x = f32(rng.standard_normal((2, 18, 5, 7)))
    t = x.transpose(0, 1, 3, 2)
    y = np.maximum(d2s(t, 3, "CRD"), 0)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2]),
             op_node("DepthToSpace", "t", "d", 3, "CRD"), helper.make_node("Relu", ["d"], ["y"])]
    save_typed_case(out, "odn_d2s_after_transpose", nodes, [("x", x)], [("y", f32(y))])


def round_trip(out):
    """SpaceToDepth -> Relu -> DepthToSpace(DCR): relu(x) again."""
    x = f32(rng.standard_normal((2, 3, 12, 8)))
    nodes = [op_node("SpaceToDepth", "x", "s", 4, None), helper.make_node("Relu", ["s"], ["r"]),
             op_node("DepthToSpace", "r", "y", 4, "DCR")]
    y = d2s(np.maximum(s2d(x, 4), 0), 4, "DCR")
    assert np.array_equal(y, np.maximum(x, 0))
    save_typed_case(out, "odn_depth_space_round_trip", nodes, [("x", x)], [("y", f32(y))])


def float16(out):
    """float16 (computed in float32 by the provider): Relu -> DepthToSpace(CRD)."""
    x = rng.standard_normal((2, 8, 3, 5)).astype(np.float16)
    y = d2s(np.maximum(x, 0), 2, "CRD")
    nodes = [helper.make_node("Relu", ["x"], ["r"]), op_node("DepthToSpace", "r", "y", 2, "CRD")]
    save_typed_case(out, "odn_d2s_float16", nodes, [("x", x)], [("y", y)])


def dynamic(out):
    """Symbolic H and W, two sizes in one session: Relu -> SpaceToDepth(2)
    -> DepthToSpace(CRD, 2) -> Relu."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), op_node("SpaceToDepth", "r", "s", 2, None),
             op_node("DepthToSpace", "s", "d", 2, "CRD"), helper.make_node("Relu", ["d"], ["y"])]
    sets = []
    for h, w in ((6, 10), (8, 4)):
        x = f32(rng.standard_normal((2, 3, h, w)))
        sets.append(([("x", x)], [("y", f32(d2s(s2d(np.maximum(x, 0), 2), 2, "CRD")))]))
    print(save_declared_case(out, "odn_depth_space_dynamic_hw", nodes, [("x", TensorProto.FLOAT, [2, 3, "H", "W"])],
                             [("y", TensorProto.FLOAT)], [], sets, 13, 7))


def declined(out):
    """Left to the reference provider, and still right: an input of unknown
    rank, an int32 input."""
    x = f32(rng.standard_normal((1, 8, 3, 3)))
    nodes = [helper.make_node("Relu", ["x"], ["r"]), op_node("DepthToSpace", "r", "y", 2, "DCR")]
    print(save_declared_case(out, "odn_no_d2s_rank_unknown", nodes, [("x", TensorProto.FLOAT, None)],
                             [("y", TensorProto.FLOAT)], [], [([("x", x)], [("y", d2s(np.maximum(x, 0), 2, "DCR"))])],
                             13, 7))
    xi = rng.integers(-100, 100, (2, 2, 6, 9)).astype(np.int32)
    save_typed_case(out, "odn_no_s2d_int32", [op_node("SpaceToDepth", "x", "y", 3, None)], [("x", xi)],
                    [("y", s2d(xi, 3))])


def hostile(out):
    """Bad models: (case, node name the error must name)."""
    x = f32(rng.standard_normal((1, 8, 3, 3)))
    nodes = [helper.make_node("Relu", ["x"], ["r"]), op_node("DepthToSpace", "r", "y", 2, "XYZ", name="bad_mode")]
    save_typed_case(out, "odn_hostile_d2s_mode", nodes, [("x", x)], [("y", f32(np.zeros((1, 2, 6, 6))))])
    # 6 channels, blocksize 2: known only at run time
    x = f32(rng.standard_normal((1, 6, 3, 3)))
    nodes = [helper.make_node("Relu", ["x"], ["r"]), op_node("DepthToSpace", "r", "y", 2, "CRD", name="bad_channels")]
    print(save_declared_case(out, "odn_hostile_d2s_channels", nodes, [("x", TensorProto.FLOAT, [1, "C", 3, 3])],
                             [("y", TensorProto.FLOAT)], [], [([("x", x)], [("y", f32(np.zeros((1, 1, 6, 6))))])],
                             13, 7))
    return {"odn_hostile_d2s_mode": "bad_mode", "odn_hostile_d2s_channels": "bad_channels"}


def write(out):
    os.makedirs(out, exist_ok=True)
    after_conv(out, "odn_d2s_dcr_b2_inside", "DepthToSpace", 2, "DCR", 32, (6, 7), True)
    after_conv(out, "odn_d2s_crd_b2_output", "DepthToSpace", 2, "CRD", 32, (6, 7), False)
    after_conv(out, "odn_d2s_dcr_b3_output", "DepthToSpace", 3, "DCR", 18, (5, 4), False)
    after_conv(out, "odn_d2s_crd_b3_inside", "DepthToSpace", 3, "CRD", 27, (4, 5), True)
    after_conv(out, "odn_d2s_crd_b4_inside", "DepthToSpace", 4, "CRD", 32, (3, 5), True)
    after_conv(out, "odn_d2s_dcr_b4_output", "DepthToSpace", 4, "DCR", 48, (3, 2), False, batch=1)
    after_conv(out, "odn_s2d_b2_inside", "SpaceToDepth", 2, None, 8, (6, 10), True)
    after_conv(out, "odn_s2d_b3_output", "SpaceToDepth", 3, None, 5, (9, 6), False)
    after_conv(out, "odn_s2d_b4_inside", "SpaceToDepth", 4, None, 16, (8, 12), True)
    after_transpose(out)
    round_trip(out)
    float16(out)
    dynamic(out)
    declined(out)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    for c in cases:
        report = partition(tessera, c)
        name = os.path.basename(c)
        if "_no_" in name:
            ok = "not mapped" not in report and "reference 0" not in report
        else:
            ok = claimed_whole(report)
        if not ok:
            print("%s: %s\n%s" % (name, "not declined" if "_no_" in name else "not claimed whole by onednn", report))
            bad.append(c)
    hostile_dir = os.path.join(out, "hostile")
    os.makedirs(hostile_dir, exist_ok=True)
    with contextlib.redirect_stdout(io.StringIO()):
        names = hostile(hostile_dir)
    for case, node in sorted(names.items()):
        if not fails_naming(tessera, os.path.join(hostile_dir, case), node):
            bad.append(case)
    report = partition(tessera, os.path.join(hostile_dir, "odn_hostile_d2s_mode"))
    if "mode is neither DCR nor CRD" not in report:
        print("odn_hostile_d2s_mode: onednn did not decline the mode:\n" + report)
        bad.append("odn_hostile_d2s_mode")
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
