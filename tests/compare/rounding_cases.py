#!/usr/bin/python3
"""Single-op cases whose expected float32 outputs are the exact results
rounded once (rule 1 of docs/conformance.md, "Precision"), for the
reference provider's kernels that used to round twice or more: MatMul past
k = 256 (rounded after every 256 terms), Gemm with C, alpha or beta
(alpha*AB rounded, then + beta*C rounded), ConvTranspose (columns rounded,
their overlaps summed in float), Tanh/Erf/Exp (glibc's float functions,
1 ULP off on up to 3% of inputs) and GridSample (the coordinate rounded to
float before the weights). Expected outputs are computed here, not by
Tessera: dot products with math.fsum over exact float products (correctly
rounded double, then one rounding to float), elementwise functions and
bilinear weights in float64. `tessera test -p reference --rtol 0 --atol 0`
runs them (ctest `reference_rounding`).
usage: rounding_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import math
import os
from fractions import Fraction
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261207)


def save_case(out_dir, name, node, inputs, outputs, inits=(), opset=17):
    def info(n, a):
        t = TensorProto.FLOAT if a.dtype == np.float32 else TensorProto.INT64
        return helper.make_tensor_value_info(n, t, a.shape)
    g = helper.make_graph([node], name, [info(n, a) for n, a in inputs], [info(n, a) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for prefix, arrs in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrs):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(d)


def uniform(*shape, lo=-1.0, hi=1.0):
    return (rng.random(shape) * (hi - lo) + lo).astype(np.float32)


def exact_dot(terms):
    """sum of float64 terms that are exact (products of two floats),
    correctly rounded to double by fsum, then rounded to float32"""
    return np.float32(math.fsum(terms))


def matmul_exact(a, b, bias=None):
    """a @ b (+ bias, one per column) per element, exactly, rounded once"""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    y = np.empty((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[0]):
        prods = a64[i][:, None] * b64  # exact: 24-bit by 24-bit mantissas
        for j in range(b.shape[1]):
            y[i, j] = exact_dot(list(prods[:, j]) + ([float(bias[j])] if bias is not None else []))
    return y


def matmul_cases(out_dir):
    # m = 37 (4-row kernel, a 1-row tail, a partial 32-row tile), n = 70
    # (vector strips and tail columns), k = 1000 (4 blocks of 256).
    a, b = uniform(37, 1000), uniform(1000, 70)
    save_case(out_dir, "ref_round_matmul_k1000", helper.make_node("MatMul", ["A", "B"], ["Y"]),
              [("A", a), ("B", b)], [("Y", matmul_exact(a, b))])


def gemm_cases(out_dir):
    a, bt, c = uniform(33, 300), uniform(50, 300), uniform(50)
    # alpha = beta = 1, vector C: Y = C + AB, one rounding
    y = matmul_exact(a, bt.T, c)
    save_case(out_dir, "ref_round_gemm_bias", helper.make_node("Gemm", ["A", "B", "C"], ["Y"], transB=1),
              [("A", a), ("B", bt), ("C", c)], [("Y", y)])
    a, b, c = uniform(20, 100), uniform(100, 30), uniform(20, 30)
    alpha, beta = np.float32(0.3), np.float32(1.7)
    # alpha*AB + beta*C in exact rational arithmetic, then rounded
    fa = [[Fraction(float(v)) for v in row] for row in a]
    fb = [[Fraction(float(v)) for v in row] for row in b]
    qa, qb = Fraction(float(alpha)), Fraction(float(beta))
    y = np.empty((20, 30), np.float32)
    for i in range(20):
        for j in range(30):
            dot = sum(fa[i][p] * fb[p][j] for p in range(100))
            y[i, j] = np.float32(float(qa * dot + qb * Fraction(float(c[i, j]))))
    save_case(out_dir, "ref_round_gemm_alpha_beta",
              helper.make_node("Gemm", ["A", "B", "C"], ["Y"], alpha=float(alpha), beta=float(beta)),
              [("A", a), ("B", b), ("C", c)], [("Y", y)])


def conv_transpose_exact(x, w, b, stride, pad):
    """2-D ConvTranspose, group 1: every output's contributions gathered, then fsum"""
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    oh, ow = (h - 1) * stride - 2 * pad + kh, (wd - 1) * stride - 2 * pad + kw
    contrib = [[[[] for _ in range(ow)] for _ in range(oh)] for _ in range(cout)]
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for ci in range(cin):
        for i in range(h):
            for j in range(wd):
                for u in range(kh):
                    for v in range(kw):
                        oy, ox = i * stride - pad + u, j * stride - pad + v
                        if 0 <= oy < oh and 0 <= ox < ow:
                            for co in range(cout):
                                contrib[co][oy][ox].append(x64[0, ci, i, j] * w64[ci, co, u, v])
    y = np.empty((1, cout, oh, ow), np.float32)
    for co in range(cout):
        for oy in range(oh):
            for ox in range(ow):
                y[0, co, oy, ox] = exact_dot(contrib[co][oy][ox] + [float(b[co])])
    return y


