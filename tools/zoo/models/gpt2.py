"""GPT-2 (HF transformers GPT2LMHeadModel, use_cache=False) as torch.onnx writes it at opset 13.

Imitates `torch.onnx.export(GPT2LMHeadModel, input_ids, opset_version=13,
dynamic_axes={batch, sequence})` with transformers 4.2x:
- input_ids [batch, seq] int64 -> input_ids.view(-1, input_shape[-1]) (Shape -> Gather ->
  Unsqueeze -> Concat -> Reshape), token-embedding Gather;
- position_ids = arange(past_length, seq + past_length).unsqueeze(0).view(-1, seq):
  Range over Shape-derived bounds -> Unsqueeze -> Reshape, position-embedding Gather;
- LayerNorm written out (opset 13 has no LayerNormalization): ReduceMean/Sub/Pow/ReduceMean/
  Add/Sqrt/Div/Mul/Add;
- GPT-2's Conv1D as torch writes addmm: Reshape to [-1, nx] -> Gemm -> Reshape to
  x.size()[:-1] + (nf,) (Shape -> Slice -> Concat); fused c_attn then Split (opset 13:
  split sizes as an input) into q, k, v;
- heads via x.size()[:-1] + (H, hd) (Shape/Slice/Concat/Reshape) + Transpose; scores Div
  sqrt(hd); the causal mask as GPT2Attention writes it: the lower-triangular bool buffer
  `bias` [1, 1, P, P] sliced by [k_len - q_len : k_len] on axis 2 and [:k_len] on axis 3
  (Shape -> Gather -> Sub -> Unsqueeze -> Slice, twice), Where(mask, scores, finfo.min);
  Softmax, MatMul, merge heads (Transpose, Shape/Slice(:-2)/Concat/Reshape), c_proj;
- MLP c_fc -> gelu_new written out (0.5*x*(1+Tanh(sqrt(2/pi)*(x+0.044715*Pow(x,3))))) -> c_proj;
- ln_f, view(output_shape), lm_head tied to the token embedding (Transpose of wte -> MatMul).
Output logits [batch, seq, vocab].
Full: 6 layers, d 768, 12 heads, vocab 8000 (50257 in the real model; cut to keep the file
< 200 MB), 1024 positions, seq 128. Small: 2 layers, d 64, 4 heads, vocab 500, 64 positions, seq 16.
"""
import numpy as np
from onnx import TensorProto

import zoolib as Z

META = {
    "about": "GPT-2 LM, torch.onnx opset 13: Conv1D Gemm, Split QKV, causal bias Slice + Where, tanh GELU",
    "dims_small": {"batch": 2, "seq": 16},
    "dims_full": {"batch": 1, "seq": 128},
    "rtol": 1e-3, "atol": 1e-4,
}

CFG = {"small": dict(layers=2, d=64, heads=4, vocab=500, npos=64),
       "full": dict(layers=6, d=768, heads=12, vocab=8000, npos=1024)}


def conv1d(g, x, nx, nf, name, gain=1.0):
    """transformers.pytorch_utils.Conv1D: size_out = x.size()[:-1] + (nf,);
    x = addmm(bias, x.view(-1, x.size(-1)), weight); x.view(size_out)."""
    wname = "transformer" + name.replace("/", ".")
    size_out = Z.shape_concat(g, [Z.size_prefix(g, x, -1, name), nf], name)
    last = Z.dim_of(g, x, -1, name)
    flat = g.node("Reshape", [x, Z.shape_concat(g, [-1, ("scalar", last)], name)], name=name + "/Reshape")
    w = g.const((g.rng.standard_normal((nx, nf)) * (gain / np.sqrt(nx))).astype(np.float32), wname + ".weight")
    b = g.const((0.02 * g.rng.standard_normal(nf)).astype(np.float32), wname + ".bias")
    y = g.node("Gemm", [flat, w, b], name=name + "/Gemm", alpha=1.0, beta=1.0)
    return g.node("Reshape", [y, size_out], name=name + "/Reshape")


