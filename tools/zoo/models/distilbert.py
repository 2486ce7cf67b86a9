"""DistilBERT (HF transformers DistilBertModel) as torch.onnx writes it at opset 11.

Imitates `torch.onnx.export(DistilBertModel, (input_ids, attention_mask), opset_version=11,
dynamic_axes={batch, sequence})` with transformers 4.2x:
- inputs input_ids [batch, seq] int64 (Gather into the word-embedding table) and
  attention_mask [batch, seq] int64;
- position ids sliced from the `position_ids` buffer [1, 512] with a Shape-derived length
  (Shape -> Gather -> Unsqueeze -> Slice), position-embedding Gather, Add;
- nn.LayerNorm written out (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, eps 1e-12);
- MultiHeadSelfAttention: q/k/v MatMul+Add, heads by x.view(bs, -1, H, hd) (Shape -> Gather
  -> Unsqueeze -> Concat -> Reshape), Transpose, q / sqrt(hd) (Div), MatMul with k^T;
  the mask as DistilBERT writes it: (mask == 0).view(bs, 1, 1, k_len).expand_as(scores)
  -> Equal, Reshape, Expand(Shape(scores)); masked_fill(finfo.min) -> Where; Softmax
  (opset-11 axis 3), MatMul, Transpose, Reshape(bs, -1, d), out_lin;
- FFN lin1 -> GELU written out with Erf -> lin2; residual + LayerNorm after each sublayer;
- opset 11: Unsqueeze/Squeeze axes attributes, Softmax of the coerced-2D kind.
Output last_hidden_state [batch, seq, dim].
Full: 6 layers, dim 768, 12 heads, FFN 3072, vocab 8000 (30522 in the real model; cut to
keep the file < 200 MB), seq 128. Small: 2 layers, dim 64, 4 heads, vocab 500, seq 16.
"""
import numpy as np
from onnx import TensorProto

import zoolib as Z

META = {
    "about": "DistilBERT, torch.onnx opset 11: written-out LayerNorm, Erf GELU, Equal/Expand/Where mask",
    "dims_small": {"batch": 2, "seq": 16},
    "dims_full": {"batch": 1, "seq": 128},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(layers=2, d=64, heads=4, ffn=256, vocab=500),
       "full": dict(layers=6, d=768, heads=12, ffn=3072, vocab=8000)}


def attention(g, x, mask, d, heads, name):
    hd = d // heads
    q = Z.dense(g, x, d, d, name + "/q_lin")
    k = Z.dense(g, x, d, d, name + "/k_lin")
    v = Z.dense(g, x, d, d, name + "/v_lin")
    q = Z.split_heads(g, q, heads, hd, name, style="bs")
    k = Z.split_heads(g, k, heads, hd, name, style="bs")
    v = Z.split_heads(g, v, heads, hd, name, style="bs")

    def mask_fn(scores):
        # mask_reshp = (bs, 1, 1, k_length); (mask == 0).view(mask_reshp).expand_as(scores)
        bs = Z.dim_of(g, x, 0, name)
        klen = Z.dim_of(g, x, 1, name)
        shp = Z.shape_concat(g, [("scalar", bs), 1, 1, ("scalar", klen)], name)
        m = g.node("Equal", [mask, Z.sconst(g, 0, name)], name=name + "/Equal")
        m = g.node("Reshape", [m, shp], name=name + "/Reshape")
        m = g.node("Expand", [m, g.node("Shape", [scores], name=name + "/Shape")], name=name + "/Expand")
        fmin = Z.fscalar(g, np.finfo(np.float32).min, name)
        return g.node("Where", [m, fmin, scores], name=name + "/Where")

    ctx = Z.attention_core(g, q, k, v, hd, name, scale="div_q", mask_fn=mask_fn)
    ctx = Z.merge_heads(g, ctx, d, name, style="bs", bs_from=x)
    return Z.dense(g, ctx, d, d, name + "/out_lin")


def build(size):
    c = CFG[size]
    d, L = c["d"], c["layers"]
    g = Z.Graph("torch_jit", opset=11, seed=11)
    ids = g.input("input_ids", ["batch", "seq"], TensorProto.INT64)
    mask = g.input("attention_mask", ["batch", "seq"], TensorProto.INT64)

    e = "/embeddings"
    wte = g.const((0.5 * g.rng.standard_normal((c["vocab"], d))).astype(np.float32),
                  "embeddings.word_embeddings.weight")
    wpe = g.const((0.5 * g.rng.standard_normal((512, d))).astype(np.float32),
                  "embeddings.position_embeddings.weight")
    pos_buf = g.const(np.arange(512, dtype=np.int64)[None, :], "embeddings.position_ids")
    seq = Z.dim_of(g, ids, 1, e)
    pos = Z.slice_(g, pos_buf, [0], Z.unsqueeze(g, seq, [0], e), [1], name=e)
    we = g.node("Gather", [wte, ids], name=e + "/word_embeddings/Gather", axis=0)
    pe = g.node("Gather", [wpe, pos], name=e + "/position_embeddings/Gather", axis=0)
    h = g.node("Add", [we, pe], name=e + "/Add")
    h = Z.layer_norm(g, h, d, e + "/LayerNorm", eps=1e-12)

    for i in range(L):
        p = "/transformer/layer.%d" % i
        sa = attention(g, h, mask, d, c["heads"], p + "/attention")
        h = Z.layer_norm(g, g.node("Add", [sa, h], name=p + "/Add"), d, p + "/sa_layer_norm", eps=1e-12)
        f = Z.dense(g, h, d, c["ffn"], p + "/ffn/lin1")
        f = Z.gelu_erf(g, f, p + "/ffn/activation")
        f = Z.dense(g, f, c["ffn"], d, p + "/ffn/lin2")
        h = Z.layer_norm(g, g.node("Add", [f, h], name=p + "/Add"), d, p + "/output_layer_norm", eps=1e-12)

    g.nodes.append(Z.helper.make_node("Identity", [h], ["last_hidden_state"], name="/Identity"))
    g.output("last_hidden_state", ["batch", "seq", d])
    return g.model(producer="pytorch", producer_version="1.13.1")
