#!/usr/bin/python3
"""Backend-style cases for the oneDNN provider's Where (odn_where.c)
and its BatchNormalization loop and Gemm/MatMul folding (odn_build_bn1d.c).

Masked attention as exporters write it: Where(mask, -inf or -3.4e38,
scores [+ ALiBi bias]) -> Softmax -> Where(IsNaN(p), 0, p), with rows that
are fully masked (Softmax of an all -inf row is NaN, as ONNX's formula
gives; of an all -3.4e38 row uniform); a run-time bool mask broadcast over
heads and queries; Where broadcasting all three operands, NaN and -0.0
values copied as they are; IsNaN read by a Where that is not the
NaN-to-number pattern. BatchNormalization folded into MatMul [M,K]x[K,N]
and Gemm (transA, transB, alpha, beta, vector and scalar C, no C) followed
by Relu or ending the piece; on a plain rank 2, 3 and 4 input (the loop),
after MatMul(W[C,K], X[N,K,L]). Expected outputs from numpy in float64.

usage: extra_cases_where_bn.py OUT_DIR        (prints the case dirs)
       extra_cases_where_bn.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails or onednn does not claim all its nodes but IsNaN (exit 77
         without onnx)
"""
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import claimed_whole, save_typed_case, test_cases, written_cases

    rng = np.random.default_rng(20261207)


def f32(a):
    return np.asarray(a).astype(np.float32)


def softmax(x):
    """ONNX Softmax over the last axis in float64: an all -inf row is NaN."""
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)


def bn(x, st, eps=1e-5):
    s, b, m, v = (a.astype(np.float64) for a in st)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    a = s / np.sqrt(v + eps)
    return x.astype(np.float64) * a.reshape(shape) + (b - m * a).reshape(shape)


def stats(c):
    return [rng.uniform(0.5, 1.5, c).astype(np.float32), rng.standard_normal(c).astype(np.float32),
            rng.standard_normal(c).astype(np.float32), rng.uniform(0.2, 2.0, c).astype(np.float32)]


BN_IN = ["bn_s", "bn_b", "bn_m", "bn_v"]


def where_cases(out):
    T = 12
    mask = np.triu(np.ones((T, T), bool), 1)
    mask[:3] = True  # fully masked rows
    s = f32(rng.standard_normal((2, 3, T, T)) * 3)
    # -inf fill, NaN rows zeroed by IsNaN -> Where; the raw Softmax too
    w = np.where(mask, np.float32(-np.inf), s)
    p = softmax(w)
    save_typed_case(out, "odn_where_mask_softmax_ninf",
                    [helper.make_node("Where", ["mask", "fill", "s"], ["w"]),
                     helper.make_node("Softmax", ["w"], ["p"], axis=-1),
                     helper.make_node("IsNaN", ["p"], ["nan"]),
                     helper.make_node("Where", ["nan", "zero", "p"], ["p2"]),
                     helper.make_node("Relu", ["p2"], ["y"])],
                    [("s", s)], [("p", f32(p)), ("y", f32(np.where(np.isnan(p), 0.0, p)))],
                    [("mask", mask), ("fill", np.array(-np.inf, np.float32)), ("zero", np.array(0, np.float32))])
    # ALiBi bias, -3.4e38 fill: fully masked rows are uniform
    slopes = f32(2.0 ** -np.arange(1, 4)).reshape(3, 1, 1)
    alibi = f32(slopes * -np.abs(np.arange(T)[None, :] - np.arange(T)[:, None]))
    big = np.float32(-3.4e38)
    w = np.where(mask, big, (s.astype(np.float64) + alibi).astype(np.float32))
    save_typed_case(out, "odn_where_alibi_big_fill",
                    [helper.make_node("Add", ["s", "alibi"], ["a"]),
                     helper.make_node("Where", ["mask", "fill", "a"], ["w"]),
                     helper.make_node("Softmax", ["w"], ["y"], axis=-1)],
                    [("s", s)], [("y", f32(softmax(w)))],
                    [("mask", mask.reshape(1, 1, T, T)), ("alibi", alibi), ("fill", np.array(big, np.float32))])
    # a run-time key-padding mask [B,1,1,T], the scores as X, the fill as Y
    m = rng.random((2, 1, 1, T)) < 0.7
    m[1, 0, 0, :] = False  # one batch fully masked
    save_typed_case(out, "odn_where_runtime_mask",
                    [helper.make_node("Mul", ["s", "scale"], ["ss"]),
                     helper.make_node("Where", ["m", "ss", "fill"], ["w"]),
                     helper.make_node("Softmax", ["w"], ["y"], axis=-1)],
                    [("s", s), ("m", m)],
                    [("y", f32(softmax(np.where(m, s.astype(np.float64) * np.float32(0.125), -np.inf))))],
                    [("scale", np.array(0.125, np.float32)), ("fill", np.array(-np.inf, np.float32))])
    # every operand broadcast; NaN, infinities and -0.0 copied as they are
    c = rng.random((3, 1, 5)) < 0.5
    x = f32(rng.standard_normal((4, 1)))
    x[1, 0], x[2, 0] = np.nan, -0.0
    y = f32(rng.standard_normal((1, 5)))
    y[0, 1], y[0, 3] = np.inf, -0.0
    save_typed_case(out, "odn_where_broadcast_all",
                    [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("Where", ["c", "xn", "y"], ["z"])],
                    [("c", c), ("x", x), ("y", y)], [("z", np.where(c, -x, y).astype(np.float32))])
    # IsNaN read by a Where of another pattern (its bool stays in the piece)
    x = f32(rng.standard_normal((2, 7, 9)))
    x[0, 1, :4] = np.nan
    x[1, 6, 8] = np.nan
    y = f32(rng.standard_normal((2, 7, 9)))
    save_typed_case(out, "odn_isnan_where_other",
                    [helper.make_node("Sqrt", ["xx"], ["x"]), helper.make_node("IsNaN", ["x"], ["b"]),
                     helper.make_node("Where", ["b", "y", "x"], ["z"])],
                    [("xx", f32(np.abs(x) + np.where(np.isnan(x), np.nan, 0))), ("y", y)],
                    [("z", f32(np.where(np.isnan(x), y, np.sqrt(np.abs(x)))))])


