#!/usr/bin/env python3
"""Writes the `reference_qop` ctest's cases: the com.microsoft QOperator
kernels of the reference provider (providers/reference/ref_quant_ms.c) on
models as ONNX Runtime's quantize_static(..., QuantFormat.QOperator) and
quantize_dynamic write them. Each case is a folder with model.onnx and
test_data_set_0/{input,output}_N.pb, the outputs computed here with numpy
in the float operations ONNX Runtime's CPU kernels use (fused multiply-adds
rounded once, exactly), so `tessera test -p reference --rtol 0 --atol 0`
must match them bit for bit.

Every model takes float inputs uniform in [-1, 1) and quantizes them with
an ordinary QuantizeLinear, so that ONNX Runtime's own inputs exercise
the whole 8-bit range too: `../shared/bench/ort-case OUTDIR/NAME/model.onnx
CASE && tessera test CASE -p reference` checks a case against ONNX Runtime
(see the cases' comments for where ORT's rounding is not reproduced).

usage: qop_cases.py OUTDIR
"""
import os
import shutil
import sys
from fractions import Fraction

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32
MS = "com.microsoft"
ELEM = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.float32: TensorProto.FLOAT,
        np.int32: TensorProto.INT32}


# --- exact float32 helpers ------------------------------------------------------------

def frac_to_f32(fr):
    """The float32 nearest to the Fraction fr, ties to even (normal range)."""
    if fr == 0:
        return 0.0
    sign = -1 if fr < 0 else 1
    x = abs(fr)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    m = x / Fraction(2) ** (e - 23)  # in [2^23, 2^24)
    q = m.numerator // m.denominator
    rem = m - q
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and q % 2 == 1):
        q += 1
    return float(F32(sign * q * 2.0 ** (e - 23)))


