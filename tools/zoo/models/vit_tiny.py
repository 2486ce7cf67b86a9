"""ViT-Tiny/16 (HF transformers ViTForImageClassification) as torch.onnx writes it at opset 17.

Imitates `torch.onnx.export(ViTForImageClassification(vit-tiny-patch16-224), pixel_values,
opset_version=17, dynamic_axes={0: batch})`:
- patch embedding Conv 16x16 stride 16, then .flatten(2) as torch writes it for start_dim 2
  (Shape -> Slice(:2) -> Concat(-1) -> Reshape) and .transpose(1, 2) (Transpose);
- cls_token.expand(batch_size, -1, -1) the way torch.onnx writes a dynamic expand: Concat of
  the Shape-derived batch and -1s, then Equal(shape, -1) / Where(.., ConstantOfShape(1), shape)
  to turn -1 into 1, then Expand; Concat([cls, patches], axis 1); Add position embeddings;
- 12 pre-norm blocks with the LayerNormalization op (opset 17, eps 1e-12); self-attention with
  separate q/k/v MatMul+Add, heads via x.size()[:-1] + (H, hd) (Shape/Slice/Concat/Reshape),
  Transpose, MatMul q k^T, Div sqrt(hd), Softmax, MatMul, merge heads; MLP with GELU written
  out with Erf (the Gelu op is opset 20);
- final LayerNormalization; classifier nn.Linear on sequence_output[:, 0, :]: Gather(index 0,
  axis 1) on a 2-D result -> Gemm(transB=1), as torch writes Linear on a rank-2 input.
Output logits [batch, classes].
Full: 224x224, patch 16 (197 tokens), 12 blocks, d 192, 3 heads, MLP 768, 1000 classes.
Small: 32x32, patch 8 (17 tokens), 2 blocks, d 48, 3 heads, MLP 192, 10 classes.
"""
import numpy as np

import zoolib as Z

META = {
    "about": "ViT-Tiny, torch.onnx opset 17: LayerNormalization op, dynamic cls expand, Erf GELU, Gemm head",
    "dims_small": {"batch": 2},
    "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(img=32, patch=8, layers=2, d=48, heads=3, mlp=192, classes=10),
       "full": dict(img=224, patch=16, layers=12, d=192, heads=3, mlp=768, classes=1000)}


def attention(g, x, d, heads, name):
    hd = d // heads
    a = name + "/attention"
    q = Z.split_heads(g, Z.dense(g, x, d, d, a + "/query"), heads, hd, a)
    k = Z.split_heads(g, Z.dense(g, x, d, d, a + "/key"), heads, hd, a)
    v = Z.split_heads(g, Z.dense(g, x, d, d, a + "/value"), heads, hd, a)
    ctx = Z.attention_core(g, q, k, v, hd, a, scale="div_scores")
    ctx = Z.merge_heads(g, ctx, d, a)
    return Z.dense(g, ctx, d, d, name + "/output/dense")


def expand_dynamic(g, x, sizes, name):
    """x.expand(*sizes) with some sizes dynamic, as torch.onnx writes it: the -1s become 1
    through Equal/Where against ConstantOfShape before Expand."""
    shp = Z.shape_concat(g, sizes, name)
    n = len(sizes)
    ones = g.node("ConstantOfShape", [Z.sconst(g, [n], name)], name=name + "/ConstantOfShape",
                  value=Z.numpy_helper.from_array(np.array([1], np.int64)))
    neg = g.node("Mul", [ones, Z.sconst(g, -1, name)], name=name + "/Mul")
    eq = g.node("Equal", [shp, neg], name=name + "/Equal")
    shp = g.node("Where", [eq, ones, shp], name=name + "/Where")
    return g.node("Expand", [x, shp], name=name + "/Expand")


def build(size):
    c = CFG[size]
    d, P = c["d"], c["patch"]
    ntok = (c["img"] // P) ** 2 + 1
    g = Z.Graph("main_graph", opset=17, seed=17)
    px = g.input("pixel_values", ["batch", 3, c["img"], c["img"]])

    e = "/vit/embeddings"
    pe = e + "/patch_embeddings/projection"
    w = g.weight((d, 3, P, P), "vit.embeddings.patch_embeddings.projection.weight")
    b = g.const((0.02 * g.rng.standard_normal(d)).astype(np.float32), "vit.embeddings.patch_embeddings.projection.bias")
    x = g.node("Conv", [px, w, b], name=pe + "/Conv", kernel_shape=[P, P], strides=[P, P],
               pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
    pp = e + "/patch_embeddings"
    x = g.node("Reshape", [x, Z.shape_concat(g, [Z.size_prefix(g, x, 2, pp), -1], pp)], name=pp + "/Reshape")
    x = g.node("Transpose", [x], name=pp + "/Transpose", perm=[0, 2, 1])
    cls = g.const((0.5 * g.rng.standard_normal((1, 1, d))).astype(np.float32), "vit.embeddings.cls_token")
    bs = Z.dim_of(g, px, 0, e)
    cls = expand_dynamic(g, cls, [("scalar", bs), -1, -1], e)
    x = g.node("Concat", [cls, x], name=e + "/Concat", axis=1)
    pos = g.const((0.5 * g.rng.standard_normal((1, ntok, d))).astype(np.float32), "vit.embeddings.position_embeddings")
    h = g.node("Add", [x, pos], name=e + "/Add")

    for i in range(c["layers"]):
        p = "/vit/encoder/layer.%d" % i
        a = Z.layer_norm(g, h, d, p + "/layernorm_before", eps=1e-12, op=True)
        a = attention(g, a, d, c["heads"], p + "/attention")
        h = g.node("Add", [a, h], name=p + "/Add")
        m = Z.dense(g, Z.layer_norm(g, h, d, p + "/layernorm_after", eps=1e-12, op=True), d, c["mlp"],
                    p + "/intermediate/dense")
        m = Z.gelu_erf(g, m, p + "/intermediate/intermediate_act_fn")
        m = Z.dense(g, m, c["mlp"], d, p + "/output/dense")
        h = g.node("Add", [m, h], name=p + "/output/Add")

    h = Z.layer_norm(g, h, d, "/vit/layernorm", eps=1e-12, op=True)
    cls_out = g.node("Gather", [h, Z.sconst(g, 0, "")], name="/Gather", axis=1)
    wc = g.const((g.rng.standard_normal((c["classes"], d)) / np.sqrt(d)).astype(np.float32), "classifier.weight")
    bc = g.const((0.02 * g.rng.standard_normal(c["classes"])).astype(np.float32), "classifier.bias")
    logits = g.node("Gemm", [cls_out, wc, bc], name="/classifier/Gemm", alpha=1.0, beta=1.0, transB=1)
    g.nodes.append(Z.helper.make_node("Identity", [logits], ["logits"], name="/Identity"))
    g.output("logits", ["batch", c["classes"]])
    return g.model(producer="pytorch", producer_version="2.1.0")
