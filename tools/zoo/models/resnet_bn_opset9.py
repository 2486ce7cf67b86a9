"""ResNet-18 as torch.onnx writes it at opset 9 with BatchNorm kept as separate nodes
(torch 1.2-1.4 era export with training=TrainingMode.PRESERVE / do_constant_folding=False).

Imitates: torchvision resnet18 -> torch.onnx.export(opset_version=9, dynamic_axes={"input":
{0: "batch"}}) of a model whose stem activation was swapped for nn.ReLU6 (a common edit
for quantization-friendly backbones).
Covers: Conv without bias -> BatchNormalization-9 node (epsilon 1e-5, momentum 0.9) -> Relu;
the stem's ReLU6 as opset-9 Clip with min/max *attributes*; MaxPool 3x3 stride 2 pad 1;
BasicBlocks with residual Add then Relu, 1x1 stride-2 downsample Conv + BN; GlobalAveragePool
-> Flatten -> Gemm(transB=1); weights as initializers; symbolic batch.
Running statistics are calibrated (TracedGraph), so activations stay O(1).
full: 1x3x224x224, widths 64..512, 1000 classes (~1.8 GMAC). small: 1x3x32x32, widths 8..64,
10 classes.
"""
import numpy as np
from zoolib import TracedGraph, clip, conv2d, bn, set_output

META = {
    "about": "ResNet-18 torch.onnx opset 9: Conv + BatchNormalization nodes, Clip-9 attrs, MaxPool, Add, Flatten, Gemm",
    "dims_small": {"batch": 1}, "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}


def conv_bn(g, x, cin, cout, k, stride, pad, conv, bnn, gain):
    y = conv2d(g, x, cin, cout, k, stride, pads=pad, bias=False, gain=gain, name="/" + conv.replace(".", "/"),
               wname=conv)
    return bn(g, y, cout, name="/" + bnn.replace(".", "/"), wname=bnn)


def basic_block(g, x, cin, cout, stride, p):
    y = conv_bn(g, x, cin, cout, 3, stride, 1, p + ".conv1", p + ".bn1", np.sqrt(2.0))
    y = g.node("Relu", [y], name="/" + p.replace(".", "/") + "/relu/Relu")
    y = conv_bn(g, y, cout, cout, 3, 1, 1, p + ".conv2", p + ".bn2", 1.0)
    sc = x
    if stride != 1 or cin != cout:
        sc = conv_bn(g, x, cin, cout, 1, stride, 0, p + ".downsample.0", p + ".downsample.1", 1.0)
    y = g.node("Add", [y, sc], name="/" + p.replace(".", "/") + "/Add")
    return g.node("Relu", [y], name="/" + p.replace(".", "/") + "/relu_1/Relu")


def build(size="small"):
    full = size == "full"
    res, classes = (224, 1000) if full else (32, 10)
    w = [64, 128, 256, 512] if full else [8, 16, 32, 64]
    g = TracedGraph("torch-jit-export", 9, seed=29, dims={"batch": 2 if full else 16})
    x = g.input("input", ["batch", 3, res, res])
    y = conv_bn(g, x, 3, w[0], 7, 2, 3, "conv1", "bn1", np.sqrt(2.0))
    y = clip(g, y, 0.0, 6.0, "/relu")  # opset 9: Clip(min=0, max=6) attributes
    y = g.node("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = w[0]
    for li, c in enumerate(w):
        for bi in range(2):
            y = basic_block(g, y, cin, c, 2 if (bi == 0 and li > 0) else 1, "layer%d.%d" % (li + 1, bi))
            cin = c
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = g.node("Flatten", [y], name="/Flatten", axis=1)
    fw = g.weight((classes, cin), "fc.weight", scale=1.5 / np.sqrt(cin))
    fb = g.const((0.02 * g.rng.standard_normal(classes)).astype(np.float32), "fc.bias")
    y = g.node("Gemm", [y, fw, fb], name="/fc/Gemm", alpha=1.0, beta=1.0, transB=1)
    set_output(g, y, "output", ["batch", classes])
    return g.model(producer_version="1.3")