def attention(g, x, bias, d, heads, name):
    hd = d // heads
    qkv = conv1d(g, x, d, 3 * d, name + "/c_attn")
    q, k, v = Z.split(g, qkv, [d, d, d], 2, name)
    q = Z.split_heads(g, q, heads, hd, name)
    k = Z.split_heads(g, k, heads, hd, name)
    v = Z.split_heads(g, v, heads, hd, name)

    def causal(scores):
        qlen = Z.dim_of(g, q, -2, name)
        klen = Z.dim_of(g, k, -2, name)
        start = g.node("Sub", [klen, qlen], name=name + "/Sub")
        m = Z.slice_(g, bias, Z.unsqueeze(g, start, [0], name), Z.unsqueeze(g, klen, [0], name), [2], [1], name=name)
        m = Z.slice_(g, m, [0], Z.unsqueeze(g, klen, [0], name), [3], [1], name=name)
        fmin = Z.fscalar(g, np.finfo(np.float32).min, name)
        return g.node("Where", [m, scores, fmin], name=name + "/Where")

    ctx = Z.attention_core(g, q, k, v, hd, name, scale="div_scores", mask_fn=causal)
    ctx = Z.merge_heads(g, ctx, d, name)
    return conv1d(g, ctx, d, d, name + "/c_proj")


def build(size):
    c = CFG[size]
    d, L = c["d"], c["layers"]
    g = Z.Graph("torch_jit", opset=13, seed=2)
    ids = g.input("input_ids", ["batch", "seq"], TensorProto.INT64)

    t = "/transformer"
    wte = g.const((g.rng.standard_normal((c["vocab"], d)) / np.sqrt(d)).astype(np.float32), "transformer.wte.weight")
    wpe = g.const((0.1 * g.rng.standard_normal((c["npos"], d))).astype(np.float32), "transformer.wpe.weight")
    # one shared copy of the per-layer `attn.bias` buffer (the exporter dedups equal initializers)
    bias = g.const(np.tril(np.ones((c["npos"], c["npos"]), dtype=np.bool_))[None, None], "transformer.h.0.attn.bias")

    in_shape = g.node("Shape", [ids], name=t + "/Shape")
    seq = Z.dim_of(g, ids, -1, t, shape=in_shape)
    ids2 = g.node("Reshape", [ids, Z.shape_concat(g, [-1, ("scalar", seq)], t)], name=t + "/Reshape")
    past = Z.sconst(g, 0, t)
    end = g.node("Add", [seq, past], name=t + "/Add")
    pos = g.node("Range", [past, end, Z.sconst(g, 1, t)], name=t + "/Range")
    pos = Z.unsqueeze(g, pos, [0], t)
    pos = g.node("Reshape", [pos, Z.shape_concat(g, [-1, ("scalar", seq)], t)], name=t + "/Reshape")
    te = g.node("Gather", [wte, ids2], name=t + "/wte/Gather", axis=0)
    pe = g.node("Gather", [wpe, pos], name=t + "/wpe/Gather", axis=0)
    h = g.node("Add", [te, pe], name=t + "/Add")
    out_shape = Z.shape_concat(g, [in_shape, ("scalar", Z.dim_of(g, h, -1, t))], t)

    for i in range(L):
        p = "%s/h.%d" % (t, i)
        a = attention(g, Z.layer_norm(g, h, d, p + "/ln_1"), bias, d, c["heads"], p + "/attn")
        h = g.node("Add", [a, h], name=p + "/Add")
        m = conv1d(g, Z.layer_norm(g, h, d, p + "/ln_2"), d, 4 * d, p + "/mlp/c_fc")
        m = Z.gelu_tanh(g, m, p + "/mlp/act")
        m = conv1d(g, m, 4 * d, d, p + "/mlp/c_proj")
        h = g.node("Add", [h, m], name=p + "/Add")

    h = Z.layer_norm(g, h, d, t + "/ln_f")
    h = g.node("Reshape", [h, out_shape], name=t + "/Reshape")
    head = g.node("Transpose", [wte], name="/lm_head/Transpose", perm=[1, 0])
    logits = g.node("MatMul", [h, head], name="/lm_head/MatMul")
    g.nodes.append(Z.helper.make_node("Identity", [logits], ["logits"], name="/Identity"))
    g.output("logits", ["batch", "seq", c["vocab"]])
    return g.model(producer="pytorch", producer_version="1.13.1")
