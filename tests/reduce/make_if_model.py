"""Writes a 20-node model whose only Mul lies inside an If body
(then_branch, taken) and reads the outer value `r`, which is no input of the
If node itself: `tessera reduce` must cut out the If alone, feeding both
`cond` and the implicit input `r` from the baseline.

usage: make_if_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    scale = numpy_helper.from_array(np.array([0.5, -1.0, 2.0, 1.5], np.float32), "scale")
    floor = numpy_helper.from_array(np.array(-1e9, np.float32), "floor")
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["r", "scale"], ["t_out"], name="body_mul")], "then", [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["r"], ["e_out"], name="body_neg")], "else", [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2, 4])])
    nodes = [helper.make_node("Relu", ["x"], ["r0"], name="relu0")]
    prev = "r0"
    for i in range(8):
        op = "Abs" if i % 2 else "Neg"
        nodes.append(helper.make_node(op, [prev], ["a%d" % i], name="pre%d" % i))
        prev = "a%d" % i
    nodes += [
        helper.make_node("Identity", [prev], ["r"], name="to_r"),
        helper.make_node("ReduceSum", ["r"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "floor"], ["cond"], name="always"),
        helper.make_node("If", ["cond"], ["b"], name="branch", then_branch=then_g,
                         else_branch=else_g),
    ]
    prev = "b"
    for i in range(6):
        nodes.append(helper.make_node("Neg", [prev], ["p%d" % i], name="post%d" % i))
        prev = "p%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
    graph = helper.make_graph(nodes, "reduce_if", [x], [y], [scale, floor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
