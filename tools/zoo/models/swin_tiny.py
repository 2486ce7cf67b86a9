"""Swin-T (timm swin_tiny_patch4_window7_224) as torch.onnx (opset 14, do_constant_folding=False)
exports it.

Imitates: timm's SwinTransformer with dynamic batch. Covers: 4x4/4 patch-embed Conv + Flatten +
Transpose, LayerNorm written out (ReduceMean/Sub/Pow/Sqrt/Div), window partition/reverse as
6-D Reshape/Transpose, torch.roll as Slice+Concat per axis (shifted windows), qkv Reshape to 5-D +
Transpose + Gather(0/1/2), relative position bias as Gather on a constant table with a constant
index -> Reshape -> Transpose -> Unsqueeze, shifted-window attention mask added through a 5-D
Reshape + Add, Softmax, patch merging with strided Slice (steps 2) + Concat + LN + bias-free Linear,
GELU (Erf), final ReduceMean over tokens. B from Shape -> Gather.
full: 1x3x224x224, depths (2,2,4,2) (Swin-T has (2,2,6,2)), C=96, heads (3,6,12,24), window 7.
small: 1x3x56x56, depths (2,2), C=16, heads (1,2), window 7.
"""
import numpy as np
from zoolib import (Graph, layer_norm, gelu_erf, dense, fscalar, set_output, sconst, dim_of,
                    shape_concat, slice_, unsqueeze)

META = {"about": "Swin-T window attention (opset 14, rolled shifted windows, rel-pos Gather)",
        "dims_small": {"batch": 1}, "dims_full": {"batch": 1}, "rtol": 1e-3, "atol": 1e-4}


