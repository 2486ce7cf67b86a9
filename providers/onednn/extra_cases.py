#!/usr/bin/python3
"""Backend-style cases for what the oneDNN provider newly claims and the ONNX
suite does not reach: Resize with constant scales/sizes on the attribute
combinations it takes (round_prefer_ceil ties, pytorch_half_pixel, rank 3
and 5, a blocked input from a Conv), LRN of other sizes and ranks and after
a Conv, and ReduceLogSumExp on large, infinite and NaN values. Expected
outputs come from numpy: ONNX's own resize reference (interpolate_nd in
onnx.backend.test.case.node.resize), the LRN formula of the ONNX spec, and
log-sum-exp in float64; InstanceNormalization after a Conv and on rank 3. Also int8: MatMulInteger and QLinearMatMul with
runtime and constant zero points, uint8/int8 mixes, batch broadcasting,
rounding ties with odd zero points, saturation, float16 scales and a chain
of two QLinearMatMuls; ConvInteger and QLinearConv with per-channel weight
zero points and scales, padding, strides, dilations, bias, 1-3 spatial
dims, groups and depthwise (per-group window sums); MatMulInteger and
QLinearMatMul with zero points and scales per row of A / column of B;
bfloat16 MatMul (batch broadcast) and Gemm (transA/transB, alpha,
C, constant B) on values whose products and sums bfloat16 holds exactly,
so any summation order gives the expected bits. Expected values from numpy integer matmul / a numpy integer
convolution and the ONNX spec's requantization (scale products rounded to
the scales' type, round half to even, then the zero point, then
saturation).
usage: extra_cases.py OUT_DIR (prints the case dirs)
"""
import contextlib
import io
import itertools
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.backend.test.case.node.resize import interpolate_nd, linear_coeffs, nearest_coeffs

OPSET = 18
rng = np.random.default_rng(20261203)


def save_typed_case(out_dir, name, nodes, inputs, outputs, inits=(), opset=OPSET):
    """Like save_case, but each array keeps its own element type."""
    ty = lambda a: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, ty(a), a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, ty(a), a.shape) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    print(write_case(out_dir, name, m, [(inputs, outputs)]))


