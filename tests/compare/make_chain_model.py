"""Writes the model `tessera compare` is tested on: a chain of float ops in
which exactly one node, `injected_mul`, is a Mul, and its output feeds every
node after it (directly and through a residual Add), so a fault in that Mul
shows in every later value and only the comparison's attribution can point
back at it. A second output, a Div by a tiny constant (`amplify`), magnifies
whatever difference reaches it.

usage: make_chain_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])
    scale = numpy_helper.from_array(np.array([0.5, -1.0, 2.0, 1.5], np.float32), "scale")
    # Dividing by 1e-4 magnifies any difference 10000 times: with a tiny
    # fault, `amplify` is the first node over tolerance without being at
    # fault, which running it alone on the baseline's inputs shows.
    tiny = numpy_helper.from_array(np.array(1e-4, np.float32), "tiny")
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="first_relu"),
        helper.make_node("Mul", ["r", "scale"], ["m"], name="injected_mul"),
        helper.make_node("Add", ["m", "x"], ["a"], name="residual_add"),
        helper.make_node("Sigmoid", ["a"], ["s"], name="squash"),
        helper.make_node("Sub", ["s", "m"], ["y"], name="final_sub"),
        helper.make_node("Div", ["s", "tiny"], ["big"], name="amplify"),
    ]
    big = helper.make_tensor_value_info("big", TensorProto.FLOAT, [2, 3, 4])
    graph = helper.make_graph(nodes, "compare_chain", [x], [y, big], [scale, tiny])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