def rel_index(ws):
    c = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    r = (c[:, :, None] - c[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    return (r[..., 0] * (2 * ws - 1) + r[..., 1]).reshape(-1).astype(np.int64)


def shift_mask(H, W, ws, s):
    img = np.zeros((H, W))
    cnt = 0
    for h in (slice(0, -ws), slice(-ws, -s), slice(-s, None)):
        for w in (slice(0, -ws), slice(-ws, -s), slice(-s, None)):
            img[h, w] = cnt
            cnt += 1
    win = img.reshape(H // ws, ws, W // ws, ws).transpose(0, 2, 1, 3).reshape(-1, ws * ws)
    m = win[:, None, :] - win[:, :, None]
    return np.where(m != 0, -100.0, 0.0).astype(np.float32)


def roll(g, x, shift, H, name):
    """torch.roll(x, (shift, shift), (1, 2)) -> per axis: Slice tail, Slice head, Concat."""
    for ax in (1, 2):
        k = (-shift) % H
        a = slice_(g, x, [k], [2 ** 62], [ax], name=name)
        b = slice_(g, x, [0], [k], [ax], name=name)
        x = g.node("Concat", [a, b], name=name + "/Concat", axis=ax)
    return x


def block(g, x, H, C, nh, ws, shift, name):
    N = ws * ws
    hd = C // nh
    B = ("scalar", dim_of(g, x, 0, name))
    sc = x
    y = layer_norm(g, x, C, name + "/norm1")
    y = g.node("Reshape", [y, shape_concat(g, [B, H, H, C], name)], name=name + "/Reshape")
    if shift:
        y = roll(g, y, -shift, H, name + "/roll")
    y = g.node("Reshape", [y, shape_concat(g, [B, H // ws, ws, H // ws, ws, C], name)], name=name + "/Reshape")
    y = g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 1, 3, 2, 4, 5])
    y = g.node("Reshape", [y, sconst(g, [-1, ws, ws, C], name)], name=name + "/Reshape")
    y = g.node("Reshape", [y, sconst(g, [-1, N, C], name)], name=name + "/Reshape")
    a = name + "/attn"
    Bw = ("scalar", dim_of(g, y, 0, a))
    qkv = dense(g, y, C, 3 * C, a + "/qkv")
    qkv = g.node("Reshape", [qkv, shape_concat(g, [Bw, N, 3, nh, hd], a)], name=a + "/Reshape")
    qkv = g.node("Transpose", [qkv], name=a + "/Transpose", perm=[2, 0, 3, 1, 4])
    q, k, v = [g.node("Gather", [qkv, sconst(g, i, a)], name=a + "/Gather", axis=0) for i in range(3)]
    q = g.node("Mul", [q, fscalar(g, hd ** -0.5, a)], name=a + "/Mul")
    kt = g.node("Transpose", [k], name=a + "/Transpose", perm=[0, 1, 3, 2])
    s = g.node("MatMul", [q, kt], name=a + "/MatMul")
    table = g.const((0.02 * g.rng.standard_normal(((2 * ws - 1) ** 2, nh))).astype(np.float32),
                    a.strip("/").replace("/", ".") + ".relative_position_bias_table")
    idx = g.const(rel_index(ws), a.strip("/").replace("/", ".") + ".relative_position_index")
    bias = g.node("Gather", [table, idx], name=a + "/Gather", axis=0)
    bias = g.node("Reshape", [bias, sconst(g, [N, N, -1], a)], name=a + "/Reshape")
    bias = g.node("Transpose", [bias], name=a + "/Transpose", perm=[2, 0, 1])
    bias = unsqueeze(g, bias, [0], a)
    s = g.node("Add", [s, bias], name=a + "/Add")
    if shift:
        nW = (H // ws) ** 2
        mask = g.const(shift_mask(H, H, ws, shift), name.strip("/").replace("/", ".") + ".attn_mask")
        s = g.node("Reshape", [s, shape_concat(g, [-1, nW, nh, N, N], a)], name=a + "/Reshape")
        m = unsqueeze(g, unsqueeze(g, mask, [1], a), [0], a)
        s = g.node("Add", [s, m], name=a + "/Add")
        s = g.node("Reshape", [s, shape_concat(g, [-1, nh, N, N], a)], name=a + "/Reshape")
    p = g.node("Softmax", [s], name=a + "/Softmax", axis=-1)
    o = g.node("MatMul", [p, v], name=a + "/MatMul")
    o = g.node("Transpose", [o], name=a + "/Transpose", perm=[0, 2, 1, 3])
    o = g.node("Reshape", [o, shape_concat(g, [Bw, N, C], a)], name=a + "/Reshape")
    o = dense(g, o, C, C, a + "/proj")
    o = g.node("Reshape", [o, sconst(g, [-1, ws, ws, C], name)], name=name + "/Reshape")
    o = g.node("Reshape", [o, shape_concat(g, [B, H // ws, H // ws, ws, ws, C], name)], name=name + "/Reshape")
    o = g.node("Transpose", [o], name=name + "/Transpose", perm=[0, 1, 3, 2, 4, 5])
    o = g.node("Reshape", [o, shape_concat(g, [B, H, H, -1], name)], name=name + "/Reshape")
    if shift:
        o = roll(g, o, shift, H, name + "/roll")
    o = g.node("Reshape", [o, shape_concat(g, [B, H * H, C], name)], name=name + "/Reshape")
    x = g.node("Add", [sc, o], name=name + "/Add")
    y = layer_norm(g, x, C, name + "/norm2")
    y = dense(g, y, C, 4 * C, name + "/mlp/fc1")
    y = gelu_erf(g, y, name + "/mlp/act")
    y = dense(g, y, 4 * C, C, name + "/mlp/fc2")
    return g.node("Add", [x, y], name=name + "/Add")


def merge(g, x, H, C, name):
    B = ("scalar", dim_of(g, x, 0, name))
    x = g.node("Reshape", [x, shape_concat(g, [B, H, H, C], name)], name=name + "/Reshape")
    parts = [slice_(g, x, [i, j], [2 ** 62, 2 ** 62], [1, 2], [2, 2], name=name)
             for i, j in ((0, 0), (1, 0), (0, 1), (1, 1))]
    x = g.node("Concat", parts, name=name + "/Concat", axis=-1)
    x = g.node("Reshape", [x, shape_concat(g, [B, -1, 4 * C], name)], name=name + "/Reshape")
    x = layer_norm(g, x, 4 * C, name + "/norm")
    return dense(g, x, 4 * C, 2 * C, name + "/reduction", bias=False)


def build(size="small"):
    full = size == "full"
    res, depths, C, heads = (224, (2, 2, 4, 2), 96, (3, 6, 12, 24)) if full else (56, (2, 2), 16, (1, 2))
    ws = 7
    g = Graph("main_graph", 14, seed=13)
    x = g.input("input", ["batch", 3, res, res])
    y = g.conv(x, 3, C, 4, stride=4, pad=0, name="/patch_embed/proj/Conv")
    y = g.node("Flatten", [y], name="/patch_embed/Flatten", axis=2) if False else \
        g.node("Reshape", [y, shape_concat(g, [("scalar", dim_of(g, y, 0, "/patch_embed")), C, -1], "/patch_embed")],
               name="/patch_embed/Reshape")
    y = g.node("Transpose", [y], name="/patch_embed/Transpose", perm=[0, 2, 1])
    y = layer_norm(g, y, C, "/patch_embed/norm")
    H = res // 4
    for s, d in enumerate(depths):
        if s > 0:
            y = merge(g, y, H, C, "/layers/layers.%d/downsample" % (s - 1))
            H, C = H // 2, C * 2
        for b in range(d):
            sh = 3 if (b % 2 == 1 and H > ws) else 0
            y = block(g, y, H, C, heads[s], ws, sh, "/layers/layers.%d/blocks/blocks.%d" % (s, b))
    y = layer_norm(g, y, C, "/norm")
    y = g.node("ReduceMean", [y], name="/ReduceMean", axes=[1], keepdims=0)
    y = dense(g, y, C, 1000, "/head")
    set_output(g, y, "output", ["batch", 1000])
    return g.model(producer_version="1.13.1")