def bn_cases(out):
    M, K, N = 10, 24, 16
    x = f32(rng.standard_normal((M, K)))
    st = stats(N)
    wk = f32(rng.standard_normal((K, N)) / np.sqrt(K))
    init = lambda *extra: list(zip(BN_IN, st)) + list(extra)
    bn_node = lambda src, dst: helper.make_node("BatchNormalization", [src] + BN_IN, [dst], epsilon=1e-3)
    # MatMul [M,K]x[K,N] -> BN, ending the piece
    save_typed_case(out, "odn_bn_fold_matmul", [helper.make_node("MatMul", ["x", "w"], ["g"]), bn_node("g", "y")],
                    [("x", x)], [("y", f32(bn(x.astype(np.float64) @ wk, st, 1e-3)))], init(("w", wk)))
    # Gemm transB, alpha, beta, vector C -> BN -> Relu
    cv = f32(rng.standard_normal(N))
    g = 0.5 * (x.astype(np.float64) @ wk) + 2.0 * cv
    save_typed_case(out, "odn_bn_fold_gemm_transb",
                    [helper.make_node("Gemm", ["x", "wt", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
                     bn_node("g", "n"), helper.make_node("Relu", ["n"], ["y"])],
                    [("x", x)], [("y", f32(np.maximum(bn(g, st, 1e-3), 0)))],
                    init(("wt", np.ascontiguousarray(wk.T)), ("c", cv)))
    # Gemm transA, no C
    save_typed_case(out, "odn_bn_fold_gemm_transa",
                    [helper.make_node("Gemm", ["xt", "w"], ["g"], transA=1), bn_node("g", "y")],
                    [("xt", np.ascontiguousarray(x.T))], [("y", f32(bn(x.astype(np.float64) @ wk, st, 1e-3)))],
                    init(("w", wk)))
    # Gemm with a one-value C [1]
    save_typed_case(out, "odn_bn_fold_gemm_scalar_c",
                    [helper.make_node("Gemm", ["x", "w", "c"], ["g"]), bn_node("g", "n"),
                     helper.make_node("Sigmoid", ["n"], ["y"])],
                    [("x", x)],
                    [("y", f32(1 / (1 + np.exp(-bn(x.astype(np.float64) @ wk + 0.75, st, 1e-3)))))],
                    init(("w", wk), ("c", np.array([0.75], np.float32))))
    # a Conv1d of kernel 1 written as MatMul(W[C,K], X[N,K,L]) -> BN -> Relu
    C, L = 16, 20
    xw = f32(rng.standard_normal((3, K, L)))
    w1 = f32(rng.standard_normal((C, K)) / np.sqrt(K))
    st1 = stats(C)
    save_typed_case(out, "odn_bn_after_matmul_rank3",
                    [helper.make_node("MatMul", ["w", "x"], ["g"]),
                     helper.make_node("BatchNormalization", ["g"] + BN_IN, ["n"]),
                     helper.make_node("Relu", ["n"], ["y"])],
                    [("x", xw)], [("y", f32(np.maximum(bn(np.matmul(w1.astype(np.float64), xw), st1), 0)))],
                    [("w", w1)] + list(zip(BN_IN, st1)))
    # the loop on plain rank 2, 3 and 4 inputs (after a Relu, or the input)
    for name, shape, relu in (("odn_bn_loop_rank2", (9, 33), True), ("odn_bn_loop_rank3", (2, 5, 37), True),
                              ("odn_bn_loop_rank4", (2, 3, 4, 5), False)):
        xx = f32(rng.standard_normal(shape))
        s2 = stats(shape[1])
        src = np.maximum(xx, 0) if relu else xx
        nodes = ([helper.make_node("Relu", ["x"], ["r"])] if relu else []) + \
            [helper.make_node("BatchNormalization", ["r" if relu else "x"] + BN_IN, ["y"])]
        save_typed_case(out, name, nodes, [("x", xx)], [("y", f32(bn(src, s2)))], list(zip(BN_IN, s2)))


def write(out):
    os.makedirs(out, exist_ok=True)
    where_cases(out)
    bn_cases(out)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    for c in cases:
        part = subprocess.run([tessera, "partition", os.path.join(c, "model.onnx"), "-p", "onednn,reference"],
                              capture_output=True, text=True).stdout
        # IsNaN is left to the reference provider (odn_where.c says why); all else is onednn's
        isnan = open(os.path.join(c, "model.onnx"), "rb").read().count(b"IsNaN")
        if not claimed_whole(part, isnan):
            print("not claimed whole by onednn: %s\n%s" % (os.path.basename(c), part))
            bad.append(c)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
