"""PP-OCRv3 text recognizer (PaddleOCR rec: MobileNetV1Enhance + SVTR neck + CTC head) as
paddle2onnx writes it at opset 11.

Imitates `paddle2onnx --model_dir ch_PP-OCRv3_rec_infer --opset_version 11` with the input
x [batch, 3, 48, width] (symbolic width, the text line's length):
- backbone: Conv 3x3 s2 + BatchNormalization + hardswish written out as paddle2onnx does
  before HardSwish existed (x * Clip(x + 3, 0, 6) / 6), depthwise-separable blocks (depthwise
  Conv group=C, pointwise 1x1) with strides 2 and (2, 1) (height only), AvgPool 2x2 to height 1;
- SVTR neck (EncoderWithSVTR): Conv-BN-swish (Sigmoid * x) 3x3 and 1x1, flatten(2) as
  Reshape [0, C, -1] (paddle's 0 = copy) + Transpose to [N, T, C]; transformer blocks with
  LayerNorm written out (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add), global
  attention with a fused qkv MatMul+Add, Reshape [0, -1, 3, H, hd], Transpose (2, 0, 3, 1, 4),
  qkv[i] as Slice + Squeeze, q * hd^-0.5 (Mul), MatMul with k^T, Softmax (opset-11 axis 3),
  MatMul, Transpose, Reshape [0, -1, C], proj; MLP with GELU written out with Erf;
  back to NCHW by Reshape to [0, h, w, C] built from Shape (Shape -> Slice -> Concat) and
  Transpose; conv 1x1, Concat with the neck's input, conv 3x3, conv 1x1;
- Im2Seq: Squeeze(axis 2) + Transpose to [N, T, C]; CTC head MatMul+Add to 6625 classes and
  Softmax over the last axis.
Output softmax [batch, width/8, 6625].
Full: 48 x 320 input (T = 40), backbone to 512 channels, neck hidden 120, 8 heads, 2 blocks,
dims 64. Small: 32 x 64 (T = 8), backbone to 64 channels, hidden 32, 4 heads, 1 block, dims 16.
"""
import numpy as np

import zoolib as Z

META = {
    "about": "PP-OCRv3 rec (MobileNetV1Enhance + SVTR + CTC 6625), paddle2onnx opset 11, symbolic width",
    "dims_small": {"batch": 1, "width": 64},
    "dims_full": {"batch": 1, "width": 320},
    "rtol": 1e-3, "atol": 1e-5,
}

CFG = {
    "small": dict(h=32, stem=8, blocks=[(8, 16, 1), (16, 32, 2), (32, 32, (2, 1)), (32, 64, (2, 1))],
                  hidden=32, heads=4, depth=1, dims=16, head_gain=1.5),
    "full": dict(h=48, stem=16, blocks=[(16, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, (2, 1)), (128, 128, 1),
                                        (128, 256, (2, 1)), (256, 256, 1), (256, 256, 1), (256, 512, (2, 1))],
                 hidden=120, heads=8, depth=2, dims=64, head_gain=0.6),
}
CLASSES = 6625


