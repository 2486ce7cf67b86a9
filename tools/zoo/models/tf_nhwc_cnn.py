"""MobileNetV2 as tf2onnx (opset 13) converts a Keras model whose input is NHWC, with the
layout Transposes the converter's optimizer leaves behind.

Imitates: tf.keras.applications.MobileNetV2(weights=None) saved, then
`python -m tf2onnx.convert --saved-model ... --opset 13` (tf2onnx 1.14).
Covers: an NHWC graph input ["unk__618", H, W, 3] -> Transpose(0,3,1,2) into NCHW convs;
Conv without bias (Conv2D use_bias=False) + BatchNormalization nodes kept unfolded
(FusedBatchNormV3, epsilon 1e-3); ReLU6 as Clip(x, min, max) with min/max as inputs shared by
every Clip (two deduplicated initializers), except the stem's, whose bounds are Constant nodes;
Keras' ZeroPadding2D(correct_pad) before every stride-2 depthwise Conv as an explicit Pad
(opset 11+ pads input, NHWC pads [0,0,0,0,0,1,1,0]) done in NHWC, so the NCHW tensor goes
Transpose(0,2,3,1) -> Pad -> Transpose(0,3,1,2) -> Conv(pads 0) (pairs that do not cancel);
residual Adds done in NHWC between Transposes (not cancelling either); between blocks an
adjacent Transpose(0,2,3,1) -> Transpose(0,3,1,2) pair the optimizer did not remove
(cancelling); depthwise Conv (group = channels); head: the 1x1 Conv to 1280 + BN + ReLU6,
Transpose to NHWC, GlobalAveragePooling2D as ReduceMean(axes [1, 2], keepdims 0), Dense as
MatMul + Add (no Gemm), Softmax(axis -1). Running statistics are calibrated (TracedGraph).
full: 1x224x224x3, alpha 1.0, 1000 classes (~0.6 GFLOP). small: 2x48x48x3, alpha 0.35,
10 classes, the same 17 blocks.
"""
import numpy as np
from zoolib import TracedGraph, bn, conv2d, make_divisible, set_output

META = {
    "about": "MobileNetV2 via tf2onnx opset 13: NHWC input, leftover Transposes, Pad before stride 2, BN nodes, Clip relu6, ReduceMean+MatMul",
    "dims_small": {"unk__618": 2}, "dims_full": {"unk__618": 1},
    "rtol": 1e-3, "atol": 1e-4,
}

# Keras MobileNetV2: expansion t, channels c, repeats n, first stride s
CONFIG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
P = "StatefulPartitionedCall/mobilenetv2_1.00_224/"


class Net:
    def __init__(self, g):
        self.g = g
        # tf2onnx dedups equal constants: one min/max pair feeds every Clip
        self.lo = g.const(np.array(0.0, np.float32), "const_fold_opt__812")
        self.hi = g.const(np.array(6.0, np.float32), "const_fold_opt__845")

    def to_nhwc(self, x, name):
        return self.g.node("Transpose", [x], name=name + "__transpose_nhwc", perm=[0, 2, 3, 1])

    def to_nchw(self, x, name):
        return self.g.node("Transpose", [x], name=name + "__transpose_nchw", perm=[0, 3, 1, 2])

    def relu6(self, x, name, lo=None, hi=None):
        return self.g.node("Clip", [x, lo or self.lo, hi or self.hi], name=name + "/Relu6")

    def conv_bn(self, x, cin, cout, k, name, stride=1, group=1, pads=None, relu6=True):
        g = self.g
        gain = np.sqrt(2.0) if relu6 else 1.0
        y = conv2d(g, x, cin, cout, k, stride, pads=pads, group=group, bias=False, gain=gain,
                   name=P + name + "/Conv2D", wname=name + "/kernel")
        y = bn(g, y, cout, name=P + name + "_BN/FusedBatchNormV3", eps=1e-3, wname=name + "_BN")
        return self.relu6(y, P + name + "_relu") if relu6 else y

    def pad_nhwc(self, x, name):
        """Keras correct_pad for an even input: ((0, 1), (0, 1)) on H and W, done in NHWC."""
        g = self.g
        y = self.to_nhwc(x, P + name + "_pad")
        y = g.node("Pad", [y, g.ints([0, 0, 0, 0, 0, 1, 1, 0], name + "_pad/Pad/paddings"),
                           g.const(np.array(0.0, np.float32), name + "_pad/Pad/constant_values")],
                   name=P + name + "_pad/Pad", mode="constant")
        return self.to_nchw(y, P + name + "_pad")


