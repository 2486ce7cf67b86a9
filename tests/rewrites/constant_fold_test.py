#!/usr/bin/env python3
"""The `constant_fold` ctest: nodes of constants are computed once at load.

Models written here with python onnx, expected outputs computed with numpy
(the ONNX definitions), in the styles exporters write:

  weights   y = MatMul(x, Transpose(W)) + Cast(b16 -> float), reshaped by
            Concat(Shape(x)[0], Gather(Shape(x), 1)) (x has fixed dims), plus
            MatMul(x, DequantizeLinear(w8, scale)) and Relu(c) where c is an
            initializer also listed among the graph inputs (as exporters
            before IR version 4 wrote every weight; sessions never let a
            caller feed such an input);
  big       Add(x, ConstantOfShape([1024, 1024]))  (4 MiB), and a graph
            output Transpose(wbig), wbig 512 KiB (fed to the run that
            folds it rather than copied into its model);
  loop      a Loop whose body adds Mul(Unsqueeze(v), 2) to the carried h,
            v an initializer of the main graph.

Checked with `tessera partition --format json` and `tessera test`:
  - the Transpose, Cast, Shape/Gather/Concat chain and Relu(c) are in
    "folded" and in no piece; the DequantizeLinear is not;
  - the outputs match numpy folded (default), unfolded (--limit
    fold_bytes=1), on -p reference and on -p onednn,reference (where
    the onednn provider is built);
  - --assign Transpose=reference keeps the Transpose a piece;
  - the ConstantOfShape is folded by default, not under --limit
    fold_bytes=1000000, and both give numpy's result;
  - the text report says "folded at load";
  - the loop body's Unsqueeze and Mul are folded (listed with their body),
    its Add of the carried value is not, and the loop's result is numpy's;
  - a Gather of constants with an index out of range (which folding fails
    to run) stays a piece, and a run fails naming it.

usage: constant_fold_test.py --tessera BIN --work DIR
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


def check(cond, what):
    global failures
    if cond:
        print("ok: " + what)
    else:
        failures += 1
        print("FAIL: " + what)
    return cond


def run(tessera, args):
    p = subprocess.run([tessera] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def write_case(folder, model, inputs, outputs):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (name, arr) in enumerate(values):
            path = os.path.join(folder, "test_data_set_0", "%s_%d.pb" % (kind, i))
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())


def weights_model(rng):
    W = rng.standard_normal((4, 8)).astype(np.float32)
    b16 = rng.standard_normal(4).astype(np.float16)
    w8 = rng.integers(-100, 100, (8, 4)).astype(np.int8)
    scale = np.float32(0.02)
    c = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["W"], ["Wt"], name="w_transpose", perm=[1, 0]),
        helper.make_node("MatMul", ["x", "Wt"], ["mm"], name="mm"),
        helper.make_node("Cast", ["b16"], ["b"], name="b_cast", to=TensorProto.FLOAT),
        helper.make_node("Add", ["mm", "b"], ["mm_b"], name="add_b"),
        helper.make_node("Shape", ["x"], ["xs"], name="x_shape"),
        helper.make_node("Gather", ["xs", "zero"], ["n"], name="n_gather", axis=0),
        helper.make_node("Concat", ["n", "minus_one"], ["target"], name="target_concat", axis=0),
        helper.make_node("Reshape", ["mm_b", "target"], ["r"], name="reshape"),
        helper.make_node("DequantizeLinear", ["w8", "scale"], ["wq"], name="w_dequant"),
        helper.make_node("MatMul", ["x", "wq"], ["mq"], name="mq"),
        helper.make_node("Relu", ["c"], ["cr"], name="c_relu"),
        helper.make_node("Add", ["r", "mq"], ["s"], name="add_q"),
        helper.make_node("Add", ["s", "cr"], ["y"], name="add_c"),
    ]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(b16, "b16"),
             numpy_helper.from_array(w8, "w8"), numpy_helper.from_array(scale, "scale"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
             numpy_helper.from_array(c, "c")]
    g = helper.make_graph(nodes, "weights",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8]),
                           helper.make_tensor_value_info("c", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7

    def expected(x, cc):
        mm = x @ W.T + b16.astype(np.float32)
        mq = x @ (w8.astype(np.float32) * scale)
        return (mm.reshape(3, -1) + mq + np.maximum(cc, 0)).astype(np.float32)
    return m, c, expected


def big_model(wbig):
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["ones"], name="fill",
                              value=numpy_helper.from_array(np.array([1.5], np.float32))),
             helper.make_node("Add", ["x", "ones"], ["y"], name="add"),
             helper.make_node("Transpose", ["wbig"], ["wt"], name="wbig_transpose", perm=[1, 0])]
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024]),
                           helper.make_tensor_value_info("wt", TensorProto.FLOAT, [256, 512])],
                          [numpy_helper.from_array(np.array([1024, 1024], np.int64), "shape"),
                           numpy_helper.from_array(wbig, "wbig")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def loop_model(rng):
    """h_{k+1} = h_k + Unsqueeze(v) * 2, three iterations; the
    body's Unsqueeze(v) of an outer constant and Mul by its own constant
    are folded, the Add of the carried h is not."""
    v = rng.standard_normal(4).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["v", "axes0"], ["vu"], name="v_unsqueeze"),
         helper.make_node("Mul", ["vu", "two"], ["v2"], name="v_twice"),
         helper.make_node("Add", ["h_in", "v2"], ["h_out"], name="h_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond_id")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(np.array([0], np.int64), "axes0"),
         numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    g = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "h0"], ["h"], name="loop", body=body)],
        "loop_fold", [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(v, "v"), numpy_helper.from_array(np.array(3, np.int64), "trips")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m, lambda h0: (h0 + 3 * (2 * v[None, :])).astype(np.float32)


def partition_json(tessera, model, extra):
    rc, out, err = run(tessera, ["partition", model, "--format", "json"] + extra)
    if not check(rc == 0, "partition %s %s" % (os.path.basename(model), " ".join(extra)) + ("" if rc == 0 else err)):
        return None, None
    j = json.loads(out)
    return ({f["node"] if "body" not in f else f["body"] + "/" + f["node"] for f in j["folded"]},
            {n for p in j["pieces"] for n in p["nodes"]})


def test_case(tessera, case, extra, what):
    rc, out, err = run(tessera, ["test", "-j", "1", case] + extra)
    check(rc == 0 and "1 passed" in out, what + ("" if rc == 0 else ": " + out[-300:] + err[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng(7)

    m, c, expected = weights_model(rng)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    case = os.path.join(a.work, "weights")
    write_case(case, m, [("x", x)], [("y", expected(x, c))])
    model = os.path.join(case, "model.onnx")
    folded, in_pieces = partition_json(a.tessera, model, ["-p", "reference"])
    if folded is not None:
        want = {"w_transpose", "b_cast", "x_shape", "n_gather", "target_concat"}
        check(want <= folded, "Transpose, Cast and the Shape chain folded: %s" % sorted(folded))
        check(not folded & in_pieces, "a folded node is in no piece")
        check("w_dequant" not in folded and "w_dequant" in in_pieces, "DequantizeLinear is not folded")
        check("c_relu" in folded, "Relu of an initializer also listed as an input is folded (no caller feeds it)")
    folded, in_pieces = partition_json(a.tessera, model, ["-p", "reference", "--limit", "fold_bytes=1"])
    if folded is not None:
        check(not folded, "--limit fold_bytes=1 folds nothing")
    # the onednn provider where it is built (not in the sanitizer build)
    fast = ["-p", "onednn,reference"] if "onednn" in run(a.tessera, ["providers"])[1].split() else ["-p", "reference"]
    folded, in_pieces = partition_json(a.tessera, model, fast + ["--assign", "Transpose=reference"])
    if folded is not None:
        check("w_transpose" in in_pieces and "b_cast" in folded, "a node pinned with --assign stays a piece")
    rc, out, _ = run(a.tessera, ["partition", model, "-p", "reference"])
    check(rc == 0 and "folded at load: 6 nodes" in out, "the text report says what was folded")
    for extra in (["-p", "reference"], fast, [], ["-p", "reference", "--limit", "fold_bytes=1"]):
        test_case(a.tessera, case, extra, "weights: numpy's result with %s" % (" ".join(extra) or "default providers"))

    case3 = os.path.join(a.work, "big")
    xb = rng.standard_normal((1024, 1024)).astype(np.float32)
    wbig = rng.standard_normal((512, 256)).astype(np.float32)  # 512 KiB: fed to the folding run, not copied
    write_case(case3, big_model(wbig), [("x", xb)], [("y", xb + np.float32(1.5)), ("wt", wbig.T.copy())])
    model3 = os.path.join(case3, "model.onnx")
    folded, _ = partition_json(a.tessera, model3, ["-p", "reference"])
    if folded is not None:
        check(folded == {"fill", "wbig_transpose"}, "a 4 MiB ConstantOfShape folded under the default limit")
    folded, _ = partition_json(a.tessera, model3, ["-p", "reference", "--limit", "fold_bytes=1000000"])
    if folded is not None:
        check(folded == {"wbig_transpose"}, "not under --limit fold_bytes=1000000")
    for extra in (["-p", "reference"], ["-p", "reference", "--limit", "fold_bytes=1000000"]):
        test_case(a.tessera, case3, extra, "big: numpy's result with %s" % " ".join(extra))

    lm, lexpected = loop_model(rng)
    case4 = os.path.join(a.work, "loop")
    h0 = rng.standard_normal((2, 4)).astype(np.float32)
    write_case(case4, lm, [("h0", h0)], [("h", lexpected(h0))])
    folded, _ = partition_json(a.tessera, os.path.join(case4, "model.onnx"), ["-p", "reference"])
    if folded is not None:
        check(folded == {"loop/body/v_unsqueeze", "loop/body/v_twice"},
              "a loop body's nodes of constants folded, the carried Add not: %s" % sorted(folded))
    for extra in (["-p", "reference"], fast, ["--limit", "fold_bytes=1"]):
        test_case(a.tessera, case4, extra, "loop: numpy's result with %s" % " ".join(extra))

    # A node of constants whose run fails (an index out of range, which
    # shape inference cannot see): the session is still made, the node
    # left in a piece, and a run fails naming it, as without folding.
    bad = os.path.join(a.work, "bad_gather.onnx")
    g = helper.make_graph(
        [helper.make_node("Gather", ["table", "idx"], ["gathered"], name="bad_gather", axis=0),
         helper.make_node("Add", ["x", "gathered"], ["y"], name="add")],
        "bad_gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.ones((4, 3), np.float32), "table"),
         numpy_helper.from_array(np.array([1, 9], np.int64), "idx")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, bad)
    folded, in_pieces = partition_json(a.tessera, bad, ["-p", "reference"])
    if folded is not None:
        check(not folded and "bad_gather" in in_pieces, "a fold that fails leaves its node in a piece")
    rc, out, err = run(a.tessera, ["run", bad, "-p", "reference"])
    check(rc == 1 and "bad_gather" in err and "out of range" in err, "and a run fails naming it: " + err.strip()[-200:])

    print("%d check(s) failed" % failures if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
