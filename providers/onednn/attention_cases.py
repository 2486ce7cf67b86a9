#!/usr/bin/python3
"""Backend-style cases for attention as exporters write it, which the
oneDNN provider runs as one step (odn_build_attention.c, odn_attention.c)
on CPUs with AVX2+FMA: torch's head split (Reshape, Transpose of Q and V,
K transposed to [B,H,d,T]), scores scaled by Div or Mul, an additive
padding mask from an input, a causal mask by Where over a bool constant
with -inf, DistilBERT's Where(mask, finfo.min, scores), a T5 position
bias, 3-D [B*H,T,d] stacks, multi-query K/V shared by every head, cross
attention (tq != tk, dv != d), long sequences, DistilBERT's mask
reshaped after the scores' MatMul and expanded as the scores (Expand of
Shape(scores)), a batch-4 embedding sum before it whose broadcast post-op
oneDNN lacks (only that node loses its fusion), GPT-2's bool causal buffer sliced to lengths computed from Q and K at
run time (symbolic length, two lengths in one session), heads merged back by
Transpose/Reshape (the step writes that layout) or the output left as the
piece's. Left to the separate operators, and still right: a softmax over
another axis, scores read twice, a mask computed only after the first
MatMul, fewer than 16 query rows (a decoder step). The mask ops alone:
Expand of bool and float, a bool Slice feeding Where and leaving the
piece as bool, a bool Reshape. Expected outputs from numpy in float64.

usage: attention_cases.py OUT_DIR        (prints the case dirs)
       attention_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails, onednn does not claim every node, or the attention step
         runs (or not) other than each case expects (checked on CPUs with
         AVX2 and FMA only). Exit 77 without onnx or onednn.
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from onnx import TensorProto
    from extra_cases import (cpu_flags, has_onednn, save_declared_case, save_typed_case, step_placement_failures,
                             test_cases, written_cases)

    rng = np.random.default_rng(20261208)

OURS = "attention:avx2"


def f32(a):
    return np.asarray(a).astype(np.float32)


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def const(name, a):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, 1 if a.dtype == np.float32 else 9 if a.dtype == np.bool_ else 7, a.shape, a.flatten().tolist()))


def mha(out, name, t=24, heads=4, d=16, batch=1, mods=("div",), mask_input=False, tail="merge", tk=None, dv=None,
        mqa=False, opset=17):
    """x [B,T,C] -> Q,K,V projections (K, V from `mem` [B,TK,C] when tk is
    given: cross attention) -> heads -> scores -> mods -> Softmax -> P V ->
    merged heads -> output projection (tail "merge"), or the [B,H,T,dv]
    product itself as the piece output (tail "out"). mods: "div", "mul",
    "pad_mask" (Add of a [B,1,1,TK] input), "causal" (Where of a bool
    constant with -inf), "distil" (Where(mask, finfo.min, s) from an
    input), "bias" (Add of a [1,H,T,TK] position-bias constant)."""
    tk = tk or t
    dv = dv or d
    c = heads * d
    x = f32(rng.standard_normal((batch, t, c)))
    mem = f32(rng.standard_normal((batch, tk, c))) if tk != t else x
    kv_heads = 1 if mqa else heads
    wq = f32(rng.standard_normal((c, heads * d)) / np.sqrt(c))
    wk = f32(rng.standard_normal((c, kv_heads * d)) / np.sqrt(c))
    wv = f32(rng.standard_normal((c, kv_heads * dv)) / np.sqrt(c))
    wo = f32(rng.standard_normal((heads * dv, c)) / np.sqrt(heads * dv))
    kv_src = "mem" if tk != t else "x"
    inputs = [("x", x)] + ([("mem", mem)] if tk != t else [])
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q0"]),
             helper.make_node("MatMul", [kv_src, "wk"], ["k0"]),
             helper.make_node("MatMul", [kv_src, "wv"], ["v0"]),
             const("shq", np.array([batch, t, heads, d], np.int64)),
             const("shk", np.array([batch, tk, kv_heads, d], np.int64)),
             const("shv", np.array([batch, tk, kv_heads, dv], np.int64)),
             helper.make_node("Reshape", ["q0", "shq"], ["q1"]),
             helper.make_node("Reshape", ["k0", "shk"], ["k1"]),
             helper.make_node("Reshape", ["v0", "shv"], ["v1"]),
             helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"])]
    q = (x.astype(np.float64) @ wq).reshape(batch, t, heads, d).transpose(0, 2, 1, 3)
    k = (mem.astype(np.float64) @ wk).reshape(batch, tk, kv_heads, d).transpose(0, 2, 3, 1)
    v = (mem.astype(np.float64) @ wv).reshape(batch, tk, kv_heads, dv).transpose(0, 2, 1, 3)
    s = q @ k
    inits = [("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo)]
    cur = "s0"
    for i, m in enumerate(mods):
        nxt = "s%d" % (i + 1)
        if m == "div":
            nodes += [const("scale", np.array(np.sqrt(d), np.float32)), helper.make_node("Div", [cur, "scale"], [nxt])]
            s = s / np.float64(np.float32(np.sqrt(d)))
        elif m == "mul":
            sc = np.float32(1 / np.sqrt(d))
            nodes += [const("scale", np.array(sc, np.float32)), helper.make_node("Mul", ["scale", cur], [nxt])]
            s = s * np.float64(sc)
        elif m == "pad_mask":
            keep = np.ones((batch, 1, 1, tk), np.float32)
            keep[..., tk * 2 // 3:] = 0
            pm = f32((1 - keep) * -10000.0)
            inputs.append(("pad", pm))
            nodes.append(helper.make_node("Add", [cur, "pad"], [nxt]))
            s = s + pm
        elif m == "causal":
            tri = np.triu(np.ones((t, tk), np.bool_), 1).reshape(1, 1, t, tk)
            nodes += [const("tri", tri), const("ninf", np.array(-np.inf, np.float32)),
                      helper.make_node("Where", ["tri", "ninf", cur], [nxt])]
            s = np.where(tri, -np.inf, s)
        elif m == "distil":
            masked = np.zeros((batch, 1, 1, tk), np.bool_)
            masked[..., tk - 3:] = True
            inputs.append(("masked", masked))
            nodes += [const("fmin", np.array(np.finfo(np.float32).min, np.float32)),
                      helper.make_node("Where", ["masked", "fmin", cur], [nxt])]
            s = np.where(masked, np.float64(np.finfo(np.float32).min), s)
        elif m == "expand_as":
            # DistilBERT: mask (bool [B,TK]) reshaped to [B,1,1,TK] with a
            # shape computed from x, after the scores' MatMul, then
            # expand_as(scores) (Shape of the scores) and Where(mask, min, s)
            masked = np.zeros((batch, tk), np.bool_)
            masked[:, tk - 2:] = True
            inputs.append(("masked", masked))
            nodes += [helper.make_node("Shape", [kv_src], ["xs"]),
                      const("i0", np.array(0, np.int64)), helper.make_node("Gather", ["xs", "i0"], ["bs0"]),
                      const("i1", np.array(1, np.int64)), helper.make_node("Gather", ["xs", "i1"], ["tk0"]),
                      const("ax0", np.array([0], np.int64)),
                      helper.make_node("Unsqueeze", ["bs0", "ax0"], ["bs1"]),
                      helper.make_node("Unsqueeze", ["tk0", "ax0"], ["tk1"]),
                      const("ones", np.array([1, 1], np.int64)),
                      helper.make_node("Concat", ["bs1", "ones", "tk1"], ["mshape"], axis=0),
                      helper.make_node("Reshape", ["masked", "mshape"], ["m4"]),
                      helper.make_node("Shape", [cur], ["sshape"]),
                      helper.make_node("Expand", ["m4", "sshape"], ["mx"]),
                      const("fmin", np.array(np.finfo(np.float32).min, np.float32)),
                      helper.make_node("Where", ["mx", "fmin", cur], [nxt])]
            s = np.where(masked.reshape(batch, 1, 1, tk), np.float64(np.finfo(np.float32).min), s)
        elif m == "emb_sum":
            # a batch-4 embedding sum whose position term broadcasts over the
            # batch: oneDNN has no fast kernel for that post-op, and only
            # that node may lose its fusion (the attention still fuses)
            raise ValueError("emb_sum is a prefix, not a mod")
        elif m == "bias":
            pb = f32(rng.standard_normal((1, heads, t, tk)))
            inits.append(("pbias", pb))
            nodes.append(helper.make_node("Add", ["pbias", cur], [nxt]))
            s = s + pb
        cur = nxt
    nodes += [helper.make_node("Softmax", [cur], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["o"])]
    o = softmax(s) @ v
    if tail == "merge":
        nodes += [helper.make_node("Transpose", ["o"], ["om"], perm=[0, 2, 1, 3]),
                  const("shm", np.array([batch, t, heads * dv], np.int64)),
                  helper.make_node("Reshape", ["om", "shm"], ["m"]),
                  helper.make_node("MatMul", ["m", "wo"], ["y"])]
        y = o.transpose(0, 2, 1, 3).reshape(batch, t, heads * dv) @ wo
    else:
        nodes[-1].output[0] = "y"
        y = o
    save_typed_case(out, name, nodes, inputs, [("y", f32(y))], inits, opset=opset)


def embeddings_then_attention(out):
    """Token, type and position embeddings summed at batch 4 (the position
    term [1,T,C] broadcast over the batch: a binary post-op oneDNN has only
    its reference kernel for), then attention: the plan rebuilds only the
    sum unfused, and the attention step is still taken."""
    b, t, heads, d = 4, 20, 2, 8
    c = heads * d
    tok, typ = f32(rng.standard_normal((b, t, c))), f32(rng.standard_normal((b, t, c)))
    pos = f32(rng.standard_normal((1, t, c)))
    wq, wk, wv = (f32(rng.standard_normal((c, c)) / np.sqrt(c)) for _ in range(3))
    nodes = [helper.make_node("Add", ["tok", "typ"], ["e0"]), helper.make_node("Add", ["e0", "pos"], ["x"]),
             helper.make_node("MatMul", ["x", "wq"], ["q0"]), helper.make_node("MatMul", ["x", "wk"], ["k0"]),
             helper.make_node("MatMul", ["x", "wv"], ["v0"]),
             const("sh", np.array([b, t, heads, d], np.int64)),
             helper.make_node("Reshape", ["q0", "sh"], ["q1"]), helper.make_node("Reshape", ["k0", "sh"], ["k1"]),
             helper.make_node("Reshape", ["v0", "sh"], ["v1"]),
             helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    x = tok.astype(np.float64) + typ + pos
    q, k, v = ((x @ w).reshape(b, t, heads, d).transpose(0, 2, 1, 3) for w in (wq, wk, wv))
    y = softmax(q @ k.transpose(0, 1, 3, 2)) @ v
    save_typed_case(out, "odn_att_after_batch_broadcast_sum", nodes, [("tok", tok), ("typ", typ)], [("y", f32(y))],
                    [("pos", pos), ("wq", wq), ("wk", wk), ("wv", wv)], opset=13)


def stack3(out):
    """[B*H, T, d] stacks (older exporters, Keras): Q and K^T given
    directly, scale by Mul, the output a piece output."""
    bh, t, d = 6, 20, 8
    q, kt, v = (f32(rng.standard_normal(sh)) for sh in ((bh, t, d), (bh, d, t), (bh, t, d)))
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]), const("c", np.array(0.3, np.float32)),
             helper.make_node("Mul", ["s", "c"], ["ss"]), helper.make_node("Softmax", ["ss"], ["p"], axis=2),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    y = softmax((q.astype(np.float64) @ kt) * np.float64(np.float32(0.3))) @ v
    save_typed_case(out, "odn_att_stack3", nodes, [("q", q), ("kt", kt), ("v", v)], [("y", f32(y))], opset=11)


def late_mask(out):
    """The position bias is computed after the first MatMul (T5's first
    layer does that): left to the separate operators."""
    t, d = 20, 8
    q, kt, v = (f32(rng.standard_normal(sh)) for sh in ((1, 2, t, d), (1, 2, d, t), (1, 2, t, d)))
    b = f32(rng.standard_normal((1, 2, t, t)))
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Relu", ["b"], ["rb"]),
             helper.make_node("Add", ["s", "rb"], ["sb"]), helper.make_node("Softmax", ["sb"], ["p"]),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    y = softmax(q.astype(np.float64) @ kt + np.maximum(b, 0)) @ v
    save_typed_case(out, "odn_att_no_late_bias", nodes, [("q", q), ("kt", kt), ("v", v), ("b", b)],
                    [("y", f32(y))], opset=13)


def other_axis(out):
    """Softmax over the query axis: not attention's."""
    t, d = 18, 8
    q, kt, v = (f32(rng.standard_normal(sh)) for sh in ((2, t, d), (2, d, t), (2, t, d)))
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    s = q.astype(np.float64) @ kt
    e = np.exp(s - s.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)) @ v
    save_typed_case(out, "odn_att_no_other_axis", nodes, [("q", q), ("kt", kt), ("v", v)], [("y", f32(y))], opset=13)


