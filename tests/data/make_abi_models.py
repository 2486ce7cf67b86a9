#!/usr/bin/python3
"""Builds the tiny models used by tests/unit/test_abi.c, test_executor.c and
test_partition.c (files abi_*.onnx and exec_*.onnx beside this script).

Run with the system python (onnx 1.12 + numpy):  /usr/bin/python3 make_abi_models.py
The expected numbers in the C tests are worked out by hand from the inputs
the tests feed; nothing here computes results.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def relu_add():
    """y = Relu(x) + x, x float[2,3]. Node names relu0, add0."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("Add", ["r", "x"], ["y"], name="add0")],
        "abi_relu_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         "abi_relu_add.onnx")


def dangling():
    """Like abi_relu_add, plus relu_unused = Relu(x) whose output nobody reads:
    its piece has no outputs, so a provider allocates it as host scratch."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("Relu", ["x"], ["unused"], name="relu_unused"),
         helper.make_node("Add", ["r", "x"], ["y"], name="add0")],
        "abi_dangling",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         "abi_dangling.onnx")


def mystery():
    """r = Relu(x); m = com.example.Mystery(r); y = Add(r, m). x float[2,3].
    Only the custom test plugin runs Mystery (y = 2x)."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("Mystery", ["r"], ["m"], name="mystery0", domain="com.example"),
         helper.make_node("Add", ["r", "m"], ["y"], name="add0")],
        "abi_mystery",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        value_info=[helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.example", 1)],
                          ir_version=8)
    onnx.save(m, os.path.join(HERE, "abi_mystery.onnx"))  # checker rejects unknown domains


def exec_chain():
    """Six nodes with a skip connection and an initializer; outputs y and c
    (c is also read by a later node, so it must outlive its last reader).
        a = Relu(x)      n0
        b = Add(a, k)    n1   k = [0.5, -1, 2] (initializer, broadcast)
        c = Relu(b)      n2
        d = Add(c, a)    n3   (skip from n0)
        e = Relu(d)      n4
        y = Add(e, c)    n5
    """
    k = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], dtype=np.float32), "k")
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="n0"),
        helper.make_node("Add", ["a", "k"], ["b"], name="n1"),
        helper.make_node("Relu", ["b"], ["c"], name="n2"),
        helper.make_node("Add", ["c", "a"], ["d"], name="n3"),
        helper.make_node("Relu", ["d"], ["e"], name="n4"),
        helper.make_node("Add", ["e", "c"], ["y"], name="n5"),
    ]
    g = helper.make_graph(
        nodes, "exec_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3])],
        initializer=[k])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         "exec_chain.onnx")


def exec_dynamic():
    """The first two nodes of exec_chain on x[N, 3], N symbolic:
        a = Relu(x); y = Add(a, k), k = [0.5, -1, 2]
    One session must take N = 2, then 1, then 2 again."""
    k = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], dtype=np.float32), "k")
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="n0"),
             helper.make_node("Add", ["a", "k"], ["y"], name="n1")]
    g = helper.make_graph(
        nodes, "exec_dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        initializer=[k])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         "exec_dynamic.onnx")


def attrs():
    """Every kind of attribute the writer must carry, for the graph_to_onnx
    round trip: a tensor (Constant), a sparse tensor, ints (Transpose), If
    with two subgraphs reading an outer initializer, and a custom node with
    float, int, string, floats, strings and tensors attributes."""
    w = numpy_helper.from_array(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32), "w")
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([7, 9], dtype=np.int64), "sp"),
        numpy_helper.from_array(np.array([1, 4], dtype=np.int64), "sp_idx"),
        [5])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["t_out"], name="then_add")],
        "then_body", [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_out"], name="else_neg")],
        "else_body", [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Constant", [], ["cst"], name="const_t",
                         value=numpy_helper.from_array(np.array([10, 20, 30], dtype=np.int32), "cv")),
        helper.make_node("Constant", [], ["spc"], name="const_sp", sparse_value=sparse),
        helper.make_node("Transpose", ["x"], ["xt"], name="transpose0", perm=[1, 0]),
        helper.make_node("If", ["cond"], ["iy"], name="if0", then_branch=then_g, else_branch=else_g),
        helper.make_node("Kitchen", ["iy", "cst"], ["ky"], name="kitchen0", domain="com.example",
                         alpha=0.25, count=7, mode="fast", scales=[1.5, -2.0],
                         tags=["a", "bc"],
                         tabs=[numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float64), "t0"),
                               numpy_helper.from_array(np.array([3], dtype=np.int64), "t1")]),
    ]
    g = helper.make_graph(
        nodes, "abi_attrs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("xt", TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info("ky", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("spc", TensorProto.INT64, [5])],
        initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.example", 1)],
                          ir_version=8)
    onnx.save(m, os.path.join(HERE, "abi_attrs.onnx"))


def metadata():
    """abi_metadata.onnx: y = Relu(x), x float[batch,3], with every
    ModelProto field tsr_session_metadata reports set."""
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "metadata_graph",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 2)],
                          ir_version=8, producer_name="tessera-tests", producer_version="1.2",
                          domain="org.example", model_version=7, doc_string="a Relu")
    helper.set_model_props(m, {"author": "tests", "license": "MIT"})
    onnx.save(m, os.path.join(HERE, "abi_metadata.onnx"))


def nested_cf():
    """abi_nested_cf.onnx: Loop 'loop0' whose body adds x to the carried value
    and holds If 'body_if' (Relu 'relu_then' / Neg 'neg_else'): bodies two deep,
    for node lookups by path (test_observe.c)."""
    f = TensorProto.FLOAT
    then_g = helper.make_graph([helper.make_node("Relu", ["s"], ["t"], name="relu_then")], "then_g", [],
                               [helper.make_tensor_value_info("t", f, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["s"], ["e"], name="neg_else")], "else_g", [],
                               [helper.make_tensor_value_info("e", f, [2])])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["s"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         helper.make_node("If", ["cond_in"], ["acc_out"], name="body_if", then_branch=then_g, else_branch=else_g)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", f, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", f, [2])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "a0"], ["a"], name="loop0", body=body)], "nested",
        [helper.make_tensor_value_info("x", f, [2]), helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("a0", f, [2])],
        [helper.make_tensor_value_info("a", f, [2])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), "abi_nested_cf.onnx")


def node_inputs():
    """abi_node_inputs.onnx: y = Clip(x, "", hi) 'clip' (min omitted, hi an
    initializer), z = Add(y, y) 'twice': node input names as the public API
    lists them (test_observe.c)."""
    f = TensorProto.FLOAT
    hi = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "hi")
    g = helper.make_graph(
        [helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip"),
         helper.make_node("Add", ["y", "y"], ["z"], name="twice")],
        "node_inputs", [helper.make_tensor_value_info("x", f, [4])],
        [helper.make_tensor_value_info("z", f, [4])], initializer=[hi])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), "abi_node_inputs.onnx")


def slow_pool():
    """abi_slow_pool.onnx: MaxPool 'bigpool' whose 1024x1024 window, padded,
    covers the whole 1024x1024 input for each of 2047x2047 outputs: within
    every limit, and hours of work on the reference provider (runs that are
    stopped early, test_run_options.c)."""
    g = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="bigpool", kernel_shape=[1024, 1024],
                          pads=[1023, 1023, 1023, 1023])],
        "slow_pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1024, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2047, 2047])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), "abi_slow_pool.onnx")


if __name__ == "__main__":
    node_inputs()
    slow_pool()
    nested_cf()
    metadata()
    relu_add()
    dangling()
    mystery()
    exec_chain()
    exec_dynamic()
    attrs()
