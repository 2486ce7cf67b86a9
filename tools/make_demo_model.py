#!/usr/bin/python3
"""Writes a small CNN (Conv-BN-Relu blocks, a residual Add, pooling, Gemm) as
demo.onnx, for machines without ../shared/bench. Seeded, so byte-identical."""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="models")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def w(name, *shape, scale=0.1):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv_bn_relu(x, cin, cout, tag, relu=True):
        nodes.append(helper.make_node("Conv", [x, w(tag + "_w", cout, cin, 3, 3), w(tag + "_b", cout)],
                                      [tag + "_c"], pads=[1, 1, 1, 1], name=tag + "_conv"))
        inits.append(numpy_helper.from_array((1 + 0.1 * rng.standard_normal(cout)).astype(np.float32), tag + "_s"))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(cout)).astype(np.float32), tag + "_o"))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(cout)).astype(np.float32), tag + "_m"))
        inits.append(numpy_helper.from_array((1 + rng.random(cout)).astype(np.float32), tag + "_v"))
        nodes.append(helper.make_node("BatchNormalization", [tag + "_c", tag + "_s", tag + "_o", tag + "_m", tag + "_v"],
                                      [tag + "_bn"], name=tag + "_bn"))
        if not relu:
            return tag + "_bn"
        nodes.append(helper.make_node("Relu", [tag + "_bn"], [tag + "_r"], name=tag + "_relu"))
        return tag + "_r"

    x = conv_bn_relu("input", 3, 16, "stem")
    y = conv_bn_relu(x, 16, 16, "b1a")
    y = conv_bn_relu(y, 16, 16, "b1b", relu=False)
    nodes.append(helper.make_node("Add", [x, y], ["res"], name="residual"))
    nodes.append(helper.make_node("Relu", ["res"], ["res_r"], name="res_relu"))
    nodes.append(helper.make_node("MaxPool", ["res_r"], ["pool"], kernel_shape=[2, 2], strides=[2, 2], name="pool"))
    nodes.append(helper.make_node("GlobalAveragePool", ["pool"], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    nodes.append(helper.make_node("Gemm", ["flat", w("fc_w", 10, 16), w("fc_b", 10)], ["logits"], transB=1, name="fc"))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=1, name="softmax"))
    graph = helper.make_graph(nodes, "demo_cnn",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tessera-demo")
    model.ir_version = 7
    os.makedirs(args.out, exist_ok=True)
    save(model, os.path.join(args.out, "demo.onnx"))
    print(os.path.join(args.out, "demo.onnx"))


if __name__ == "__main__":
    main()
