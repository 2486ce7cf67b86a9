#!/usr/bin/python3
"""The com.microsoft QOperator ops the oneDNN provider runs (odn_qop.c,
odn_qop_gemm.c) on shapes large enough for their AVX2 kernels, their
tails and their threaded paths: QLinearAdd and QLinearMul (same shape,
per-channel and scalar operands on either side, broadcast with outer
dims, power-of-two scales that make ties, saturating scales), the table
ops, QLinearConcat, QLinearGlobalAveragePool (NCHW and NHWC) and the
whole-image QLinearAveragePool, QGemm (M = 1 heads, transposes, every C
shape, float output), MatMulIntegerToFloat, and Reshape/Flatten of 8-bit
data (a view, or a copy into the model's output), MaxPool of 8-bit data. Also QLinearConvs whose
weights pass the old 255 * sum |w| bound of one exact float pass but not
255 * max(positive, negative sum) (bound_cases). Expected outputs come from
tests/kernels/qop_cases.py's numpy replay of ONNX Runtime's float
operations, which the reference provider matches bit for bit; every model
must run on onednn alone and match with --rtol 0 --atol 0.
usage: extra_cases_qop.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "kernels"))
import qop_cases as qc  # noqa: E402

F32 = np.float32


def binary(out, names):
    # (A shape, B shape, scales (sa, sb, sc) or None for random)
    shapes = [((1, 32, 20, 21), (1, 32, 20, 21), None),
              ((1, 32, 20, 21), (1, 32, 1, 1), None),
              ((1, 32, 1, 1), (1, 32, 20, 21), None),
              ((2, 5, 37), (37,), None),
              ((), (3, 50), None),
              ((3, 50), (), None),
              ((1, 16, 64, 70), (1, 16, 64, 70), None),
              ((1, 24, 9, 9), (1, 24, 9, 9), (2.0 ** -7, 2.0 ** -7, 2.0 ** -6)),
              ((1, 24, 9, 9), (1, 24, 9, 9), (0.02, 0.03, 0.002))]
    k = 0
    for op, fn in (("QLinearAdd", qc.qlinear_add), ("QLinearMul", qc.qlinear_mul)):
        for t in (np.uint8, np.int8):
            for sa_shape, sb_shape, scales in shapes:
                if op == "QLinearMul" and sa_shape == (1, 16, 64, 70):
                    continue
                k += 1
                c = qc.Case("odn_%s_%s_%d" % (op.lower(), t.__name__, k), 1000 + k)
                if scales:
                    sa, sb, sc = [F32(v) for v in scales]
                else:
                    sa, sb, sc = [F32(v) for v in c.rng.uniform(0.004, 0.012, 3)]
                if op == "QLinearMul":
                    sc = F32(sa * sb * c.rng.uniform(60, 120))
                za, zb, zc = [qc.zp_of(t, int(v)) for v in c.rng.integers(100, 160, 3)]
                qa, a = c.qinput(sa_shape, sa, za, t)
                qb, b = c.qinput(sb_shape, sb, zb, t)
                want = fn(a, sa, za, b, sb, zb, sc, zc, t)
                c.write(out, op, [qa, c.const(sa, F32), c.const(za, t), qb, c.const(sb, F32), c.const(zb, t),
                                  c.const(sc, F32), c.const(zc, t)], want)
                names.append(c.name)


def tables(out, names):
    k = 0
    for op in ("QLinearSigmoid", "QLinearLeakyRelu"):
        for t in (np.uint8, np.int8):
            k += 1
            c = qc.Case("odn_%s_%s_%d" % (op.lower(), t.__name__, k), 1100 + k)
            xs, ys = F32(0.03), F32(1 / 255.0 if op == "QLinearSigmoid" else 0.013)
            zx, zy = qc.zp_of(t, 128), qc.zp_of(t, 0 if op == "QLinearSigmoid" else 90)
            q, x = c.qinput((1, 40, 9, 11), xs, zx, t)
            attrs = {}
            if op == "QLinearSigmoid":
                fn = qc.mlas_logistic
            else:
                attrs["alpha"] = 0.1
                fn = lambda v: np.where(v >= 0, v, F32(0.1) * v)  # noqa: E731
            want = qc.table_op(x, xs, zx, ys, zy, t, fn)
            c.write(out, op, [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32), c.const(zy, t)], want, **attrs)
            names.append(c.name)


def pools(out, names):
    k = 0
    for t in (np.uint8, np.int8):
        for shape, channels_last, op in (((1, 64, 19, 19), False, "QLinearGlobalAveragePool"),
                                         ((2, 9, 9, 40), True, "QLinearGlobalAveragePool"),
                                         ((1, 24, 7, 7), False, "QLinearAveragePool")):
            k += 1
            c = qc.Case("odn_%s_%s_%d" % (op.lower(), t.__name__, k), 1200 + k)
            xs, ys, zx, zy = F32(0.02), F32(0.004), qc.zp_of(t, 125), qc.zp_of(t, 118)
            q, x = c.qinput(shape, xs, zx, t)
            want = qc.global_pool(x, xs, zx, ys, zy, t, channels_last)
            attrs = {"channels_last": int(channels_last)}
            if op == "QLinearAveragePool":
                attrs["kernel_shape"] = list(shape[2:])
            c.write(out, op, [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32), c.const(zy, t)], want, **attrs)
            names.append(c.name)


def concats(out, names):
    for k, t in enumerate((np.uint8, np.int8)):
        c = qc.Case("odn_qlinearconcat_%s" % t.__name__, 1300 + k)
        ys, zy = F32(0.01), qc.zp_of(t, 128)
        ins, vals = [c.const(ys, F32), c.const(zy, t)], []
        for j, (s, z, ch) in enumerate(((0.01, 128, 16), (0.02, 120, 8), (0.005, 131, 24))):
            z = qc.zp_of(t, z)
            q, v = c.qinput((1, ch, 6, 7), F32(s), z, t)
            ins += [q, c.const(F32(s), F32), c.const(z, t)]
            vals.append((v, F32(s), z))
        want = qc.concat(vals, ys, zy, t, 1)
        c.write(out, "QLinearConcat", ins, want, axis=1)
        names.append(c.name)


def gemms(out, names):
    # A type, B type, M, K, N, transA, transB, bias shape, per-column b, quantized output, alpha
    cases = [(np.uint8, np.int8, 1, 512, 100, 0, 1, (100,), True, True, 1.0),
             (np.uint8, np.int8, 33, 70, 45, 0, 0, (33, 45), False, True, 1.0),
             (np.int8, np.int8, 9, 37, 21, 1, 1, (9, 1), True, False, 0.75),
             (np.uint8, np.uint8, 17, 48, 19, 0, 1, (1,), False, True, 1.0),
             (np.uint8, np.int8, 5, 300, 64, 0, 0, None, True, False, 1.0)]
    for k, (ta, tb, m, kk, n, trans_a, trans_b, bshape, per_col, quant, alpha) in enumerate(cases):
        c = qc.Case("odn_qgemm_%d" % k, 1400 + k)
        sa, za = F32(0.01), qc.zp_of(ta, 128)
        q, a = c.qinput((kk, m) if trans_a else (m, kk), sa, za, ta)
        bshape_ = (n, kk) if trans_b else (kk, n)
        lo, hi = (-127, 128) if tb == np.int8 else (0, 256)
        b = c.rng.integers(lo, hi, bshape_).astype(tb)
        sb = (c.rng.uniform(0.002, 0.004, n) if per_col else np.array(0.003)).astype(F32)
        zb = (c.rng.integers(100, 150, n) if per_col else np.array(128)) if tb == np.uint8 else np.zeros(
            n if per_col else ())
        zb = zb.astype(tb)
        bias = None if bshape is None else c.rng.integers(-30000, 30000, bshape).astype(np.int32)
        ys, zy = (F32(0.4), qc.zp_of(ta, 120)) if quant else (None, None)
        want = qc.qgemm(a, sa, za, b, sb, zb.astype(np.int32), bias, ys, zy, alpha, trans_a, trans_b, ta)
        ins = [q, c.const(sa, F32), c.const(za, ta), c.const(b, tb), c.const(sb, F32), c.const(zb, tb),
               c.const(bias, np.int32) if bias is not None else ""]
        if quant:
            ins += [c.const(ys, F32), c.const(zy, ta)]
        attrs = dict(transA=trans_a, transB=trans_b)
        if alpha != 1.0:
            attrs["alpha"] = alpha
        c.write(out, "QGemm", ins, want, **attrs)
        names.append(c.name)
    for k, (ta, tb, ashape, n, per_col, with_bias) in enumerate(((np.uint8, np.int8, (2, 17, 40), 30, True, True),
                                                                 (np.int8, np.uint8, (64,), 24, False, False))):
        c = qc.Case("odn_matmulintegertofloat_%d" % k, 1500 + k)
        sa, za = F32(0.02), qc.zp_of(ta, 128)
        q, a = c.qinput(ashape, sa, za, ta)
        lo, hi = (-127, 128) if tb == np.int8 else (0, 256)
        b = c.rng.integers(lo, hi, (ashape[-1], n)).astype(tb)
        sb = (c.rng.uniform(0.002, 0.004, n) if per_col else np.array(0.003)).astype(F32)
        zb = np.full(n if per_col else (), 0 if tb == np.int8 else 131).astype(tb)
        bias = c.rng.uniform(-1, 1, n).astype(F32) if with_bias else None
        want = qc.matmul_to_float(a, sa, za, b, sb, zb.astype(np.int32), bias).astype(F32)
        ins = [q, c.const(b, tb), c.const(sa, F32), c.const(sb, F32), c.const(za, ta), c.const(zb, tb)]
        if with_bias:
            ins.append(c.const(bias, F32))
        c.write(out, "MatMulIntegerToFloat", ins, want)
        names.append(c.name)


def views(out, names):
    """8-bit Flatten feeding a QGemm (a view inside the piece) and an 8-bit
    Reshape as the model's output (a copy into the output)."""
    for k, t in enumerate((np.uint8, np.int8)):
        c = qc.Case("odn_q8_flatten_qgemm_%s" % t.__name__, 1600 + k)
        sa, za = F32(0.02), qc.zp_of(t, 128)
        q, a = c.qinput((2, 8, 3, 3), sa, za, t)
        c.nodes.append(qc.helper.make_node("Flatten", [q], ["flat"], axis=1))
        b = c.rng.integers(-127, 128, (72, 10)).astype(np.int8)
        sb, zb, ys, zy = F32(0.003), np.int8(0), F32(0.2), qc.zp_of(t, 120)
        want = qc.qgemm(a.reshape(2, 72), sa, za, b, np.array(sb), np.int32(0), None, ys, zy, 1.0, 0, 0, t)
        c.write(out, "QGemm", ["flat", c.const(sa, F32), c.const(za, t), c.const(b, np.int8), c.const(sb, F32),
                               c.const(zb, np.int8), "", c.const(ys, F32), c.const(zy, t)], want)
        names.append(c.name)
        c = qc.Case("odn_q8_reshape_%s" % t.__name__, 1610 + k)
        q, a = c.qinput((2, 6, 5), sa, za, t)
        node = qc.helper.make_node("Reshape", [q, c.const(np.array([3, -1, 0], np.int64), np.int64)], ["y"])
        write_plain(out, c, node, a.reshape(3, 4, 5))
        names.append(c.name)


