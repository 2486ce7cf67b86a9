"""A U-Net for segmentation, as torch.onnx (opset 11) exports the usual PyTorch U-Net
(milesial/Pytorch-UNet style, transposed-conv upsampling) with dynamic H/W.

Imitates: UNet(n_channels=3, n_classes=1, bilinear=False) with base width 32, exported with
torch.onnx.export(opset_version=11, training=TrainingMode.PRESERVE, dynamic_axes on batch,
height, width), so BatchNormalization stays a node.
Covers: DoubleConv (Conv 3x3 -> BatchNormalization -> Relu, twice) per level, MaxPool 2x2 down
(4 levels + bottleneck), ConvTranspose(2, stride 2) up, Concat skip connections (skip first),
final 1x1 Conv + Sigmoid; input [batch, 3, height, width] with symbolic batch/height/width
(multiples of 16).
full: 1x3x256x256, widths 32..512 (~14 GFLOP). small: 1x3x32x32, widths 8..128.
"""
from zoolib import TracedGraph, conv_bn_act, conv2d, conv_transpose, set_output

META = {
    "about": "U-Net (torch.onnx opset 11): Conv-BN-Relu x2, MaxPool, ConvTranspose, Concat skips, Sigmoid",
    "dims_small": {"batch": 1, "height": 32, "width": 32},
    "dims_full": {"batch": 1, "height": 256, "width": 256},
    "rtol": 1e-3, "atol": 1e-4,
}


def double_conv(g, x, cin, cout, name):
    for i, (a, b) in enumerate(((cin, cout), (cout, cout))):
        p = "%s/double_conv/double_conv.%d" % (name, 3 * i)
        x = conv_bn_act(g, x, a, b, 3, act_kind="relu", bn_mode="node", name=p,
                        bn_name="%s/double_conv/double_conv.%d" % (name, 3 * i + 1),
                        act_name="%s/double_conv/double_conv.%d" % (name, 3 * i + 2))
    return x


def up(g, x, skip, cin, name):
    """nn.ConvTranspose2d(cin, cin // 2, 2, stride=2), cat([skip, x]), DoubleConv(cin, cin // 2)."""
    y = conv_transpose(g, x, cin, cin // 2, 2, name + "/up", wname=name.strip("/") + ".up")
    y = g.node("Concat", [skip, y], name=name + "/Concat", axis=1)
    return double_conv(g, y, cin, cin // 2, name + "/conv")


def build(size="small"):
    full = size == "full"
    res, base = (256, 32) if full else (32, 8)
    g = TracedGraph("main_graph", 11, seed=17, dims={"batch": 1 if full else 16, "height": res, "width": res})
    x = g.input("input", ["batch", 3, "height", "width"])
    c = [base * 2 ** i for i in range(5)]
    skips = [double_conv(g, x, 3, c[0], "/inc")]
    for i in range(1, 5):
        y = g.node("MaxPool", [skips[-1]], name="/down%d/maxpool_conv/maxpool_conv.0/MaxPool" % i,
                   kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=0)
        skips.append(double_conv(g, y, c[i - 1], c[i], "/down%d/maxpool_conv/maxpool_conv.1" % i))
    y = skips.pop()
    for i in range(1, 5):
        y = up(g, y, skips.pop(), c[5 - i], "/up%d" % i)
    y = conv2d(g, y, c[0], 1, 1, pads=0, name="/outc/conv", out_std=2.0)
    y = g.node("Sigmoid", [y], name="/Sigmoid")
    set_output(g, y, "output", ["batch", 1, "height", "width"])
    return g.model(producer_version="1.13.1")
