#!/usr/bin/python3
"""Cases whose inputs have symbolic dims ("batch", "seq"), each with several
test data sets of different sizes run in one session, so the oneDNN
provider must claim with sizes unknown (proving from the symbols which
operand of a binary op spans the output, LayerNormalization with only its
normalized dims known) and build its plans when the sizes arrive, again
when they change, and reuse them when they come back. Expected outputs are
numpy in float64: a direct 3x3 convolution, GlobalAveragePool, matmul, the
ONNX spec's LayerNormalization, two-head self-attention (Reshape with 0
copying run-time dims, Transposes, Softmax).
usage: dynamic_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
rng = np.random.default_rng(20261205)


def save_dynamic_case(out_dir, name, nodes, inputs, outputs, datasets, inits=()):
    """inputs/outputs: (name, dims with str for symbols); datasets: list of
    (input arrays, output arrays) in the order of inputs/outputs."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in outputs],
        [numpy_helper.from_array(a if a.dtype == np.int64 else a.astype(np.float32), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (ins, outs) in enumerate(datasets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd, exist_ok=True)
        for prefix, specs, arrs in (("input", inputs, ins), ("output", outputs, outs)):
            for i, ((n, _), a) in enumerate(zip(specs, arrs)):
                with open(os.path.join(sd, "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(numpy_helper.from_array(np.asarray(a, np.float32), n).SerializeToString())
    print(d)


def conv3x3_pad1(x, w, b):
    """Direct NCHW convolution, stride 1, pads 1, float64."""
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2, wd + 2))
    xp[:, :, 1:-1, 1:-1] = x
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("oc,nchw->nohw", w[:, :, i, j], xp[:, :, i:i + h, j:j + wd])
    return y + b.reshape(1, -1, 1, 1)


def layer_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def cnn_case(out_dir):
    """Conv -> Relu -> Conv 1x1 -> Add(residual, both [batch,8,5,5]) ->
    Add(per-channel constant [8,1,1]) -> GlobalAveragePool -> Flatten -> Gemm."""
    w1 = rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 8, 1, 1)).astype(np.float32) * 0.3
    cb = rng.standard_normal((8, 1, 1)).astype(np.float32)
    wg = rng.standard_normal((8, 3)).astype(np.float32)
    bg = rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "W2"], ["c2"]),
             helper.make_node("Add", ["c2", "r1"], ["s"]),
             helper.make_node("Add", ["s", "CB"], ["t"]),
             helper.make_node("GlobalAveragePool", ["t"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "WG", "BG"], ["Y"])]
    datasets = []
    for batch in (1, 3, 1, 2):
        x = rng.standard_normal((batch, 4, 5, 5)).astype(np.float32)
        r1 = np.maximum(conv3x3_pad1(x.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64)), 0)
        c2 = np.einsum("oc,nchw->nohw", w2[:, :, 0, 0].astype(np.float64), r1)
        t = c2 + r1 + cb.astype(np.float64)
        y = t.mean(axis=(2, 3)) @ wg.astype(np.float64) + bg
        datasets.append(([x], [y]))
    save_dynamic_case(out_dir, "odn_dynamic_batch_cnn", nodes, [("X", ["batch", 4, 5, 5])], [("Y", ["batch", 3])],
                      datasets, [("W1", w1), ("B1", b1), ("W2", w2), ("CB", cb), ("WG", wg), ("BG", bg)])


def encoder_case(out_dir):
    """MatMul -> Add(bias [16]) -> LayerNormalization -> Add(residual X) ->
    Mul(constant scalar) on [batch, seq, 16]."""
    w = rng.standard_normal((16, 16)).astype(np.float32) * 0.25
    b = rng.standard_normal(16).astype(np.float32)
    g = rng.standard_normal(16).astype(np.float32)
    beta = rng.standard_normal(16).astype(np.float32)
    k = np.array(0.5, dtype=np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]),
             helper.make_node("Add", ["m", "B"], ["a"]),
             helper.make_node("LayerNormalization", ["a", "G", "BETA"], ["l"], axis=-1),
             helper.make_node("Add", ["X", "l"], ["s"]),
             helper.make_node("Mul", ["s", "K"], ["Y"])]
    datasets = []
    for batch, seq in ((1, 3), (2, 5), (1, 3), (3, 1)):
        x = rng.standard_normal((batch, seq, 16)).astype(np.float32)
        xd = x.astype(np.float64)
        a = xd @ w.astype(np.float64) + b
        y = (xd + layer_norm(a, g.astype(np.float64), beta.astype(np.float64))) * 0.5
        datasets.append(([x], [y]))
    save_dynamic_case(out_dir, "odn_dynamic_batch_seq_encoder", nodes, [("X", ["batch", "seq", 16])],
                      [("Y", ["batch", "seq", 16])], datasets,
                      [("W", w), ("B", b), ("G", g), ("BETA", beta), ("K", k)])


def attention_case(out_dir):
    """Self-attention with two heads on [batch, seq, 16]: projections,
    Reshape to [0, 0, 2, 8] (copy dims from the input), Transposes, scaled
    Q.K^T, Softmax, .V, back to [0, 0, 16]."""
    wq, wk, wv = (rng.standard_normal((16, 16)).astype(np.float32) * 0.3 for _ in range(3))
    heads = np.array([0, 0, 2, 8], dtype=np.int64)
    flat = np.array([0, 0, 16], dtype=np.int64)
    scale = np.array(1 / np.sqrt(8), dtype=np.float32)
    nodes = [helper.make_node("MatMul", ["X", "WQ"], ["q"]),
             helper.make_node("MatMul", ["X", "WK"], ["k"]),
             helper.make_node("MatMul", ["X", "WV"], ["v"]),
             helper.make_node("Reshape", ["q", "HEADS"], ["qh"]),
             helper.make_node("Reshape", ["k", "HEADS"], ["kh"]),
             helper.make_node("Reshape", ["v", "HEADS"], ["vh"]),
             helper.make_node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["qt", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "SCALE"], ["ss"]),
             helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "vt"], ["o"]),
             helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["ot", "FLAT"], ["Y"])]
    datasets = []
    for batch, seq in ((2, 4), (1, 7), (2, 4)):
        x = rng.standard_normal((batch, seq, 16)).astype(np.float32)
        xd = x.astype(np.float64)
        split = [(xd @ w.astype(np.float64)).reshape(batch, seq, 2, 8).transpose(0, 2, 1, 3) for w in (wq, wk, wv)]
        s = split[0] @ split[1].transpose(0, 1, 3, 2) * float(scale)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        y = ((e / e.sum(axis=-1, keepdims=True)) @ split[2]).transpose(0, 2, 1, 3).reshape(batch, seq, 16)
        datasets.append(([x], [y]))
    save_dynamic_case(out_dir, "odn_dynamic_attention", nodes, [("X", ["batch", "seq", 16])],
                      [("Y", ["batch", "seq", 16])], datasets,
                      [("WQ", wq), ("WK", wk), ("WV", wv), ("HEADS", heads), ("FLAT", flat), ("SCALE", scale)])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    cnn_case(out_dir)
    encoder_case(out_dir)
    attention_case(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