def write_case(out_dir, name, model, sets):
    """Writes OUT_DIR/NAME/model.onnx and, per (inputs, outputs) of
    (name, array) lists in sets, test_data_set_K; returns the case folder."""
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for s, (ins, outs) in enumerate(sets):
        sd = os.path.join(d, "test_data_set_%d" % s)
        os.makedirs(sd, exist_ok=True)
        for prefix, arrs in (("input", ins), ("output", outs)):
            for i, (n, a) in enumerate(arrs):
                with open(os.path.join(sd, "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(numpy_helper.from_array(a, n).SerializeToString())
    return d


def save_declared_case(out_dir, name, nodes, inputs, outputs, inits, sets, opset, ir_version):
    """A case whose graph declares its own types: inputs (name, elem type,
    dims with symbols), outputs (name, elem type) of unknown shape, so one
    session can run several sets of other sizes; inits (name, array);
    sets, (inputs, outputs) arrays per test_data_set. Returns its folder."""
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return write_case(out_dir, name, m, sets)


def save_case(out_dir, name, nodes, inputs, outputs, inits=()):
    """inputs/outputs: lists of (name, array), written as float32; inits:
    (name, array) constants, kept in their own type."""
    f32 = lambda arrs: [(n, np.asarray(a).astype(np.float32)) for n, a in arrs]
    save_typed_case(out_dir, name, nodes, f32(inputs), f32(outputs), inits)


def written_cases(write, out):
    """The case folders write(out) prints, one a line."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        write(out)
    return buf.getvalue().split()


def test_cases(tessera, cases, *args, providers="onednn,reference"):
    """`tessera test -p PROVIDERS ARGS CASES`, its report echoed; True when
    every case passes."""
    r = subprocess.run([tessera, "test", "-p", providers, *args] + list(cases), capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
    return r.returncode == 0


def has_onednn(tessera):
    """Whether `tessera providers` lists onednn; says it skips when not
    (a check then exits 77)."""
    if "onednn" in subprocess.run([tessera, "providers"], capture_output=True, text=True).stdout:
        return True
    print("no onednn provider: skipped")
    return False


def fails_naming(tessera, case, want):
    """Whether `tessera test -p onednn,reference CASE` (a hostile case)
    fails cleanly, exit 1 with `want` (the node's name) in its report; says
    which."""
    r = subprocess.run([tessera, "test", "-p", "onednn,reference", case], capture_output=True, text=True)
    text, name = r.stdout + r.stderr, os.path.basename(case)
    if r.returncode == 1 and want in text:
        print("ok: %s fails cleanly" % name)
        return True
    print("%s: expected a failed run naming the node (%s), got exit %d:\n%s" % (name, want, r.returncode, text))
    return False


def partition(tessera, case, with_stderr=False):
    """`tessera partition CASE/model.onnx -p onednn,reference`: its report,
    with the host's warnings after it when with_stderr."""
    r = subprocess.run([tessera, "partition", os.path.join(case, "model.onnx"), "-p", "onednn,reference"],
                       capture_output=True, text=True)
    return r.stdout + (r.stderr if with_stderr else "")


def step_placement_failures(tessera, cases, out, impl, expected, possible):
    """The cases not claimed whole by onednn, or whose run shows the step
    named `impl` (a profile's implementation name) other than
    expected(case) says; the step is only checked where `possible` (the CPU
    has the kernel). Each failure is printed with its report."""
    bad = []
    for c in cases:
        # the implementations that ran, on the case's own inputs (a dynamic
        # piece is planned at its first run)
        run = subprocess.run([tessera, "bench", c, "-p", "onednn,reference", "--runs", "1", "--warmup", "0",
                              "--profile", os.path.join(out, "profile.json")], capture_output=True, text=True).stdout
        run = partition(tessera, c) + run
        if not claimed_whole(run) or (possible and (impl in run) != expected(c)):
            print("not claimed whole by onednn, or %s %s: %s\n%s" %
                  (impl, "missing" if expected(c) else "taken", os.path.basename(c), run))
            bad.append(c)
    return bad


def explain(tessera, case):
    """`tessera run CASE/model.onnx -p onednn,reference --explain`: the
    pieces and, per piece, the implementations that ran."""
    return subprocess.run([tessera, "run", os.path.join(case, "model.onnx"), "-p", "onednn,reference", "--explain"],
                          capture_output=True, text=True).stdout


def claimed_whole(report, reference=0):
    """Whether a partition report's total line leaves `reference` nodes to
    the reference provider and none to core."""
    return any(line.startswith("total:") and "reference %d, core 0" % reference in line
               for line in report.splitlines())


def q8(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def int_matmul(a, za, b, zb):
    """numpy.matmul of the centered operands, exact in int64."""
    return np.matmul(a.astype(np.int64) - int(za), b.astype(np.int64) - int(zb))


def requantize(acc, sa, sb, sy, zy):
    """ONNX QLinearMatMul: the multiplier in the scales' type, round half to
    even, then the zero point, then saturation to zy's type."""
    st = sa.dtype.type
    mul = st(st(sa * sb) / sy)
    q = np.rint(acc.astype(np.float64) * np.float64(mul)) + int(zy)
    info = np.iinfo(zy.dtype)
    return np.clip(q, info.min, info.max).astype(zy.dtype)


def int_conv(x, zx, w, zw, strides, dil, pads):
    """ONNX ConvInteger in int64: operands less their zero points (zw per
    output channel), zero padding after that, one group."""
    sp = x.ndim - 2
    xc = np.pad(x.astype(np.int64) - int(zx), [(0, 0), (0, 0)] + [(pads[i], pads[i + sp]) for i in range(sp)])
    wc = w.astype(np.int64) - np.asarray(zw, np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    k = w.shape[2:]
    out = [(xc.shape[2 + i] - ((k[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(sp)]
    y = np.zeros((x.shape[0], w.shape[0], *out), np.int64)
    for off in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(off[i] * dil[i], off[i] * dil[i] + (out[i] - 1) * strides[i] + 1, strides[i]) for i in range(sp))
        y += np.einsum("nc...,mc->nm...", xc[(slice(None), slice(None)) + sl], wc[(slice(None), slice(None)) + off])
    return y


def float_conv(x, w, dil, pads):
    """ONNX Conv in float64, one group, stride 1, no bias."""
    sp = x.ndim - 2
    xc = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + sp]) for i in range(sp)])
    k = w.shape[2:]
    out = [xc.shape[2 + i] - ((k[i] - 1) * dil[i] + 1) + 1 for i in range(sp)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for off in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(off[i] * dil[i], off[i] * dil[i] + out[i]) for i in range(sp))
        y += np.einsum("nc...,mc->nm...", xc[(slice(None), slice(None)) + sl],
                       w.astype(np.float64)[(slice(None), slice(None)) + off])
    return y


def dilated_pad_cases(out_dir):
    """Padded dilated convolutions, which oneDNN 2.6 leaves to its im2col
    kernel on AVX2 and the provider runs over an explicitly padded copy
    (odn_conv_pad.c): 2-D as a piece output, asymmetric pads, between two
    1x1 convolutions (channel-blocked), and 1-D. Numpy in float64."""
    relu = lambda v: np.maximum(v, 0)
    x = rng.standard_normal((1, 64, 20, 20)).astype(np.float32)
    w = (rng.standard_normal((32, 64, 3, 3)) * 0.1).astype(np.float32)
    save_case(out_dir, "odn_conv_dilated_pad_2d",
              [helper.make_node("Conv", ["X", "W"], ["C"], dilations=[6, 6], pads=[6, 6, 6, 6]),
               helper.make_node("Relu", ["C"], ["Y"])],
              [("X", x)], [("Y", relu(float_conv(x, w, [6, 6], [6, 6, 6, 6])).astype(np.float32))], [("W", w)])
    save_case(out_dir, "odn_conv_dilated_pad_asymmetric",
              [helper.make_node("Conv", ["X", "W"], ["Y"], dilations=[5, 4], pads=[5, 3, 4, 6])],
              [("X", x)], [("Y", float_conv(x, w, [5, 4], [5, 3, 4, 6]).astype(np.float32))], [("W", w)])
    w1 = (rng.standard_normal((64, 64, 1, 1)) * 0.15).astype(np.float32)
    w3 = (rng.standard_normal((16, 32, 1, 1)) * 0.2).astype(np.float32)
    mid = relu(float_conv(relu(float_conv(x, w1, [1, 1], [0] * 4)), w, [4, 4], [4, 4, 4, 4]))
    save_case(out_dir, "odn_conv_dilated_pad_blocked",
              [helper.make_node("Conv", ["X", "W1"], ["A"]), helper.make_node("Relu", ["A"], ["RA"]),
               helper.make_node("Conv", ["RA", "W"], ["B"], dilations=[4, 4], pads=[4, 4, 4, 4]),
               helper.make_node("Relu", ["B"], ["RB"]), helper.make_node("Conv", ["RB", "W3"], ["Y"])],
              [("X", x)], [("Y", float_conv(mid, w3, [1, 1], [0] * 4).astype(np.float32))],
              [("W1", w1), ("W", w), ("W3", w3)])
    x1 = rng.standard_normal((2, 64, 60)).astype(np.float32)
    w1d = (rng.standard_normal((64, 64, 3)) * 0.1).astype(np.float32)
    save_case(out_dir, "odn_conv1d_dilated_pad",
              [helper.make_node("Conv", ["X", "W"], ["Y"], dilations=[4], pads=[4, 4])],
              [("X", x1)], [("Y", float_conv(x1, w1d, [4], [4, 4]).astype(np.float32))], [("W", w1d)])


def grouped_conv(x, w, group, dil, pads):
    """ONNX Conv with groups in float64: float_conv per group."""
    ci, co = x.shape[1] // group, w.shape[0] // group
    return np.concatenate([float_conv(x[:, g * ci:(g + 1) * ci], w[g * co:(g + 1) * co], dil, pads)
                           for g in range(group)], axis=1)


def narrow_group_cases(out_dir):
    """Grouped convolutions with fewer channels per group than a vector
    register, run with neighbouring groups merged block-diagonally
    (odn_conv_groups.c): ResNeXt's 32 groups of 4 between 1x1
    convolutions, 16 groups of 2 with a bias and ReLU, 8 groups of 3 as a
    piece output, and 1-D. Numpy in float64."""
    relu = lambda v: np.maximum(v, 0)
    x = rng.standard_normal((1, 64, 12, 12)).astype(np.float32)
    w1 = (rng.standard_normal((128, 64, 1, 1)) * 0.2).astype(np.float32)
    wg = (rng.standard_normal((128, 4, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((64, 128, 1, 1)) * 0.2).astype(np.float32)
    a = relu(float_conv(x, w1, [1, 1], [0] * 4))
    b = relu(grouped_conv(a, wg, 32, [1, 1], [1, 1, 1, 1]))
    save_case(out_dir, "odn_conv_groups_of_4",
              [helper.make_node("Conv", ["X", "W1"], ["A0"]), helper.make_node("Relu", ["A0"], ["A"]),
               helper.make_node("Conv", ["A", "WG"], ["B0"], group=32, pads=[1, 1, 1, 1]),
               helper.make_node("Relu", ["B0"], ["B"]), helper.make_node("Conv", ["B", "W2"], ["Y"])],
              [("X", x)], [("Y", float_conv(b, w2, [1, 1], [0] * 4))], [("W1", w1), ("WG", wg), ("W2", w2)])
    x = rng.standard_normal((2, 32, 9, 10)).astype(np.float32)
    w = (rng.standard_normal((32, 2, 3, 3)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    save_case(out_dir, "odn_conv_groups_of_2_bias",
              [helper.make_node("Conv", ["X", "W", "Bias"], ["C"], group=16, pads=[1, 1, 1, 1]),
               helper.make_node("Relu", ["C"], ["Y"])],
              [("X", x)], [("Y", relu(grouped_conv(x, w, 16, [1, 1], [1, 1, 1, 1]) + bias[None, :, None, None]))],
              [("W", w), ("Bias", bias)])
    x = rng.standard_normal((1, 24, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((48, 3, 3, 3)) * 0.3).astype(np.float32)
    save_case(out_dir, "odn_conv_groups_of_3_output",
              [helper.make_node("Conv", ["X", "W"], ["Y"], group=8, strides=[2, 2], pads=[1, 1, 1, 1])],
              [("X", x)], [("Y", grouped_conv(x, w, 8, [1, 1], [1, 1, 1, 1])[:, :, ::2, ::2])], [("W", w)])
    x = rng.standard_normal((1, 16, 30)).astype(np.float32)
    w = (rng.standard_normal((16, 4, 5)) * 0.3).astype(np.float32)
    save_case(out_dir, "odn_conv1d_groups_of_4",
              [helper.make_node("Conv", ["X", "W"], ["Y"], group=4, pads=[2, 2])],
              [("X", x)], [("Y", grouped_conv(x, w, 4, [1], [2, 2]))], [("W", w)])


def exp_cases(out_dir):
    """Exp as the provider's C loop (odn_loops.c; oneDNN's exp turns NaN
    into +inf): NaN, +-inf, the ends of float's range (e^88.5 is finite,
    e^89 is not, below -87.3 the result is 0 or subnormal), after a Conv
    (not fused into it) and as a piece output. Numpy in float64."""
    edge = np.array([np.nan, np.inf, -np.inf, 88.5, 88.7, 89.0, -87.0, -90.0, -104.0, 0.0, -0.0, 1e-8],
                    np.float32)
    x = np.concatenate([edge, rng.uniform(-20, 20, 1000 - edge.size).astype(np.float32)]).reshape(10, 100)
    with np.errstate(over="ignore"):
        save_case(out_dir, "odn_exp_edges", [helper.make_node("Exp", ["X"], ["Y"])],
                  [("X", x)], [("Y", np.exp(x.astype(np.float64)))])
    x = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    w = (rng.standard_normal((16, 8, 1, 1)) * 0.3).astype(np.float32)
    c = float_conv(x, w, [1, 1], [0] * 4)
    save_case(out_dir, "odn_conv_exp_relu",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("Exp", ["C"], ["E"]),
               helper.make_node("Relu", ["E"], ["Y"])],
              [("X", x)], [("Y", np.exp(c))], [("W", w)])


def minmax_cases(out_dir):
    """ReduceMax/ReduceMin as odn_build_minmax.c runs them, NaN kept as ONNX
    (and numpy's max/min) do: over the points of a Conv1d's blocked output
    (a PointNet), over H and W to [N, C] and over H alone after a Conv, a
    piece input over two adjacent axes with NaN and -inf, and two axes
    apart (the generic loop). Numpy in float64."""
    relu = lambda v: np.maximum(v, 0)
    i64 = lambda v: np.array(v, dtype=np.int64)
    x = rng.standard_normal((2, 8, 40)).astype(np.float32)
    x[1, 3, 17] = np.nan
    w = (rng.standard_normal((32, 8, 1)) * 0.3).astype(np.float32)
    c = float_conv(x, w, [1], [0, 0])
    save_case(out_dir, "odn_reducemax_points_nan",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("ReduceMax", ["C", "ax"], ["Y"])],
              [("X", x)], [("Y", c.max(axis=2, keepdims=True).astype(np.float32))], [("W", w), ("ax", i64([2]))])
    x = rng.standard_normal((2, 8, 6, 7)).astype(np.float32)
    w = (rng.standard_normal((16, 8, 1, 1)) * 0.3).astype(np.float32)
    c = float_conv(x, w, [1, 1], [0] * 4)
    save_case(out_dir, "odn_reducemin_spatial_no_keepdims",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("ReduceMin", ["C", "ax"], ["Y"], keepdims=0)],
              [("X", x)], [("Y", c.min(axis=(2, 3)).astype(np.float32))], [("W", w), ("ax", i64([2, 3]))])
    save_case(out_dir, "odn_reducemax_h_blocked",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("ReduceMax", ["C", "ax"], ["M"]),
               helper.make_node("Relu", ["M"], ["Y"])],
              [("X", x)], [("Y", relu(c.max(axis=2, keepdims=True)).astype(np.float32))],
              [("W", w), ("ax", i64([-2]))])
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    x[0, 1, 2, 3], x[1, 2, 0, 0] = np.nan, -np.inf
    save_case(out_dir, "odn_reducemax_plain_nan",
              [helper.make_node("ReduceMax", ["X", "ax"], ["Y"], keepdims=0)],
              [("X", x)], [("Y", x.max(axis=(1, 2)))], [("ax", i64([1, 2]))])
    save_case(out_dir, "odn_reducemin_axes_apart",
              [helper.make_node("ReduceMin", ["X", "ax"], ["Y"])],
              [("X", x)], [("Y", x.min(axis=(0, 2), keepdims=True))], [("ax", i64([0, 2]))])
    # The last axis, rows read 16 at a time: lengths 37 (two vectors and a
    # tail), 200 and 64; NaN in a vector part, in a tail, first in a row.
    for name, op, shape in (("max_last_37", "ReduceMax", (5, 37)), ("min_last_200", "ReduceMin", (3, 200)),
                            ("max_last_64", "ReduceMax", (4, 64))):
        x = rng.standard_normal(shape).astype(np.float32)
        x[1, 5], x[2, shape[1] - 1], x[0, 3] = np.nan, np.nan, -np.inf
        x[-1, 0] = np.nan
        want = x.max(axis=-1, keepdims=True) if op == "ReduceMax" else x.min(axis=-1, keepdims=True)
        save_case(out_dir, "odn_reduce" + name, [helper.make_node(op, ["X", "ax"], ["Y"])],
                  [("X", x)], [("Y", want)], [("ax", i64([-1]))])


def middle_reduce_cases(out_dir):
    """Reductions over adjacent middle axes, which oneDNN 2.6 has only its
    reference kernel for and the provider runs as rows (odn_loops.c): mean
    pooling over tokens, a sum of squares over two middle axes, L1 over the
    first axis, a product, and ReduceSum with keepdims 0. Numpy float64."""
    i64 = lambda v: np.array(v, dtype=np.int64)
    x = rng.standard_normal((4, 37, 50)).astype(np.float32)
    xd = x.astype(np.float64)
    for name, op, axes, ref, keep in [
            ("odn_reducemean_tokens", "ReduceMean", [1], lambda v: v.mean(axis=1, keepdims=True), 1),
            ("odn_reducesum_middle_no_keepdims", "ReduceSum", [1], lambda v: v.sum(axis=1), 0),
            ("odn_reducel1_first", "ReduceL1", [0], lambda v: np.abs(v).sum(axis=0, keepdims=True), 1)]:
        save_case(out_dir, name, [helper.make_node(op, ["X", "ax"], ["Y"], keepdims=keep)],
                  [("X", x)], [("Y", ref(xd))], [("ax", i64(axes))])
    x4 = rng.standard_normal((3, 5, 6, 7)).astype(np.float32)
    save_case(out_dir, "odn_reducesumsquare_two_middle",
              [helper.make_node("ReduceSumSquare", ["X", "ax"], ["Y"])],
              [("X", x4)], [("Y", (x4.astype(np.float64) ** 2).sum(axis=(1, 2), keepdims=True))],
              [("ax", i64([1, 2]))])
    xp = rng.uniform(0.5, 1.5, (6, 9, 11)).astype(np.float32)
    save_case(out_dir, "odn_reduceprod_middle",
              [helper.make_node("ReduceProd", ["X", "ax"], ["Y"])],
              [("X", xp)], [("Y", xp.astype(np.float64).prod(axis=1, keepdims=True))], [("ax", i64([1]))])


def log_bucket_cases(out_dir):
    """Log after a Relu: a C loop with logf (oneDNN 2.6's log is 2e-6 off,
    enough to move T5's relative-position buckets, floor(log(d/8)/log(16)*8),
    one down at d = 16, 32, 64: the zoo's t5_encoder_relbias checks that),
    not fused as a post-op. Numpy in float64."""
    x = rng.uniform(-1, 4, (3, 40)).astype(np.float32)
    w = rng.uniform(0.1, 1, (40, 24)).astype(np.float32)
    with np.errstate(divide="ignore"):
        y = np.log(np.maximum(x.astype(np.float64) @ w, 0))
    save_case(out_dir, "odn_log_after_relu",
              [helper.make_node("MatMul", ["X", "W"], ["A"]), helper.make_node("Relu", ["A"], ["R"]),
               helper.make_node("Log", ["R"], ["Y"])],
              [("X", x)], [("Y", y.astype(np.float32))], [("W", w)])


def int_conv_grouped(x, zx, w, zw, strides, dil, pads, group):
    """int_conv on each group's slice of x's channels and w's output
    channels (zw: one value or one per output channel), concatenated."""
    cg, mg = x.shape[1] // group, w.shape[0] // group
    zw = np.broadcast_to(np.asarray(zw, np.int64).reshape(-1), (w.shape[0],))
    return np.concatenate([int_conv(x[:, g * cg:(g + 1) * cg], zx, w[g * mg:(g + 1) * mg], zw[g * mg:(g + 1) * mg],
                                    strides, dil, pads) for g in range(group)], axis=1)


def qlinear_conv_ref(acc, sx, sw, sy, zy):
    """ONNX QLinearConv requantization of int sums `acc` (N, M, ...): the
    multiplier per output channel in the scales' type, round half to even,
    then the zero point, then saturation. Returns (y, whether some value
    was a tie, whether some value saturated)."""
    st = sx.dtype.type
    sw = np.broadcast_to(np.asarray(sw).reshape(-1), (acc.shape[1],))
    mul = np.array([st(st(sx * s) / sy) for s in sw], np.float64).reshape((1, -1) + (1,) * (acc.ndim - 2))
    v = acc.astype(np.float64) * mul
    q = np.rint(v) + int(zy)
    info = np.iinfo(zy.dtype)
    return (np.clip(q, info.min, info.max).astype(zy.dtype), bool((np.abs(v - np.floor(v) - 0.5) == 0).any()),
            bool(((q < info.min) | (q > info.max)).any()))


def grouped_qconv_cases(out_dir):
    u8, s8 = np.uint8, np.int8
    # depthwise QLinearConv (group == channels, as in quantized MobileNets):
    # uint8 x, constant int8 weights with per-channel scales and zero points,
    # pads and strides; 0.5 multipliers make ties, large ones saturate
    x, w = q8(u8, (2, 6, 7, 6)), q8(s8, (6, 1, 3, 3))
    sx, sy = np.float32(0.5), np.float32(1.0)
    sw = np.array([1.0, 0.0625, 0.5, 0.01, 2.0, 0.5], np.float32)
    zx, zw, zy = np.array(130, u8), np.array([0, 5, -3, 0, 127, -128], s8), np.array(101, u8)
    bias = np.array([3, -40, 0, 1000, -7, 77], np.int32)
    attrs = dict(group=6, strides=[2, 1], pads=[1, 0, 1, 2])
    acc = int_conv_grouped(x, zx, w, zw, attrs["strides"], [1, 1], attrs["pads"], 6) + bias.reshape(1, 6, 1, 1)
    y, tie, sat = qlinear_conv_ref(acc, sx, sw, sy, zy)
    assert tie and sat and (y == 0).any() and (y == 255).any()
    save_typed_case(out_dir, "odn_qlinearconv_depthwise_s8w",
                    [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "B"], ["y"],
                                      **attrs)],
                    [("x", x), ("sx", np.array(sx)), ("zx", zx), ("sy", np.array(sy)), ("zy", zy)], [("y", y)],
                    [("w", w), ("sw", sw), ("zw", zw), ("B", bias)], opset=10)
    # depthwise with runtime uint8 weights (shifted each run, so the shift's
    # compensation is per channel), per-channel uint8 zero points and
    # scales, int8 output, dilation
    x, w = q8(u8, (1, 16, 6, 5)), q8(u8, (16, 1, 2, 3))
    sx, sy = np.float32(0.125), np.float32(0.25)
    sw = (np.arange(16, dtype=np.float32) % 4 + 1) * np.float32(0.25)
    zx, zw, zy = np.array(0, u8), (np.arange(16) * 17 % 256).astype(u8), np.array(-3, s8)
    attrs = dict(group=16, dilations=[2, 1], pads=[0, 1, 1, 1], strides=[1, 2])
    acc = int_conv_grouped(x, zx, w, zw, attrs["strides"], attrs["dilations"], attrs["pads"], 16)
    y, tie, sat = qlinear_conv_ref(acc, sx, sw, sy, zy)
    assert tie and sat
    save_typed_case(out_dir, "odn_qlinearconv_depthwise_u8w",
                    [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"], **attrs)],
                    [("x", x), ("sx", np.array(sx)), ("zx", zx), ("w", w), ("sw", sw), ("zw", zw),
                     ("sy", np.array(sy)), ("zy", zy)], [("y", y)], opset=10)
    # depthwise with a channel multiplier of 2 (group == in channels, 2
    # outputs each), constant uint8 weights, one weight zero point
    x, w = q8(s8, (1, 4, 5, 5)), q8(u8, (8, 1, 3, 3))
    sx, sw, sy = np.float32(0.05), np.float32(0.02), np.float32(0.1)
    zx, zw, zy = np.array(-7, s8), np.array(140, u8), np.array(12, u8)
    acc = int_conv_grouped(x, zx, w, zw, [1, 1], [1, 1], [1, 1, 1, 1], 4)
    y, _, sat = qlinear_conv_ref(acc, sx, sw, sy, zy)
    assert sat
    save_typed_case(out_dir, "odn_qlinearconv_depthwise_mult2",
                    [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"],
                                      group=4, pads=[1, 1, 1, 1])],
                    [("x", x), ("sx", np.array(sx)), ("zx", zx), ("sy", np.array(sy)), ("zy", zy)], [("y", y)],
                    [("w", w), ("sw", np.array(sw)), ("zw", zw)], opset=10)
    # grouped ConvInteger (group 2): runtime uint8 weights with per-channel
    # zero points, so each group's window sums differ
    x, w = q8(u8, (2, 6, 6, 7)), q8(u8, (4, 3, 3, 2))
    zx, zw = np.array(77, u8), np.array([0, 255, 128, 9], u8)
    attrs = dict(group=2, strides=[1, 2], pads=[2, 1, 0, 1])
    y = int_conv_grouped(x, zx, w, zw, attrs["strides"], [1, 1], attrs["pads"], 2)
    save_typed_case(out_dir, "odn_convinteger_group2",
                    [helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **attrs)],
                    [("x", x), ("w", w), ("zx", zx), ("zw", zw)], [("y", y.astype(np.int32))], opset=10)
    # grouped ConvInteger (group 3), int8, 1 spatial dim, constant weights
    x, w = q8(s8, (1, 6, 11)), q8(s8, (6, 2, 3))
    zx = np.array(-100, s8)
    y = int_conv_grouped(x, zx, w, 0, [1], [1], [1, 1], 3)
    save_typed_case(out_dir, "odn_convinteger_group3_1d",
                    [helper.make_node("ConvInteger", ["x", "w", "zx"], ["y"], group=3, pads=[1, 1])],
                    [("x", x), ("zx", zx)], [("y", y.astype(np.int32))], [("w", w)], opset=10)


def qconv_cases(out_dir):
    u8, s8 = np.uint8, np.int8
    # ConvInteger: runtime uint8 weights with per-channel zero points, padding, strides, dilations
    x, w = q8(u8, (2, 3, 7, 6)), q8(u8, (4, 3, 3, 2))
    zx, zw = np.array(129, u8), np.array([0, 1, 128, 255], u8)
    attrs = dict(strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])
    y = int_conv(x, zx, w, zw, attrs["strides"], attrs["dilations"], attrs["pads"])
    save_typed_case(out_dir, "odn_convinteger_u8_perchannel",
                    [helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **attrs)],
                    [("x", x), ("w", w), ("zx", zx), ("zw", zw)], [("y", y.astype(np.int32))], opset=10)
    # int8, 1 spatial dim, constant weights, no zero points
    x, w = q8(s8, (1, 2, 9)), q8(s8, (3, 2, 3))
    y = int_conv(x, 0, w, 0, [2], [1], [0, 0])
    save_typed_case(out_dir, "odn_convinteger_s8_1d",
                    [helper.make_node("ConvInteger", ["x", "w"], ["y"], strides=[2])],
                    [("x", x)], [("y", y.astype(np.int32))], [("w", w)], opset=10)
    # QLinearConv: uint8 x, constant int8 weights with per-channel scales and
    # zero points, bias, odd output zero point (0.5 multipliers make ties)
    x, w = q8(u8, (1, 4, 5, 5)) % 16, (q8(s8, (3, 4, 2, 2)) % 5).astype(s8)
    sx, sw, sy = np.float32(0.25), np.array([1.0, 0.5, 2.0], np.float32), np.float32(0.5)
    zx, zw, zy = np.array(3, u8), np.array([1, -2, 0], s8), np.array(7, u8)
    bias = np.array([5, -100, 1001], np.int32)
    acc = int_conv(x, zx, w, zw, [1, 1], [1, 1], [1, 1, 0, 0]) + bias.reshape(1, 3, 1, 1)
    mul = np.array([np.float32(np.float32(sx * s) / sy) for s in sw], np.float64).reshape(1, 3, 1, 1)
    y = np.clip(np.rint(acc * mul) + int(zy), 0, 255).astype(u8)
    save_typed_case(out_dir, "odn_qlinearconv_perchannel_bias",
                    [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "B"], ["y"],
                                      pads=[1, 1, 0, 0])],
                    [("x", x), ("sx", np.array(sx)), ("zx", zx), ("sy", np.array(sy)), ("zy", zy)], [("y", y)],
                    [("w", w), ("sw", sw), ("zw", zw), ("B", bias)], opset=10)
    # QLinearConv: int8, 3 spatial dims, runtime uint8 weights, int8 output saturating
    x, w = q8(s8, (1, 2, 3, 4, 3)), q8(u8, (2, 2, 2, 2, 2))
    sx, sw, sy = np.float32(0.03), np.float32(0.02), np.float32(0.01)
    zx, zw, zy = np.array(-3, s8), np.array(100, u8), np.array(-1, s8)
    acc = int_conv(x, zx, w, zw, [1, 1, 1], [1, 1, 1], [0, 1, 0, 0, 1, 1])
    y = np.clip(np.rint(acc * np.float64(np.float32(np.float32(sx * sw) / sy))) + int(zy), -128, 127).astype(s8)
    assert (y == 127).any() and (y == -128).any()
    save_typed_case(out_dir, "odn_qlinearconv_s8_3d",
                    [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"],
                                      pads=[0, 1, 0, 0, 1, 1])],
                    [("x", x), ("sx", np.array(sx)), ("zx", zx), ("w", w), ("sw", np.array(sw)), ("zw", zw),
                     ("sy", np.array(sy)), ("zy", zy)], [("y", y)], opset=10)


