"""Conformer encoder blocks (the Macaron FF / MHSA / conv module / FF sandwich of ESPnet, WeNet and
NeMo) as torch.onnx writes them at opset 12, after the subsampling front end.

Imitates: a WeNet/ESPnet ConformerEncoderLayer stack exported with
torch.onnx.export(opset_version=12, dynamic_axes={"xs": {0: "batch", 1: "time"}}).
Covers: input xs [batch, time, d] (symbolic time); LayerNorm written out (ReduceMean -> Sub ->
Pow -> ReduceMean -> Add -> Sqrt -> Div -> Mul -> Add; opset 12 has no LayerNormalization);
half-step feed-forward modules: Linear (MatMul + Add) -> Swish as x * Sigmoid(x) -> Linear ->
Mul 0.5 -> residual Add; MHSA with Shape/Slice/Concat head reshapes, Div sqrt(hd), Softmax
(opset-12 axis 3); the convolution module: Transpose(0,2,1) -> pointwise Conv1d (k 1) to 2d
channels -> GLU written out as Split(axis 1, split attribute) -> Sigmoid -> Mul ->
depthwise Conv1d (k 31, group = channels, pads 15) -> BatchNormalization on the 3-D
[batch, d, time] tensor -> Swish -> pointwise Conv1d -> Transpose back -> residual Add; the
block's final LayerNorm. Output [batch, time, d].
full: d 256, 4 heads, ffn 1024, 4 blocks, time 200 (~2.4 GFLOP). small: d 32, 2 heads, ffn 128,
2 blocks, time 20.
"""
import numpy as np

import zoolib as Z

META = {
    "about": "Conformer blocks (WeNet/ESPnet, opset 12): GLU via Split, depthwise Conv1d, BN on 3-D, Swish, written-out LayerNorm",
    "dims_small": {"batch": 1, "time": 20},
    "dims_full": {"batch": 1, "time": 200},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(d=32, heads=2, ffn=128, blocks=2, k=31),
       "full": dict(d=256, heads=4, ffn=1024, blocks=4, k=31)}


def swish(g, x, name):
    return g.node("Mul", [x, g.node("Sigmoid", [x], name=name + "/Sigmoid")], name=name + "/Mul")


def feed_forward(g, x, d, ffn, name):
    y = Z.layer_norm(g, x, d, name.replace("feed_forward", "norm_ff"))
    y = swish(g, Z.dense(g, y, d, ffn, name + "/w_1", gain=1.7), name + "/activation")
    y = Z.dense(g, y, ffn, d, name + "/w_2")
    y = g.node("Mul", [y, Z.fscalar(g, 0.5, name)], name=name + "/Mul")
    return g.node("Add", [x, y], name=name + "/Add")


def mhsa(g, x, d, heads, name):
    hd = d // heads
    y = Z.layer_norm(g, x, d, name.replace("self_attn", "norm_mha"))
    q, k, v = (Z.split_heads(g, Z.dense(g, y, d, d, name + "/linear_" + n), heads, hd, name) for n in "qkv")
    ctx = Z.merge_heads(g, Z.attention_core(g, q, k, v, hd, name, scale="div_scores"), d, name)
    return g.node("Add", [x, Z.dense(g, ctx, d, d, name + "/linear_out")], name=name + "/Add")


def conv1d(g, x, cin, cout, k, name, group=1, gain=1.0):
    w = g.const((g.rng.standard_normal((cout, cin // group, k)) * (gain / np.sqrt(cin // group * k))).astype(np.float32),
                name.strip("/").replace("/", ".") + ".weight")
    b = g.const((0.02 * g.rng.standard_normal(cout)).astype(np.float32), name.strip("/").replace("/", ".") + ".bias")
    return g.node("Conv", [x, w, b], name=name + "/Conv", kernel_shape=[k], strides=[1], pads=[k // 2, k // 2],
                  dilations=[1], group=group)


def conv_module(g, x, d, k, name):
    y = Z.layer_norm(g, x, d, name.replace("conv_module", "norm_conv"))
    y = g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 2, 1])
    y = conv1d(g, y, d, 2 * d, 1, name + "/pointwise_conv1")
    a, b = Z.split(g, y, [d, d], 1, name + "/glu")
    y = g.node("Mul", [a, g.node("Sigmoid", [b], name=name + "/glu/Sigmoid")], name=name + "/glu/Mul")
    y = conv1d(g, y, d, d, k, name + "/depthwise_conv", group=d, gain=1.5)
    y = Z.bn(g, y, d, name=name + "/norm", wname=name.strip("/").replace("/", ".") + ".norm")
    y = swish(g, y, name + "/activation")
    y = conv1d(g, y, d, d, 1, name + "/pointwise_conv2")
    y = g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 2, 1])
    return g.node("Add", [x, y], name=name + "/Add")


def build(size):
    c = CFG[size]
    d = c["d"]
    g = Z.Graph("torch-jit-export", opset=12, seed=12)
    h = g.input("xs", ["batch", "time", d])
    for i in range(c["blocks"]):
        p = "/encoders.%d" % i
        h = feed_forward(g, h, d, c["ffn"], p + "/feed_forward_macaron")
        h = mhsa(g, h, d, c["heads"], p + "/self_attn")
        h = conv_module(g, h, d, c["k"], p + "/conv_module")
        h = feed_forward(g, h, d, c["ffn"], p + "/feed_forward")
        h = Z.layer_norm(g, h, d, p + "/norm_final")
    Z.set_output(g, h, "output", ["batch", "time", d])
    return g.model(producer="pytorch", producer_version="1.10.0")
