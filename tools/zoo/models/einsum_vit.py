"""A ViT encoder written with torch.einsum (timm-style fused qkv), as torch.onnx writes it at
opset 17.

Imitates torch.onnx.export(opset_version=17, dynamic_axes={0: batch}) of a ViT whose
attention is written with einsum (as in lucidrains' vit-pytorch and many research repos):
- patch embedding Conv (kernel = stride = patch), .flatten(2) (Shape -> Slice -> Concat ->
  Reshape), .transpose(1, 2); cls_token.expand(B, -1, -1) with the dynamic-expand subgraph
  (Equal/Where/ConstantOfShape, as vit_tiny), Concat, position-embedding Add;
- pre-norm blocks with the LayerNormalization op (opset 17, eps 1e-6);
- qkv = nn.Linear(d, 3d) (MatMul + Add) then qkv.chunk(3, -1) -> Split (split sizes as an
  input, opset >= 13); heads by x.view(x.size()[:-1] + (H, hd)) (Shape/Slice/Concat/Reshape);
- all blocks but the last: Transpose to [B, H, N, hd], q * hd**-0.5 (Mul), scores
  Einsum 'bhid,bhjd->bhij', Softmax(-1), context Einsum 'bhij,bhjd->bhid', Transpose back,
  Reshape to [B, N, d];
- the last block keeps [B, N, H, hd] with no Transposes: Einsum 'bnhd,bmhd->bhnm', Softmax,
  Einsum 'bhnm,bmhd->bnhd', Reshape;
- proj MatMul + Add, residual Adds, MLP fc1 -> GELU written out with Erf -> fc2;
- final LayerNormalization, cls token Gather(0, axis 1), head Gemm(transB=1).
Output logits [batch, classes].
Full: ViT-Small-ish, 224x224 patch 16 (197 tokens), d 384, 6 heads, 6 blocks, MLP 1536,
1000 classes (~4.6 GFLOP). Small: 32x32 patch 8 (17 tokens), d 48, 3 heads, 2 blocks, MLP 192,
10 classes.
"""
import os
import sys

import numpy as np

import zoolib as Z

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vit_tiny  # noqa: E402

META = {
    "about": "ViT with Einsum attention (torch.onnx opset 17): fused qkv Split, bhid/bnhd einsums, LayerNormalization",
    "dims_small": {"batch": 2},
    "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(img=32, patch=8, layers=2, d=48, heads=3, mlp=192, classes=10),
       "full": dict(img=224, patch=16, layers=6, d=384, heads=6, mlp=1536, classes=1000)}


def attention(g, x, d, heads, name, layout):
    hd = d // heads
    qkv = Z.dense(g, x, d, 3 * d, name + "/qkv")
    q, k, v = Z.split(g, qkv, [d, d, d], -1, name)

    def heads_view(t):
        shp = Z.shape_concat(g, [Z.size_prefix(g, t, -1, name), heads, hd], name)
        return g.node("Reshape", [t, shp], name=name + "/Reshape")

    q, k, v = heads_view(q), heads_view(k), heads_view(v)
    q = g.node("Mul", [q, Z.fscalar(g, hd ** -0.5, name)], name=name + "/Mul")
    if layout == "bhnd":
        q, k, v = (g.node("Transpose", [t], name=name + "/Transpose", perm=[0, 2, 1, 3]) for t in (q, k, v))
        s = g.node("Einsum", [q, k], name=name + "/Einsum", equation="bhid,bhjd->bhij")
        p = g.node("Softmax", [s], name=name + "/Softmax", axis=-1)
        o = g.node("Einsum", [p, v], name=name + "/Einsum", equation="bhij,bhjd->bhid")
        o = g.node("Transpose", [o], name=name + "/Transpose", perm=[0, 2, 1, 3])
    else:
        s = g.node("Einsum", [q, k], name=name + "/Einsum", equation="bnhd,bmhd->bhnm")
        p = g.node("Softmax", [s], name=name + "/Softmax", axis=-1)
        o = g.node("Einsum", [p, v], name=name + "/Einsum", equation="bhnm,bmhd->bnhd")
    shp = Z.shape_concat(g, [Z.size_prefix(g, o, -2, name), d], name)
    o = g.node("Reshape", [o, shp], name=name + "/Reshape")
    return Z.dense(g, o, d, d, name + "/proj")


def build(size):
    c = CFG[size]
    d, P = c["d"], c["patch"]
    ntok = (c["img"] // P) ** 2 + 1
    g = Z.Graph("main_graph", opset=17, seed=31)
    px = g.input("pixel_values", ["batch", 3, c["img"], c["img"]])

    pe = "/patch_embed"
    w = g.weight((d, 3, P, P), "patch_embed.proj.weight")
    b = g.const((0.02 * g.rng.standard_normal(d)).astype(np.float32), "patch_embed.proj.bias")
    x = g.node("Conv", [px, w, b], name=pe + "/proj/Conv", kernel_shape=[P, P], strides=[P, P],
               pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
    x = g.node("Reshape", [x, Z.shape_concat(g, [Z.size_prefix(g, x, 2, pe), -1], pe)], name=pe + "/Reshape")
    x = g.node("Transpose", [x], name=pe + "/Transpose", perm=[0, 2, 1])
    cls = g.const((0.5 * g.rng.standard_normal((1, 1, d))).astype(np.float32), "cls_token")
    cls = vit_tiny.expand_dynamic(g, cls, [("scalar", Z.dim_of(g, px, 0, "")), -1, -1], "")
    x = g.node("Concat", [cls, x], name="/Concat", axis=1)
    pos = g.const((0.5 * g.rng.standard_normal((1, ntok, d))).astype(np.float32), "pos_embed")
    h = g.node("Add", [x, pos], name="/Add")

    for i in range(c["layers"]):
        p = "/blocks/blocks.%d" % i
        layout = "bnhd" if i == c["layers"] - 1 else "bhnd"
        a = Z.layer_norm(g, h, d, p + "/norm1", eps=1e-6, op=True)
        h = g.node("Add", [h, attention(g, a, d, c["heads"], p + "/attn", layout)], name=p + "/Add")
        m = Z.dense(g, Z.layer_norm(g, h, d, p + "/norm2", eps=1e-6, op=True), d, c["mlp"], p + "/mlp/fc1")
        m = Z.gelu_erf(g, m, p + "/mlp/act")
        m = Z.dense(g, m, c["mlp"], d, p + "/mlp/fc2")
        h = g.node("Add", [h, m], name=p + "/Add")

    h = Z.layer_norm(g, h, d, "/norm", eps=1e-6, op=True)
    cls_out = g.node("Gather", [h, Z.sconst(g, 0, "")], name="/Gather", axis=1)
    wc = g.const((g.rng.standard_normal((c["classes"], d)) / np.sqrt(d)).astype(np.float32), "head.weight")
    bc = g.const((0.02 * g.rng.standard_normal(c["classes"])).astype(np.float32), "head.bias")
    logits = g.node("Gemm", [cls_out, wc, bc], name="/head/Gemm", alpha=1.0, beta=1.0, transB=1)
    g.nodes.append(Z.helper.make_node("Identity", [logits], ["logits"], name="/Identity"))
    g.output("logits", ["batch", c["classes"]])
    return g.model(producer="pytorch", producer_version="2.1.0")