def bf16_bits(a):
    """float32 -> bfloat16 bit patterns, rounding to nearest even."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def save_bf16_case(out_dir, name, nodes, inputs, outputs, inits=(), opset=OPSET):
    """inputs/outputs/inits: (name, float array) stored as bfloat16."""
    bf = TensorProto.BFLOAT16
    tensor = lambda n, a: helper.make_tensor(n, bf, a.shape, bf16_bits(a).tobytes(), raw=True)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, bf, a.shape) for n, a in inputs],
                          [helper.make_tensor_value_info(n, bf, a.shape) for n, a in outputs],
                          [tensor(n, a) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for prefix, arrs in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrs):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(tensor(n, a).SerializeToString())
    print(d)


def small_ints(shape, lo, hi):
    return rng.integers(lo, hi + 1, shape).astype(np.float32)


def bf16_cases(out_dir):
    a, b = small_ints((2, 1, 4, 8), -4, 4), small_ints((3, 8, 5), -4, 4)
    save_bf16_case(out_dir, "odn_matmul_bf16_bcast", [helper.make_node("MatMul", ["A", "B"], ["Y"])],
                   [("A", a), ("B", b)], [("Y", np.matmul(a.astype(np.float64), b))])
    at, bt, c = small_ints((6, 3), -3, 3), small_ints((4, 6), -3, 3), small_ints((4,), -8, 8) + 0.5
    y = 0.5 * (at.T.astype(np.float64) @ bt.T) + c
    save_bf16_case(out_dir, "odn_gemm_bf16_trans_alpha_c",
                   [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], transA=1, transB=1, alpha=0.5)],
                   [("A", at), ("B", bt), ("C", c)], [("Y", y)])
    a, b, c = small_ints((3, 7), -5, 5), small_ints((7, 4), -5, 5), small_ints((3, 4), -20, 20)
    save_bf16_case(out_dir, "odn_gemm_bf16_const_b", [helper.make_node("Gemm", ["A", "B", "C"], ["Y"])],
                   [("A", a), ("C", c)], [("Y", a.astype(np.float64) @ b + c)], [("B", b)])


def quant_cases(out_dir):
    u8, s8 = np.uint8, np.int8
    # MatMulInteger: runtime zero points, uint8 B (shifted to int8), batch broadcast
    a, b = q8(u8, (2, 3, 5, 7)), q8(u8, (3, 7, 4))
    za, zb = np.array(131, u8), np.array([77], u8)
    save_typed_case(out_dir, "odn_matmulinteger_u8_bcast",
                    [helper.make_node("MatMulInteger", ["A", "B", "za", "zb"], ["Y"])],
                    [("A", a), ("B", b), ("za", za), ("zb", zb)],
                    [("Y", int_matmul(a, za, b, zb).astype(np.int32))], opset=10)
    # constant uint8 B and zero point (shifted once at build), int8 A without zero point
    a, b, zb = q8(s8, (6, 33)), q8(u8, (33, 9)), np.array(200, u8)
    save_typed_case(out_dir, "odn_matmulinteger_s8_const_b",
                    [helper.make_node("MatMulInteger", ["A", "B", "", "zb"], ["Y"])],
                    [("A", a)], [("Y", int_matmul(a, 0, b, zb).astype(np.int32))],
                    [("B", b), ("zb", zb)], opset=10)
    # QLinearMatMul, float32 scales, odd zero point, products landing on .5:
    # sa*sb/sy = 0.5 exactly, so every odd sum is a tie
    a, b = q8(u8, (4, 16)) % 8, (q8(s8, (16, 8)) % 4).astype(s8)
    sa, sb, sy = np.float32(0.25), np.float32(1.0), np.float32(0.5)
    za, zb, zy = np.array(1, u8), np.array(-1, s8), np.array(3, u8)
    y = requantize(int_matmul(a, za, b, zb), sa, sb, sy, zy)
    save_typed_case(out_dir, "odn_qlinearmatmul_ties",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("sa", np.array(sa)), ("za", za), ("b", b), ("sb", np.array(sb)), ("zb", zb),
                     ("sy", np.array(sy)), ("zy", zy)], [("y", y)], opset=10)
    # int8 output that saturates both ways, 3-D batch
    a, b = q8(s8, (2, 3, 40)), q8(s8, (2, 40, 5))
    sa, sb, sy = np.float32(0.02), np.float32(0.03), np.float32(0.05)
    za, zb, zy = np.array(-5, s8), np.array(7, s8), np.array(-9, s8)
    y = requantize(int_matmul(a, za, b, zb), sa, sb, sy, zy)
    assert (y == 127).any() and (y == -128).any()
    save_typed_case(out_dir, "odn_qlinearmatmul_s8_saturate",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("sa", np.array(sa)), ("za", za), ("b", b), ("sb", np.array(sb)), ("zb", zb),
                     ("sy", np.array(sy)), ("zy", zy)], [("y", y)], opset=10)
    # float16 scales (opset 21), uint8 a and b with a constant b
    a, b = q8(u8, (5, 12)), q8(u8, (12, 6))
    sa, sb, sy = np.float16(0.0123), np.float16(0.0456), np.float16(0.333)
    za, zb, zy = np.array(120, u8), np.array(133, u8), np.array(101, u8)
    y = requantize(int_matmul(a, za, b, zb), sa, sb, sy, zy)
    save_typed_case(out_dir, "odn_qlinearmatmul_f16_scales",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("sa", np.array(sa)), ("za", za), ("sy", np.array(sy)), ("zy", zy)], [("y", y)],
                    [("b", b), ("sb", np.array(sb)), ("zb", zb)], opset=21)
    # two QLinearMatMuls in one piece: the uint8 intermediate stays inside
    a, b, c = q8(u8, (3, 10)), q8(u8, (10, 8)), q8(s8, (8, 4))
    s1, s2, s3, s4 = (np.float32(v) for v in (0.05, 0.02, 0.1, 0.04))
    z1, z2, z3, z4, z5 = np.array(128, u8), np.array(120, u8), np.array(100, u8), np.array(0, s8), np.array(90, u8)
    t = requantize(int_matmul(a, z1, b, z2), s1, s2, s3, z3)
    y = requantize(int_matmul(t, z3, c, z4), s3, s2, s4, z5)
    save_typed_case(out_dir, "odn_qlinearmatmul_chain",
                    [helper.make_node("QLinearMatMul", ["a", "s1", "z1", "b", "s2", "z2", "s3", "z3"], ["t"]),
                     helper.make_node("QLinearMatMul", ["t", "s3", "z3", "c", "s2", "z4", "s4", "z5"], ["y"])],
                    [("a", a)], [("y", y)],
                    [("b", b), ("c", c), ("s1", np.array(s1)), ("s2", np.array(s2)), ("s3", np.array(s3)),
                     ("s4", np.array(s4)), ("z1", z1), ("z2", z2), ("z3", z3), ("z4", z4), ("z5", z5)], opset=10)


def side_matmul(a, za, b, zb):
    """int matmul of 2-D operands less zero points per row of a (za: one
    value or M) and per column of b (zb: one value or N), in int64."""
    za = np.asarray(za, np.int64).reshape(-1, 1)
    zb = np.asarray(zb, np.int64).reshape(1, -1)
    return np.matmul(a.astype(np.int64) - za, b.astype(np.int64) - zb)


def side_requantize(acc, sa, sb, sy, zy):
    """requantize with sa per row (one value or M) and sb per column (one
    value or N): each multiplier in the scales' type, as ONNX. Returns (y,
    whether some value was a tie, whether some value saturated)."""
    st = sy.dtype.type
    sa = np.broadcast_to(np.asarray(sa).reshape(-1), (acc.shape[0],))
    sb = np.broadcast_to(np.asarray(sb).reshape(-1), (acc.shape[1],))
    mul = np.array([[st(st(x * w) / sy) for w in sb] for x in sa], np.float64)
    v = acc.astype(np.float64) * mul
    q = np.rint(v) + int(zy)
    info = np.iinfo(zy.dtype)
    return (np.clip(q, info.min, info.max).astype(zy.dtype), bool((v - np.floor(v) == 0.5).any()),
            bool(((q < info.min) | (q > info.max)).any()))


def side_quant_cases(out_dir):
    u8, s8 = np.uint8, np.int8
    # QLinearMatMul, b_scale and b_zero_point per column (runtime), uint8 a,
    # int8 b; 0.5 multipliers make ties, 4.0 ones saturate
    a, b = q8(u8, (5, 24)), q8(s8, (24, 6))
    sa, sy = np.float32(0.5), np.float32(1.0)
    sb = np.array([1.0, 0.0625, 0.01, 8.0, 0.03125, 0.5], np.float32)
    za, zb, zy = np.array(128, u8), np.array([0, -128, 127, 3, -7, 64], s8), np.array(118, u8)
    y, tie, sat = side_requantize(side_matmul(a, za, b, zb), sa, sb, sy, zy)
    assert tie and sat
    save_typed_case(out_dir, "odn_qlinearmatmul_per_column",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("sa", np.array(sa)), ("za", za), ("b", b), ("sb", sb), ("zb", zb),
                     ("sy", np.array(sy)), ("zy", zy)], [("y", y)], opset=10)
    # per row of a and per column of b, constant uint8 b (shifted once),
    # int8 a and output
    a, b = q8(s8, (4, 19)), q8(u8, (19, 7))
    sa = np.array([0.01, 0.02, 0.25, 0.003], np.float32)
    sb = np.array([0.5, 1.0, 0.1, 0.2, 0.3, 0.04, 2.0], np.float32)
    sy = np.float32(0.125)
    za, zb, zy = np.array([0, -128, 127, 9], s8), (np.arange(7) * 37 % 256).astype(u8), np.array(-2, s8)
    y, _, sat = side_requantize(side_matmul(a, za, b, zb), sa, sb, sy, zy)
    assert sat
    save_typed_case(out_dir, "odn_qlinearmatmul_per_row_column",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("sa", sa), ("za", za), ("sy", np.array(sy)), ("zy", zy)], [("y", y)],
                    [("b", b), ("sb", sb), ("zb", zb)], opset=10)
    # per-column b_scale only (zero points per tensor), float16 scales
    a, b = q8(u8, (3, 10)), q8(s8, (10, 4))
    sa, sy = np.float16(0.0123), np.float16(0.333)
    sb = np.array([0.0456, 0.5, 0.007, 1.5], np.float16)
    za, zb, zy = np.array(120, u8), np.array(-3, s8), np.array(101, u8)
    y, _, _ = side_requantize(side_matmul(a, za, b, zb), sa, sb, sy, zy)
    save_typed_case(out_dir, "odn_qlinearmatmul_per_column_f16",
                    [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                    [("a", a), ("b", b)], [("y", y)],
                    [("sa", np.array(sa)), ("za", za), ("sb", sb), ("zb", zb), ("sy", np.array(sy)), ("zy", zy)],
                    opset=21)
    # MatMulInteger: a_zero_point per row, b_zero_point per column, runtime
    # uint8 b (shifted each run)
    a, b = q8(u8, (6, 33)), q8(u8, (33, 5))
    za, zb = np.array([0, 255, 128, 1, 77, 200], u8), np.array([255, 0, 128, 31, 129], u8)
    save_typed_case(out_dir, "odn_matmulinteger_per_row_column",
                    [helper.make_node("MatMulInteger", ["A", "B", "za", "zb"], ["Y"])],
                    [("A", a), ("B", b), ("za", za), ("zb", zb)],
                    [("Y", side_matmul(a, za, b, zb).astype(np.int32))], opset=10)
    # MatMulInteger: int8, no a_zero_point, constant per-column b_zero_point
    a, b, zb = q8(s8, (2, 9)), q8(s8, (9, 3)), np.array([-128, 0, 127], s8)
    save_typed_case(out_dir, "odn_matmulinteger_per_column_s8",
                    [helper.make_node("MatMulInteger", ["A", "B", "", "zb"], ["Y"])],
                    [("A", a), ("B", b)], [("Y", side_matmul(a, 0, b, zb).astype(np.int32))], [("zb", zb)], opset=10)


def resize_case(out_dir, name, shape, mode, scales=None, sizes=None, **attrs):
    x = rng.standard_normal(shape).astype(np.float32)
    coeffs = linear_coeffs if mode == "linear" else (
        lambda r: nearest_coeffs(r, mode=attrs.get("nearest_mode", "round_prefer_floor")))
    kw = {}
    if "coordinate_transformation_mode" in attrs:
        kw["coordinate_transformation_mode"] = attrs["coordinate_transformation_mode"]
    if scales is not None:
        y = interpolate_nd(x, coeffs, scale_factors=np.array(scales, dtype=np.float32), **kw)
        inits = [("scales", np.array(scales, dtype=np.float32))]
        ins = ["X", "", "scales"]
    else:
        y = interpolate_nd(x, coeffs, output_size=sizes, **kw)
        inits = [("sizes", np.array(sizes, dtype=np.int64))]
        ins = ["X", "", "", "sizes"]
    node = helper.make_node("Resize", ins, ["Y"], mode=mode, **attrs)
    save_case(out_dir, name, [node], [("X", x)], [("Y", y.astype(np.float32))], inits)


def loop_resize_cases(out_dir):
    """Resize mappings oneDNN's resampling lacks, which run as the
    provider's C loop (odn_resize_loop.c); expected from ONNX's own
    interpolate_nd."""
    resize_case(out_dir, "odn_resize_loop_linear_asymmetric", (1, 2, 3, 4), "linear", scales=[1, 1, 2, 2],
                coordinate_transformation_mode="asymmetric")
    resize_case(out_dir, "odn_resize_loop_linear_align_corners", (1, 1, 4, 4), "linear", scales=[1, 1, 1.5, 2.5],
                coordinate_transformation_mode="align_corners")
    resize_case(out_dir, "odn_resize_loop_nearest_floor_align", (1, 2, 3, 4), "nearest", sizes=[1, 2, 5, 7],
                coordinate_transformation_mode="align_corners", nearest_mode="floor")
    resize_case(out_dir, "odn_resize_loop_nearest_asym_fraction", (2, 1, 5, 6), "nearest", scales=[1, 1, 0.6, 1.7],
                coordinate_transformation_mode="asymmetric")
    resize_case(out_dir, "odn_resize_loop_nearest_ceil", (1, 3, 3, 2), "nearest", scales=[1, 1, 2.5, 3],
                nearest_mode="ceil")
    resize_case(out_dir, "odn_resize_loop_linear_down_fraction", (1, 2, 7, 9), "linear", scales=[1, 1, 0.6, 0.7])
    # Upsample-9: linear maps asymmetrically
    x = rng.standard_normal((1, 2, 3, 5)).astype(np.float32)
    y = interpolate_nd(x, linear_coeffs, scale_factors=np.array([1, 1, 2, 3], dtype=np.float32),
                       coordinate_transformation_mode="asymmetric")
    save_typed_case(out_dir, "odn_upsample9_linear", [helper.make_node("Upsample", ["X", "scales"], ["Y"], mode="linear")],
                    [("X", x)], [("Y", y.astype(np.float32))], [("scales", np.array([1, 1, 2, 3], dtype=np.float32))],
                    opset=9)


def loop_cases(out_dir):
    """Shapes oneDNN 2.6 has only reference kernels for, which the provider
    runs as C loops (odn_loops.c, odn_binary_loop.c): reductions and softmax
    over middle axes, global pooling of a 1x1 map with a batch, a broadcast
    whose first operand is the smaller."""
    x = rng.standard_normal((2, 8, 16)).astype(np.float32)
    save_case(out_dir, "odn_loop_reduce_mean_mid", [helper.make_node("ReduceMean", ["X", "axes"], ["Y"])],
              [("X", x)], [("Y", x.astype(np.float64).mean(axis=1, keepdims=True))],
              [("axes", np.array([1], dtype=np.int64))])
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    save_case(out_dir, "odn_loop_reduce_sum_outer", [helper.make_node("ReduceSum", ["X", "axes"], ["Y"], keepdims=0)],
              [("X", x)], [("Y", x.astype(np.float64).sum(axis=(0, 2)))], [("axes", np.array([0, 2], dtype=np.int64))])
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    save_case(out_dir, "odn_loop_softmax_mid", [helper.make_node("Softmax", ["X"], ["Y"], axis=1)],
              [("X", x)], [("Y", e / e.sum(axis=1, keepdims=True))])
    x = rng.standard_normal((2, 7, 1, 1)).astype(np.float32)
    save_case(out_dir, "odn_loop_global_pool_1x1", [helper.make_node("GlobalAveragePool", ["X"], ["Y"])],
              [("X", x)], [("Y", x)])
    a = rng.standard_normal((2, 1, 4)).astype(np.float32)
    b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    save_case(out_dir, "odn_loop_sub_first_broadcasts", [helper.make_node("Sub", ["A", "B"], ["Y"])],
              [("A", a), ("B", b)], [("Y", a.astype(np.float64) - b)])


def instnorm_cases(out_dir):
    """InstanceNormalization (a C loop, odn_build_instnorm.c): after a Conv
    whose output is blocked inside the piece, then Relu; and rank 3 with a
    batch of 2, as torch's GroupNorm export reshapes. Numpy in float64."""
    def inorm(x, s, b, eps):
        axes = tuple(range(2, x.ndim))
        m = x.mean(axis=axes, keepdims=True)
        v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
        sh = (1, -1) + (1,) * (x.ndim - 2)
        return (x - m) / np.sqrt(v + eps) * s.reshape(sh) + b.reshape(sh)
    x = rng.standard_normal((1, 3, 9, 7)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    s = rng.uniform(0.5, 2, 16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    save_case(out_dir, "odn_instnorm_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("InstanceNormalization", ["C", "S", "B"], ["N"], epsilon=1e-3),
               helper.make_node("Relu", ["N"], ["Y"])],
              [("X", x)], [("Y", np.maximum(inorm(c, s, b, 1e-3), 0))],
              [("W", w.reshape(16, 3, 1, 1)), ("S", s), ("B", b)])
    x = (rng.standard_normal((2, 4, 50)) * 3 + 5).astype(np.float32)
    s = rng.uniform(0.5, 2, 4).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    save_case(out_dir, "odn_instnorm_rank3", [helper.make_node("InstanceNormalization", ["X", "S", "B"], ["Y"])],
              [("X", x)], [("Y", inorm(x.astype(np.float64), s, b, 1e-5))], [("S", s), ("B", b)])


def gelu_tanh_nodes(x, y):
    """tanh-GELU written out as torch exports GPT-2's gelu_new, x -> y."""
    return [helper.make_node("Pow", [x, "three"], ["g_cube"]),
            helper.make_node("Mul", ["g_cube", "g_k"], ["g_kc"]),
            helper.make_node("Add", [x, "g_kc"], ["g_in"]),
            helper.make_node("Mul", ["g_in", "g_s"], ["g_u"]),
            helper.make_node("Tanh", ["g_u"], ["g_t"]),
            helper.make_node("Add", ["g_t", "g_one"], ["g_b"]),
            helper.make_node("Mul", [x, "g_half"], ["g_h"]),
            helper.make_node("Mul", ["g_h", "g_b"], [y])]


def gelu_tanh_cases(out_dir):
    """tanh-GELU as odn_gelu_loop.c runs it: a post pass of the packed GEMM
    (a [1,32,64] x [64,250] MatMul, 250 columns: the loop's tail) and the
    written-out form after a Reshape (the activation step). Inputs reach
    |u| ~ 15, where e^(-2u) is 0 or overflows. Numpy in float64."""
    consts = [("three", np.array(3.0, np.float32)), ("g_k", np.array(0.044715, np.float32)),
              ("g_s", np.array(0.7978845608028654, np.float32)), ("g_one", np.array(1.0, np.float32)),
              ("g_half", np.array(0.5, np.float32))]
    ref = lambda v: 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    x = rng.uniform(-1, 1, (1, 32, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 250)) * 0.6).astype(np.float32)
    save_case(out_dir, "odn_gelu_tanh_after_matmul",
              [helper.make_node("MatMul", ["X", "W"], ["M"])] + gelu_tanh_nodes("M", "Y"),
              [("X", x)], [("Y", ref(x.astype(np.float64) @ w.astype(np.float64)))], [("W", w)] + consts)
    x = rng.uniform(-6, 6, (3, 5, 7)).astype(np.float32)
    save_case(out_dir, "odn_gelu_tanh_after_reshape",
              [helper.make_node("Reshape", ["X", "shape"], ["R"])] + gelu_tanh_nodes("R", "Y"),
              [("X", x)], [("Y", ref(x.astype(np.float64)).reshape(15, 7))],
              [("shape", np.array([15, 7], np.int64))] + consts)


