"""A small MobileNetV2-style classifier with squeeze-excitation, as an older torch.onnx (opset 11)
exported it with every weight as a Constant node.

Imitates: a torch 1.x nn.Module (MobileNetV2 blocks at width 0.5 plus SE) exported with
torch.onnx.export(opset_version=11, do_constant_folding=False) so parameters became Constant
nodes, with `x = x.view(x.size(0), -1)` ahead of the classifier and dynamic_axes on the batch.
Covers: weights, biases, Clip bounds and shape pieces all as Constant nodes, ReLU6 as Clip with
min/max inputs (opset 11), depthwise Conv, inverted residuals with residual Add, SE
(GlobalAveragePool -> 1x1 Conv -> Relu -> 1x1 Conv -> Sigmoid -> Mul), folded BN, the
x.view(x.size(0), -1) subgraph (Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape), Gemm
classifier, symbolic batch "batch".
full: 1x3x128x128, width 0.5, 1000 classes (~1 ms in ONNX Runtime). small: 2x3x32x32, width 0.25,
repeats capped at 2, 10 classes.
"""
import numpy as np
from zoolib import TracedGraph, conv_bn_act, inverted_residual, make_divisible, shape_reshape, set_output

# MobileNetV2: expansion t, channels c, repeats n, stride s, SE on this stage
CONFIG = [(1, 16, 1, 1, False), (6, 24, 2, 2, False), (6, 32, 3, 2, True), (6, 64, 4, 2, True),
          (6, 96, 3, 1, True), (6, 160, 3, 2, True), (6, 320, 1, 1, False)]

META = {
    "about": "MobileNetV2-0.5 + SE (torch.onnx opset 11, Constant-node weights, view(size(0), -1))",
    "dims_small": {"batch": 2}, "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}


def build(size="small"):
    full = size == "full"
    width, res, classes, last = (0.5, 128, 1000, 1280) if full else (0.25, 32, 10, 256)
    ch = lambda c: make_divisible(c * width, 8)  # noqa: E731
    g = TracedGraph("torch-jit-export", 11, weights="constant", seed=7, dims={"batch": 2 if full else 8})
    x = g.input("input", ["batch", 3, res, res])
    cin = ch(32)
    y = conv_bn_act(g, x, 3, cin, 3, 2, act_kind="relu6", name="/features/features.0/features.0.0",
                    act_name="/features/features.0/features.0.2")
    i = 1
    for t, c, n, s, se in CONFIG:
        c = ch(c)
        for r in range(n if full else min(n, 2)):
            exp = cin * t
            y = inverted_residual(g, y, cin, exp, c, 3, s if r == 0 else 1, "relu6",
                                  se_squeeze=make_divisible(exp // 4, 8) if se else None,
                                  se_kw=dict(pool="gap", inner="relu", gate="sigmoid"),
                                  name="/features/features.%d" % i)
            cin, i = c, i + 1
    y = conv_bn_act(g, y, cin, last, 1, act_kind="relu6", pads=0, name="/features/features.%d/features.%d.0" % (i, i),
                    act_name="/features/features.%d/features.%d.2" % (i, i))
    y = g.node("GlobalAveragePool", [y], name="/GlobalAveragePool")
    y = shape_reshape(g, y, [-1], name="")  # x.view(x.size(0), -1)
    w = g.weight((classes, last), "classifier.1.weight", scale=1.0 / np.sqrt(last))
    b = g.const((0.02 * g.rng.standard_normal(classes)).astype(np.float32), "classifier.1.bias")
    y = g.node("Gemm", [y, w, b], name="/classifier/classifier.1/Gemm", alpha=1.0, beta=1.0, transB=1)
    set_output(g, y, "output", ["batch", classes])
    return g.model(producer_version="1.8.1")
