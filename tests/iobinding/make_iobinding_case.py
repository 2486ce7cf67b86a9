#!/usr/bin/python3
"""The model and data of the io-binding test (iobinding_runs.c): one step of
a recurrent cell, run 100 times with its state fed back,

    state_out = tanh(x @ W + state_in @ U + b)
    y         = state_out @ V

with x for every step (xs.pb: [100, 1, 8]), the zero initial state
(state0.pb) and numpy's y for every step (ys.pb: [100, 1, 4]) and final
state (state100.pb), computed in float64.
usage: make_iobinding_case.py OUT_DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

STEPS, I, H, O = 100, 8, 16, 4
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
w = (rng.standard_normal((I, H)) / 3).astype(np.float32)
u = (rng.standard_normal((H, H)) / 5).astype(np.float32)
b = (rng.standard_normal(H) / 4).astype(np.float32)
v = (rng.standard_normal((H, O)) / 4).astype(np.float32)

nodes = [
    helper.make_node("MatMul", ["x", "W"], ["xw"]),
    helper.make_node("MatMul", ["state_in", "U"], ["su"]),
    helper.make_node("Add", ["xw", "su"], ["pre0"]),
    helper.make_node("Add", ["pre0", "B"], ["pre"]),
    helper.make_node("Tanh", ["pre"], ["state_out"]),
    helper.make_node("MatMul", ["state_out", "V"], ["y"]),
]
inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(u, "U"),
         numpy_helper.from_array(b, "B"), numpy_helper.from_array(v, "V")]
graph = helper.make_graph(
    nodes, "rnn_step",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, I]),
     helper.make_tensor_value_info("state_in", TensorProto.FLOAT, [1, H])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, O]),
     helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [1, H])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
save(model, os.path.join(out, "model.onnx"))

xs = rng.standard_normal((STEPS, 1, I)).astype(np.float32)
state = np.zeros((1, H))
ys = np.zeros((STEPS, 1, O))
for t in range(STEPS):
    state = np.tanh(xs[t].astype(np.float64) @ w + state @ u + b)
    ys[t] = state @ v


def write(name, array, tensor_name):
    with open(os.path.join(out, name), "wb") as f:
        f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())


write("xs.pb", xs, "xs")
write("state0.pb", np.zeros((1, H), np.float32), "state_in")
write("ys.pb", ys.astype(np.float32), "ys")
write("state100.pb", state.astype(np.float32), "state100")
