#!/usr/bin/python3
"""quantize_dynamic layers on the exact u8 x s8 GEMM (odn_igemm8.c, chosen
in odn_i16_intgemm.c on AVX2 CPUs without VNNI): DynamicQuantizeLinear ->
MatMulInteger -> Cast -> Mul(scales) -> Add(bias) on [batch, seq, K] with
weights as quantizers write them (a normal spread scaled to its largest,
with a few extremes whose K pairs would saturate vpmaddubsw: the residual
path), int8 weights, uint8 weights with zero point 128 and with one per
column, 7-bit (reduce_range) weights that could go to oneDNN's int8
primitives, N = 1, K not a multiple of 4, rows 1, 9 and 130 in one
session; MatMulInteger alone on an int8 A with its own zero point (int32
out); and uint8 weights with zero point 0, whose residual would be dense,
on the int16 kernel. Expected outputs are numpy's (exact int64 sums, then
the float32 ops in graph order).

usage: dynquant8_cases.py OUT_DIR        (prints the case dirs)
       dynquant8_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them at 1 and 2 threads with
         -p onednn,reference and fails when one fails, onednn does not
         claim every node, or a MatMulInteger runs on the other kernel than
         the case expects (exit 77 without numpy/onnx, the onednn provider,
         or on a CPU where the kernel does not run: VNNI, or no AVX2)
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import TensorProto, helper
    from extra_cases import claimed_whole, cpu_flags, explain, has_onednn, test_cases, written_cases
    from shape_cases import save_case
except ImportError:
    np = None

rng = np.random.default_rng(20261208) if np is not None else None


def dql(x):
    """DynamicQuantizeLinear in float32, ties to even."""
    lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
    scale = np.float32((np.float32(1) if hi == lo else np.float32(hi - lo)) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)))
    q = np.clip(np.rint((x / scale).astype(np.float32)) + zp, 0, 255).astype(np.uint8)
    return q, scale, np.uint8(zp)


def bell(k, n, top=127, extremes=True):
    """int8 values as a symmetric quantizer writes a layer's weights: a
    normal spread whose largest (about 4.5 sigma) maps to `top`; with
    `extremes`, one weight in 1000 set to +-127/-128 (K pairs past vpmaddubsw's
    bound |d0| + |d1| <= 128)"""
    q = np.clip(np.rint(rng.standard_normal((k, n)) * top / 4.5), -top, top).astype(np.int64)
    if extremes:
        spots = rng.choice(k * n, max(1, k * n // 1000), replace=False)
        q.reshape(-1)[spots] = rng.choice([-128, 127, -127], spots.size)
    return q


def layer_case(out, name, k, n, wq, wz, ws, rows=((1, 1), (2, 9), (1, 130))):
    """One quantize_dynamic layer, symbolic rows, three data sets."""
    b = (rng.standard_normal(n) * 0.1).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"], name="dql"),
             helper.make_node("MatMulInteger", ["q", "w", "z", "wz"], ["i"], name=name + "_mmi"),
             helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Mul", ["s", "ws"], ["sw"], name="scales"),
             helper.make_node("Mul", ["f", "sw"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "b"], ["y"], name="bias")]
    sets = []
    for shape in rows:
        x = rng.uniform(-3, 2, shape + (k,)).astype(np.float32)
        q, s, z = dql(x)
        acc = (q.astype(np.int64) - int(z)) @ (wq.astype(np.int64) - np.asarray(wz, np.int64).reshape(1, -1))
        assert np.abs(acc).max() < 2 ** 24  # the Cast to float is exact
        y = (acc.astype(np.float32) * np.float32(s * np.float32(ws))).astype(np.float32) + b
        sets.append(([x], [y]))
    save_case(out, name, nodes, [("x", TensorProto.FLOAT, ["batch", "seq", k])],
              [("y", TensorProto.FLOAT, ["batch", "seq", n])], sets,
              [("w", wq), ("wz", np.asarray(wz, wq.dtype)), ("ws", np.array(ws, np.float32)), ("b", b)])


def int32_case(out):
    """MatMulInteger alone: int8 A with a zero point, int8 weights with a
    zero point; int32 product."""
    k, n = 301, 45
    w = bell(k, n, 120).astype(np.int8)
    nodes = [helper.make_node("MatMulInteger", ["a", "w", "za", "wz"], ["y"], name="dq8_int32_mmi")]
    sets = []
    for rows in (1, 6, 37):
        a = rng.integers(-128, 128, (rows, k)).astype(np.int8)
        sets.append(([a], [((a.astype(np.int64) + 7) @ (w.astype(np.int64) - 3)).astype(np.int32)]))
    save_case(out, "dq8_int32_s8a", nodes, [("a", TensorProto.INT8, ["r", k])], [("y", TensorProto.INT32, ["r", n])],
              sets, [("w", w), ("za", np.array(-7, np.int8)), ("wz", np.array(3, np.int8))])


def write(out):
    os.makedirs(out, exist_ok=True)
    layer_case(out, "dq8_int8", 203, 77, bell(203, 77).astype(np.int8), 0, 0.0123)
    layer_case(out, "dq8_uint8_z128", 96, 160, (bell(96, 160) + 128).astype(np.uint8), 128, 0.02)
    zc = rng.integers(120, 137, 40)
    layer_case(out, "dq8_uint8_zcol", 130, 40, np.clip(bell(130, 40, 110) + zc, 0, 255).astype(np.uint8),
               zc.astype(np.uint8), 0.017)
    w1 = bell(768, 1, 60, extremes=False)
    w1[10:12, 0] = 127  # one pair past the bound: two residual entries of the three allowed
    layer_case(out, "dq8_n1", 768, 1, w1.astype(np.int8), 0, 0.004)
    layer_case(out, "dq8_reduce_range", 255, 96, bell(255, 96, 64, extremes=False).astype(np.int8), 0, 0.03)
    int32_case(out)
    layer_case(out, "dq8_dense_residual_i16", 64, 24, rng.integers(0, 256, (64, 24)).astype(np.uint8), 0, 0.01)


def kernels(tessera, case):
    """The MatMulInteger implementations a profiled run of CASE used."""
    prof = case + ".prof.json"
    subprocess.run([tessera, "bench", case, "-p", "onednn,reference", "--runs", "1", "--warmup", "0", "--profile",
                    prof], capture_output=True)
    try:
        events = json.load(open(prof))["traceEvents"]
    except (OSError, ValueError, KeyError):
        return set()
    impls = ";".join(e.get("args", {}).get("impl", "") for e in events)
    return {i for i in impls.split(";") if i.startswith("loop MatMulInteger")}


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    flags = cpu_flags()
    if "avx512_vnni" in flags or "avx_vnni" in flags or "avx2" not in flags:
        print("VNNI, or no AVX2: the u8 x s8 kernel does not run here: skipped")
        return 77
    cases = written_cases(write, out)
    bad = ["tests at %s threads" % t for t in ("1", "2")
           if not test_cases(tessera, cases, "-t", t, "--rtol", "1e-6", "--atol", "1e-6")]
    for c in cases:
        name = os.path.basename(c)
        want = {"loop MatMulInteger"} if name.endswith("_i16") else {"loop MatMulInteger:u8s8"}
        got = kernels(tessera, c)
        if not claimed_whole(explain(tessera, c)) or got != want:
            print("%s: not claimed whole by onednn, or kernels %s where %s was expected" % (name, got, want))
            bad.append(c)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
