"""Writes the models and numpy float64 answers the oracle tests use.

usage: make_oracle_models.py OUT_DIR

OUT_DIR/sum.onnx — float32 summation order matters: x [2, K] times w [K, 3]
  where w holds large values of both signs that nearly cancel, then Softmax
  and a LayerNorm written out (ReduceMean/Sub/Pow/Sqrt/Div), then a Cast to
  double, so the oracle's float64 result reaches the caller unrounded.
  Outputs: `wide` (double, after the Cast) and `y` (float32, the same value
  rounded). Nodes: `dot` (MatMul), `scale` (Mul), `soft` (Softmax),
  `mean` (ReduceMean), `centre` (Sub), `sq` (Pow), `var` (ReduceMean),
  `eps_add` (Add), `std` (Sqrt), `norm` (Div), `to_double` (Cast).
OUT_DIR/x.pb — the input x.
OUT_DIR/expected_wide.npy — numpy float64 of `wide`, from x and w widened.
OUT_DIR/expected_dot.npy — numpy float64 of the MatMul.
OUT_DIR/lossy_dot.npy — the MatMul summed in float32 in order (numpy cumsum).
OUT_DIR/lossy_wide.npy — float64 of `wide` computed from lossy_dot.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

K = 4096


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(17)
    # Terms of +-1e4 that cancel pairwise, plus small ones: a float32 sum
    # loses the small terms' low bits (and depends on the order).
    w = np.empty((K, 3), np.float32)
    w[0::2] = rng.uniform(5e3, 1e4, (K // 2, 3)).astype(np.float32)
    w[1::2] = -w[0::2] + rng.uniform(-1.0, 1.0, (K // 2, 3)).astype(np.float32)
    x = rng.uniform(0.9, 1.1, (2, K)).astype(np.float32)
    x[:, 1::2] = x[:, 0::2]  # each pair cancels up to w's small part
    x[:, 1::2] += rng.uniform(-1e-3, 1e-3, (2, K // 2)).astype(np.float32)

    scale = np.array(0.05, np.float32)
    eps = np.array(1e-5, np.float32)
    two = np.array(2.0, np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["d"], name="dot"),
        helper.make_node("Mul", ["d", "scale"], ["ds"], name="scale"),
        helper.make_node("Softmax", ["ds"], ["p"], name="soft", axis=-1),
        helper.make_node("ReduceMean", ["p"], ["mu"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["p", "mu"], ["c"], name="centre"),
        helper.make_node("Pow", ["c", "two"], ["c2"], name="sq"),
        helper.make_node("ReduceMean", ["c2"], ["v"], name="var", axes=[-1]),
        helper.make_node("Add", ["v", "eps"], ["ve"], name="eps_add"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="std"),
        helper.make_node("Div", ["c", "sd"], ["y"], name="norm"),
        helper.make_node("Cast", ["y"], ["wide"], name="to_double", to=TensorProto.DOUBLE),
    ]
    graph = helper.make_graph(
        nodes, "oracle_sum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, K])],
        [helper.make_tensor_value_info("wide", TensorProto.DOUBLE, [2, 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(scale, "scale"),
         numpy_helper.from_array(eps, "eps"), numpy_helper.from_array(two, "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "sum.onnx"))
    with open(os.path.join(out, "x.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())

    # The same computation in float64 from the same float32 numbers.
    d = x.astype(np.float64) @ w.astype(np.float64)
    ds = d * np.float64(scale)
    e = np.exp(ds - ds.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    c = p - p.mean(axis=-1, keepdims=True)
    v = (c ** 2).mean(axis=-1, keepdims=True)
    y = c / np.sqrt(v + np.float64(eps))
    np.save(os.path.join(out, "expected_wide.npy"), y)
    np.save(os.path.join(out, "expected_dot.npy"), d)
    # What a float32 MatMul summing in order makes (tests/compare/
    # plugin_lossy.c): float32 products, a float32 running sum.
    lossy = np.empty((2, 3), np.float32)
    for i in range(2):
        for j in range(3):
            lossy[i, j] = np.cumsum(x[i, :] * w[:, j], dtype=np.float32)[-1]
    np.save(os.path.join(out, "lossy_dot.npy"), lossy)
    # ... and the rest of the chain in float64 from there
    ds = lossy.astype(np.float64) * np.float64(scale)
    e = np.exp(ds - ds.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    c = p - p.mean(axis=-1, keepdims=True)
    v = (c ** 2).mean(axis=-1, keepdims=True)
    np.save(os.path.join(out, "lossy_wide.npy"), c / np.sqrt(v + np.float64(eps)))


if __name__ == "__main__":
    main(sys.argv[1])