def scores_read_twice(out):
    """The scores are also an output: left to the separate operators."""
    t, d = 17, 4
    q, kt, v = (f32(rng.standard_normal(sh)) for sh in ((1, t, d), (1, d, t), (1, t, d)))
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    s = q.astype(np.float64) @ kt
    y = softmax(s) @ v
    save_typed_case(out, "odn_att_no_scores_output", nodes, [("q", q), ("kt", kt), ("v", v)],
                    [("y", f32(y)), ("s", f32(s))], opset=13)


def gpt2_dynamic(out):
    """GPT-2's causal mask, sequence length symbolic: a bool buffer sliced
    to [klen - qlen, klen) x [0, klen) by lengths read off Q and K (shape
    arithmetic after the scores' MatMul), then Where(mask, s, fill). One
    session runs two lengths."""
    heads, d, cap = 2, 8, 32
    c = heads * d
    wq, wk, wv = (f32(rng.standard_normal((c, c)) / np.sqrt(c)) for _ in range(3))
    bias = np.tril(np.ones((cap, cap), np.bool_)).reshape(1, 1, cap, cap)
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q0"]), helper.make_node("MatMul", ["x", "wk"], ["k0"]),
             helper.make_node("MatMul", ["x", "wv"], ["v0"]),
             const("sh", np.array([1, -1, heads, d], np.int64)),
             helper.make_node("Reshape", ["q0", "sh"], ["q1"]), helper.make_node("Reshape", ["k0", "sh"], ["k1"]),
             helper.make_node("Reshape", ["v0", "sh"], ["v1"]),
             helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             const("scale", np.array(np.sqrt(d), np.float32)), helper.make_node("Div", ["s0", "scale"], ["s1"]),
             helper.make_node("Shape", ["q"], ["qs"]), helper.make_node("Shape", ["kt"], ["ks"]),
             const("i2", np.array(2, np.int64)), const("i3", np.array(3, np.int64)),
             helper.make_node("Gather", ["qs", "i2"], ["ql"]), helper.make_node("Gather", ["ks", "i3"], ["kl"]),
             helper.make_node("Sub", ["kl", "ql"], ["st0"]), const("ax0", np.array([0], np.int64)),
             helper.make_node("Unsqueeze", ["st0", "ax0"], ["st"]), helper.make_node("Unsqueeze", ["kl", "ax0"], ["en"]),
             const("zero", np.array([0], np.int64)), const("a2", np.array([2], np.int64)),
             const("a3", np.array([3], np.int64)),
             helper.make_node("Slice", ["bias", "st", "en", "a2"], ["b1"]),
             helper.make_node("Slice", ["b1", "zero", "en", "a3"], ["causal"]),
             const("fill", np.array(np.finfo(np.float32).min, np.float32)),
             helper.make_node("Where", ["causal", "s1", "fill"], ["s2"]),
             helper.make_node("Softmax", ["s2"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    sets = []
    for t in (18, 23):
        x = f32(rng.standard_normal((1, t, c)))
        q, k, v = ((x.astype(np.float64) @ w).reshape(1, t, heads, d).transpose(0, 2, 1, 3) for w in (wq, wk, wv))
        s = q @ k.transpose(0, 1, 3, 2) / np.float64(np.float32(np.sqrt(d)))
        s = np.where(bias[:, :, 0:t, 0:t], s, np.float64(np.finfo(np.float32).min))
        sets.append(([("x", x)], [("y", f32(softmax(s) @ v))]))
    print(save_declared_case(out, "odn_att_gpt2_dynamic_causal", nodes, [("x", TensorProto.FLOAT, [1, "T", c])],
                             [("y", TensorProto.FLOAT)], [("wq", wq), ("wk", wk), ("wv", wv), ("bias", bias)], sets,
                             13, 7))


def masks(out):
    """The mask ops the step's piece needs, alone: Expand of bool and of
    float (to a constant shape; a bool piece output), a bool Slice of a
    causal buffer (GPT-2's) feeding Where and leaving the piece as bool, a
    bool Reshape."""
    m = np.array([[[True, False, True, False, True]], [[False, False, True, True, False]]])
    nodes = [const("shp", np.array([2, 3, 5], np.int64)), helper.make_node("Expand", ["m", "shp"], ["y"])]
    save_typed_case(out, "odn_mask_expand_bool", nodes, [("m", m)], [("y", np.broadcast_to(m, (2, 3, 5)).copy())],
                    opset=13)
    x = f32(rng.standard_normal((1, 4)))
    nodes = [const("shp", np.array([3, 1, 4], np.int64)), helper.make_node("Expand", ["x", "shp"], ["e"]),
             helper.make_node("Relu", ["e"], ["y"])]
    save_typed_case(out, "odn_mask_expand_float", nodes, [("x", x)],
                    [("y", f32(np.maximum(np.broadcast_to(x, (3, 1, 4)), 0)))], opset=13)
    tri = np.tril(np.ones((8, 8), np.bool_)).reshape(1, 1, 8, 8)
    s = f32(rng.standard_normal((2, 3, 5, 6)))
    nodes = [const("tri", tri), const("st", np.array([0, 0], np.int64)), const("en", np.array([5, 6], np.int64)),
             const("ax", np.array([2, 3], np.int64)), helper.make_node("Slice", ["tri", "st", "en", "ax"], ["c"]),
             const("fill", np.array(-1e4, np.float32)), helper.make_node("Where", ["c", "s", "fill"], ["y"]),
             const("sh2", np.array([5, 6], np.int64)), helper.make_node("Reshape", ["c", "sh2"], ["c2"])]
    c = tri[:, :, 0:5, 0:6]
    save_typed_case(out, "odn_mask_slice_bool", nodes, [("s", s)],
                    [("y", f32(np.where(c, s, np.float32(-1e4)))), ("c2", c.reshape(5, 6).copy())], opset=13)


def write(out):
    os.makedirs(out, exist_ok=True)
    mha(out, "odn_att_bert_pad_mask", mods=("div", "pad_mask"))
    mha(out, "odn_att_gpt2_causal", t=19, heads=3, mods=("div", "causal"), opset=13)
    mha(out, "odn_att_distilbert_where", t=21, heads=2, d=32, mods=("mul", "distil"), batch=2, opset=11)
    mha(out, "odn_att_t5_bias", t=16, heads=4, d=8, mods=("bias",), opset=14)
    mha(out, "odn_att_whisper_long", t=150, heads=2, d=64, mods=())
    mha(out, "odn_att_cross", t=17, tk=19, d=16, dv=24, heads=3, mods=("div",), tail="out")
    mha(out, "odn_att_no_decode_rows", t=3, tk=40, d=16, heads=2, mods=("div",))
    mha(out, "odn_att_multi_query", t=17, heads=4, d=16, mods=("div", "causal"), mqa=True)
    mha(out, "odn_att_distilbert_expand_as", t=18, heads=2, d=16, batch=2, mods=("div", "expand_as"), opset=13)
    embeddings_then_attention(out)
    gpt2_dynamic(out)
    masks(out)
    stack3(out)
    late_mask(out)
    other_axis(out)
    scores_read_twice(out)


def expected_ours(case):
    return os.path.basename(case).startswith("odn_att_") and "_no_" not in os.path.basename(case)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    ours_possible = "avx2" in cpu_flags() and "fma" in cpu_flags()
    bad += step_placement_failures(tessera, cases, out, OURS, expected_ours, ours_possible)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
