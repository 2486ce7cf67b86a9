#!/usr/bin/python3
"""A float32 MLP case (X[64,512] -> 3 x (MatMul 512x512 + Add bias, Relu
between)) with numpy (float64) expected output, for concurrent_sessions.c.
usage: mlp_case.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((64, 512)).astype(np.float32)
ws = [(rng.standard_normal((512, 512)) / np.sqrt(512)).astype(np.float32) for _ in range(3)]
bs = [rng.standard_normal(512).astype(np.float32) for _ in range(3)]
nodes, inits, cur, y = [], [], "X", x.astype(np.float64)
for i in range(3):
    nodes += [helper.make_node("MatMul", [cur, "W%d" % i], ["M%d" % i]),
              helper.make_node("Add", ["M%d" % i, "B%d" % i], ["A%d" % i])]
    inits += [numpy_helper.from_array(ws[i], "W%d" % i), numpy_helper.from_array(bs[i], "B%d" % i)]
    y = y @ ws[i] + bs[i]
    cur = "A%d" % i
    if i < 2:
        nodes.append(helper.make_node("Relu", [cur], ["R%d" % i]))
        y = np.maximum(y, 0)
        cur = "R%d" % i
nodes.append(helper.make_node("Identity", [cur], ["Y"]))
g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y.shape)], inits)
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "model.onnx"))
for name, a in (("input_0.pb", x), ("output_0.pb", y.astype(np.float32))):
    with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
        f.write(numpy_helper.from_array(a, "X" if name.startswith("input") else "Y").SerializeToString())
print(out)
