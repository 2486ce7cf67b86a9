#!/usr/bin/env python3
"""Tessera from Python, the way onnxruntime is used: load a model, see where
each node runs, run it, and compare two provider sets.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/run_model.py [MODEL.onnx]

(or, after `pip install --no-build-isolation python/`, without PYTHONPATH).
Without MODEL it builds a small MLP with onnx.helper and checks the result
against numpy. Inputs of a given model are made up: floats in [-1, 1),
integers 1, symbolic dimensions 1.
"""
import sys

import numpy as np

import tessera as ort


def small_mlp():
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc"),
         helper.make_node("Relu", ["h"], ["y"], name="relu")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString(), (lambda x: np.maximum(x @ w + b, 0))


def made_up(arg, rng):
    shape = [d if isinstance(d, int) else 1 for d in (arg.shape or [])]
    if arg.type in ("tensor(float)", "tensor(double)", "tensor(float16)"):
        dtype = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16}[arg.type]
        return rng.uniform(-1, 1, shape).astype(dtype)
    if arg.type == "tensor(int64)":
        return np.ones(shape, np.int64)
    if arg.type == "tensor(int32)":
        return np.ones(shape, np.int32)
    if arg.type == "tensor(bool)":
        return np.ones(shape, np.bool_)
    sys.exit("this example makes up only numeric inputs; %s is %s" % (arg.name, arg.type))


def main():
    print("tessera", ort.__version__, "providers found:", ort.get_available_providers())
    for p in ort.list_providers():
        for d in p["devices"]:
            print("  %-10s %s (%s, %s memory)" % (p["name"], d["name"], d["kind"], d["memory"]))

    if len(sys.argv) > 1:
        model, expect = sys.argv[1], None
    else:
        model, expect = small_mlp()

    sess = ort.InferenceSession(model)  # every provider found, accelerated ones first
    print("session providers:", sess.get_providers())
    for i in sess.get_inputs():
        print("input ", i.name, i.type, i.shape)
    for o in sess.get_outputs():
        print("output", o.name, o.type, o.shape)

    # where each node runs, and why others declined it
    print(sess.assignment_text())

    rng = np.random.default_rng(1)
    feed = {i.name: made_up(i, rng) for i in sess.get_inputs()}
    outputs = sess.run(None, feed)
    for o, v in zip(sess.get_outputs(), outputs):
        print("%s: %s %s" % (o.name, getattr(v, "dtype", type(v).__name__), getattr(v, "shape", "")))
    if expect is not None:
        np.testing.assert_allclose(outputs[0], expect(feed["x"]), rtol=1e-4, atol=1e-5)
        print("matches numpy")

    # the same inputs on two provider sets, node by node (runs `tessera compare`)
    avail = ort.get_available_providers()
    if "onednn" in avail:
        report = ort.compare(model, providers=["reference", "onednn,reference"], per_node=True, inputs=feed)
        run = report["runs"][0]
        print("onednn,reference vs reference: agree=%s, max |diff| %s" % (
            run["agree"], max(o["max_abs"] for o in run["outputs"])))


if __name__ == "__main__":
    main()
