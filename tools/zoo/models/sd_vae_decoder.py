"""A Stable-Diffusion-VAE-decoder-like stack (diffusers AutoencoderKL.decoder), as torch.onnx
(opset 14) exports it with dynamic latent H/W, at small widths.

Imitates: torch.onnx.export(vae.decoder, latent, opset_version=14, dynamic_axes={2: h, 3: w})
of diffusers' Decoder (conv_in, UNetMidBlock2D = ResnetBlock2D + single-head Attention +
ResnetBlock2D, UpDecoderBlock2D with Upsample2D, conv_norm_out/SiLU/conv_out), with one
addition: a "latent skip" (F.interpolate(z, scale_factor=2) -> 1x1 conv) that the first
Upsample2D is called against with output_size=skip.shape[-2:] and then added to, the way
diffusers' UNet passes upsample_size.
Covers: GroupNorm(32 groups, eps 1e-6) as torch exports it at opset <= 17: Reshape(x, [0, G, -1])
-> InstanceNormalization(ones(G), zeros(G)) -> Reshape(Shape(x)) -> Mul(gamma [C,1,1]) ->
Add(beta [C,1,1]); SiLU as x * Sigmoid(x); ResnetBlock2D (GN/SiLU/conv3x3 twice, 1x1
conv_shortcut when channels change, residual Add); Attention over H*W tokens: Shape-derived
Reshape [B, C, H*W] -> Transpose -> q/k/v MatMul+Add -> MatMul(q, Transpose(k)) -> Mul(scale)
-> Softmax -> MatMul -> to_out MatMul+Add -> Transpose -> Reshape(Shape(x)) -> residual Add;
F.interpolate(scale_factor=2.0, mode='nearest') as Resize(x, '', scales) and
F.interpolate(x, size=skip.shape[-2:]) as Resize(x, '', '', sizes) with sizes =
Concat(Shape(x)[0:2], Shape(skip)[-2:]) (runtime sizes); latent input [1, 4, h, w].
full: 32x32 latent -> 1x3x256x256, widths 128/128/64/32 (~22 GFLOP). small: 8x8 latent ->
64x64, width 16 (GroupNorm 4 groups).
"""
import numpy as np

import zoolib as Z

META = {
    "about": "SD-VAE-decoder-like (torch.onnx opset 14): GroupNorm via InstanceNorm, SiLU, mid attention, Resize scales/sizes",
    "dims_small": {"h": 8, "w": 8},
    "dims_full": {"h": 32, "w": 32},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(ch=[16, 16, 16, 16], groups=4),
       "full": dict(ch=[128, 128, 64, 32], groups=32)}


def group_norm(g, x, c, groups, name, eps=1e-6):
    wn = name.strip("/").replace("/", ".")
    y = g.node("Reshape", [x, Z.sconst(g, [0, groups, -1], name)], name=name + "/Reshape")
    ones = g.const(np.ones(groups, np.float32), name + "/Constant_ones", as_constant=True)
    zeros = g.const(np.zeros(groups, np.float32), name + "/Constant_zeros", as_constant=True)
    y = g.node("InstanceNormalization", [y, ones, zeros], name=name + "/InstanceNormalization", epsilon=eps)
    y = g.node("Reshape", [y, g.node("Shape", [x], name=name + "/Shape")], name=name + "/Reshape")
    gamma = g.const((1.0 + 0.1 * g.rng.standard_normal((c, 1, 1))).astype(np.float32), wn + ".weight")
    beta = g.const((0.1 * g.rng.standard_normal((c, 1, 1))).astype(np.float32), wn + ".bias")
    y = g.node("Mul", [y, gamma], name=name + "/Mul")
    return g.node("Add", [y, beta], name=name + "/Add")


def silu(g, x, name):
    return g.node("Mul", [x, g.node("Sigmoid", [x], name=name + "/Sigmoid")], name=name + "/Mul")


def conv(g, x, cin, cout, k, name, gain=1.0):
    return Z.conv2d(g, x, cin, cout, k, pads=k // 2, gain=gain, name=name,
                    wname=name.strip("/").replace("/", "."))


