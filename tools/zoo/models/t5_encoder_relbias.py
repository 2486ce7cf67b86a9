"""A T5 encoder (t5-small shapes) as torch.onnx writes it at opset 13: bidirectional
relative-position buckets built in-graph and the padding mask as finfo.min.

Imitates: torch.onnx.export(T5EncoderModel, (input_ids, attention_mask), opset_version=13,
dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}).
Covers: input_ids -> token-embedding Gather; T5's _relative_position_bucket(bidirectional=True)
in-graph: Range -> Sub (memory - context) -> Greater/Cast/Mul (the direction half) -> Abs ->
Less (exact buckets) -> Cast float -> Div(max_exact) -> Log -> Div(log(max_distance /
max_exact)) -> Mul -> Cast int64 -> Add -> Min -> Where -> Add; the log-spaced buckets land on
integers at distances 16, 32 and 64 (floor(log(d / 8) / log(16) * 8) = 2, 4, 6), where a log a
few ulps low casts to the bucket below (oneDNN 2.6's log is 2e-6 off); Gather into the [32,
heads] table -> Transpose -> Unsqueeze; the extended mask (1 - mask) * finfo.min added to the
bias; RMSNorm written out (Pow, ReduceMean, Add, Sqrt, Div, Mul); bias-free q/k/v/o, unscaled
scores, Softmax; DenseReluDense (MatMul, Relu, MatMul); residual Adds; final RMSNorm.
Output last_hidden_state [batch, seq, d].
full: d 512, 8 heads, 6 layers, ffn 2048, vocab 8000 (32128 in the real model), seq 128. small:
d 64, 4 heads, 2 layers, ffn 128, vocab 300, seq 72 (past distance 64).
"""
import os
import sys

import numpy as np
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoolib as Z  # noqa: E402
from t5_decoder_rmsnorm import attention, linear, rms_norm  # noqa: E402

META = {
    "about": "T5 encoder, opset 13: bidirectional log-spaced relative-position buckets, finfo.min padding mask",
    "dims_small": {"batch": 2, "seq": 72},
    "dims_full": {"batch": 1, "seq": 128},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(d=64, heads=4, layers=2, ffn=128, vocab=300),
       "full": dict(d=512, heads=8, layers=6, ffn=2048, vocab=8000)}
BUCKETS, MAX_DIST = 32, 128


def position_bias(g, ids, mask, heads, name):
    """compute_bias(T, T) plus the extended padding mask, [batch, heads, T, T]."""
    t = Z.dim_of(g, ids, 1, name)
    rng = g.node("Range", [Z.sconst(g, 0, name), t, Z.sconst(g, 1, name)], name=name + "/Range")
    rel = g.node("Sub", [Z.unsqueeze(g, rng, [0], name), Z.unsqueeze(g, rng, [1], name)], name=name + "/Sub")
    half = BUCKETS // 2
    side = g.node("Cast", [g.node("Greater", [rel, Z.sconst(g, 0, name)], name=name + "/Greater")],
                  name=name + "/Cast", to=TensorProto.INT64)
    side = g.node("Mul", [side, Z.sconst(g, half, name)], name=name + "/Mul")
    rp = g.node("Abs", [rel], name=name + "/Abs")
    max_exact = half // 2
    small = g.node("Less", [rp, Z.sconst(g, max_exact, name)], name=name + "/Less")
    f = g.node("Cast", [rp], name=name + "/Cast", to=TensorProto.FLOAT)
    f = g.node("Div", [f, Z.fscalar(g, float(max_exact), name)], name=name + "/Div")
    f = g.node("Log", [f], name=name + "/Log")
    f = g.node("Div", [f, Z.fscalar(g, float(np.log(MAX_DIST / max_exact)), name)], name=name + "/Div")
    f = g.node("Mul", [f, Z.fscalar(g, float(half - max_exact), name)], name=name + "/Mul")
    large = g.node("Cast", [f], name=name + "/Cast", to=TensorProto.INT64)
    large = g.node("Add", [Z.sconst(g, max_exact, name), large], name=name + "/Add")
    large = g.node("Min", [large, Z.sconst(g, half - 1, name)], name=name + "/Min")
    bucket = g.node("Add", [side, g.node("Where", [small, rp, large], name=name + "/Where")], name=name + "/Add")
    table = g.const((0.5 * g.rng.standard_normal((BUCKETS, heads))).astype(np.float32),
                    "block.0.layer.0.SelfAttention.relative_attention_bias.weight")
    b = g.node("Gather", [table, bucket], name=name + "/relative_attention_bias/Gather", axis=0)  # [T, T, H]
    b = Z.unsqueeze(g, g.node("Transpose", [b], name=name + "/Transpose", perm=[2, 0, 1]), [0], name)
    m = g.node("Cast", [Z.unsqueeze(g, mask, [1, 2], name)], name=name + "/Cast", to=TensorProto.FLOAT)
    m = g.node("Sub", [Z.fscalar(g, 1.0, name), m], name=name + "/Sub")
    m = g.node("Mul", [m, Z.fscalar(g, float(np.finfo(np.float32).min), name)], name=name + "/Mul")
    return g.node("Add", [b, m], name=name + "/Add")


def build(size):
    c = CFG[size]
    d = c["d"]
    g = Z.Graph("torch_jit", opset=13, seed=13)
    ids = g.input("input_ids", ["batch", "seq"], TensorProto.INT64)
    mask = g.input("attention_mask", ["batch", "seq"], TensorProto.INT64)
    emb = g.const(g.rng.standard_normal((c["vocab"], d)).astype(np.float32), "shared.weight")
    h = g.node("Gather", [emb, ids], name="/embed_tokens/Gather", axis=0)
    bias = position_bias(g, ids, mask, c["heads"], "/block.0/layer.0/SelfAttention")
    for i in range(c["layers"]):
        p = "/block.%d" % i
        a = attention(g, rms_norm(g, h, d, p + "/layer.0/layer_norm", "div"), bias, d, c["heads"],
                      p + "/layer.0/SelfAttention")
        h = g.node("Add", [h, a], name=p + "/layer.0/Add")
        x = rms_norm(g, h, d, p + "/layer.1/layer_norm", "div")
        x = g.node("Relu", [linear(g, x, d, c["ffn"], p + "/layer.1/DenseReluDense/wi", gain=1.4)],
                   name=p + "/layer.1/DenseReluDense/act/Relu")
        h = g.node("Add", [h, linear(g, x, c["ffn"], d, p + "/layer.1/DenseReluDense/wo")], name=p + "/layer.1/Add")
    h = rms_norm(g, h, d, "/final_layer_norm", "div")
    Z.set_output(g, h, "last_hidden_state", ["batch", "seq", d])
    return g.model(producer="pytorch", producer_version="1.13.1")