def softplus64(v):
    v = v.astype(np.float64)
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


def mish_cases(out_dir):
    """Softplus as oneDNN's soft_relu (large, NaN and infinite inputs) and Mish
    written out as x * Tanh(Softplus(x)) after a Conv (a mish post-op) and
    after a Reshape (one eltwise step). Numpy in float64."""
    x = rng.uniform(-30, 30, (2, 3, 5, 7)).astype(np.float32)
    x.flat[:6] = [np.nan, np.inf, -np.inf, 0.0, 90.0, -90.0]
    with np.errstate(invalid="ignore"):
        y = softplus64(x)
    save_case(out_dir, "odn_softplus_extremes", [helper.make_node("Softplus", ["X"], ["Y"])],
              [("X", x)], [("Y", y.astype(np.float32))])
    mish_nodes = [helper.make_node("Softplus", ["C"], ["S"]), helper.make_node("Tanh", ["S"], ["T"]),
                  helper.make_node("Mul", ["C", "T"], ["Y"])]
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w = (rng.standard_normal((16, 3)) * 2).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    save_case(out_dir, "odn_mish_after_conv", [helper.make_node("Conv", ["X", "W"], ["C"])] + mish_nodes,
              [("X", x)], [("Y", (c * np.tanh(softplus64(c))).astype(np.float32))], [("W", w.reshape(16, 3, 1, 1))])
    x = rng.uniform(-8, 8, (4, 5, 6)).astype(np.float32)
    r = x.astype(np.float64).reshape(20, 6)
    save_case(out_dir, "odn_mish_after_reshape", [helper.make_node("Reshape", ["X", "shape"], ["C"])] + mish_nodes,
              [("X", x)], [("Y", (r * np.tanh(softplus64(r))).astype(np.float32))],
              [("shape", np.array([20, 6], np.int64))])


