#!/usr/bin/python3
"""The model and data of the concurrency test (threads_runs.c): a small
network with a symbolic batch (MatMul+Add, Relu, a Shape-driven Reshape,
MatMul, Softmax), inputs of batch 2 and 3, and their outputs computed by
numpy in float64. Alternating batches makes every run re-infer shapes and
pick another plan, the paths where concurrent runs collided.
usage: make_threads_case.py OUT_DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
w1 = (rng.standard_normal((32, 64)) / 6).astype(np.float32)
b1 = rng.standard_normal(64).astype(np.float32)
w2 = (rng.standard_normal((64, 16)) / 8).astype(np.float32)

nodes = [
    helper.make_node("MatMul", ["X", "W1"], ["M1"]),
    helper.make_node("Add", ["M1", "B1"], ["A1"]),
    helper.make_node("Relu", ["A1"], ["R1"]),
    # [batch, 64] -> [batch, 8, 8] -> [batch, 64] through the input's own shape
    helper.make_node("Shape", ["X"], ["S"], end=1),
    helper.make_node("Concat", ["S", "EIGHT8"], ["S3"], axis=0),
    helper.make_node("Reshape", ["R1", "S3"], ["R3"]),
    helper.make_node("Concat", ["S", "SIXTYFOUR"], ["S2"], axis=0),
    helper.make_node("Reshape", ["R3", "S2"], ["R2"]),
    helper.make_node("MatMul", ["R2", "W2"], ["M2"]),
    helper.make_node("Softmax", ["M2"], ["Y"], axis=1),
]
inits = [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1"),
         numpy_helper.from_array(w2, "W2"),
         numpy_helper.from_array(np.array([8, 8], np.int64), "EIGHT8"),
         numpy_helper.from_array(np.array([64], np.int64), "SIXTYFOUR")]
graph = helper.make_graph(nodes, "threads", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 32])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 16])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
save(model, os.path.join(out, "model.onnx"))

for batch in (2, 3):
    x = rng.standard_normal((batch, 32)).astype(np.float32)
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2
    e = np.exp(h - h.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    with open(os.path.join(out, "x%d.pb" % batch), "wb") as f:
        f.write(numpy_helper.from_array(x, "X").SerializeToString())
    with open(os.path.join(out, "y%d.pb" % batch), "wb") as f:
        f.write(numpy_helper.from_array(y, "Y").SerializeToString())
