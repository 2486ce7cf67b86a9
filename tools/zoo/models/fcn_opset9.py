"""A small FCN-style segmentation net at opset 9, as old exporters (torch 1.0-1.2 torch.onnx,
keras2onnx of the time) wrote it: Upsample, Pad with a pads attribute, channel Softmax through
Transpose.

Imitates: a 2019-era PyTorch segmentation model (ReflectionPad2d stem, strided encoder, a
dilated context conv, nearest/bilinear nn.Upsample decoder with skips) exported with
torch.onnx.export(opset_version=9).
Covers: opset-9 Pad (pads attribute; mode "reflect" and "constant" with value), Conv with zero
pads after an explicit Pad, strided and dilated (2) Conv, BatchNormalization-9 nodes, Relu,
MaxPool, Upsample-9 (scales as an input initializer) with mode "nearest" (x2, twice) and once
mode "linear" (bilinear, x2), Concat skips, Softmax over channels written as
Transpose(0,2,3,1) -> Softmax(axis=3, opset-9 2-D coercion) -> Transpose(0,3,1,2); weights as
initializers; symbolic batch.
full: 1x3x320x320, widths 32..256, 21 classes (~6 GFLOP). small: 1x3x32x32, widths 8..64,
5 classes.
"""
import numpy as np
from zoolib import TracedGraph, conv_bn_act, conv2d, set_output

META = {
    "about": "FCN segmentation at opset 9: Pad attr (reflect/constant), Upsample nearest+linear, BN, Softmax via Transpose",
    "dims_small": {"batch": 1}, "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}


def cbr(g, x, cin, cout, k, name, stride=1, pads=None, dilation=1):
    """Conv -> BatchNormalization -> Relu (an nn.Sequential, indices .0/.1/.2)."""
    return conv_bn_act(g, x, cin, cout, k, stride, act_kind="relu", bn_mode="node", name=name + ".0",
                       bn_name=name + ".1", act_name=name + ".2", pads=pads, dilation=dilation)


def upsample(g, x, mode, name):
    scales = g.const(np.array([1, 1, 2, 2], np.float32), name.strip("/").replace("/", ".") + ".scales")
    return g.node("Upsample", [x, scales], name=name + "/Upsample", mode=mode)


def build(size="small"):
    full = size == "full"
    res, classes = (320, 21) if full else (32, 5)
    c = [32, 64, 128, 256] if full else [8, 16, 32, 64]
    g = TracedGraph("torch-jit-export", 9, seed=23, dims={"batch": 1 if full else 16})
    x = g.input("input", ["batch", 3, res, res])
    y = g.node("Pad", [x], name="/stem/stem.0/Pad", mode="reflect", pads=[0, 0, 1, 1, 0, 0, 1, 1])
    s1 = cbr(g, y, 3, c[0], 3, "/stem/stem.1", pads=0)                      # 1/1
    s2 = cbr(g, s1, c[0], c[1], 3, "/enc1/enc1", stride=2)                  # 1/2
    y = g.node("MaxPool", [s2], name="/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
    y = g.node("Pad", [y], name="/enc2/enc2.0/Pad", mode="constant", value=0.0, pads=[0, 0, 1, 1, 0, 0, 1, 1])
    s3 = cbr(g, y, c[1], c[2], 3, "/enc2/enc2.1", pads=0)                   # 1/4
    y = cbr(g, s3, c[2], c[3], 3, "/enc3/enc3", stride=2)                   # 1/8
    y = cbr(g, y, c[3], c[3], 3, "/context/context", dilation=2)
    y = upsample(g, y, "nearest", "/up1")                                   # 1/4
    y = g.node("Concat", [y, s3], name="/Concat", axis=1)
    y = cbr(g, y, c[3] + c[2], c[2], 1, "/dec1/dec1", pads=0)
    y = upsample(g, y, "nearest", "/up2")                                   # 1/2
    y = g.node("Concat", [y, s2], name="/Concat", axis=1)
    y = cbr(g, y, c[2] + c[1], c[1], 1, "/dec2/dec2.0", pads=0)
    y = cbr(g, y, c[1], c[0], 3, "/dec2/dec2.1")
    y = conv2d(g, y, c[0], classes, 1, pads=0, name="/classifier", out_std=2.0)
    y = upsample(g, y, "linear", "/up3")                                    # 1/1, bilinear
    y = g.node("Transpose", [y], name="/Transpose", perm=[0, 2, 3, 1])
    y = g.node("Softmax", [y], name="/Softmax", axis=3)
    y = g.node("Transpose", [y], name="/Transpose", perm=[0, 3, 1, 2])
    set_output(g, y, "output", ["batch", classes, res, res])
    return g.model(producer_version="1.1")