def prelu64(x, s):
    """ONNX PRelu in float64: x < 0 ? slope * x : x (NaN stays NaN)."""
    x = x.astype(np.float64)
    return np.where(x < 0, x * s.astype(np.float64), x)


def prelu_cases(out_dir):
    """PRelu (odn_build_prelu.c): per-channel slopes after a Conv (oneDNN's
    prelu in the blocked layout, 16 and 20 channels) and on piece inputs of
    rank 4 and 3; a scalar slope (an eltwise relu, alone and as a Conv's
    post-op); slopes broadcast along other axes (the C loop); a slope fed
    at run time; NaN, infinities and signed zeros; float16. Numpy float64."""
    for ch in (16, 20):
        x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
        w1 = rng.standard_normal((ch, 3)).astype(np.float32)
        w2 = rng.standard_normal((8, ch)).astype(np.float32)
        sl = rng.uniform(-0.5, 0.5, (ch, 1, 1)).astype(np.float32)
        c = conv1x1(x.astype(np.float64), w1.astype(np.float64))
        y = conv1x1(prelu64(c, sl), w2.astype(np.float64))
        save_case(out_dir, "odn_prelu_after_conv_c%d" % ch,
                  [helper.make_node("Conv", ["X", "W1"], ["C"]), helper.make_node("PRelu", ["C", "S"], ["P"]),
                   helper.make_node("Conv", ["P", "W2"], ["Y"])],
                  [("X", x)], [("Y", y)],
                  [("W1", w1.reshape(ch, 3, 1, 1)), ("S", sl), ("W2", w2.reshape(8, ch, 1, 1))])
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    sl = rng.uniform(0.1, 0.3, (16, 1, 1)).astype(np.float32)
    save_case(out_dir, "odn_prelu_conv_output",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("PRelu", ["C", "S"], ["Y"])],
              [("X", x)], [("Y", prelu64(conv1x1(x.astype(np.float64), w.astype(np.float64)), sl))],
              [("W", w.reshape(16, 3, 1, 1)), ("S", sl)])
    sl1 = np.array([0.2], np.float32)
    save_case(out_dir, "odn_prelu_scalar_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("PRelu", ["C", "S"], ["Y"])],
              [("X", x)], [("Y", prelu64(conv1x1(x.astype(np.float64), w.astype(np.float64)), sl1))],
              [("W", w.reshape(16, 3, 1, 1)), ("S", sl1)])
    # piece inputs, per channel (rank 4 [C,1,1], rank 3 [C,1], rank 2 [C]),
    # and broadcast along other axes (the C loop)
    for name, xs, ss in (("rank4", (2, 5, 4, 3), (5, 1, 1)), ("rank3", (2, 6, 7), (6, 1)),
                         ("rank2", (4, 9), (9,)), ("last_axis", (2, 3, 4, 5), (5,)),
                         ("height", (2, 3, 4, 5), (4, 1)), ("full", (2, 3, 4), (2, 3, 4)),
                         ("scalar", (2, 3, 4, 5), ()), ("one", (2, 3, 4, 5), (1, 1))):
        x = rng.standard_normal(xs).astype(np.float32)
        sl = rng.uniform(-1.0, 1.0, ss).astype(np.float32)
        save_case(out_dir, "odn_prelu_%s" % name, [helper.make_node("PRelu", ["X", "S"], ["Y"])],
                  [("X", x)], [("Y", prelu64(x, sl))], [("S", sl)])
    # the slope fed at run time: oneDNN's prelu reads it each run
    x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    sl = rng.uniform(-1.0, 1.0, (4, 1, 1)).astype(np.float32)
    save_case(out_dir, "odn_prelu_slope_input",
              [helper.make_node("Relu", ["X"], ["R"]), helper.make_node("Neg", ["R"], ["N"]),
               helper.make_node("PRelu", ["N", "S"], ["Y"])],
              [("X", x), ("S", sl)], [("Y", prelu64(-np.maximum(x, 0), sl))])
    # NaN, infinities and zeros, per channel (oneDNN's prelu) and scalar (relu)
    x = rng.standard_normal((1, 4, 3, 4)).astype(np.float32)
    x.flat[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1e-30, 1e30, -1e30]
    x[0, 1, 0, :3] = [np.nan, -np.inf, -2.0]
    for name, ss in (("channel", (4, 1, 1)), ("scalar", ())):
        sl = rng.uniform(0.1, 0.9, ss).astype(np.float32)
        with np.errstate(invalid="ignore"):
            y = prelu64(x, sl)
        save_case(out_dir, "odn_prelu_nan_%s" % name, [helper.make_node("PRelu", ["X", "S"], ["Y"])],
                  [("X", x)], [("Y", y)], [("S", sl)])
    # float16, computed in float32: x * slope of two halves is exact there,
    # so the one rounding gives numpy's float64 result rounded to float16
    x = rng.standard_normal((2, 8, 3, 5)).astype(np.float16)
    for name, ss in (("channel", (8, 1, 1)), ("scalar", (1,))):
        sl = rng.uniform(-1.0, 1.0, ss).astype(np.float16)
        save_typed_case(out_dir, "odn_prelu_f16_%s" % name, [helper.make_node("PRelu", ["X", "S"], ["Y"])],
                        [("X", x)], [("Y", prelu64(x, sl).astype(np.float16))], [("S", sl)])

