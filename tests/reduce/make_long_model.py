"""Writes the model `tessera reduce` is tested on: 200 nodes of bounded float
ops (a main chain with residual Adds reaching back, a side branch, a
Constant, two graph outputs), in which exactly one node is a Mul
(`the_mul`, which tests/plugins/plugin_faulty.c computes wrongly) and
exactly one is a Relu (`the_relu`, which plugin_fail_run.c fails and
tests/reduce/plugin_crash.c crashes on).

usage: make_long_model.py OUT.onnx [NODES]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path, count=200):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    nodes, inits = [], []
    inits.append(numpy_helper.from_array(np.linspace(-1.5, 1.5, 8).astype(np.float32), "scale"))
    nodes.append(helper.make_node(
        "Constant", [], ["bias"], name="bias_const",
        value=numpy_helper.from_array(np.full([8], 0.25, np.float32), "bias_value")))
    values = ["x"]
    # Mostly residual blocks (v + Tanh(v)): a difference anywhere passes on
    # undiminished through the identity path, so a fault shows in the
    # outputs; values grow by at most 1 per block.
    unary = ["Neg", "Identity", "Abs"]
    mul_at, relu_at = count * 3 // 5, count * 2 // 5
    side = None
    k = 0
    while len(nodes) < count - 2:
        i = len(nodes)
        prev = values[-1]
        out = "v%d" % i
        if i == mul_at:
            nodes.append(helper.make_node("Mul", [prev, "scale"], [out], name="the_mul"))
        elif i == relu_at:
            nodes.append(helper.make_node("Relu", [prev], [out], name="the_relu"))
        elif i == 30:
            # A side branch that reads the chain and rejoins it much later.
            nodes.append(helper.make_node("Sin", [prev], ["side0"], name="side_sin"))
            side = "side0"
            out = None
        elif i == count - 20 and side:
            nodes.append(helper.make_node("Add", [prev, side], [out], name="join_side"))
        elif i % 4 == 0:
            nodes.append(helper.make_node("Tanh", [prev], [out], name="tanh_%d" % i))
        elif i % 4 == 1 and len(values) > 1:
            nodes.append(helper.make_node("Add", [values[-2], prev], [out], name="residual_%d" % i))
        elif i % 8 == 3:
            nodes.append(helper.make_node("Sub", [prev, "bias"], [out], name="sub_%d" % i))
        else:
            op = unary[k % len(unary)]
            k += 1
            nodes.append(helper.make_node(op, [prev], [out], name="%s_%d" % (op.lower(), i)))
        if out:
            values.append(out)
    mid = values[len(values) // 3]
    nodes.append(helper.make_node("Sub", [values[-1], "bias"], ["y"], name="final_sub"))
    nodes.append(helper.make_node("Softsign", [mid], ["early"], name="early_out"))
    assert len(nodes) == count, len(nodes)
    assert sum(n.op_type == "Mul" for n in nodes) == 1
    assert sum(n.op_type == "Relu" for n in nodes) == 1
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8]),
               helper.make_tensor_value_info("early", TensorProto.FLOAT, [2, 8])]
    graph = helper.make_graph(nodes, "reduce_long", [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
