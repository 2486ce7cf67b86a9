"""Whisper's audio encoder (HF transformers WhisperEncoder) as torch.onnx writes it at opset 17.

Imitates: `optimum-cli export onnx --model openai/whisper-tiny` encoder_model.onnx (torch.onnx,
opset 17, dynamic_axes {batch_size, encoder_sequence_length}) with the positional table sliced
to the input's length (embed_positions.weight[:T], so any length up to 2 x max positions runs).
Covers: input_features [batch, mels, frames]; two Conv1d as Conv with 1-D kernel_shape [3]
(stride 1, then stride 2; pads [1, 1]) each followed by exact GELU written with Erf
(Div sqrt2 -> Erf -> Add 1 -> Mul x -> Mul 0.5); permute(0, 2, 1) Transpose; positional
embedding Slice over the dynamic length (Shape -> Gather -> Unsqueeze -> Slice) + Add;
pre-LN transformer blocks with the LayerNormalization op (opset 17, epsilon 1e-5); q/k/v as
MatMul (+ Add bias; k_proj has none), q * hd^-0.5 as a Mul; heads via Shape/Slice/Concat ->
Reshape -> Transpose; MatMul(q, Transpose(k)) -> Softmax(-1) -> MatMul(v); merge heads;
out_proj, residual Add; fc1 -> GELU(Erf) -> fc2, residual Add; final LayerNormalization.
Output last_hidden_state [batch, frames / 2, d].
full: whisper-tiny widths (d 384, 6 heads, 4 layers, ffn 1536, 80 mels), 1000 frames (10 s)
-> 500 positions (~9 GFLOP). small: d 64, 4 heads, 2 layers, 80 mels, 40 frames.
"""
import numpy as np

import zoolib as Z

META = {
    "about": "Whisper encoder (optimum, opset 17): Conv1d + Erf GELU, pos-emb Slice, LayerNormalization op, MHA",
    "dims_small": {"batch_size": 1, "encoder_sequence_length": 40},
    "dims_full": {"batch_size": 1, "encoder_sequence_length": 1000},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(d=64, heads=4, layers=2, ffn=256, mels=80, npos=64),
       "full": dict(d=384, heads=6, layers=4, ffn=1536, mels=80, npos=1500)}


def conv1d(g, x, cin, cout, stride, name):
    w = g.const((g.rng.standard_normal((cout, cin, 3)) * (1.6 / np.sqrt(cin * 3))).astype(np.float32),
                name.strip("/") + ".weight")
    b = g.const((0.02 * g.rng.standard_normal(cout)).astype(np.float32), name.strip("/") + ".bias")
    return g.node("Conv", [x, w, b], name=name + "/Conv", kernel_shape=[3], strides=[stride], pads=[1, 1],
                  dilations=[1], group=1)


def attention(g, x, d, heads, name):
    hd = d // heads
    q = Z.dense(g, x, d, d, name + "/q_proj")
    q = g.node("Mul", [q, Z.fscalar(g, hd ** -0.5, name)], name=name + "/Mul")
    k = Z.dense(g, x, d, d, name + "/k_proj", bias=False)
    v = Z.dense(g, x, d, d, name + "/v_proj")
    q, k, v = (Z.split_heads(g, t, heads, hd, name) for t in (q, k, v))
    ctx = Z.attention_core(g, q, k, v, hd, name, scale="none")
    ctx = Z.merge_heads(g, ctx, d, name)
    return Z.dense(g, ctx, d, d, name + "/out_proj")


def build(size):
    c = CFG[size]
    d = c["d"]
    g = Z.Graph("main_graph", opset=17, seed=17)
    x = g.input("input_features", ["batch_size", c["mels"], "encoder_sequence_length"])
    y = Z.gelu_erf(g, conv1d(g, x, c["mels"], d, 1, "/conv1"), "/conv1/gelu")
    y = Z.gelu_erf(g, conv1d(g, y, d, d, 2, "/conv2"), "/conv2/gelu")
    y = g.node("Transpose", [y], name="/Transpose", perm=[0, 2, 1])
    pos = g.const((0.1 * g.rng.standard_normal((c["npos"], d))).astype(np.float32), "embed_positions.weight")
    t = Z.dim_of(g, y, 1, "/embed_positions")
    pe = Z.slice_(g, pos, [0], Z.unsqueeze(g, t, [0], "/embed_positions"), [0], name="/embed_positions")
    h = g.node("Add", [y, pe], name="/Add")
    for i in range(c["layers"]):
        p = "/layers.%d" % i
        a = attention(g, Z.layer_norm(g, h, d, p + "/self_attn_layer_norm", op=True), d, c["heads"], p + "/self_attn")
        h = g.node("Add", [h, a], name=p + "/Add")
        m = Z.dense(g, Z.layer_norm(g, h, d, p + "/final_layer_norm", op=True), d, c["ffn"], p + "/fc1")
        m = Z.gelu_erf(g, m, p + "/activation_fn")
        m = Z.dense(g, m, c["ffn"], d, p + "/fc2")
        h = g.node("Add", [h, m], name=p + "/Add")
    h = Z.layer_norm(g, h, d, "/layer_norm", op=True)
    Z.set_output(g, h, "last_hidden_state", ["batch_size", "Addlast_hidden_state_dim_1", d])
    return g.model(producer="pytorch", producer_version="2.1.0")
