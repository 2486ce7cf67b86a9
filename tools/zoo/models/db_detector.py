"""A DB text detector (PaddleOCR det_mv3_db: MobileNetV3-large x0.5 + DBFPN + DBHead), as
Paddle2ONNX (opset 11) exports it: every weight a Constant node, BatchNormalization unfolded.

Imitates: PaddleOCR's ch_ppocr_mobile det model (MobileNetV3 scale 0.5 with SE, DBFPN
out_channels 96, DBHead) -> paddle2onnx --opset_version 11, input x [batch, 3, height, width].
Covers: Constant-node weights, Conv + BatchNormalization + act (ConvBNLayer), HardSwish written
as x * Clip(x + 3, 0, 6) / 6 (Add, Clip with min/max inputs, Mul, Div), ReLU, PaddleOCR's
ResidualUnit (expand conv always present, depthwise 3x3/5x5, SE = GlobalAveragePool -> Conv ->
Relu -> Conv -> HardSigmoid(0.2, 0.5) -> Mul, residual Add), four backbone levels (strides 4..32),
FPN: 1x1 laterals, top-down nearest Resize x2 + Add, 3x3 smoothing, nearest Resize x8/x4/x2
(opset 11 Resize: empty roi, Constant scales, asymmetric, floor), Concat of the four levels;
head Conv -> BN -> Relu -> ConvTranspose(2, stride 2) -> BN -> Relu -> ConvTranspose(2, stride 2)
-> Sigmoid. Symbolic batch, height, width (multiples of 32).
full: 1x3x640x640, scale 0.5 (~3 GFLOP). small: 1x3x64x64, scale 0.25, FPN width 32.
"""
from zoolib import (TracedGraph, act, bn, conv2d, conv_bn_act, conv_transpose, inverted_residual,
                    make_divisible, resize_nearest, set_output)

# PaddleOCR MobileNetV3 "large": kernel, expanded, out, SE, activation, stride
CONFIG = [(3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
          (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
          (3, 240, 80, False, "hardswish_clip", 2), (3, 200, 80, False, "hardswish_clip", 1),
          (3, 184, 80, False, "hardswish_clip", 1), (3, 184, 80, False, "hardswish_clip", 1),
          (3, 480, 112, True, "hardswish_clip", 1), (3, 672, 112, True, "hardswish_clip", 1),
          (5, 672, 160, True, "hardswish_clip", 2), (5, 960, 160, True, "hardswish_clip", 1),
          (5, 960, 160, True, "hardswish_clip", 1)]

META = {
    "about": "PaddleOCR DB text detector (Paddle2ONNX opset 11): MobileNetV3+SE, FPN with Resize, ConvTranspose head",
    "dims_small": {"batch": 1, "height": 64, "width": 64},
    "dims_full": {"batch": 1, "height": 640, "width": 640},
    "rtol": 1e-3, "atol": 1e-4,
}


def build(size="small"):
    full = size == "full"
    res, fpn = (640, 96) if full else (64, 32)
    scale = 0.5 if full else 0.25
    ch = lambda c: make_divisible(c * scale, 8)  # noqa: E731
    g = TracedGraph("paddle-infer", 11, weights="constant", seed=11,
                    dims={"batch": 2 if full else 32, "height": res, "width": res})
    x = g.input("x", ["batch", 3, "height", "width"])
    cin = ch(16)
    y = conv_bn_act(g, x, 3, cin, 3, 2, act_kind="hardswish_clip", bn_mode="node",
                    name="/backbone/conv/conv", bn_name="/backbone/conv/bn", act_name="/backbone/conv")
    feats, stage, j = [], 0, 0
    for i, (k, e, c, se, a, s) in enumerate(CONFIG):
        if s == 2 and i > 2:  # PaddleOCR starts a new stage at each stride-2 block after the first few
            feats.append((y, cin))
            stage, j = stage + 1, 0
        e, c = ch(e), ch(c)
        y = inverted_residual(g, y, cin, e, c, k, s, a, se_squeeze=e // 4 if se else None,
                              se_kw=dict(pool="gap", inner="relu", gate="hardsigmoid_paddle"),
                              bn_mode="node", name="/backbone/stages.%d/%d" % (stage, j), style="paddle",
                              expand=True)
        cin, j = c, j + 1
    y = conv_bn_act(g, y, cin, ch(960), 1, act_kind="hardswish_clip", bn_mode="node", pads=0,
                    name="/backbone/stages.3/%d/conv" % j, bn_name="/backbone/stages.3/%d/bn" % j,
                    act_name="/backbone/stages.3/%d" % j)
    feats.append((y, ch(960)))

    # DBFPN
    (c2, n2), (c3, n3), (c4, n4), (c5, n5) = feats
    in2, in3, in4, in5 = (conv2d(g, f, n, fpn, 1, pads=0, bias=False, name="/neck/in%d_conv" % (i + 2))
                          for i, (f, n) in enumerate(feats))
    out4 = g.node("Add", [in4, resize_nearest(g, in5, 2, "/neck/up5")], name="/neck/Add")
    out3 = g.node("Add", [in3, resize_nearest(g, out4, 2, "/neck/up4")], name="/neck/Add")
    out2 = g.node("Add", [in2, resize_nearest(g, out3, 2, "/neck/up3")], name="/neck/Add")
    p5, p4, p3, p2 = (conv2d(g, t, fpn, fpn // 4, 3, bias=False, name="/neck/p%d_conv" % lv)
                      for t, lv in ((in5, 5), (out4, 4), (out3, 3), (out2, 2)))
    p5 = resize_nearest(g, p5, 8, "/neck/p5_up")
    p4 = resize_nearest(g, p4, 4, "/neck/p4_up")
    p3 = resize_nearest(g, p3, 2, "/neck/p3_up")
    fuse = g.node("Concat", [p5, p4, p3, p2], name="/neck/Concat", axis=1)

    # DBHead (binarize branch; inference returns the shrink map)
    h = fpn // 4
    y = conv2d(g, fuse, fpn, h, 3, bias=False, name="/head/binarize/conv1")
    y = act(g, bn(g, y, h, "/head/binarize/conv_bn1"), "relu", "/head/binarize/conv_bn1")
    y = conv_transpose(g, y, h, h, 2, "/head/binarize/conv2")
    y = act(g, bn(g, y, h, "/head/binarize/conv_bn2"), "relu", "/head/binarize/conv_bn2")
    y = conv_transpose(g, y, h, 1, 2, "/head/binarize/conv3", out_std=2.0)
    y = g.node("Sigmoid", [y], name="/head/binarize/Sigmoid")
    set_output(g, y, "sigmoid_0.tmp_0", ["batch", 1, "height", "width"])
    return g.model(producer="PaddlePaddle", producer_version="2.4.2")