def maxpool_cases(out, names):
    """MaxPool of 8-bit data, as QOperator models keep it after their stem."""
    for k, (t, ks, st, pads) in enumerate(((np.uint8, [3, 3], [2, 2], [1, 1, 1, 1]),
                                           (np.int8, [3, 2], [1, 2], [0, 1, 2, 0]))):
        c = qc.Case("odn_maxpool_%s" % t.__name__, 1800 + k)
        q, x = c.qinput((2, 8, 15, 13), F32(0.01), qc.zp_of(t, 128), t)
        info = np.iinfo(t)
        xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])], constant_values=info.min)
        oh = (xp.shape[2] - ks[0]) // st[0] + 1
        ow = (xp.shape[3] - ks[1]) // st[1] + 1
        want = np.full((2, 8, oh, ow), info.min, t)
        for i in range(ks[0]):
            for j in range(ks[1]):
                want = np.maximum(want, xp[:, :, i:i + (oh - 1) * st[0] + 1:st[0], j:j + (ow - 1) * st[1] + 1:st[1]])
        node = qc.helper.make_node("MaxPool", [q], ["y"], kernel_shape=ks, strides=st, pads=pads)
        write_plain(out, c, node, want)
        names.append(c.name)


def write_plain(out, c, node, want):
    """Case c with its nodes and `node` (default domain) writing y = want."""
    g = qc.helper.make_graph(c.nodes + [node], c.name, c.inputs,
                             [qc.helper.make_tensor_value_info("y", qc.ELEM[want.dtype.type], list(want.shape))],
                             c.inits)
    m = qc.helper.make_model(g, opset_imports=[qc.helper.make_opsetid("", 13)], producer_name="extra_cases_qop")
    m.ir_version = 8
    d = os.path.join(out, c.name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    qc.onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (name, v) in enumerate(c.feeds.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(qc.numpy_helper.from_array(v, name).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(qc.numpy_helper.from_array(want, "y").SerializeToString())


def bound_cases(out, names):
    """QLinearConv whose channels' weights sum past 2^24 / 255 in magnitude
    but whose positive and negative parts each stay below it: one float
    pass (odn_qlinear_float.c), exact however far the activations reach.
    A valid 3x3 window of 128 channels gives one output per channel, the
    activations at the ends of their range that make the sum largest (or
    smallest), and the bias brings it back to 100 so any rounding shows."""
    from extra_cases_qlinear import conv_case
    from extra_cases import int_conv_grouped
    rng = np.random.default_rng(1700)
    for k, (t, zx, top) in enumerate(((np.uint8, 0, True), (np.uint8, 255, False), (np.int8, -128, True))):
        sign = rng.permutation(np.repeat([1, -1], 576)).reshape(128, 3, 3)  # 576 * 112 * 255 < 2^24
        w = np.stack([sign * 112, -sign * 112, sign * rng.integers(100, 113, (128, 3, 3))]).astype(np.int8)
        info = np.iinfo(t)
        hi, lo = (info.max, info.min) if top else (info.min, info.max)
        x = np.where(sign > 0, hi, lo).astype(t)[None]
        zx = t(zx)
        acc = int_conv_grouped(x, zx, w, 0, [1, 1], [1, 1], [0, 0, 0, 0], 1)[0, :, 0, 0]
        assert np.abs(acc).max() < 2 ** 24 and np.abs(acc).max() > 2 ** 23
        bias = (100 - acc).astype(np.int32)
        name = "odn_qlinearconv_bound_%d" % k
        conv_case(out, name, x, zx, w, np.zeros(3, np.int8), F32(1.0), np.ones(3, F32), F32(1.0), np.uint8(0), bias)
        names.append(name)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = []
    for fn in (binary, tables, pools, concats, gemms, views, maxpool_cases, bound_cases):
        fn(out, names)
    for n in names:
        print(os.path.join(out, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