def conv_transpose_cases(out_dir):
    x, w, b = uniform(1, 6, 7, 7), uniform(6, 4, 4, 4), uniform(4)
    save_case(out_dir, "ref_round_conv_transpose",
              helper.make_node("ConvTranspose", ["X", "W", "B"], ["Y"], strides=[2, 2], pads=[1, 1, 1, 1]),
              [("X", x), ("W", w), ("B", b)], [("Y", conv_transpose_exact(x, w, b, 2, 1))])


def unary_cases(out_dir):
    x = uniform(20000, lo=-4.0, hi=4.0)
    x64 = x.astype(np.float64)
    for op, fn in (("Tanh", np.tanh), ("Exp", np.exp), ("Erf", np.vectorize(math.erf))):
        save_case(out_dir, "ref_round_%s" % op.lower(), helper.make_node(op, ["X"], ["Y"]),
                  [("X", x)], [("Y", fn(x64).astype(np.float32))])


def grid_sample_exact(x, grid, align):
    """bilinear, zeros padding, in float64"""
    n, c, h, w = x.shape
    _, oh, ow, _ = grid.shape
    g = grid.astype(np.float64)
    if align:
        px, py = (g[..., 0] + 1) / 2 * (w - 1), (g[..., 1] + 1) / 2 * (h - 1)
    else:
        px, py = ((g[..., 0] + 1) * w - 1) / 2, ((g[..., 1] + 1) * h - 1) / 2
    x0, y0 = np.floor(px), np.floor(py)
    tx, ty = px - x0, py - y0
    y = np.zeros((n, c, oh, ow))
    for dy, wy in ((0, 1 - ty), (1, ty)):
        for dx, wx in ((0, 1 - tx), (1, tx)):
            xi, yi = (x0 + dx).astype(np.int64), (y0 + dy).astype(np.int64)
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            v = x.astype(np.float64)[0][:, np.clip(yi[0], 0, h - 1), np.clip(xi[0], 0, w - 1)]
            y[0] += np.where(ok[0], wy[0] * wx[0] * v, 0.0)
    return y.astype(np.float32)


def grid_sample_cases(out_dir):
    x, grid = uniform(1, 3, 9, 11), uniform(1, 17, 13, 2, lo=-1.1, hi=1.1)
    for align in (0, 1):
        save_case(out_dir, "ref_round_grid_sample_align%d" % align,
                  helper.make_node("GridSample", ["X", "G"], ["Y"], align_corners=align),
                  [("X", x), ("G", grid)], [("Y", grid_sample_exact(x, grid, align))], opset=16)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    for make in (matmul_cases, gemm_cases, conv_transpose_cases, unary_cases, grid_sample_cases):
        make(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
