#!/usr/bin/python3
"""Builds the models of tests/unit/test_limits.c, which checks the session
limits of tsr_session_options_set_limit (docs/security.md, "Limits"). They
are written to tests/data/limits/. The deeply nested If models of
tests/unit/test_limits_depth.c are made in C at test time instead (10,000
levels would be a large file to keep).

Run with the system python (onnx 1.12 + numpy):
    /usr/bin/python3 make_limit_models.py
The outputs are committed, so the tests need neither Python nor onnx.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "limits")
F = TensorProto.FLOAT


def f32(name, dims):
    return helper.make_tensor_value_info(name, F, dims)


def save(name, graph, opsets=(("", 17),), functions=()):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          functions=list(functions), ir_version=8)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def chain():
    """working_bytes: x float[1024] (4096 bytes);
        a = Relu(x), b = Relu(a), y = Add(a, b).
    While 'add' runs, a, b and y are live: 12288 bytes at most."""
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"], name="relu_a"),
                           helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
                           helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                          "chain", [f32("x", [1024])], [f32("y", [1024])])
    save("chain", g)


def loop_scan():
    """working_bytes inside a body: a Loop of 16 iterations whose body
    passes x float[1024] (4096 bytes) on as a scan output, so the Loop
    collects 16 of them (64 KiB) and stacks them into y float[16,1024]."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("Relu", ["x"], ["item"], name="body_relu")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f32("item", [1024])])
    trip = numpy_helper.from_array(np.array(16, np.int64), "trip")
    g = helper.make_graph([helper.make_node("Loop", ["trip", ""], ["y"], name="loop", body=body)],
                          "loop_scan", [f32("x", [1024])], [f32("y", [16, 1024])], [trip])
    save("loop_scan", g, opsets=(("", 13),))


def ext_two():
    """external_bytes: two initializers of 64 floats (256 bytes each) in
    ext_two.bin, 512 bytes read in all. y = w1 + w2 + x."""
    w1 = np.arange(64, dtype=np.float32)
    w2 = np.arange(64, dtype=np.float32) * 2
    with open(os.path.join(OUT, "ext_two.bin"), "wb") as f:
        f.write(w1.tobytes())
        f.write(w2.tobytes())
    inits = []
    for name, offset in (("w1", 0), ("w2", 256)):
        t = TensorProto()
        t.name, t.data_type = name, F
        t.dims.extend([64])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "ext_two.bin"), ("offset", str(offset)), ("length", "256")):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
    g = helper.make_graph([helper.make_node("Add", ["w1", "w2"], ["s"], name="add_w"),
                           helper.make_node("Add", ["s", "x"], ["y"], name="add_x")],
                          "ext_two", [f32("x", [64])], [f32("y", [64])], inits)
    save("ext_two", g)


def fn_wide():
    """function_nodes: ten calls of local.Twice (two Relu nodes each), so
    expansion makes 20 nodes."""
    fn = helper.make_function("local", "Twice", ["a"], ["c"],
                              [helper.make_node("Relu", ["a"], ["b"]),
                               helper.make_node("Relu", ["b"], ["c"])],
                              [helper.make_opsetid("", 17)], [])
    nodes, prev = [], "x"
    for i in range(10):
        out = "y" if i == 9 else "t%d" % i
        nodes.append(helper.make_node("Twice", [prev], [out], name="call%d" % i, domain="local"))
        prev = out
    g = helper.make_graph(nodes, "fn_wide", [f32("x", [4])], [f32("y", [4])])
    save("fn_wide", g, opsets=(("", 17), ("local", 1)), functions=[fn])


def fn_doubling():
    """function_nodes against growth: local.D20 calls D19 twice, D19 calls
    D18 twice, ..., D0 is one Relu: one call would expand to 2^20 Relus."""
    fns = [helper.make_function("local", "D0", ["a"], ["c"], [helper.make_node("Relu", ["a"], ["c"])],
                                [helper.make_opsetid("", 17)], [])]
    for k in range(1, 21):
        fns.append(helper.make_function(
            "local", "D%d" % k, ["a"], ["c"],
            [helper.make_node("D%d" % (k - 1), ["a"], ["b"], domain="local"),
             helper.make_node("D%d" % (k - 1), ["b"], ["c"], domain="local")],
            [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)], []))
    g = helper.make_graph([helper.make_node("D20", ["x"], ["y"], name="grow", domain="local")],
                          "fn_doubling", [f32("x", [4])], [f32("y", [4])])
    save("fn_doubling", g, opsets=(("", 17), ("local", 1)), functions=fns)


def fn_chain():
    """function_depth: local.F1 calls F2, ..., F79 calls F80, F80 is a Relu:
    80 levels of functions calling functions."""
    fns = []
    for k in range(1, 81):
        body = (helper.make_node("F%d" % (k + 1), ["a"], ["c"], domain="local") if k < 80
                else helper.make_node("Relu", ["a"], ["c"]))
        fns.append(helper.make_function("local", "F%d" % k, ["a"], ["c"], [body],
                                        [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                                        []))
    g = helper.make_graph([helper.make_node("F1", ["x"], ["y"], name="call", domain="local")],
                          "fn_chain", [f32("x", [4])], [f32("y", [4])])
    save("fn_chain", g, opsets=(("", 17), ("local", 1)), functions=fns)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for make in (chain, loop_scan, ext_two, fn_wide, fn_doubling, fn_chain):
        make()