def np_pad(x, pads, mode, value=0.0):
    """ONNX Pad by numpy: negative pads crop first, then np.pad."""
    r = x.ndim
    crop = tuple(slice(max(-pads[d], 0), x.shape[d] - max(-pads[r + d], 0)) for d in range(r))
    width = [(max(pads[d], 0), max(pads[r + d], 0)) for d in range(r)]
    x = x[crop]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode={"reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode])


def pad_cases(out_dir):
    """Pad (a C loop, odn_build_pad.c) in each mode on float data, after a
    Conv as torch's ReflectionPad2d sits, with a reflection wider than the
    dim (reflected again), negative pads that crop, an axes input (opset 18)
    and a constant value."""
    x = rng.standard_normal((1, 3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    pads = [0, 0, 2, 2, 0, 0, 2, 2]
    save_case(out_dir, "odn_pad_reflect_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("Pad", ["C", "pads"], ["P"], mode="reflect"),
               helper.make_node("Relu", ["P"], ["Y"])],
              [("X", x)], [("Y", np.maximum(np_pad(c, pads, "reflect"), 0))],
              [("W", w.reshape(16, 3, 1, 1)), ("pads", np.array(pads, dtype=np.int64))])
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for mode, pads in (("reflect", [0, 1, 7, 1, 0, 5]), ("edge", [1, 0, 3, 0, 2, 1]), ("wrap", [0, 2, 5, 0, 1, 6]),
                       ("constant", [0, -1, 2, 1, 1, -2])):
        save_typed_case(out_dir, "odn_pad_%s" % mode,
                        [helper.make_node("Pad", ["X", "pads", "value"], ["Y"], mode=mode)],
                        [("X", x)], [("Y", np_pad(x, pads, mode, 1.5).astype(np.float32))],
                        [("pads", np.array(pads, dtype=np.int64)), ("value", np.array(1.5, dtype=np.float32))])
    # axes [1, -1] of a [2, 3, 4]: begins 1, 0 and ends 0, 2 on dims 1 and 2
    save_typed_case(out_dir, "odn_pad_axes18",
                    [helper.make_node("Pad", ["X", "pads", "", "axes"], ["Y"], mode="edge")],
                    [("X", x)], [("Y", np_pad(x, [0, 1, 0, 0, 0, 2], "edge").astype(np.float32))],
                    [("pads", np.array([1, 0, 0, 2], dtype=np.int64)), ("axes", np.array([1, -1], dtype=np.int64))],
                    opset=18)


def broadcast_post_op_cases(out_dir):
    """A binary op followed by a per-channel binary on [N>1, C, 1, ...]
    (a quantize_dynamic CNN's scale Mul then bias Add at a 1x1 map):
    oneDNN 2.6's binary primitive applied such a post-op with channel 0's
    value for every channel, so the provider keeps it a separate step."""
    s = np.array(1.5, dtype=np.float32)
    for name, shape, op2 in (("odn_bcast_post_add_1x1", (2, 64, 1, 1), "Add"),
                             ("odn_bcast_post_add_rank3", (2, 64, 1), "Add"),
                             ("odn_bcast_post_mul_2d", (3, 16), "Mul")):
        x = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal((1, shape[1]) + (1,) * (len(shape) - 2)).astype(np.float32)
        m = x.astype(np.float64) * 1.5
        y = m + b if op2 == "Add" else m * b
        save_case(out_dir, name,
                  [helper.make_node("Mul", ["X", "S"], ["M"]), helper.make_node(op2, ["M", "B"], ["Y"])],
                  [("X", x), ("B", b)], [("Y", y)], [("S", s)])


def deconv_tiles_ref(x, w, b):
    """ConvTranspose with kernel == stride, no pads: each input pixel writes
    its own kh x kw tile, y[n,m,h*kh+i,w*kw+j] = sum_c x[n,c,h,w] W[c,m,i,j] + b[m]."""
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    t = np.einsum("nchw,cmij->nmhiwj", x.astype(np.float64), w.astype(np.float64))
    y = t.reshape(n, m, h * kh, wd * kw)
    return y + (0 if b is None else b.astype(np.float64).reshape(1, m, 1, 1))


def deconv_ref(x, w, b, strides, dils, pb, out_hw):
    """ConvTranspose by scatter in float64: input pixel (h, w) adds
    x * W[c, m, i, j] at (h*s - pad_begin + i*d, w*s - pad_begin + j*d),
    kept where that falls inside the out_hw output."""
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    y = np.zeros((n, m) + tuple(out_hw))
    t = np.einsum("nchw,cmij->nmhwij", x.astype(np.float64), w.astype(np.float64))
    for i in range(kh):
        for j in range(kw):
            for ih in range(h):
                oh = ih * strides[0] - pb[0] + i * dils[0]
                if not 0 <= oh < out_hw[0]:
                    continue
                for iw in range(wd):
                    ow = iw * strides[1] - pb[1] + j * dils[1]
                    if 0 <= ow < out_hw[1]:
                        y[:, :, oh, ow] += t[:, :, ih, iw, i, j]
    return y + (0 if b is None else b.astype(np.float64).reshape(1, m, 1, 1))


def deconv_gemm_cases(out_dir):
    """The matmul-and-gather ConvTranspose (odn_build_deconv_gemm.c), with
    the padding each way of giving it: torch's k3 s2 p1 output_padding 1
    (bias, then Relu), output_shape (as the whole shape), auto_pad
    SAME_UPPER and SAME_LOWER with an odd total, dilation 2 with asymmetric
    pads, stride 3 kernel 4, and after a Conv inside the piece."""
    def case(name, shape, m, k, attrs, strides, dils, pb, out_hw, bias=True, relu=False):
        x = rng.standard_normal(shape).astype(np.float32)
        w = (rng.standard_normal((shape[1], m) + k) / np.sqrt(shape[1] * k[0] * k[1])).astype(np.float32)
        b = rng.standard_normal(m).astype(np.float32) if bias else None
        y = deconv_ref(x, w, b, strides, dils, pb, out_hw)
        ins = ["X", "W"] + (["B"] if bias else [])
        nodes = [helper.make_node("ConvTranspose", ins, ["D" if relu else "Y"], **attrs)]
        if relu:
            nodes.append(helper.make_node("Relu", ["D"], ["Y"]))
            y = np.maximum(y, 0)
        save_case(out_dir, name, nodes, [("X", x)], [("Y", y)], [("W", w)] + ([("B", b)] if bias else []))
    case("odn_deconv_gemm_torch", (2, 5, 6, 7), 6, (3, 3),
         dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]), (2, 2), (1, 1), (1, 1), (12, 14), relu=True)
    # output_shape [1, 4, 10, 9]: full 11 x 9 (k3 s2 on 5 x 4), totals 1 and 0, the odd one at the start
    case("odn_deconv_gemm_output_shape", (1, 3, 5, 4), 4, (3, 3),
         dict(strides=[2, 2], output_shape=[1, 4, 10, 9]), (2, 2), (1, 1), (1, 0), (10, 9))
    # SAME_UPPER, k4 s2: total 2 each way -> 1 and 1; SAME_LOWER k3 s2: total 1 -> begin 1
    case("odn_deconv_gemm_same_upper", (1, 3, 4, 5), 5, (4, 4),
         dict(strides=[2, 2], auto_pad="SAME_UPPER"), (2, 2), (1, 1), (1, 1), (8, 10), bias=False)
    case("odn_deconv_gemm_same_lower", (1, 3, 4, 5), 5, (3, 3),
         dict(strides=[2, 2], auto_pad="SAME_LOWER"), (2, 2), (1, 1), (1, 1), (8, 10))
    # dilation 2, k3 s1, pads [2, 0, 1, 3]: full 6+4=... out = (h-1) + 5 - pads
    case("odn_deconv_gemm_dilated", (1, 4, 5, 6), 3, (3, 3),
         dict(dilations=[2, 2], pads=[2, 0, 1, 3]), (1, 1), (2, 2), (2, 0), (6, 7))
    case("odn_deconv_gemm_stride3", (1, 2, 3, 4), 4, (4, 4),
         dict(strides=[3, 3], pads=[1, 2, 0, 1]), (3, 3), (1, 1), (1, 2), (9, 10))
    # 1-D, as a vocoder upsamples (HiFi-GAN: k = 2s, pads s/2), then LeakyRelu
    x = rng.standard_normal((2, 6, 9)).astype(np.float32)
    w = (rng.standard_normal((6, 5, 8)) / 7).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    y = deconv_ref(x[:, :, None, :], w[:, :, None, :], b, (1, 4), (1, 1), (0, 2), (1, 36))[:, :, 0, :]
    save_case(out_dir, "odn_deconv_gemm_1d",
              [helper.make_node("ConvTranspose", ["X", "W", "B"], ["D"], strides=[4], pads=[2, 2]),
               helper.make_node("LeakyRelu", ["D"], ["Y"], alpha=0.1)],
              [("X", x)], [("Y", np.where(y > 0, y, 0.1 * y))], [("W", w), ("B", b)])
    # after a Conv (NHWC or blocked input inside the piece)
    x = rng.standard_normal((1, 3, 5, 6)).astype(np.float32)
    wc = rng.standard_normal((16, 3)).astype(np.float32)
    wd = (rng.standard_normal((16, 8, 3, 3)) / 12).astype(np.float32)
    c = conv1x1(x.astype(np.float64), wc.astype(np.float64))
    y = deconv_ref(c, wd, None, (2, 2), (1, 1), (1, 1), (10, 12))
    save_case(out_dir, "odn_deconv_gemm_after_conv",
              [helper.make_node("Conv", ["X", "WC"], ["C"]),
               helper.make_node("ConvTranspose", ["C", "WD"], ["Y"], strides=[2, 2], pads=[1, 1, 1, 1],
                                output_padding=[1, 1])],
              [("X", x)], [("Y", y)], [("WC", wc.reshape(16, 3, 1, 1)), ("WD", wd)])


