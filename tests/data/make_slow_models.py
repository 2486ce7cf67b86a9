#!/usr/bin/env python3
"""Writes tests/data/slow/*.onnx: one node each, valid and within every
size limit, whose naive reference kernel would run for many seconds to hours
(test_run_options.c stops each with a 100 ms deadline; the kernel must look
at the host's stop flag between chunks of its work). Every graph input is a
float or int tensor of fixed shape that the test fills with zeros.

    /usr/bin/python3 tests/data/make_slow_models.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow")
F, I8, U8 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8


def io(name, t, dims):
    return helper.make_tensor_value_info(name, t, dims)


def write(file, node, inputs, outputs, opset=13, inits=()):
    g = helper.make_graph([node], file[:-5], inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    save(m, os.path.join(HERE, file))


def main():
    os.makedirs(HERE, exist_ok=True)
    # 3.4e10 multiply-adds
    write("slow_matmul.onnx", helper.make_node("MatMul", ["a", "b"], ["y"], name="bigmatmul"),
          [io("a", F, [2048, 8192]), io("b", F, [8192, 2048])], [io("y", F, [2048, 2048])])
    write("slow_gemm.onnx", helper.make_node("Gemm", ["a", "b"], ["y"], name="biggemm", transB=1),
          [io("a", F, [2048, 8192]), io("b", F, [2048, 8192])], [io("y", F, [2048, 2048])])
    # 2.7e11: a 63x63 kernel over a padded 512x512 map, 16 channels in and out
    write("slow_conv.onnx", helper.make_node("Conv", ["x", "w"], ["y"], name="bigconv", pads=[31] * 4),
          [io("x", F, [1, 16, 512, 512]), io("w", F, [16, 16, 63, 63])], [io("y", F, [1, 16, 512, 512])])
    # 6.7e10
    write("slow_conv_transpose.onnx",
          helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="bigdeconv"),
          [io("x", F, [1, 16, 256, 256]), io("w", F, [16, 16, 63, 63])], [io("y", F, [1, 16, 318, 318])])
    # a 4096^3 matrix product (6.9e10 multiply-adds) the ellipsis keeps an
    # Einsum (core/einsum_lower.c lowers no ellipsis), so the Einsum kernel's
    # pairwise GEMM runs it
    write("slow_einsum.onnx",
          helper.make_node("Einsum", ["a", "b"], ["y"], name="bigeinsum", equation="...ij,...jk->...ik"),
          [io("a", F, [4096, 4096]), io("b", F, [4096, 4096])], [io("y", F, [4096, 4096])])
    # 20,000 steps of about 1e6 multiply-adds
    write("slow_lstm.onnx",
          helper.make_node("LSTM", ["x", "w", "r"], ["", "y_h"], name="biglstm", hidden_size=512),
          [io("x", F, [20000, 1, 8]), io("w", F, [1, 2048, 8]), io("r", F, [1, 2048, 512])],
          [io("y_h", F, [1, 1, 512])])
    write("slow_matmulinteger.onnx", helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="bigmmint"),
          [io("a", I8, [2048, 8192]), io("b", I8, [8192, 2048])], [io("y", TensorProto.INT32, [2048, 2048])])
    write("slow_convinteger.onnx",
          helper.make_node("ConvInteger", ["x", "w"], ["y"], name="bigconvint", pads=[31] * 4),
          [io("x", U8, [1, 16, 256, 256]), io("w", U8, [16, 16, 63, 63])],
          [io("y", TensorProto.INT32, [1, 16, 256, 256])])
    # 8 heads of 8192 queries over 8192 keys: 1.1e11
    write("slow_attention.onnx", helper.make_node("Attention", ["q", "k", "v"], ["y"], name="bigattention"),
          [io(n, F, [1, 8, 8192, 64]) for n in "qkv"], [io("y", F, [1, 8, 8192, 64])], opset=23)
    # a million all-zero boxes never suppress each other: 5e11 comparisons
    nms_inits = [numpy_helper.from_array(np.array([1000000], np.int64), "max_out"),
                 numpy_helper.from_array(np.array([0.5], np.float32), "iou")]
    write("slow_nms.onnx",
          helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["sel"], name="bignms"),
          [io("boxes", F, [1, 1000000, 4]), io("scores", F, [1, 1, 1000000])],
          [io("sel", TensorProto.INT64, [None, 3])], inits=nms_inits)


if __name__ == "__main__":
    main()