def resnet(g, x, cin, cout, groups, name):
    h = silu(g, group_norm(g, x, cin, groups, name + "/norm1"), name + "/nonlinearity")
    h = conv(g, h, cin, cout, 3, name + "/conv1")
    h = silu(g, group_norm(g, h, cout, groups, name + "/norm2"), name + "/nonlinearity_1")
    h = conv(g, h, cout, cout, 3, name + "/conv2", gain=0.5)
    if cin != cout:
        x = conv(g, x, cin, cout, 1, name + "/conv_shortcut")
    return g.node("Add", [x, h], name=name + "/Add")


def attention(g, x, c, groups, name):
    h = group_norm(g, x, c, groups, name + "/group_norm")
    # hidden_states.view(batch, channel, height * width).transpose(1, 2)
    shp = Z.shape_concat(g, [Z.size_prefix(g, h, 2, name), -1], name)
    h = g.node("Reshape", [h, shp], name=name + "/Reshape")
    h = g.node("Transpose", [h], name=name + "/Transpose", perm=[0, 2, 1])
    q = Z.dense(g, h, c, c, name + "/to_q")
    k = Z.dense(g, h, c, c, name + "/to_k")
    v = Z.dense(g, h, c, c, name + "/to_v")
    kt = g.node("Transpose", [k], name=name + "/Transpose", perm=[0, 2, 1])
    s = g.node("MatMul", [q, kt], name=name + "/MatMul")
    s = g.node("Mul", [s, Z.fscalar(g, 1.0 / np.sqrt(c), name)], name=name + "/Mul")
    p = g.node("Softmax", [s], name=name + "/Softmax", axis=-1)
    o = g.node("MatMul", [p, v], name=name + "/MatMul")
    o = Z.dense(g, o, c, c, name + "/to_out.0", gain=0.5)
    o = g.node("Transpose", [o], name=name + "/Transpose", perm=[0, 2, 1])
    o = g.node("Reshape", [o, g.node("Shape", [x], name=name + "/Shape")], name=name + "/Reshape")
    return g.node("Add", [o, x], name=name + "/Add")


def resize_scales(g, x, name):
    s = g.const(np.array([1, 1, 2, 2], np.float32), name + "/Constant_output_0", as_constant=True)
    return g.node("Resize", [x, "", s], name=name + "/Resize", mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor", cubic_coeff_a=-0.75)


def resize_like(g, x, skip, name):
    """F.interpolate(x, size=skip.shape[-2:], mode='nearest')."""
    head = Z.size_prefix(g, x, 2, name)
    tail = Z.slice_(g, g.node("Shape", [skip], name=name + "/Shape"), [-2], [np.iinfo(np.int64).max], [0], name=name)
    sizes = g.node("Concat", [head, tail], name=name + "/Concat", axis=0)
    return g.node("Resize", [x, "", "", sizes], name=name + "/Resize", mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor", cubic_coeff_a=-0.75)


def build(size="small"):
    c = CFG[size]
    ch, G = c["ch"], c["groups"]
    g = Z.Graph("main_graph", opset=14, seed=29)
    z = g.input("latent_sample", [1, 4, "h", "w"])
    h = conv(g, z, 4, ch[0], 3, "/conv_in")
    # latent skip at 2x: F.interpolate(z, scale_factor=2.0) -> 1x1 conv
    skip = conv(g, resize_scales(g, z, "/skip"), 4, ch[0], 1, "/skip_conv")

    m = "/mid_block"
    h = resnet(g, h, ch[0], ch[0], G, m + "/resnets.0")
    h = attention(g, h, ch[0], G, m + "/attentions.0")
    h = resnet(g, h, ch[0], ch[0], G, m + "/resnets.1")

    cin = ch[0]
    for i, co in enumerate(ch):
        p = "/up_blocks.%d" % i
        h = resnet(g, h, cin, co, G, p + "/resnets.0")
        cin = co
        if i == len(ch) - 1:
            break
        u = p + "/upsamplers.0"
        if i == 0:
            h = resize_like(g, h, skip, u)
            h = g.node("Add", [h, skip], name=u + "/Add")
        else:
            h = resize_scales(g, h, u)
        h = conv(g, h, co, co, 3, u + "/conv")

    h = silu(g, group_norm(g, h, cin, G, "/conv_norm_out"), "/conv_act")
    h = conv(g, h, cin, 3, 3, "/conv_out")
    Z.set_output(g, h, "sample", [1, 3, None, None])
    return g.model(producer_version="2.1.0")
