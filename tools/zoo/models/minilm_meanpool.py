"""Sentence-embedding MiniLM-L6 (sentence-transformers all-MiniLM-L6-v2 style) with mean pooling
and L2 normalisation, as torch.onnx (opset 14) exports the HF BertModel plus the pooling code.

Covers: input_ids/token_type_ids/attention_mask int64 [batch, seq]; word/position/token-type
Gathers; BERT's extended mask (Unsqueeze, Unsqueeze, Cast, Sub from 1, Mul by finfo.min) added to
the scores; written-out LayerNorm (eps 1e-12); Erf GELU; mean pooling
(mask.unsqueeze(-1).expand(h.size()).float(): Unsqueeze -> Shape -> Expand -> Cast; ReduceSum
with axes input (opset 13+); torch.clamp(min=1e-9) as Clip with min only; Div) and
F.normalize (ReduceL2 -> Clip(min 1e-12) -> Expand -> Div).
full: 6 layers, d 384, 12 heads, FFN 1536, vocab 30522 cut to 8000, batch 4, seq 128.
small: 2 layers, d 32, 4 heads, FFN 64, vocab 100, batch 2, seq 8.
"""
import numpy as np
from onnx import TensorProto
import zoolib as Z

META = {"about": "MiniLM-L6 sentence embedding, mean pooling + normalize (opset 14)",
        "dims_small": {"batch": 2, "seq": 8}, "dims_full": {"batch": 4, "seq": 128},
        "rtol": 1e-3, "atol": 1e-4}


def build(size="small"):
    full = size == "full"
    L, d, H, F, V = (6, 384, 12, 1536, 8000) if full else (2, 32, 4, 64, 100)
    hd = d // H
    g = Z.Graph("main_graph", 14, seed=29)
    ids = g.input("input_ids", ["batch", "seq"], TensorProto.INT64)
    tt = g.input("token_type_ids", ["batch", "seq"], TensorProto.INT64)
    mask = g.input("attention_mask", ["batch", "seq"], TensorProto.INT64)
    e = "/embeddings"
    wte = g.const((0.5 * g.rng.standard_normal((V, d))).astype(np.float32), "embeddings.word_embeddings.weight")
    wpe = g.const((0.5 * g.rng.standard_normal((512, d))).astype(np.float32), "embeddings.position_embeddings.weight")
    wtt = g.const((0.5 * g.rng.standard_normal((2, d))).astype(np.float32), "embeddings.token_type_embeddings.weight")
    pos_buf = g.const(np.arange(512, dtype=np.int64)[None, :], "embeddings.position_ids")
    seq = Z.dim_of(g, ids, 1, e)
    pos = Z.slice_(g, pos_buf, [0], Z.unsqueeze(g, seq, [0], e), [1], name=e)
    h = g.node("Gather", [wte, ids], name=e + "/word_embeddings/Gather", axis=0)
    h = g.node("Add", [h, g.node("Gather", [wtt, tt], name=e + "/token_type_embeddings/Gather", axis=0)], name=e + "/Add")
    h = g.node("Add", [h, g.node("Gather", [wpe, pos], name=e + "/position_embeddings/Gather", axis=0)], name=e + "/Add")
    h = Z.layer_norm(g, h, d, e + "/LayerNorm", eps=1e-12)
    m = Z.unsqueeze(g, Z.unsqueeze(g, mask, [1], ""), [2], "")
    m = g.node("Cast", [m], name="/Cast", to=TensorProto.FLOAT)
    m = g.node("Sub", [Z.fscalar(g, 1.0, ""), m], name="/Sub")
    ext = g.node("Mul", [m, Z.fscalar(g, float(np.finfo(np.float32).min), "")], name="/Mul")
    for i in range(L):
        p = "/encoder/layer.%d" % i
        a = p + "/attention/self"
        q = Z.split_heads(g, Z.dense(g, h, d, d, a + "/query"), H, hd, a)
        k = Z.split_heads(g, Z.dense(g, h, d, d, a + "/key"), H, hd, a)
        v = Z.split_heads(g, Z.dense(g, h, d, d, a + "/value"), H, hd, a)
        o = Z.attention_core(g, q, k, v, hd, a, mask_fn=lambda s: g.node("Add", [s, ext], name=a + "/Add"))
        o = Z.merge_heads(g, o, d, a)
        o = Z.dense(g, o, d, d, p + "/attention/output/dense")
        h = Z.layer_norm(g, g.node("Add", [o, h], name=p + "/attention/output/Add"), d, p + "/attention/output/LayerNorm", eps=1e-12)
        f = Z.gelu_erf(g, Z.dense(g, h, d, F, p + "/intermediate/dense"), p + "/intermediate/intermediate_act_fn")
        f = Z.dense(g, f, F, d, p + "/output/dense")
        h = Z.layer_norm(g, g.node("Add", [f, h], name=p + "/output/Add"), d, p + "/output/LayerNorm", eps=1e-12)
    pm = Z.unsqueeze(g, mask, [-1], "/pool")
    pm = g.node("Expand", [pm, g.node("Shape", [h], name="/pool/Shape")], name="/pool/Expand")
    pm = g.node("Cast", [pm], name="/pool/Cast", to=TensorProto.FLOAT)
    s = g.node("ReduceSum", [g.node("Mul", [h, pm], name="/pool/Mul"), Z.sconst(g, [1], "/pool")], name="/pool/ReduceSum", keepdims=0)
    c = g.node("ReduceSum", [pm, Z.sconst(g, [1], "/pool")], name="/pool/ReduceSum", keepdims=0)
    c = g.node("Clip", [c, Z.fscalar(g, 1e-9, "/pool"), ""], name="/pool/Clip")
    emb = g.node("Div", [s, c], name="/pool/Div")
    n = g.node("ReduceL2", [emb], name="/normalize/ReduceL2", axes=[1], keepdims=1)
    n = g.node("Clip", [n, Z.fscalar(g, 1e-12, "/normalize"), ""], name="/normalize/Clip")
    n = g.node("Expand", [n, g.node("Shape", [emb], name="/normalize/Shape")], name="/normalize/Expand")
    y = g.node("Div", [emb, n], name="/normalize/Div")
    Z.set_output(g, y, "sentence_embedding", ["batch", d])
    return g.model(producer_version="2.0.1")
