#!/usr/bin/python3
"""Makes the models tests/unit/test_placement.c places:
placement_chain.onnx: x[64,64] -> r0 Relu -> rs Reshape[4096] -> r1 Relu ->
  rs2 Reshape[64,64] -> a0 Add(., x) -> y
placement_fallback.onnx: the same chain followed by sg Sigmoid -> y.
placement_big.onnx: the chain over x[1024,1024], where compute outweighs
  the copies.
placement_shape.onnx: x[4,6] -> r0 Relu -> sh Shape -> rs Reshape(t0, .)
  -> r1 Relu -> y: a Shape on the host reading a tensor in device memory."""
import os
import onnx
from onnx import helper as h, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))


def chain(tail, n=64):
    nodes = [
        h.make_node("Relu", ["x"], ["t0"], name="r0"),
        h.make_node("Reshape", ["t0", "flat"], ["t1"], name="rs"),
        h.make_node("Relu", ["t1"], ["t2"], name="r1"),
        h.make_node("Reshape", ["t2", "square"], ["t3"], name="rs2"),
        h.make_node("Add", ["t3", "x"], ["t4" if tail else "y"], name="a0"),
    ]
    if tail:
        nodes.append(h.make_node("Sigmoid", ["t4"], ["y"], name="sg"))
    return h.make_graph(nodes, "placement",
                        [h.make_tensor_value_info("x", T.FLOAT, [n, n])],
                        [h.make_tensor_value_info("y", T.FLOAT, [n, n])],
                        [h.make_tensor("flat", T.INT64, [1], [n * n]),
                         h.make_tensor("square", T.INT64, [2], [n, n])])


for name, tail, n in (("placement_chain", False, 64), ("placement_fallback", True, 64),
                      ("placement_big", False, 1024)):
    m = h.make_model(chain(tail, n), opset_imports=[h.make_opsetid("", 17)])
    onnx.save(m, os.path.join(here, name + ".onnx"))


def shape_read():
    g = h.make_graph([h.make_node("Relu", ["x"], ["t0"], name="r0"),
                      h.make_node("Shape", ["t0"], ["s"], name="sh"),
                      h.make_node("Reshape", ["t0", "s"], ["t1"], name="rs"),
                      h.make_node("Relu", ["t1"], ["y"], name="r1")],
                     "placement_shape", [h.make_tensor_value_info("x", T.FLOAT, [4, 6])],
                     [h.make_tensor_value_info("y", T.FLOAT, [4, 6])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), os.path.join(here, "placement_shape.onnx"))


shape_read()


def diamond():
    """partition_diamond.onnx for tests/unit/test_partition.c, x float[2,3]:
    r0 = Relu(x); r1 = Relu(r0); m = com.example.Mystery(r0);
    a1 = Add(r1, m); r2 = Relu(a1) -> y.
    A provider claiming {r0, r1, a1, r2} as one piece would wait for the
    Mystery piece that waits for it: the set splits at m into {r0, r1} and
    {a1, r2}."""
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["t0"], name="r0"),
         h.make_node("Relu", ["t0"], ["t1"], name="r1"),
         h.make_node("Mystery", ["t0"], ["m"], name="m", domain="com.example"),
         h.make_node("Add", ["t1", "m"], ["t2"], name="a1"),
         h.make_node("Relu", ["t2"], ["y"], name="r2")],
        "partition_diamond",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
        value_info=[h.make_tensor_value_info("m", T.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("com.example", 1)],
                     ir_version=8)
    onnx.save(m, os.path.join(here, "partition_diamond.onnx"))  # checker rejects unknown domains


diamond()