def fma32(a, b, c):
    """fmaf elementwise: a*b+c rounded once to float32."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    out = np.empty(a.shape, F32)
    fa, fb, fc, fo = a.ravel(), b.ravel(), c.ravel(), out.ravel()
    for i in range(fa.size):
        fo[i] = frac_to_f32(Fraction(float(fa[i])) * Fraction(float(fb[i])) + Fraction(float(fc[i])))
    return out


def q8(v, t, zp=0):
    """round half to even, add zp, saturate."""
    info = np.iinfo(t)
    r = np.rint(np.asarray(v, np.float64)) + zp
    return np.clip(r, info.min, info.max).astype(t)


def quantize(x, scale, zp, t):
    """QuantizeLinear / MlasQuantizeLinear: round(x / scale) + zp."""
    return q8(F32(x) / F32(scale), t, zp)


def byte_values(t):
    """The 256 values of type t in byte order."""
    return np.arange(256, dtype=np.uint8).view(t).astype(np.int32)


# --- the operators, as ONNX Runtime computes them ---------------------------------------

def qlinear_add(a, sa, za, b, sb, zb, sc, zc, t):
    ra, rb = F32(sa) / F32(sc), F32(sb) / F32(sc)
    shape = np.broadcast_shapes(a.shape, b.shape)
    last = len(shape) - 1
    while last >= 0 and shape[last] == 1:
        last -= 1
    ad = (1,) * (len(shape) - a.ndim) + a.shape
    bd = (1,) * (len(shape) - b.ndim) + b.shape
    if a.size == 1 or last < 0 or ad[last] == 1:
        side = 1
    elif b.size == 1 or bd[last] == 1:
        side = 2
    else:
        side = 0
    A = np.broadcast_to(a.astype(np.int32), shape).astype(F32)
    B = np.broadcast_to(b.astype(np.int32), shape).astype(F32)
    if side == 1:  # ORT hands B's run in as the kernel's A, the scalar A as its B
        P, rp, zp, Q, rq, zq = B, rb, zb, A, ra, za
    else:
        P, rp, zp, Q, rq, zq = A, ra, za, B, rb, zb
    fixed = F32(zc) - (F32(rp * F32(zp)) + F32(rq * F32(zq)))
    if side == 0:
        v = fma32(P, rp, fma32(Q, rq, fixed))
    else:
        v = fma32(P, rp, F32(fixed + F32(Q * rq)))
    return q8(v, t)


def qlinear_mul(a, sa, za, b, sb, zb, sc, zc, t):
    r = F32(F32(sa) * F32(sb)) / F32(sc)
    prod = (a.astype(np.int32) - za) * (b.astype(np.int32) - zb)
    return q8(F32(prod.astype(F32) * r) + F32(zc), t)


LOGISTIC = [F32(v) for v in (4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05, 8.51377133304701e-03,
                             2.48287947061529e-01, 6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06,
                             1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01)]


def mlas_logistic(x):
    """MlasComputeLogisticF32KernelFma3."""
    a9, a7, a5, a3, a1, b10, b8, b6, b4, b2, b0 = LOGISTIC
    x = np.clip(x.astype(F32), F32(-18), F32(18))
    x2 = x * x
    p = fma32(x2, a9, a7)
    for a in (a5, a3, a1):
        p = fma32(x2, p, a)
    q = fma32(x2, b10, b8)
    for b in (b6, b4, b2, b0):
        q = fma32(x2, q, b)
    v = F32(x * p) / q + F32(0.5)
    return np.maximum(v, F32(0))


def table_op(x, xs, zx, ys, zy, t, fn):
    deq = F32(xs) * (byte_values(t) - zx).astype(F32)
    table = quantize(fn(deq), ys, zy, t)
    return table[x.view(np.uint8)]


def global_pool(x, xs, zx, ys, zy, t, channels_last):
    axes = tuple(range(1, x.ndim - 1)) if channels_last else tuple(range(2, x.ndim))
    n = int(np.prod([x.shape[a] for a in axes]))
    acc = x.astype(np.int64).sum(axis=axes, keepdims=True) - zx * n
    scale = F32(xs) / (F32(ys) * F32(n))
    return q8(acc.astype(F32) * scale, t, zy)


def average_pool(x, xs, zx, ys, zy, t, kernel, strides, pads, include_pad, channels_last):
    if channels_last:
        x = np.moveaxis(x, -1, 1)
    nsp = x.ndim - 2
    ins = x.shape[2:]
    outs = [(ins[d] + pads[d] + pads[nsp + d] - kernel[d]) // strides[d] + 1 for d in range(nsp)]
    if list(kernel) == list(ins) and not any(pads):
        y = global_pool(x, xs, zx, ys, zy, t, False)
        return np.moveaxis(y, 1, -1) if channels_last else y
    deq = F32(xs) * (x.astype(np.int32) - zx).astype(F32)
    y = np.zeros(x.shape[:2] + tuple(outs), t)
    for o in np.ndindex(*outs):
        lo = [max(o[d] * strides[d] - pads[d], 0) for d in range(nsp)]
        hi = [min(o[d] * strides[d] - pads[d] + kernel[d], ins[d]) for d in range(nsp)]
        s = np.zeros(x.shape[:2], F32)
        for w in np.ndindex(*[hi[d] - lo[d] for d in range(nsp)]):
            s = s + deq[(slice(None), slice(None)) + tuple(lo[d] + w[d] for d in range(nsp))]
        count = int(np.prod(kernel)) if include_pad else int(np.prod([hi[d] - lo[d] for d in range(nsp)]))
        s = s / F32(count)
        y[(slice(None), slice(None)) + o] = q8(F32(s / F32(ys)) + F32(zy), t)
    return np.moveaxis(y, 1, -1) if channels_last else y


def concat(inputs, ys, zy, t, axis):
    parts = []
    for x, xs, zx in inputs:
        if F32(xs) == F32(ys) and zx == zy:
            parts.append(x)
        else:
            deq = F32(xs) * (byte_values(t) - zx).astype(F32)
            parts.append(quantize(deq, ys, zy, t)[x.view(np.uint8)])
    return np.concatenate(parts, axis=axis)


def softmax(x, xs, ys, zy, t, axis, opset):
    axis = axis % x.ndim
    if opset < 13:
        shp = x.shape
        x2 = x.reshape(int(np.prod(shp[:axis], dtype=np.int64)), -1)
        return softmax(x2, xs, ys, zy, t, 1, 13).reshape(shp)
    xm = np.moveaxis(x, axis, -1)
    d = xm.shape[-1]
    shift = np.log(np.float64(F32(np.finfo(F32).max) / F32(d)))
    shift = max(0.0, shift - 5.0) / np.float64(F32(xs))
    table = np.array([np.exp((i - 255 + shift) * np.float64(F32(xs))) for i in range(256)]).astype(F32)
    yscale = F32(np.floor(F32(1) / F32(ys)))
    flat = xm.reshape(-1, d).astype(np.int32)
    out = np.empty(flat.shape, t)
    for r in range(flat.shape[0]):
        idx = flat[r] + 255 - flat[r].max()
        vals = table[idx]
        s = F32(0)
        for v in vals:
            s = F32(s + v)
        out[r] = q8(F32(vals * yscale) / s, t, zy)
    return np.moveaxis(out.reshape(xm.shape), -1, axis)


def int_gemm(a, za, b, zb):
    return (a.astype(np.int64) - za) @ (b.astype(np.int64) - np.asarray(zb, np.int64))


def qgemm(a, sa, za, b, sb, zb, c, ys, zy, alpha, trans_a, trans_b, t_out):
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    acc = int_gemm(a, za, b, zb)
    if c is not None:
        acc = acc + c
    scale = F32(F32(alpha) * F32(sa)) * np.asarray(sb, F32)
    if ys is not None:
        scale = scale / F32(ys)
    v = acc.astype(np.int32).astype(F32) * scale
    return v if zy is None else q8(v, t_out, zy)


def matmul_to_float(a, sa, za, b, sb, zb, bias):
    acc = (a.astype(np.int64) - za) @ (b.astype(np.int64) - np.asarray(zb, np.int64))
    v = acc.astype(np.int32).astype(F32) * (F32(sa) * np.asarray(sb, F32))
    return v + bias if bias is not None else v


def dynamic_quantize(a):
    lo, hi = min(F32(0), a.min()), max(F32(0), a.max())
    scale = F32(1) if hi == lo else F32(F32(hi - lo) / F32(255))
    zp = int(np.rint(np.clip(F32(-lo) / scale, 0, 255)))
    return quantize(a, scale, zp, np.uint8), scale, zp


# --- the models -------------------------------------------------------------------------

class Case:
    def __init__(self, name, seed):
        self.name, self.nodes, self.inits, self.inputs, self.feeds = name, [], [], [], {}
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def const(self, value, dtype, hint="c"):
        self.count += 1
        name = "%s%d" % (hint, self.count)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def qinput(self, shape, scale, zp, t):
        """A float graph input quantized in the graph; returns (name, quantized value)."""
        k = len(self.inputs)
        name = "x%d" % k
        x = self.rng.uniform(-1, 1, shape).astype(F32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = x
        q = "q%d" % k
        self.nodes.append(helper.make_node("QuantizeLinear", [name, self.const(scale, F32, "s"),
                                                              self.const(zp, t, "z")], [q]))
        return q, quantize(x, scale, zp, t)

    def finput(self, shape):
        k = len(self.inputs)
        name = "x%d" % k
        x = self.rng.uniform(-1, 1, shape).astype(F32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = x
        return name, x

    def write(self, outdir, op, ins, want, **attrs):
        node = helper.make_node(op, ins, ["y"], domain=MS, **attrs)
        g = helper.make_graph(self.nodes + [node], self.name, self.inputs,
                              [helper.make_tensor_value_info("y", ELEM[want.dtype.type], list(want.shape))],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)],
                              producer_name="qop_cases")
        m.ir_version = 8
        d = os.path.join(outdir, self.name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(m, os.path.join(d, "model.onnx"))
        for i, (k, v) in enumerate(self.feeds.items()):
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(v, k).SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(want, "y").SerializeToString())


def zp_of(t, v):
    return v if t == np.uint8 else v - 128


def binary_cases(out):
    # (op, type, A shape, B shape)
    shapes = [((2, 3, 5, 7), (2, 3, 5, 7)), ((2, 8, 4, 4), (1, 8, 1, 1)), ((1, 8, 1, 1), (2, 8, 4, 4)),
              ((3, 4, 5), (5,)), ((), (2, 6, 3)), ((4, 9), ()), ((3, 1, 5), (1, 4, 1))]
    k = 0
    for op, fn in (("QLinearAdd", qlinear_add), ("QLinearMul", qlinear_mul)):
        for t in (np.uint8, np.int8):
            for sa_shape, sb_shape in shapes:
                k += 1
                c = Case("%s_%s_%d" % (op.lower(), t.__name__, k), 100 + k)
                sa, sb, sc = [F32(v) for v in c.rng.uniform(0.004, 0.012, 3)]
                if op == "QLinearMul":
                    sc = F32(sa * sb * c.rng.uniform(60, 120))
                za, zb, zc = [zp_of(t, int(v)) for v in c.rng.integers(110, 150, 3)]
                qa, a = c.qinput(sa_shape, sa, za, t)
                qb, b = c.qinput(sb_shape, sb, zb, t)
                want = fn(a, sa, za, b, sb, zb, sc, zc, t)
                c.write(out, op, [qa, c.const(sa, F32), c.const(za, t), qb, c.const(sb, F32), c.const(zb, t),
                                  c.const(sc, F32), c.const(zc, t)], want)


def table_cases(out):
    k = 0
    for op in ("QLinearSigmoid", "QLinearLeakyRelu"):
        for t in (np.uint8, np.int8):
            for xs, ys in ((0.04, 1 / 255.0), (0.02, 0.011)):
                k += 1
                c = Case("%s_%s_%d" % (op.lower(), t.__name__, k), 200 + k)
                zx, zy = zp_of(t, 128), zp_of(t, 0 if op == "QLinearSigmoid" else 100)
                q, x = c.qinput((2, 4, 33), F32(xs), zx, t)
                attrs = {}
                if op == "QLinearSigmoid":
                    fn = mlas_logistic
                else:
                    alpha = F32(0.1 if k % 2 else 0.01)
                    attrs["alpha"] = float(alpha)
                    fn = (lambda alpha: lambda v: np.where(v >= 0, v, F32(alpha) * v))(alpha)
                want = table_op(x, F32(xs), zx, F32(ys), zy, t, fn)
                c.write(out, op, [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32), c.const(zy, t)], want,
                        **attrs)


def pool_cases(out):
    k = 0
    for t in (np.uint8, np.int8):
        for shape, channels_last in (((2, 5, 7, 6), False), ((2, 6, 5, 3), True), ((1, 3, 17), False)):
            k += 1
            c = Case("qlinearglobalaveragepool_%s_%d" % (t.__name__, k), 300 + k)
            xs, ys, zx, zy = F32(0.01), F32(0.003), zp_of(t, 130), zp_of(t, 120)
            q, x = c.qinput(shape, xs, zx, t)
            want = global_pool(x, xs, zx, ys, zy, t, channels_last)
            c.write(out, "QLinearGlobalAveragePool", [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32),
                                                      c.const(zy, t)], want, channels_last=int(channels_last))
    # shape, kernel, strides, pads, count_include_pad, channels_last, auto_pad
    pools = [((2, 3, 9, 8), [3, 3], [2, 2], [1, 1, 1, 1], 0, False, None),
             ((2, 3, 9, 8), [3, 3], [2, 2], [1, 1, 1, 1], 1, False, None),
             ((1, 7, 6, 4), [2, 2], [2, 2], [0, 0, 0, 0], 0, True, None),
             ((1, 2, 7, 7), [3, 2], [1, 2], None, 0, False, "SAME_UPPER"),
             ((2, 4, 11), [4], [3], [2, 1], 0, False, None),
             ((1, 3, 5, 5), [5, 5], [1, 1], [0, 0, 0, 0], 0, False, None),
             ((1, 2, 4, 5, 6), [2, 3, 2], [2, 1, 2], [0, 1, 1, 0, 0, 1], 1, False, None)]
    for t in (np.uint8, np.int8):
        for shape, kernel, strides, pads, incl, cl, auto_pad in pools:
            k += 1
            c = Case("qlinearaveragepool_%s_%d" % (t.__name__, k), 300 + k)
            xs, ys, zx, zy = F32(0.008), F32(0.0065), zp_of(t, 125), zp_of(t, 131)
            q, x = c.qinput(shape, xs, zx, t)
            nsp = len(kernel)
            ins = shape[1:-1] if cl else shape[2:]
            p = pads
            if auto_pad == "SAME_UPPER":
                p = [0] * (2 * nsp)
                for d in range(nsp):
                    o = -(-ins[d] // strides[d])
                    need = max(0, (o - 1) * strides[d] + kernel[d] - ins[d])
                    p[d], p[nsp + d] = need // 2, need - need // 2
            want = average_pool(x, xs, zx, ys, zy, t, kernel, strides, p, incl, cl)
            attrs = dict(kernel_shape=kernel, strides=strides, count_include_pad=incl, channels_last=int(cl))
            if auto_pad:
                attrs["auto_pad"] = auto_pad
            else:
                attrs["pads"] = pads
            c.write(out, "QLinearAveragePool", [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32),
                                                c.const(zy, t)], want, **attrs)


def concat_cases(out):
    k = 0
    for t in (np.uint8, np.int8):
        for axis, shapes in ((1, [(2, 3, 4), (2, 5, 4), (2, 1, 4)]), (-1, [(3, 2), (3, 7)])):
            k += 1
            c = Case("qlinearconcat_%s_%d" % (t.__name__, k), 400 + k)
            ys, zy = F32(0.009), zp_of(t, 128)
            ins, parts = [], []
            for i, shp in enumerate(shapes):
                xs, zx = (ys, zy) if i == 0 else (F32(c.rng.uniform(0.004, 0.02)), zp_of(t, int(c.rng.integers(100, 160))))
                q, x = c.qinput(shp, xs, zx, t)
                ins += [q, c.const(xs, F32), c.const(zx, t)]
                parts.append((x, xs, zx))
            want = concat(parts, ys, zy, t, axis)
            c.write(out, "QLinearConcat", [c.const(ys, F32), c.const(zy, t)] + ins, want, axis=axis)


def softmax_cases(out):
    k = 0
    for t in (np.uint8, np.int8):
        for shape, axis, opset in (((3, 10), -1, 13), ((2, 5, 6), 1, 13), ((2, 3, 4), 1, 12)):
            k += 1
            c = Case("qlinearsoftmax_%s_%d" % (t.__name__, k), 500 + k)
            xs, zx = F32(0.05), zp_of(t, 128)
            ys, zy = F32(1 / 256.0), (0 if t == np.uint8 else -128)
            q, x = c.qinput(shape, xs, zx, t)
            want = softmax(x, xs, ys, zy, t, axis, opset)
            c.write(out, "QLinearSoftmax", [q, c.const(xs, F32), c.const(zx, t), c.const(ys, F32),
                                            c.const(zy, t)], want, axis=axis, opset=opset)


def gemm_cases(out):
    # A type, B type, M, K, N, transA, transB, bias shape, per-column b, quantized output, alpha
    cases = [(np.uint8, np.int8, 5, 16, 7, 0, 0, (7,), False, True, 1.0),
             (np.uint8, np.int8, 4, 9, 6, 0, 1, (4, 6), True, True, 1.0),
             (np.uint8, np.uint8, 3, 12, 5, 1, 0, None, False, False, 0.5),
             (np.int8, np.int8, 6, 10, 4, 0, 1, (1,), True, True, 1.0),
             (np.int8, np.int8, 3, 8, 5, 0, 0, (3, 1), False, False, 1.0)]
    for k, (ta, tb, m, kk, n, trans_a, trans_b, bshape, per_col, quant, alpha) in enumerate(cases):
        c = Case("qgemm_%d" % k, 600 + k)
        sa, za = F32(0.01), zp_of(ta, 128)
        q, a = c.qinput((kk, m) if trans_a else (m, kk), sa, za, ta)
        bshape_ = (n, kk) if trans_b else (kk, n)
        lo, hi = (-60, 61) if tb == np.int8 else (70, 190)
        b = c.rng.integers(lo, hi, bshape_).astype(tb)
        sb = (c.rng.uniform(0.002, 0.004, n) if per_col else np.array(0.003)).astype(F32)
        zb = (np.array([zp_of(tb, 128)] * n) if per_col else np.array(zp_of(tb, 128))).astype(tb)
        if tb == np.int8:
            zb = np.zeros_like(zb)
        bias = None if bshape is None else c.rng.integers(-3000, 3000, bshape).astype(np.int32)
        ys, zy = (F32(0.05), zp_of(ta, 120)) if quant else (None, None)
        want = qgemm(a, sa, za, b, sb, zb.astype(np.int32), bias, ys, zy, alpha, trans_a, trans_b, ta)
        ins = [q, c.const(sa, F32), c.const(za, ta), c.const(b, tb), c.const(sb, F32), c.const(zb, tb),
               c.const(bias, np.int32) if bias is not None else ""]
        if quant:
            ins += [c.const(ys, F32), c.const(zy, ta)]
        attrs = dict(transA=trans_a, transB=trans_b)
        if alpha != 1.0:
            attrs["alpha"] = alpha
        c.write(out, "QGemm", ins, want, **attrs)


def matmul_cases(out):
    k = 0
    for ta, tb, ashape, n, per_col, with_bias in ((np.uint8, np.int8, (2, 3, 8), 5, True, True),
                                                 (np.int8, np.int8, (4, 6), 3, False, False),
                                                 (np.uint8, np.uint8, (3, 7), 4, False, True)):
        k += 1
        c = Case("matmulintegertofloat_%d" % k, 700 + k)
        sa, za = F32(0.02), zp_of(ta, 128)
        q, a = c.qinput(ashape, sa, za, ta)
        lo, hi = (-60, 61) if tb == np.int8 else (70, 190)
        b = c.rng.integers(lo, hi, (ashape[-1], n)).astype(tb)
        sb = (c.rng.uniform(0.002, 0.004, n) if per_col else np.array(0.003)).astype(F32)
        zb = np.full(n if per_col else (), 0 if tb == np.int8 else 128).astype(tb)
        bias = c.rng.uniform(-1, 1, n).astype(F32) if with_bias else None
        want = matmul_to_float(a, sa, za, b, sb, zb.astype(np.int32), bias).astype(F32)
        ins = [q, c.const(b, tb), c.const(sa, F32), c.const(sb, F32), c.const(za, ta), c.const(zb, tb)]
        if with_bias:
            ins.append(c.const(bias, F32))
        c.write(out, "MatMulIntegerToFloat", ins, want)
    for k, (ashape, n, per_col) in enumerate((((2, 5, 12), 6, True), ((4, 9), 3, False))):
        c = Case("dynamicquantizematmul_%d" % k, 800 + k)
        name, a = c.finput(ashape)
        b = c.rng.integers(-60, 61, (ashape[-1], n)).astype(np.int8)
        sb = (c.rng.uniform(0.002, 0.004, n) if per_col else np.array(0.003)).astype(F32)
        zb = np.zeros(n if per_col else (), np.int8)
        bias = c.rng.uniform(-1, 1, n).astype(F32)
        aq, sa, za = dynamic_quantize(a)
        want = matmul_to_float(aq, sa, za, b, sb, zb.astype(np.int32), bias).astype(F32)
        c.write(out, "DynamicQuantizeMatMul", [name, c.const(b, np.int8), c.const(sb, F32), c.const(zb, np.int8),
                                               c.const(bias, F32)], want)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for fn in (binary_cases, table_cases, pool_cases, concat_cases, softmax_cases, gemm_cases, matmul_cases):
        fn(out)
    print("wrote %d cases to %s" % (len(os.listdir(out)), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