def slice_cases(out_dir):
    """Slice (a C loop, odn_build_slice.c) inside fused work: rotate_half as
    rotary attention writes it (MatMul -> two Slices of the last axis ->
    Neg -> Concat -> Mul/Add with cos and sin), a backward slice with step
    -2 and a start past the end, and step 3 over two axes. Numpy."""
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) / 4).astype(np.float32)
    cos, sin = rng.uniform(-1, 1, 16).astype(np.float32), rng.uniform(-1, 1, 16).astype(np.float32)
    q = x.astype(np.float64) @ w
    rot = np.concatenate([-q[..., 8:], q[..., :8]], axis=-1)
    i64 = lambda v: np.array(v, dtype=np.int64)
    save_case(out_dir, "odn_slice_rotate_half",
              [helper.make_node("MatMul", ["X", "W"], ["Q"]),
               helper.make_node("Slice", ["Q", "s0", "e8", "ax"], ["Q1"]),
               helper.make_node("Slice", ["Q", "e8", "big", "ax"], ["Q2"]),
               helper.make_node("Neg", ["Q2"], ["NQ2"]),
               helper.make_node("Concat", ["NQ2", "Q1"], ["R"], axis=-1),
               helper.make_node("Mul", ["Q", "cos"], ["A"]), helper.make_node("Mul", ["R", "sin"], ["B"]),
               helper.make_node("Add", ["A", "B"], ["Y"])],
              [("X", x)], [("Y", q * cos + rot * sin)],
              [("W", w), ("cos", cos), ("sin", sin), ("s0", i64([0])), ("e8", i64([8])),
               ("big", i64([2**62])), ("ax", i64([-1]))])
    x = rng.standard_normal((3, 7, 10)).astype(np.float32)
    save_case(out_dir, "odn_slice_backward",
              [helper.make_node("Slice", ["X", "s", "e", "a", "st"], ["Y"])],
              [("X", x)], [("Y", x[:, 100:0:-2, ::-1])],
              [("s", i64([100, -1])), ("e", i64([0, -2**62])), ("a", i64([1, 2])), ("st", i64([-2, -1]))])
    save_case(out_dir, "odn_slice_step3",
              [helper.make_node("Relu", ["X"], ["R"]), helper.make_node("Slice", ["R", "s", "e", "a", "st"], ["Y"])],
              [("X", x)], [("Y", np.maximum(x, 0)[1:, :, 2:9:3])],
              [("s", i64([1, 2])), ("e", i64([3, 9])), ("a", i64([0, 2])), ("st", i64([1, 3]))])
    # between convolutions, in their channel-blocked layout: a TCN's chomp
    # (the time axis), a backward step over H and W, whole 16-channel blocks
    # of 48; and 12 of them (not whole blocks: the plain path)
    relu = lambda v: np.maximum(v, 0)
    x1 = rng.standard_normal((2, 16, 30)).astype(np.float32)
    wa = (rng.standard_normal((32, 16, 3)) * 0.2).astype(np.float32)
    wb = (rng.standard_normal((16, 32, 1)) * 0.2).astype(np.float32)
    a = relu(float_conv(x1, wa, [2], [4, 4]))[:, :, :-4]
    save_case(out_dir, "odn_slice_blocked_chomp",
              [helper.make_node("Conv", ["X", "WA"], ["A"], dilations=[2], pads=[4, 4]),
               helper.make_node("Relu", ["A"], ["RA"]),
               helper.make_node("Slice", ["RA", "s", "e", "a"], ["S"]),
               helper.make_node("Conv", ["S", "WB"], ["Y"])],
              [("X", x1)], [("Y", float_conv(a, wb, [1], [0, 0]).astype(np.float32))],
              [("WA", wa), ("WB", wb), ("s", i64([0])), ("e", i64([-4])), ("a", i64([2]))])
    x2 = rng.standard_normal((1, 8, 9, 11)).astype(np.float32)
    wc = (rng.standard_normal((48, 8, 1, 1)) * 0.3).astype(np.float32)
    wd = (rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32)
    we = (rng.standard_normal((8, 12, 1, 1)) * 0.3).astype(np.float32)
    c = relu(float_conv(x2, wc, [1, 1], [0] * 4))
    sl = c[:, 16:32, 7::-2, ::-3]
    save_case(out_dir, "odn_slice_blocked_channels_spatial",
              [helper.make_node("Conv", ["X", "WC"], ["C"]), helper.make_node("Relu", ["C"], ["RC"]),
               helper.make_node("Slice", ["RC", "s", "e", "a", "st"], ["S"]),
               helper.make_node("Conv", ["S", "WD"], ["Y"])],
              [("X", x2)], [("Y", float_conv(sl, wd, [1, 1], [0] * 4).astype(np.float32))],
              [("WC", wc), ("WD", wd), ("s", i64([16, 7, -1])), ("e", i64([32, -2**62, -2**62])),
               ("a", i64([1, 2, 3])), ("st", i64([1, -2, -3]))])
    save_case(out_dir, "odn_slice_blocked_partial_channels",
              [helper.make_node("Conv", ["X", "WC"], ["C"]), helper.make_node("Relu", ["C"], ["RC"]),
               helper.make_node("Slice", ["RC", "s", "e", "a"], ["S"]),
               helper.make_node("Conv", ["S", "WE"], ["Y"])],
              [("X", x2)], [("Y", float_conv(c[:, 4:16], we, [1, 1], [0] * 4).astype(np.float32))],
              [("WC", wc), ("WE", we), ("s", i64([4])), ("e", i64([16])), ("a", i64([1]))])