def conv_bn(g, x, cin, cout, k, stride, group, act, name):
    """PaddleOCR's ConvBNLayer: Conv (no bias) + BatchNormalization + activation."""
    s = stride if isinstance(stride, tuple) else (stride, stride)
    gain = Z.ACT_GAIN[act]
    w = g.weight((cout, cin // group, k, k), name.strip("/").replace("/", ".") + "._conv.weight",
                 scale=gain / np.sqrt((cin // group) * k * k))
    y = g.node("Conv", [x, w], name=name + "/_conv/Conv", kernel_shape=[k, k], strides=list(s),
               pads=[k // 2] * 4, group=group, dilations=[1, 1])
    y = Z.bn(g, y, cout, name + "/_batch_norm", wname=name.strip("/").replace("/", ".") + "._batch_norm")
    return Z.act(g, y, act, name)


def svtr_attention(g, x, d, heads, name):
    hd = d // heads
    qkv = Z.dense(g, x, d, 3 * d, name + "/qkv")
    qkv = g.node("Reshape", [qkv, Z.sconst(g, [0, -1, 3, heads, hd], name)], name=name + "/Reshape")
    qkv = g.node("Transpose", [qkv], name=name + "/Transpose", perm=[2, 0, 3, 1, 4])
    q, k, v = [Z.squeeze(g, Z.slice_(g, qkv, [i], [i + 1], [0], name=name), [0], name) for i in range(3)]
    ctx = Z.attention_core(g, q, k, v, hd, name, scale="mul_q")
    ctx = g.node("Transpose", [ctx], name=name + "/Transpose", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, Z.sconst(g, [0, -1, d], name)], name=name + "/Reshape")
    return Z.dense(g, ctx, d, d, name + "/proj")


def build(size):
    c = CFG[size]
    g = Z.Graph("paddle-onnx", opset=11, seed=3)
    x = g.input("x", ["batch", 3, c["h"], "width"])

    b = "/backbone"
    y = conv_bn(g, x, 3, c["stem"], 3, 2, 1, "hardswish_clip", b + "/conv1")
    for i, (cin, cout, s) in enumerate(c["blocks"]):
        p = "%s/block_list.%d" % (b, i)
        y = conv_bn(g, y, cin, cin, 3, s, cin, "hardswish_clip", p + "/_depthwise_conv")
        y = conv_bn(g, y, cin, cout, 1, 1, 1, "hardswish_clip", p + "/_pointwise_conv")
    y = g.node("AveragePool", [y], name=b + "/pool/AveragePool", kernel_shape=[2, 2], strides=[2, 2],
               pads=[0, 0, 0, 0])
    C = c["blocks"][-1][1]
    hid, dims = c["hidden"], c["dims"]

    n = "/neck/encoder"
    short = y
    z = conv_bn(g, y, C, C // 8, 3, 1, 1, "silu", n + "/conv1")
    z = conv_bn(g, z, C // 8, hid, 1, 1, 1, "silu", n + "/conv2")
    hw = Z.slice_(g, g.node("Shape", [z], name=n + "/Shape"), [2], [4], [0], name=n)  # [h, w]
    z = g.node("Reshape", [z, Z.sconst(g, [0, hid, -1], n)], name=n + "/Reshape")
    z = g.node("Transpose", [z], name=n + "/Transpose", perm=[0, 2, 1])
    for i in range(c["depth"]):
        p = "%s/svtr_block.%d" % (n, i)
        a = svtr_attention(g, Z.layer_norm(g, z, hid, p + "/norm1"), hid, c["heads"], p + "/mixer")
        z = g.node("Add", [z, a], name=p + "/Add")
        m = Z.dense(g, Z.layer_norm(g, z, hid, p + "/norm2"), hid, 2 * hid, p + "/mlp/fc1")
        m = Z.gelu_erf(g, m, p + "/mlp/act")
        m = Z.dense(g, m, 2 * hid, hid, p + "/mlp/fc2")
        z = g.node("Add", [z, m], name=p + "/Add")
    z = Z.layer_norm(g, z, hid, n + "/norm", eps=1e-6)
    z = g.node("Reshape", [z, Z.shape_concat(g, [0, hw, hid], n)], name=n + "/Reshape")
    z = g.node("Transpose", [z], name=n + "/Transpose", perm=[0, 3, 1, 2])
    z = conv_bn(g, z, hid, C, 1, 1, 1, "silu", n + "/conv3")
    z = g.node("Concat", [short, z], name=n + "/Concat", axis=1)
    z = conv_bn(g, z, 2 * C, C // 8, 3, 1, 1, "silu", n + "/conv4")
    z = conv_bn(g, z, C // 8, dims, 1, 1, 1, "silu", n + "/conv1x1")

    s = Z.squeeze(g, z, [2], "/neck/encoder_reshape")
    s = g.node("Transpose", [s], name="/neck/encoder_reshape/Transpose", perm=[0, 2, 1])
    logits = Z.dense(g, s, dims, CLASSES, "/head/fc", gain=c["head_gain"])
    prob = g.node("Softmax", [logits], name="/head/Softmax", axis=2)
    g.nodes.append(Z.helper.make_node("Identity", [prob], ["softmax_0.tmp_0"], name="/Identity"))
    g.output("softmax_0.tmp_0", ["batch", None, CLASSES])
    return g.model(producer="PaddlePaddle", producer_version="2.4.2")
