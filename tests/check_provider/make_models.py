#!/usr/bin/env python3
"""Whole-model cases for `tessera check-provider --models DIR` (model_round_trip).

    make_models.py DIR

DIR gets three ONNX test-case folders (NAME/model.onnx and
NAME/test_data_set_0/{input,output}_N.pb), their expected outputs computed
here with numpy, so the check is judged against something Tessera did not
compute and needs neither ../shared nor ONNX Runtime:

    conv_net     Conv(3->8, 3x3, pad 1) + Relu -> Conv(8->8, 3x3, stride 2)
                 -> GlobalAveragePool -> Flatten -> Gemm(8->10): 3 heavy ops
    mlp          MatMul(32->64) + bias -> Relu -> MatMul(64->16) + skip:
                 2 heavy ops
    elementwise  Relu, Add, Sigmoid: no heavy op, so never run

Exit status 77 (ctest: skipped) when python3 lacks onnx or numpy.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print("make_models.py: %s (apt-get install python3-onnx python3-numpy): skipping" % e)
    sys.exit(77)


def conv2d(x, w, b, stride, pad):
    """NCHW cross-correlation, as ONNX Conv, by explicit sums (float64)."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", patch, w)
    return y + b.reshape(1, m, 1, 1)


def save(case_dir, graph, inputs, outputs):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for k, (name, a) in enumerate(tensors):
            with open(os.path.join(data, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(numpy_helper.from_array(a.astype(np.float32), name).SerializeToString())


def f32(a):
    return a.astype(np.float32)


def conv_net(d, rng):
    x = f32(rng.uniform(-1, 1, (1, 3, 16, 16)))
    w1 = f32(rng.standard_normal((8, 3, 3, 3)) / np.sqrt(27))
    b1 = f32(0.1 * rng.standard_normal(8))
    w2 = f32(rng.standard_normal((8, 8, 3, 3)) / np.sqrt(72))
    b2 = f32(0.1 * rng.standard_normal(8))
    wg = f32(rng.standard_normal((10, 8)) / np.sqrt(8))
    bg = f32(0.1 * rng.standard_normal(10))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["c2"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "conv_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(a, n) for n, a in
                     (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("wg", wg), ("bg", bg))])
    x64 = x.astype(np.float64)
    r1 = np.maximum(conv2d(x64, w1.astype(np.float64), b1.astype(np.float64), 1, 1), 0)
    c2 = conv2d(r1, w2.astype(np.float64), b2.astype(np.float64), 2, 1)
    f = c2.mean(axis=(2, 3))
    y = f @ wg.astype(np.float64).T + bg
    save(d, graph, [("x", x)], [("y", y)])


def mlp(d, rng):
    x = f32(rng.uniform(-1, 1, (4, 32)))
    skip = f32(rng.uniform(-1, 1, (4, 16)))
    w1 = f32(rng.standard_normal((32, 64)) / np.sqrt(32))
    b1 = f32(0.1 * rng.standard_normal(64))
    w2 = f32(rng.standard_normal((64, 16)) / np.sqrt(64))
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["h"]),
        helper.make_node("MatMul", ["h", "w2"], ["m2"]),
        helper.make_node("Add", ["m2", "skip"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32]),
                       helper.make_tensor_value_info("skip", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        initializer=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                     numpy_helper.from_array(w2, "w2")])
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    y = h @ w2.astype(np.float64) + skip
    save(d, graph, [("x", x), ("skip", skip)], [("y", y)])


def elementwise(d, rng):
    x = f32(rng.uniform(-1, 1, (2, 8)))
    b = f32(rng.uniform(-1, 1, (2, 8)))
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Add", ["r", "b"], ["s"]),
        helper.make_node("Sigmoid", ["s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "elementwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])])
    y = 1 / (1 + np.exp(-(np.maximum(x.astype(np.float64), 0) + b)))
    save(d, graph, [("x", x), ("b", b)], [("y", y)])


def main(out):
    rng = np.random.default_rng(7)
    for make in (conv_net, mlp, elementwise):
        make(os.path.join(out, make.__name__), rng)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py DIR")
    main(sys.argv[1])
