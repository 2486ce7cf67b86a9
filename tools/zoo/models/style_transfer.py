"""Johnson et al. fast neural style (TransformerNet), as torch.onnx (opset 11) exports it with
dynamic H/W.

Imitates: pytorch/examples fast_neural_style TransformerNet (ReflectionPad2d before every
conv, affine InstanceNorm2d), exported with torch.onnx.export(opset_version=11,
dynamic_axes={2: height, 3: width}); like the Lua original its first upsampling is a
ConvTranspose2d(3, stride 2, padding 1, output_padding 1), the second the PyTorch example's
UpsampleConvLayer (F.interpolate(scale_factor=2, mode='nearest') then reflection pad + conv),
and a final Tanh.
Covers: Pad(mode=reflect) with its pads as a Constant int64 node ahead of every Conv (pad
k // 2, 9x9 and 3x3 kernels, stride 1 and 2), InstanceNormalization (affine, eps 1e-5) after
every conv, Relu, 5 residual blocks (pad/conv/IN/relu/pad/conv/IN + Add), ConvTranspose with
output_padding, Resize nearest (opset 11: empty roi Constant, scales Constant,
asymmetric/floor), final 9x9 Conv + Tanh; input [1, 3, height, width].
full: 1x3x256x256, widths 32/64/128 (~20 GFLOP). small: 1x3x32x32, widths 8/16/32.
"""
import numpy as np

import zoolib as Z

META = {
    "about": "fast-neural-style (torch.onnx opset 11): reflect Pad, InstanceNorm, ConvTranspose, Resize, Tanh",
    "dims_small": {"height": 32, "width": 32},
    "dims_full": {"height": 256, "width": 256},
    "rtol": 1e-3, "atol": 1e-4,
}


def conv_layer(g, x, cin, cout, k, stride, name):
    """ConvLayer: ReflectionPad2d(k // 2) -> Conv2d(k, stride)."""
    p = k // 2
    pads = Z.sconst(g, [0, 0, p, p, 0, 0, p, p], name + "/reflection_pad")
    y = g.node("Pad", [x, pads], name=name + "/reflection_pad/Pad", mode="reflect")
    return Z.conv2d(g, y, cin, cout, k, stride, pads=0, name=name + "/conv2d",
                    wname=name.strip("/").replace("/", ".") + ".conv2d")


def inorm(g, x, c, name):
    r = g.rng
    wn = name.strip("/").replace("/", ".")
    s = g.const((1.0 + 0.1 * r.standard_normal(c)).astype(np.float32), wn + ".weight")
    b = g.const((0.1 * r.standard_normal(c)).astype(np.float32), wn + ".bias")
    return g.node("InstanceNormalization", [x, s, b], name=name + "/InstanceNormalization", epsilon=1e-5)


def relu(g, x, name):
    return g.node("Relu", [x], name=name + "/Relu")


def build(size="small"):
    full = size == "full"
    c1, c2, c3 = (32, 64, 128) if full else (8, 16, 32)
    g = Z.Graph("main_graph", opset=11, seed=23)
    x = g.input("input", [1, 3, "height", "width"])
    y = relu(g, inorm(g, conv_layer(g, x, 3, c1, 9, 1, "/conv1"), c1, "/in1"), "")
    y = relu(g, inorm(g, conv_layer(g, y, c1, c2, 3, 2, "/conv2"), c2, "/in2"), "")
    y = relu(g, inorm(g, conv_layer(g, y, c2, c3, 3, 2, "/conv3"), c3, "/in3"), "")
    for i in range(1, 6):
        p = "/res%d" % i
        r = relu(g, inorm(g, conv_layer(g, y, c3, c3, 3, 1, p + "/conv1"), c3, p + "/in1"), p)
        r = inorm(g, conv_layer(g, r, c3, c3, 3, 1, p + "/conv2"), c3, p + "/in2")
        y = g.node("Add", [r, y], name=p + "/Add")
    # deconv1: ConvTranspose2d(c3, c2, 3, stride=2, padding=1, output_padding=1) (Lua original)
    w = (g.rng.standard_normal((c3, c2, 3, 3)) * np.sqrt(1.0 / (c3 * 9 / 4))).astype(np.float32)
    b = (0.05 * g.rng.standard_normal(c2)).astype(np.float32)
    y = g.node("ConvTranspose", [y, g.const(w, "deconv1.weight"), g.const(b, "deconv1.bias")],
               name="/deconv1/ConvTranspose", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               output_padding=[1, 1], dilations=[1, 1], group=1)
    y = relu(g, inorm(g, y, c2, "/in4"), "")
    # deconv2: UpsampleConvLayer(c2, c1, 3, stride 1, upsample=2)
    r = g.const(np.zeros(0, np.float32), "/deconv2/Constant_output_0", as_constant=True)
    s = g.const(np.array([1, 1, 2, 2], np.float32), "/deconv2/Constant_1_output_0", as_constant=True)
    y = g.node("Resize", [y, r, s], name="/deconv2/Resize", mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor", cubic_coeff_a=-0.75)
    y = relu(g, inorm(g, conv_layer(g, y, c2, c1, 3, 1, "/deconv2"), c1, "/in5"), "")
    y = conv_layer(g, y, c1, 3, 9, 1, "/deconv3")
    y = g.node("Tanh", [y], name="/Tanh")
    Z.set_output(g, y, "output", [1, 3, "height", "width"])
    return g.model(producer_version="1.13.1")