def deconv_tile_cases(out_dir):
    """The tiled ConvTranspose path (odn_build_deconv_tiles.c): bias or
    not, square and non-square tiles, one output channel, a fused Relu,
    inside a piece (after a Conv) and as the piece output."""
    for name, shape, m, k, bias, relu in (("odn_deconv_tiles_2x2_bias", (2, 5, 3, 4), 7, (2, 2), True, False),
                                          ("odn_deconv_tiles_2x3_relu", (1, 4, 2, 3), 3, (2, 3), False, True),
                                          ("odn_deconv_tiles_1ch", (1, 6, 4, 4), 1, (2, 2), True, True)):
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal((shape[1], m) + k).astype(np.float32)
        b = rng.standard_normal(m).astype(np.float32) if bias else None
        y = deconv_tiles_ref(x, w, b)
        ins = ["X", "W"] + (["B"] if bias else [])
        nodes = [helper.make_node("ConvTranspose", ins, ["D" if relu else "Y"], kernel_shape=list(k), strides=list(k))]
        if relu:
            nodes.append(helper.make_node("Relu", ["D"], ["Y"]))
            y = np.maximum(y, 0)
        inits = [("W", w)] + ([("B", b)] if bias else [])
        save_case(out_dir, name, nodes, [("X", x)], [("Y", y.astype(np.float32))], inits)
    # after a Conv (NHWC or blocked input inside the piece), tile 2x2
    x = rng.standard_normal((1, 3, 5, 6)).astype(np.float32)
    wc = rng.standard_normal((16, 3)).astype(np.float32)
    wd = rng.standard_normal((16, 8, 2, 2)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), wc.astype(np.float64))
    y = deconv_tiles_ref(c, wd, None)
    save_case(out_dir, "odn_deconv_tiles_after_conv",
              [helper.make_node("Conv", ["X", "WC"], ["C"]),
               helper.make_node("ConvTranspose", ["C", "WD"], ["Y"], kernel_shape=[2, 2], strides=[2, 2])],
              [("X", x)], [("Y", y.astype(np.float32))], [("WC", wc.reshape(16, 3, 1, 1)), ("WD", wd)])


def conv1x1(x, w):
    return np.einsum("oc,nc...->no...", w, x)


def lrn_ref(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """The ONNX spec's LRN, in float64."""
    x = x.astype(np.float64)
    c = x.shape[1]
    sq = np.zeros_like(x)
    lo_off, hi_off = (size - 1) // 2, size - 1 - (size - 1) // 2
    for k in range(c):
        lo, hi = max(0, k - lo_off), min(c - 1, k + hi_off)
        sq[:, k] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    instnorm_cases(out_dir)
    gelu_tanh_cases(out_dir)
    slice_cases(out_dir)
    deconv_gemm_cases(out_dir)
    broadcast_post_op_cases(out_dir)
    pad_cases(out_dir)
    # nearest ties at a dyadic scale: round_prefer_ceil rounds up, as oneDNN does
    resize_case(out_dir, "odn_resize_nearest_ceil_down2", (1, 2, 4, 6), "nearest", sizes=[1, 2, 2, 3],
                nearest_mode="round_prefer_ceil")
    resize_case(out_dir, "odn_resize_linear_pytorch_up", (2, 3, 5, 4), "linear", sizes=[2, 3, 10, 8],
                coordinate_transformation_mode="pytorch_half_pixel")
    resize_case(out_dir, "odn_resize_linear_down_half", (1, 1, 6, 8), "linear", scales=[1, 1, 0.5, 0.5])
    resize_case(out_dir, "odn_resize_nearest_rank3", (1, 2, 5), "nearest", scales=[1, 1, 3.0])
    resize_case(out_dir, "odn_resize_linear_rank5", (1, 1, 2, 3, 4), "linear", scales=[1, 1, 2, 2, 2])
    # Conv (blocked output inside the piece) -> Resize linear -> Relu
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    r = interpolate_nd(c, linear_coeffs, scale_factors=np.array([1, 1, 2, 2], dtype=np.float32))
    save_case(out_dir, "odn_resize_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("Resize", ["C", "", "scales"], ["R"], mode="linear"),
               helper.make_node("Relu", ["R"], ["Y"])],
              [("X", x)], [("Y", np.maximum(r, 0).astype(np.float32))],
              [("W", w.reshape(16, 3, 1, 1)), ("scales", np.array([1, 1, 2, 2], dtype=np.float32))])
    # LRN: size 5 and 1, rank 3 and 5, after a Conv
    for name, shape, size, attrs in (("odn_lrn_size5", (2, 7, 3, 3), 5, dict(alpha=0.01, beta=0.6, bias=1.5)),
                                     ("odn_lrn_size1", (1, 4, 3, 3), 1, {}),
                                     ("odn_lrn_rank3", (2, 6, 5), 3, dict(alpha=0.1)),
                                     ("odn_lrn_rank5", (1, 5, 2, 3, 2), 3, dict(beta=0.9))):
        x = rng.standard_normal(shape).astype(np.float32)
        y = lrn_ref(x, size, **attrs)
        save_case(out_dir, name, [helper.make_node("LRN", ["X"], ["Y"], size=size, **attrs)], [("X", x)],
                  [("Y", y.astype(np.float32))])
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    c = conv1x1(x.astype(np.float64), w.astype(np.float64))
    save_case(out_dir, "odn_lrn_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]), helper.make_node("LRN", ["C"], ["Y"], size=5, alpha=0.05)],
              [("X", x)], [("Y", lrn_ref(c, 5, alpha=0.05).astype(np.float32))], [("W", w.reshape(16, 3, 1, 1))])
    # ReduceLogSumExp over rows that overflow a naive exp, hold +inf, are
    # all -inf, hold NaN, or are ordinary
    inf, nan = np.inf, np.nan
    x = np.array([[1000.0, 999.0, 998.0, 0.0], [1.0, inf, 2.0, 3.0], [-inf, -inf, -inf, -inf],
                  [1.0, nan, 2.0, 3.0], [-1.5, 0.25, 2.0, -3.0], [-100.0, -101.0, -99.0, -100.5]], dtype=np.float32)
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(xd, axis=1, keepdims=True)
        mf = np.where(np.isfinite(m), m, 0.0)
        y = np.log(np.sum(np.exp(xd - mf), axis=1, keepdims=True)) + mf
    save_case(out_dir, "odn_reduce_log_sum_exp_extremes",
              [helper.make_node("ReduceLogSumExp", ["X", "axes"], ["Y"], keepdims=1)],
              [("X", x)], [("Y", y.astype(np.float32))], [("axes", np.array([1], dtype=np.int64))])
    loop_resize_cases(out_dir)
    mish_cases(out_dir)
    prelu_cases(out_dir)
    dilated_pad_cases(out_dir)
    minmax_cases(out_dir)
    narrow_group_cases(out_dir)
    exp_cases(out_dir)
    log_bucket_cases(out_dir)
    middle_reduce_cases(out_dir)
    deconv_tile_cases(out_dir)
    loop_cases(out_dir)
    # Concat as copies of contiguous runs: two convolutions' nChw16c outputs
    # (16 + 32 channels, batch 2) along C, and plain inputs along axis 2
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w1 = rng.standard_normal((16, 3)).astype(np.float32)
    w2 = rng.standard_normal((32, 3)).astype(np.float32)
    c1, c2 = conv1x1(x.astype(np.float64), w1.astype(np.float64)), conv1x1(x.astype(np.float64), w2.astype(np.float64))
    save_case(out_dir, "odn_concat_runs_blocked",
              [helper.make_node("Conv", ["X", "W1"], ["C1"]), helper.make_node("Conv", ["X", "W2"], ["C2"]),
               helper.make_node("Concat", ["C1", "C2"], ["K"], axis=1), helper.make_node("Relu", ["K"], ["Y"])],
              [("X", x)], [("Y", np.maximum(np.concatenate([c1, c2], axis=1), 0).astype(np.float32))],
              [("W1", w1.reshape(16, 3, 1, 1)), ("W2", w2.reshape(32, 3, 1, 1))])
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    save_case(out_dir, "odn_concat_runs_plain_axis2",
              [helper.make_node("Relu", ["A"], ["RA"]), helper.make_node("Relu", ["B"], ["RB"]),
               helper.make_node("Concat", ["RA", "RB"], ["Y"], axis=2)],
              [("A", a), ("B", b)], [("Y", np.concatenate([np.maximum(a, 0), np.maximum(b, 0)], axis=2))])
    # the provider claims int8 only with VNNI and bf16 only with native bf16
    # (odn_int8_exact, odn_bf16_native): elsewhere these cases would not be
    # claimed, and the check requires every extra case to be
    flags = cpu_flags()
    if "avx512_vnni" in flags or "avx_vnni" in flags:
        quant_cases(out_dir)
        side_quant_cases(out_dir)
        qconv_cases(out_dir)
        grouped_qconv_cases(out_dir)
    if "avx512_bf16" in flags:
        bf16_cases(out_dir)
    return 0


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
