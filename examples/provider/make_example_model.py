#!/usr/bin/env python3
"""Writes an ONNX backend test case for the pretend provider example.

    python3 make_example_model.py CASE_DIR

CASE_DIR gets model.onnx and test_data_set_0/{input_0,input_1,output_0}.pb,
so that

    tessera test CASE_DIR -p /path/libtessera_provider_pretend.so,reference

runs the model and checks the output against numpy. The model is

    h = Relu(x @ W1 + b1)    MatMul -> Add(bias) -> Relu: the fused piece
    g = Sigmoid(h)           declined by pretend, so reference runs it
                             (h is copied device -> host, g host -> device)
    y = Relu(g @ W2 + skip)  a plain MatMul, an Add of equal shapes, a Relu

The sizes keep each MatMul above the partitioner's "cheap node" threshold
(64 Ki flops). Under the default placement policy a cheap node may be moved
next to its neighbours to save a copy, and then the example would not show
where its pieces ran.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

M, K, H, N = 32, 64, 64, 24  # x[M,K] @ W1[K,H] -> h[M,H]; g[M,H] @ W2[H,N] -> y[M,N]


def main(case_dir):
    rng = np.random.default_rng(2024)
    x = rng.standard_normal((M, K)).astype(np.float32)
    skip = rng.standard_normal((M, N)).astype(np.float32)
    w1 = (rng.standard_normal((K, H)) / np.sqrt(K)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(H)).astype(np.float32)
    w2 = (rng.standard_normal((H, N)) / np.sqrt(H)).astype(np.float32)

    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["fc1"], name="fc1"),
        helper.make_node("Add", ["fc1", "b1"], ["fc1_biased"], name="fc1_bias"),
        helper.make_node("Relu", ["fc1_biased"], ["h"], name="fc1_relu"),
        helper.make_node("Sigmoid", ["h"], ["g"], name="gate"),
        helper.make_node("MatMul", ["g", "W2"], ["fc2"], name="fc2"),
        helper.make_node("Add", ["fc2", "skip"], ["sum"], name="skip_add"),
        helper.make_node("Relu", ["sum"], ["y"], name="out_relu"),
    ]
    graph = helper.make_graph(
        nodes, "pretend_example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K]),
         helper.make_tensor_value_info("skip", TensorProto.FLOAT, [M, N])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])],
        initializer=[numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "b1"),
                     numpy_helper.from_array(w2, "W2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)

    # The expected output, computed independently of Tessera.
    h = np.maximum(x @ w1 + b1, 0)
    g = 1.0 / (1.0 + np.exp(-h))
    y = np.maximum(g @ w2 + skip, 0).astype(np.float32)

    data = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for name, array in [("input_0", numpy_helper.from_array(x, "x")),
                        ("input_1", numpy_helper.from_array(skip, "skip")),
                        ("output_0", numpy_helper.from_array(y, "y"))]:
        with open(os.path.join(data, name + ".pb"), "wb") as f:
            f.write(array.SerializeToString())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_example_model.py CASE_DIR")
    main(sys.argv[1])
