"""A T5/LLaMA-style decoder-only stack (T5's relative-position bias, LLaMA's SwiGLU MLP, RMSNorm
written out) as torch.onnx writes it at opset 14.

Imitates: a HF transformers T5Stack(is_decoder=True) without cross-attention whose DenseReluDense
was replaced by a gated SiLU MLP (T5 v1.1 / LLaMA style), exported with
torch.onnx.export(opset_version=14, dynamic_axes={"input_ids": {0: "batch", 1: "seq"}}).
Covers: input_ids [batch, seq] int64 -> token-embedding Gather; RMSNorm written out
(Pow 2 -> ReduceMean(-1) -> Add eps -> Sqrt -> Reciprocal -> Mul x -> Mul weight in the
attention norms, T5LayerNorm's rsqrt; Sqrt -> Div(x, .) in the MLP norms, LLaMA's);
positions from Shape -> Gather -> Range; T5's unidirectional relative-position buckets built
in-graph (Sub, Min 0, Neg, Less, Cast, Div, Log, Mul, Cast to int64 (of -inf at distance 0, a
value Where then discards), Add, Min, Where), Gather into the [32, heads] bias table ->
Transpose -> Unsqueeze; the causal mask built in-graph: Range rows/cols -> Unsqueeze -> Less ->
Where(future, finfo.min, 0) added to the bias; bias-free q/k/v/o MatMuls, heads via
Shape/Slice/Concat -> Reshape -> Transpose, unscaled scores + position bias -> Softmax;
SwiGLU MLP: MatMul gate -> Sigmoid -> Mul (SiLU) -> Mul with MatMul up -> MatMul down; residual
Adds; final RMSNorm, the tied-embedding rescale Mul d^-0.5, lm_head MatMul.
Output logits [batch, seq, vocab].
full: t5-small widths (d 512, 8 heads, 6 layers), ffn 1408, vocab 8000 (32128 in the real
model; cut to keep the file small), seq 128. small: d 64, 4 heads, 2 layers, ffn 176, vocab 300,
seq 24 (long enough for the log-spaced buckets).
"""
import numpy as np
from onnx import TensorProto

import zoolib as Z

META = {
    "about": "T5/LLaMA decoder stack, opset 14: written-out RMSNorm, relative-position bias Gather, in-graph causal Where, SwiGLU",
    "dims_small": {"batch": 2, "seq": 24},
    "dims_full": {"batch": 1, "seq": 128},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(d=64, heads=4, layers=2, ffn=176, vocab=300),
       "full": dict(d=512, heads=8, layers=6, ffn=1408, vocab=8000)}
BUCKETS, MAX_DIST = 32, 128


def rms_norm(g, x, d, name, style):
    w = g.const((1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32), name.strip("/").replace("/", ".") + ".weight")
    v = g.node("Pow", [x, Z.fscalar(g, 2.0, name)], name=name + "/Pow")
    v = Z.reduce_mean(g, v, [-1], 1, name)
    v = g.node("Add", [v, Z.fscalar(g, 1e-6, name)], name=name + "/Add")
    s = g.node("Sqrt", [v], name=name + "/Sqrt")
    if style == "rsqrt":
        r = g.node("Reciprocal", [s], name=name + "/Reciprocal")
        y = g.node("Mul", [x, r], name=name + "/Mul")
    else:
        y = g.node("Div", [x, s], name=name + "/Div")
    return g.node("Mul", [w, y], name=name + "/Mul")


def linear(g, x, fin, fout, name, gain=1.0):
    w = g.const((g.rng.standard_normal((fin, fout)) * (gain / np.sqrt(fin))).astype(np.float32),
                name.strip("/").replace("/", ".") + ".weight")
    return g.node("MatMul", [x, w], name=name + "/MatMul")