def build(size="small"):
    full = size == "full"
    alpha, res, classes = (1.0, 224, 1000) if full else (0.35, 48, 10)
    g = TracedGraph("tf2onnx", 13, seed=41, dims={"unk__618": 2 if full else 8})
    n = Net(g)
    ch = lambda c: make_divisible(c * alpha, 8)  # noqa: E731
    x = g.input("input_1", ["unk__618", res, res, 3])
    y = n.to_nchw(x, P + "Conv1")
    # stem: ZeroPadding2D + Conv 3x3 stride 2 valid; its Relu6 bounds are Constant nodes
    y = n.pad_nhwc(y, "Conv1")
    y = n.conv_bn(y, 3, ch(32), 3, "Conv1", stride=2, pads=0, relu6=False)
    lo = g.const(np.array(0.0, np.float32), P + "Conv1_relu/Relu6/min", as_constant=True)
    hi = g.const(np.array(6.0, np.float32), P + "Conv1_relu/Relu6/max", as_constant=True)
    y = n.relu6(y, P + "Conv1_relu", lo, hi)
    cin, b = ch(32), 0
    for t, c, reps, s in CONFIG:
        cout = make_divisible(c * alpha, 8)
        for r in range(reps):
            stride = s if r == 0 else 1
            name = "block_%d_" % b if b else "expanded_conv_"
            inp = y
            e = cin * t
            if t != 1:
                y = n.conv_bn(y, cin, e, 1, name + "expand", pads=0)
            if stride == 2:
                y = n.pad_nhwc(y, name)
                y = n.conv_bn(y, e, e, 3, name + "depthwise", stride=2, group=e, pads=0)
            else:
                y = n.conv_bn(y, e, e, 3, name + "depthwise", group=e, pads=1)
            y = n.conv_bn(y, e, cout, 1, name + "project", pads=0, relu6=False)
            if stride == 1 and cin == cout:
                a = g.node("Add", [n.to_nhwc(inp, P + name + "add_in"), n.to_nhwc(y, P + name + "add")],
                           name=P + name + "add/add")
                y = n.to_nchw(a, P + name + "add")
            elif b % 3 == 1:  # a pair the optimizer left in place (cancels)
                y = n.to_nchw(n.to_nhwc(y, P + name + "project_out"), P + name + "project_out")
            cin, b = cout, b + 1
    last = make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    y = n.conv_bn(y, cin, last, 1, "Conv_1", pads=0)
    y = n.to_nhwc(y, P + "out_relu")
    y = g.node("ReduceMean", [y], name=P + "global_average_pooling2d/Mean", axes=[1, 2], keepdims=0)
    w = g.const((g.rng.standard_normal((last, classes)) * (2.0 / np.sqrt(last))).astype(np.float32),
                "predictions/kernel")
    y = g.node("MatMul", [y, w], name=P + "predictions/MatMul")
    bb = g.const((0.02 * g.rng.standard_normal(classes)).astype(np.float32), "predictions/bias")
    y = g.node("Add", [y, bb], name=P + "predictions/BiasAdd")
    y = g.node("Softmax", [y], name=P + "predictions/Softmax", axis=-1)
    set_output(g, y, "predictions", ["unk__618", classes])
    return g.model(producer="tf2onnx", producer_version="1.14.0 8f8d49")
