#!/usr/bin/python3
"""Writes the tiny models that tests/unit/test_loader.c reads.

Run from anywhere: /usr/bin/python3 tests/data/make_test_models.py
The outputs are committed, so the tests need neither Python nor onnx; this
script is how they were made and how to remake them (onnx 1.12 is enough).
Each model is deliberately small: only the feature under test is in it.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loader")
F = TensorProto.FLOAT


def opsets(*extra):
    return [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, v) for d, v in extra]


def save(name, graph, imports=None, functions=None, check=True, **kw):
    model = helper.make_model(graph, opset_imports=imports or opsets(), functions=functions, **kw)
    model.ir_version = 8
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def valid():
    """x[N,3] + w -> Relu; a Constant; an If whose branches read outer values;
    metadata; an initializer with known values; nodes listed out of order."""
    w = numpy_helper.from_array(np.array([[1.5, -2.0, 3.25], [0.0, 4.0, -1.0]], np.float32), "w")
    b = helper.make_tensor("b", TensorProto.INT64, [3], [7, -8, 9])  # int64_data, not raw
    h = helper.make_tensor("h", TensorProto.FLOAT16, [2], [1.0, -2.0])  # int32_data bits
    flag = helper.make_tensor("flag", TensorProto.BOOL, [2], [1, 0])
    names = helper.make_tensor("names", TensorProto.STRING, [2], [b"ab", b"xyz"])
    cplx = helper.make_tensor("cplx", TensorProto.COMPLEX64, [1], [complex(1.0, 2.0)])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["y", "c"], ["t_out"], name="then_add")],
        "then_branch", [], [vi("t_out", None)])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["y"], ["e_out"], name="else_id")],
        "else_branch", [], [vi("e_out", None)])
    nodes = [
        # Deliberately out of order: relu reads sum, produced below.
        helper.make_node("Relu", ["sum"], ["y"], name="relu"),
        helper.make_node("Add", ["x", "w"], ["sum"], name="add"),
        helper.make_node("Constant", [], ["c"], name="const",
                         value_floats=[0.5, 1.5, 2.5]),
        helper.make_node("If", ["cond"], ["z"], name="if",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("Clip", ["y", "", "hi"], ["clipped"], name="clip"),
    ]
    hi = helper.make_tensor("hi", F, [], [6.0])
    g = helper.make_graph(nodes, "valid",
                          [vi("x", ["N", 3]), vi("cond", [], TensorProto.BOOL)],
                          [vi("z", None), vi("clipped", ["N", 3])],
                          [w, b, h, flag, names, cplx, hi])
    g.value_info.append(vi("sum", ["N", 3]))
    model = helper.make_model(g, opset_imports=opsets(), producer_name="tessera-tests")
    model.ir_version = 8
    helper.set_model_props(model, {"author": "tests", "purpose": "loader"})
    with open(os.path.join(OUT, "valid.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def simple(name, init, imports=None):
    """One Identity over an initializer: for tensor-decoding faults."""
    g = helper.make_graph([helper.make_node("Identity", [init.name], ["y"], name="id")],
                          name, [], [vi("y", None)], [init])
    save(name + ".onnx", g, imports)


def faults():
    t = helper.make_tensor("w", F, [2, 3], np.zeros(6, np.float32).tobytes(), raw=True)
    t.raw_data = bytes(12)
    simple("raw_mismatch", t)

    t = TensorProto(name="w", data_type=F, dims=[-2, 3])
    t.raw_data = bytes(24)
    simple("negative_dim", t)

    t = TensorProto(name="w", data_type=F, dims=[10**17])  # 4e17 bytes: fits size_t
    t.raw_data = bytes(4)
    simple("huge_dim", t)

    t = TensorProto(name="w", data_type=F, dims=[10**18, 10**18])
    t.raw_data = bytes(4)
    simple("overflow_dim", t)

    t = TensorProto(name="w", data_type=F, dims=[10**12])
    t.float_data.extend([1.0])
    simple("huge_typed", t)

    def ext(name, location, offset=None, length=None):
        t = TensorProto(name="w", data_type=F, dims=[2, 2])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        simple(name, t)

    ext("ext_valid", "weights.bin", 8, 16)  # test writes weights.bin
    ext("ext_dotdot", "../weights.bin", 0, 16)
    ext("ext_absolute", "/etc/passwd", 0, 16)
    ext("ext_symlink", "link.bin", 0, 16)  # test makes link.bin point outside
    ext("ext_past_end", "weights.bin", 20, 16)
    ext("ext_offset_past_end", "weights.bin", 4000, None)

    x = [vi("x", [2])]
    cyc = helper.make_graph([helper.make_node("Neg", ["b"], ["a"], name="n_a"),
                             helper.make_node("Neg", ["a"], ["b"], name="n_b"),
                             helper.make_node("Add", ["x", "b"], ["y"], name="n_y")],
                            "cycle", x, [vi("y", [2])])
    save("cycle.onnx", cyc)
    und = helper.make_graph([helper.make_node("Add", ["x", "nope"], ["y"], name="adder")],
                            "undefined", x, [vi("y", [2])])
    save("undefined_input.onnx", und)
    dup = helper.make_graph([helper.make_node("Neg", ["x"], ["y"], name="first"),
                             helper.make_node("Abs", ["x"], ["y"], name="second")],
                            "dup", x, [vi("y", [2])])
    save("duplicate_output.onnx", dup)
    mis = helper.make_graph([helper.make_node("Frob", ["x"], ["y"], name="frob",
                                              domain="com.example")],
                            "missing_opset", x, [vi("y", [2])])
    save("missing_opset.onnx", mis)
    # Unknown, unused domains are fine.
    ok = helper.make_graph([helper.make_node("Neg", ["x"], ["y"], name="neg")],
                           "extra_opset", x, [vi("y", [2])])
    save("extra_opset.onnx", ok, opsets(("com.unused", 3)))
    # Arity: Relu with two inputs, with three outputs; Conv with none (each
    # crashed a provider's claim check once); a negative dim that is not -1
    two = helper.make_graph([helper.make_node("Relu", ["x", "x"], ["y"], name="relu2")],
                            "relu_two_inputs", x, [vi("y", [2])])
    save("arity_relu_two_inputs.onnx", two)
    three = helper.make_graph([helper.make_node("Relu", ["x"], ["y", "u", "v"], name="relu3")],
                              "relu_three_outputs", x, [vi("y", [2])])
    save("arity_relu_three_outputs.onnx", three)
    none = helper.make_graph([helper.make_node("Conv", [], ["y"], name="conv0")],
                             "conv_no_inputs", x, [vi("y", [2])])
    save("arity_conv_no_inputs.onnx", none)
    neg = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                            "negative_input_dim", [vi("x", [2, -5])], [vi("y", [2, -1])])
    save("negative_input_dim.onnx", neg)
    huge = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                             "huge_input_dims", [vi("x", [2 ** 40, "n", 2 ** 20])], [vi("y", [2 ** 40, "n", 2 ** 20])])
    save("huge_input_dims.onnx", huge)

    def nested(depth):
        body = helper.make_graph([helper.make_node("Identity", ["x"], ["o"], name="leaf")],
                                 "leaf", [], [vi("o", None)])
        leaf = body
        for i in range(depth):
            # Only then_branch nests: sharing one body in both branches
            # would double the file at every level.
            body = helper.make_graph(
                [helper.make_node("If", ["cond"], ["o"], name="if%d" % i,
                                  then_branch=body, else_branch=leaf)],
                "g%d" % i, [], [vi("o", None)])
        return body.node

    for depth, name in ((64, "depth_ok"), (65, "depth_too_deep")):
        g = helper.make_graph(nested(depth), name,
                              [vi("x", [2]), vi("cond", [], TensorProto.BOOL)],
                              [vi("o", None)])
        save(name + ".onnx", g)


def features():
    # A sparse initializer, densified: [3,4] with two values.
    sp = helper.make_sparse_tensor(
        helper.make_tensor("sv", F, [2], [5.0, 6.0]),
        helper.make_tensor("si", TensorProto.INT64, [2], [1, 10]), [3, 4])
    g = helper.make_graph([helper.make_node("Identity", ["sv"], ["y"], name="id")],
                          "sparse", [], [vi("y", None)])
    g.sparse_initializer.append(sp)
    save("sparse.onnx", g)

    # A model-local function, called from the graph.
    fn = helper.make_function(
        "local", "AddTwice", ["a", "b"], ["c"],
        [helper.make_node("Add", ["a", "b"], ["t"]), helper.make_node("Add", ["t", "b"], ["c"])],
        [helper.make_opsetid("", 17)], [])
    g = helper.make_graph([helper.make_node("AddTwice", ["x", "x"], ["y"], name="call",
                                            domain="local")],
                          "with_function", [vi("x", [2])], [vi("y", [2])])
    save("function.onnx", g, opsets(("local", 1)), functions=[fn])


def constants():
    """Every way a Constant node can carry its value, plus packed int4 data."""
    sp = helper.make_sparse_tensor(
        helper.make_tensor("spv", TensorProto.INT64, [1], [42]),
        helper.make_tensor("spi", TensorProto.INT64, [1], [2]), [4])
    nodes = [
        helper.make_node("Constant", [], ["ci"], name="ci", value_int=-5),
        helper.make_node("Constant", [], ["cis"], name="cis", value_ints=[1, 2, 3]),
        helper.make_node("Constant", [], ["cf"], name="cf", value_float=0.25),
        helper.make_node("Constant", [], ["cs"], name="cs", value_string="hey"),
        helper.make_node("Constant", [], ["css"], name="css", value_strings=["a", "bc"]),
        helper.make_node("Constant", [], ["csp"], name="csp", sparse_value=sp),
    ]
    q = TensorProto(name="q", data_type=22, dims=[3])  # INT4: 1, 2, 3 packed low nibble first
    q.int32_data.extend([0x21, 0x03])
    outs = [vi(n.output[0], None) for n in nodes] + [vi("q", None, 22)]
    g = helper.make_graph(nodes, "constants", [], outs, [q])
    save("constants.onnx", g)

    bad = TensorProto(name="v", data_type=F, dims=[2])
    bad.raw_data = bytes(3)
    node = helper.make_node("Constant", [], ["c"], name="c")
    node.attribute.append(helper.make_attribute("value", bad))
    g = helper.make_graph([node], "bad_attr", [], [vi("c", None)])
    save("bad_attr.onnx", g)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    valid()
    faults()
    features()
    constants()