def position_bias(g, ids, heads, name):
    """compute_bias(T, T) + the causal extended mask, [1, heads, T, T]."""
    t = Z.dim_of(g, ids, 1, name)
    zero, one = Z.sconst(g, 0, name), Z.sconst(g, 1, name)
    rng = g.node("Range", [zero, t, one], name=name + "/Range")
    ctx = Z.unsqueeze(g, rng, [1], name)            # [T, 1] query positions
    mem = Z.unsqueeze(g, rng, [0], name)            # [1, T] key positions
    rel = g.node("Sub", [mem, ctx], name=name + "/Sub")
    # _relative_position_bucket(bidirectional=False)
    rp = g.node("Min", [rel, Z.sconst(g, 0, name)], name=name + "/Min")
    rp = g.node("Neg", [rp], name=name + "/Neg")
    max_exact = BUCKETS // 2
    small = g.node("Less", [rp, Z.sconst(g, max_exact, name)], name=name + "/Less")
    f = g.node("Cast", [rp], name=name + "/Cast", to=TensorProto.FLOAT)
    f = g.node("Div", [f, Z.fscalar(g, float(max_exact), name)], name=name + "/Div")
    f = g.node("Log", [f], name=name + "/Log")
    f = g.node("Div", [f, Z.fscalar(g, float(np.log(MAX_DIST / max_exact)), name)], name=name + "/Div")
    f = g.node("Mul", [f, Z.fscalar(g, float(BUCKETS - max_exact), name)], name=name + "/Mul")
    large = g.node("Cast", [f], name=name + "/Cast", to=TensorProto.INT64)
    large = g.node("Add", [Z.sconst(g, max_exact, name), large], name=name + "/Add")
    large = g.node("Min", [large, Z.sconst(g, BUCKETS - 1, name)], name=name + "/Min")
    bucket = g.node("Where", [small, rp, large], name=name + "/Where")
    table = g.const((0.5 * g.rng.standard_normal((BUCKETS, heads))).astype(np.float32),
                    "block.0.layer.0.SelfAttention.relative_attention_bias.weight")
    b = g.node("Gather", [table, bucket], name=name + "/relative_attention_bias/Gather", axis=0)  # [T, T, H]
    b = g.node("Transpose", [b], name=name + "/Transpose", perm=[2, 0, 1])
    b = Z.unsqueeze(g, b, [0], name)
    # causal: key position > query position is the future
    future = g.node("Less", [ctx, mem], name=name + "/Less")
    m = g.node("Where", [future, Z.fscalar(g, float(np.finfo(np.float32).min), name), Z.fscalar(g, 0.0, name)],
               name=name + "/Where")
    return g.node("Add", [b, m], name=name + "/Add")


def attention(g, x, bias, d, heads, name):
    hd = d // heads
    q, k, v = (Z.split_heads(g, linear(g, x, d, d, name + "/" + n), heads, hd, name) for n in ("q", "k", "v"))
    kt = g.node("Transpose", [k], name=name + "/Transpose", perm=[0, 1, 3, 2])
    s = g.node("MatMul", [q, kt], name=name + "/MatMul")
    s = g.node("Add", [s, bias], name=name + "/Add")
    p = g.node("Softmax", [s], name=name + "/Softmax", axis=-1)
    ctx = g.node("MatMul", [p, v], name=name + "/MatMul")
    return linear(g, Z.merge_heads(g, ctx, d, name), d, d, name + "/o")


def swiglu(g, x, d, ffn, name):
    gate = linear(g, x, d, ffn, name + "/gate_proj", gain=1.7)
    gate = g.node("Mul", [gate, g.node("Sigmoid", [gate], name=name + "/act_fn/Sigmoid")], name=name + "/act_fn/Mul")
    up = linear(g, x, d, ffn, name + "/up_proj")
    return linear(g, g.node("Mul", [gate, up], name=name + "/Mul"), ffn, d, name + "/down_proj", gain=1.5)


def build(size):
    c = CFG[size]
    d = c["d"]
    g = Z.Graph("torch_jit", opset=14, seed=14)
    ids = g.input("input_ids", ["batch", "seq"], TensorProto.INT64)
    emb = g.const(g.rng.standard_normal((c["vocab"], d)).astype(np.float32), "shared.weight")
    h = g.node("Gather", [emb, ids], name="/embed_tokens/Gather", axis=0)
    bias = position_bias(g, ids, c["heads"], "/block.0/layer.0/SelfAttention")
    for i in range(c["layers"]):
        p = "/block.%d" % i
        a = attention(g, rms_norm(g, h, d, p + "/layer.0/layer_norm", "rsqrt"), bias, d, c["heads"],
                      p + "/layer.0/SelfAttention")
        h = g.node("Add", [h, a], name=p + "/layer.0/Add")
        m = swiglu(g, rms_norm(g, h, d, p + "/layer.1/layer_norm", "div"), d, c["ffn"], p + "/layer.1/mlp")
        h = g.node("Add", [h, m], name=p + "/layer.1/Add")
    h = rms_norm(g, h, d, "/final_layer_norm", "rsqrt")
    h = g.node("Mul", [h, Z.fscalar(g, d ** -0.5, "")], name="/Mul")
    logits = linear(g, h, d, c["vocab"], "/lm_head", gain=4.0)
    Z.set_output(g, logits, "logits", ["batch", "seq", c["vocab"]])
    return g.model(producer="pytorch", producer_version="1.13.1")
