#!/usr/bin/python3
"""Writes huge but trivial models for measuring how session creation scales
(issue 14: creation must stay O(n log n) in nodes, edges and graph inputs):

  chain N    x -> Relu -> Neg -> Relu ... (N nodes) -> y, x of shape [4]
  inputs N   N graph inputs x0..x{N-1} of shape [1], Concat of all -> y
  fanout N   one input read by N Relu nodes, each a graph output

usage: tools/make_big_graph.py KIND N OUT.onnx
then:  tessera bench OUT.onnx --runs 1 --warmup 0 --json   (create_ms)
"""
import sys

import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def chain(n):
    nodes, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else "t%d" % i
        nodes.append(helper.make_node("Relu" if i % 2 == 0 else "Neg", [prev], [out], name="n%d" % i))
        prev = out
    return helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", F, [4])],
                             [helper.make_tensor_value_info("y", F, [4])])


def inputs(n):
    names = ["x%d" % i for i in range(n)]
    return helper.make_graph([helper.make_node("Concat", names, ["y"], axis=0, name="cat")], "inputs",
                             [helper.make_tensor_value_info(x, F, [1]) for x in names],
                             [helper.make_tensor_value_info("y", F, [n])])


def fanout(n):
    nodes = [helper.make_node("Relu", ["x"], ["y%d" % i], name="r%d" % i) for i in range(n)]
    return helper.make_graph(nodes, "fanout", [helper.make_tensor_value_info("x", F, [4])],
                             [helper.make_tensor_value_info("y%d" % i, F, [4]) for i in range(n)])


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("chain", "inputs", "fanout"):
        sys.stderr.write(__doc__)
        return 2
    g = {"chain": chain, "inputs": inputs, "fanout": fanout}[sys.argv[1]](int(sys.argv[2]))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
