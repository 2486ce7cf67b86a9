#!/usr/bin/env python3
"""The `transpose_cancel` ctest: elementwise ops between two Transposes
that cancel run on the untransposed tensor (core/transpose_cancel.c).

Models written here with python onnx, expected outputs by numpy (1x1
convolutions as einsum), in tf2onnx's NHWC style:

  sandwich   Conv -> Transpose(0,2,3,1) -> Clip(0, 6) -> Mul(0.5) -> Sub(1, .)
             -> Transpose(0,3,1,2) -> Conv: both Transposes go;
  mismatch   Conv -> Transpose(0,2,3,1) -> Relu -> Transpose(0,2,1,3):
             they do not cancel, both stay;
  observed   the sandwich with the Clip's output also a graph output: the
             Transposes stay (that output must keep its NHWC shape);
  fan_out    the first Transpose's output read by Relu and by Sigmoid: stays.

Each runs to numpy's result on -p reference and -p onednn,reference (where
the onednn provider is built), and
`tessera partition --format json` shows which Transposes are left.

usage: transpose_cancel_test.py --tessera BIN --work DIR
Exits 77 (skip) without python onnx.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("skip: python3-onnx is not installed")
    sys.exit(77)

failures = 0
rng = np.random.default_rng(5)
C = 8


def check(cond, what):
    global failures
    print(("ok: " if cond else "FAIL: ") + what)
    failures += 0 if cond else 1


def run(tessera, args):
    p = subprocess.run([tessera] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def conv1x1(x, w, b):
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x) + b[None, :, None, None]


def build(name, kind):
    w1 = (rng.standard_normal((C, 3, 1, 1)) * 0.5).astype(np.float32)
    b1 = rng.standard_normal(C).astype(np.float32)
    w2 = (rng.standard_normal((4, C, 1, 1)) * 0.5).astype(np.float32)
    b2 = rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
             numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array([1.0], np.float32), "one")]
    c1 = conv1x1(x, w1, b1)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1"),
             helper.make_node("Transpose", ["c1"], ["t1"], name="to_nhwc", perm=[0, 2, 3, 1])]
    outs = []
    expected = []
    if kind == "mismatch":
        nodes += [helper.make_node("Relu", ["t1"], ["r"], name="relu"),
                  helper.make_node("Transpose", ["r"], ["y"], name="back", perm=[0, 2, 1, 3])]
        outs.append(("y", np.maximum(c1.transpose(0, 2, 3, 1), 0).transpose(0, 2, 1, 3)))
    elif kind == "fan_out":
        nodes += [helper.make_node("Relu", ["t1"], ["r"], name="relu"),
                  helper.make_node("Sigmoid", ["t1"], ["s"], name="sigmoid"),
                  helper.make_node("Transpose", ["r"], ["y"], name="back", perm=[0, 3, 1, 2])]
        outs += [("y", np.maximum(c1, 0)), ("s", 1 / (1 + np.exp(-c1.transpose(0, 2, 3, 1))))]
    else:
        nodes += [helper.make_node("Clip", ["t1", "lo", "hi"], ["clipped"], name="relu6"),
                  helper.make_node("Mul", ["clipped", "half"], ["m"], name="halve"),
                  helper.make_node("Sub", ["one", "m"], ["s"], name="one_minus"),
                  helper.make_node("Transpose", ["s"], ["t2"], name="to_nchw", perm=[0, 3, 1, 2]),
                  helper.make_node("Conv", ["t2", "w2", "b2"], ["y"], name="conv2")]
        mid = 1 - np.clip(c1, 0, 6) * 0.5
        outs.append(("y", conv1x1(mid, w2, b2)))
        if kind == "observed":
            outs.append(("clipped", np.clip(c1, 0, 6).transpose(0, 2, 3, 1)))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n, _ in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m, x, [(n, v.astype(np.float32)) for n, v in outs]


def write_case(folder, model, x, outs):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (name, arr) in enumerate(outs):
        with open(os.path.join(folder, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())


def transposes_left(tessera, model, providers):
    rc, out, err = run(tessera, ["partition", model, "-p", providers, "--format", "json"])
    if rc != 0:
        check(False, "partition %s: %s" % (model, err[-300:]))
        return None
    j = json.loads(out)
    return sorted(n for p in j["pieces"] for n, op in zip(p["nodes"], p["ops"]) if op == "Transpose")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    want = {"sandwich": [], "mismatch": ["back", "to_nhwc"], "observed": ["to_nchw", "to_nhwc"],
            "fan_out": ["back", "to_nhwc"]}
    # the onednn provider where it is built (not in the sanitizer build)
    sets = ["reference"] + (["onednn,reference"] if "onednn" in run(a.tessera, ["providers"])[1].split() else [])
    for kind, left in want.items():
        case = os.path.join(a.work, kind)
        m, x, outs = build(kind, kind)
        write_case(case, m, x, outs)
        for providers in sets:
            got = transposes_left(a.tessera, os.path.join(case, "model.onnx"), providers)
            if got is not None:
                check(got == left, "%s (-p %s): Transposes left %s, want %s" % (kind, providers, got, left))
            rc, out, err = run(a.tessera, ["test", "-j", "1", "-p", providers, case])
            check(rc == 0 and "1 passed" in out, "%s (-p %s): numpy's result" % (kind, providers)
                  + ("" if rc == 0 else ": " + out[-300:] + err[-300:]))
    print("%d check(s) failed" % failures if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
