"""MobileNetV3-Large, as torch.onnx (opset 13) exports torchvision's mobilenet_v3_large in eval mode.

Imitates: torchvision.models.mobilenet_v3_large -> torch.onnx.export(opset_version=13,
dynamic_axes={"input": {0: "batch"}}).
Covers: inverted residuals with depthwise Conv (group = channels), 3x3 and 5x5 kernels,
squeeze-excitation (GlobalAveragePool -> 1x1 Conv -> Relu -> 1x1 Conv -> HardSigmoid(1/6, 0.5)
-> Mul with the [N, C, 1, 1] gate), HardSwish written out as x * HardSigmoid(x) (torch.onnx before
opset 14), ReLU, BatchNorm folded into Conv (weights and bias), residual Add, GlobalAveragePool,
Flatten + Gemm classifier (Linear -> HardSwish -> Linear), symbolic batch "batch",
torchvision node names ("/features/features.4/block/block.2/fc1/Conv").
full: 1x3x224x224, 1000 classes (~0.22 GFLOP). small: 2x3x64x64, width 0.25, 10 classes, same
15-block configuration.
"""
import numpy as np
from zoolib import TracedGraph, conv_bn_act, inverted_residual, act, make_divisible, set_output

# torchvision's mobilenet_v3_large config: kernel, expanded, out, use_se, activation, stride
CONFIG = [(3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
          (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
          (3, 240, 80, False, "hardswish", 2), (3, 200, 80, False, "hardswish", 1),
          (3, 184, 80, False, "hardswish", 1), (3, 184, 80, False, "hardswish", 1),
          (3, 480, 112, True, "hardswish", 1), (3, 672, 112, True, "hardswish", 1),
          (5, 672, 160, True, "hardswish", 2), (5, 960, 160, True, "hardswish", 1),
          (5, 960, 160, True, "hardswish", 1)]

META = {
    "about": "MobileNetV3-Large (torch.onnx opset 13): depthwise, SE, HardSigmoid-HardSwish, folded BN, Gemm",
    "dims_small": {"batch": 2}, "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}


def build(size="small"):
    full = size == "full"
    width, res, classes, last = (1.0, 224, 1000, 1280) if full else (0.25, 64, 10, 128)
    g = TracedGraph("main_graph", 13, seed=3, dims={"batch": 2 if full else 8})  # calibration batch
    ch = lambda c: make_divisible(c * width, 8)  # noqa: E731
    x = g.input("input", ["batch", 3, res, res])
    cin = ch(16)
    y = conv_bn_act(g, x, 3, cin, 3, 2, act_kind="hardswish", name="/features/features.0/features.0.0",
                    act_name="/features/features.0/features.0.2")
    for i, (k, e, c, se, a, s) in enumerate(CONFIG):
        e, c = ch(e), ch(c)
        y = inverted_residual(g, y, cin, e, c, k, s, a, se_squeeze=make_divisible(e // 4, 8) if se else None,
                              se_kw=dict(pool="gap", inner="relu", gate="hardsigmoid"),
                              name="/features/features.%d" % (i + 1))
        cin = c
    n = len(CONFIG) + 1
    y = conv_bn_act(g, y, cin, 6 * cin, 1, act_kind="hardswish", pads=0, name="/features/features.%d/features.%d.0" % (n, n),
                    act_name="/features/features.%d/features.%d.2" % (n, n))
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = g.node("Flatten", [y], name="/Flatten", axis=1)
    w1 = g.weight((last, 6 * cin), "classifier.0.weight", scale=1.6 / np.sqrt(6 * cin))
    b1 = g.const((0.02 * g.rng.standard_normal(last)).astype(np.float32), "classifier.0.bias")
    y = g.node("Gemm", [y, w1, b1], name="/classifier/classifier.0/Gemm", alpha=1.0, beta=1.0, transB=1)
    y = act(g, y, "hardswish", "/classifier/classifier.1")
    w2 = g.weight((classes, last), "classifier.3.weight", scale=1.0 / np.sqrt(last))
    b2 = g.const((0.02 * g.rng.standard_normal(classes)).astype(np.float32), "classifier.3.bias")
    y = g.node("Gemm", [y, w2, b2], name="/classifier/classifier.3/Gemm", alpha=1.0, beta=1.0, transB=1)
    set_output(g, y, "output", ["batch", classes])
    return g.model()
