#!/usr/bin/python3
"""Writes backend-test-style cases for what the OpenCL provider fuses:
opencl_views, where Reshape, Flatten, Squeeze, Unsqueeze and Identity sit
inside an OpenCL piece (views of their input's buffer) next to ones at a
piece's edge (a device-side copy); opencl_matmul_bias, MatMul followed by a
bias Add (folded into the GEMM) in the forms that fold and some that do not;
opencl_matmul_epilogues, a MatMul followed by each activation compiled into
the GEMM kernel as its epilogue (the helpers of elementwise.cl must be in
that program). Expected outputs come from numpy, not from Tessera. usage: make_cases.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_case(root, name, graph, feeds, expected):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", feeds), ("output", expected)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def main():
    root = sys.argv[1]
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    z = rng.uniform(-1, 1, (1, 4, 1)).astype(np.float32)
    w = rng.uniform(-1, 1, (4,)).astype(np.float32)
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    shape = np.array([4, 6], dtype=np.int64)
    c = lambda n, a: numpy_helper.from_array(np.array(a, dtype=np.int64), n)

    # A chain of four views read by a Transpose: one piece, one kernel.
    # Squeeze of a graph input read by an elementwise Add; Reshape whose
    # shape is a graph input (read back at run time) read by Relu; an int64
    # Identity that is itself a graph output (a copy); and a Reshape read by
    # two nodes (its own piece: a copy at its edge).
    nodes = [
        helper.make_node("Unsqueeze", ["x", "ax0"], ["u"], name="unsq"),
        helper.make_node("Reshape", ["u", "s64"], ["r"], name="resh"),
        helper.make_node("Flatten", ["r"], ["f"], name="flat", axis=1),
        helper.make_node("Identity", ["f"], ["i"], name="ident"),
        helper.make_node("Transpose", ["i"], ["t"], name="trans"),
        helper.make_node("Squeeze", ["z", "ax02"], ["sq"], name="sq"),
        helper.make_node("Add", ["sq", "w"], ["added"], name="add"),
        helper.make_node("Reshape", ["x", "shape"], ["rd"], name="resh_dyn"),
        helper.make_node("Relu", ["rd"], ["relu"], name="relu"),
        helper.make_node("Identity", ["ints"], ["ints_out"], name="ident_int"),
        helper.make_node("Reshape", ["x", "s24"], ["flat24"], name="resh_shared"),
        helper.make_node("Relu", ["flat24"], ["pos"], name="relu2"),
        helper.make_node("Neg", ["flat24"], ["neg"], name="neg"),
    ]
    graph = helper.make_graph(
        nodes, "views",
        [info("x", TensorProto.FLOAT, [2, 3, 4]), info("z", TensorProto.FLOAT, [1, 4, 1]),
         info("w", TensorProto.FLOAT, [4]), info("shape", TensorProto.INT64, [2]),
         info("ints", TensorProto.INT64, [2, 3])],
        [info("t", TensorProto.FLOAT, [4, 6]), info("added", TensorProto.FLOAT, [4]),
         info("relu", TensorProto.FLOAT, [4, 6]), info("ints_out", TensorProto.INT64, [2, 3]),
         info("pos", TensorProto.FLOAT, [24]), info("neg", TensorProto.FLOAT, [24])],
        [c("ax0", [0]), c("s64", [6, 4]), c("ax02", [0, 2]), c("s24", [24])])
    expected = [
        ("t", x.reshape(6, 4).T.copy()),
        ("added", z.reshape(4) + w),
        ("relu", np.maximum(x.reshape(4, 6), 0)),
        ("ints_out", ints),
        ("pos", np.maximum(x.reshape(24), 0)),
        ("neg", -x.reshape(24)),
    ]
    write_case(root, "opencl_views", graph,
               [("x", x), ("z", z), ("w", w), ("shape", shape), ("ints", ints)], expected)

    # MatMul + Add: bias [N] after, [1, N] before (Add(b, mm)) with a Relu
    # epilogue, a batched B, and biases that must not fold (one along rows,
    # one that broadcasts the output to a larger shape).
    a = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    wt = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    wb = rng.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
    b5 = rng.uniform(-1, 1, (5,)).astype(np.float32)
    b15 = rng.uniform(-1, 1, (1, 5)).astype(np.float32)
    b31 = rng.uniform(-1, 1, (3, 1)).astype(np.float32)
    b425 = rng.uniform(-1, 1, (4, 1, 1, 5)).astype(np.float32)
    f = lambda n, v: numpy_helper.from_array(v, n)
    nodes = [
        helper.make_node("MatMul", ["a", "wt"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "b5"], ["y1"], name="bias1"),
        helper.make_node("MatMul", ["a", "wt"], ["m2"], name="mm2"),
        helper.make_node("Add", ["b15", "m2"], ["m2b"], name="bias2"),
        helper.make_node("Relu", ["m2b"], ["y2"], name="relu2"),
        helper.make_node("MatMul", ["a", "wb"], ["m3"], name="mm3"),
        helper.make_node("Add", ["m3", "b5"], ["y3"], name="bias3"),
        helper.make_node("MatMul", ["a", "wt"], ["m4"], name="mm4"),
        helper.make_node("Add", ["m4", "b31"], ["y4"], name="rows4"),
        helper.make_node("MatMul", ["a", "wt"], ["m5"], name="mm5"),
        helper.make_node("Add", ["m5", "b425"], ["y5"], name="wide5"),
    ]
    graph = helper.make_graph(
        nodes, "matmul_bias", [info("a", TensorProto.FLOAT, [2, 3, 4])],
        [info("y1", TensorProto.FLOAT, [2, 3, 5]), info("y2", TensorProto.FLOAT, [2, 3, 5]),
         info("y3", TensorProto.FLOAT, [2, 3, 5]), info("y4", TensorProto.FLOAT, [2, 3, 5]),
         info("y5", TensorProto.FLOAT, [4, 2, 3, 5])],
        [f("wt", wt), f("wb", wb), f("b5", b5), f("b15", b15), f("b31", b31), f("b425", b425)])
    m = a @ wt
    expected = [("y1", m + b5), ("y2", np.maximum(b15 + m, 0)), ("y3", a @ wb + b5),
                ("y4", m + b31), ("y5", m + b425)]
    write_case(root, "opencl_matmul_bias", graph, [("a", a)],
               [(n, v.astype(np.float32)) for n, v in expected])
    epilogues(root, rng)


def epilogues(root, rng):
    x = rng.standard_normal((6, 8)).astype(np.float32)
    acts = [("LeakyRelu", {"alpha": 0.1}, lambda v: np.where(v < 0, 0.1 * v, v)),
            ("Elu", {"alpha": 0.7}, lambda v: np.where(v < 0, 0.7 * (np.exp(v) - 1), v)),
            ("Selu", {}, lambda v: 1.0507009873554805 * np.where(v <= 0, 1.6732632423543772 * (np.exp(v) - 1), v)),
            ("HardSigmoid", {"alpha": 0.25, "beta": 0.4}, lambda v: np.clip(0.25 * v + 0.4, 0, 1)),
            ("HardSwish", {}, lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
            ("Softplus", {}, lambda v: np.log1p(np.exp(v))),
            ("Sign", {}, np.sign)]
    nodes, inits, outs, expected = [], [], [], []
    for i, (op, attrs, fn) in enumerate(acts):
        w = rng.standard_normal((8, 5)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        nodes += [helper.make_node("MatMul", ["x", "w%d" % i], ["m%d" % i], name="mm%d" % i),
                  helper.make_node(op, ["m%d" % i], ["y%d" % i], name="act%d" % i, **attrs)]
        outs.append(info("y%d" % i, TensorProto.FLOAT, [6, 5]))
        expected.append(("y%d" % i, fn(x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)))
    graph = helper.make_graph(nodes, "matmul_epilogues", [info("x", TensorProto.FLOAT, [6, 8])], outs, inits)
    write_case(root, "opencl_matmul_epilogues", graph, [("x", x)], expected)


if __name__ == "__main__":
    main()
