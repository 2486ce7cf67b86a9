#!/usr/bin/python3
"""Cases for weights held once (odn_release_consts.c, host constant_release):
when every reader of a constant weight takes it from the oneDNN piece's
constant cache (packed for the GEMM, reordered for a convolution or
matmul), the host frees its own bytes. Checks, each model run three times
on one session (`tessera run --repeat 3`) against numpy in float64:

  mlp     static MatMul -> Relu -> MatMul + bias: both weights freed
  conv    static Conv (3x3, pads) -> Relu -> Conv 1x1: both weights freed
  conv_bn Conv -> BatchNormalization (folded into the weights) -> Relu: the
          weight freed, the normalization's constants kept
  tied    one weight read by two MatMuls of the piece: freed once
  shared  a weight also read by a node oneDNN does not run (CumSum along
          an axis given at run time, so not folded at load): kept
  output  a weight that is also a graph output: kept (and output intact)
  dynamic rows known only at run time (plan built per run shape): kept,
          and two different row counts in one session stay right
  dynq    quantize_dynamic's DynamicQuantizeLinear -> MatMulInteger -> Cast
          -> Mul with rows known only at run time, an int8 and a uint8
          (zero point 128) weight: packed alike for every row count (the
          exact int16 GEMM), so freed by the first plan; three row counts in
          one session, the last planned after the release
  dynq_tied  one int8 weight read by two MatMulIntegers: freed
  dynq_out   the weight is also a graph output: kept
  dynq_7bit  7-bit weights (quantize_dynamic's reduce_range): on a CPU
          without VNNI on the u8 x s8 kernel, packed shape-free (freed by
          the first plan, odn_i16_intgemm_instead); with VNNI on oneDNN's
          int8 matmul, whose weight layout depends on the rows: kept

  fallback (with FAIL_COMPILE_PLUGIN) a piece failing to compile after a
          weight was freed fails session creation with a clear error

usage: release_cases.py --check TESSERA OUT_DIR [FAIL_COMPILE_PLUGIN]
  (exit 77 without onnx or without the onednn provider)
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    np = None

OPSET = 13


def cpu_flags():
    """/proc/cpuinfo's flags (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def model(path, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, os.path.basename(path), inputs, outputs,
                          [numpy_helper.from_array(a, n) for n, a in inits])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), path)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv2d(x, w, pad):
    """NCHW convolution, stride 1, float64."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y


def cases(rng):
    """(name, nodes, inputs, outputs, inits, feeds (list of dicts), expect(feed) -> {out: array},
    freed names, kept names)"""
    out = []
    w1 = rng.standard_normal((256, 512)).astype(np.float32) * 0.05
    w2 = rng.standard_normal((512, 128)).astype(np.float32) * 0.05
    b2 = rng.standard_normal(128).astype(np.float32)
    x = rng.standard_normal((32, 256)).astype(np.float32)
    out.append(("mlp", [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
                        helper.make_node("MatMul", ["r", "w2"], ["m"]), helper.make_node("Add", ["m", "b2"], ["y"])],
                [f32("x", [32, 256])], [f32("y", [32, 128])], [("w1", w1), ("w2", w2), ("b2", b2)], [{"x": x}],
                lambda f: {"y": np.maximum(f["x"].astype(np.float64) @ w1, 0) @ w2 + b2}, ["w1", "w2"], []))

    cw1 = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
    cw2 = rng.standard_normal((24, 32, 1, 1)).astype(np.float32) * 0.1
    cx = rng.standard_normal((1, 16, 20, 20)).astype(np.float32)
    out.append(("conv", [helper.make_node("Conv", ["x", "cw1"], ["c"], pads=[1, 1, 1, 1]),
                         helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Conv", ["r", "cw2"], ["y"])],
                [f32("x", [1, 16, 20, 20])], [f32("y", [1, 24, 20, 20])], [("cw1", cw1), ("cw2", cw2)], [{"x": cx}],
                lambda f: {"y": conv2d(np.maximum(conv2d(f["x"].astype(np.float64), cw1, 1), 0), cw2, 0)},
                ["cw1", "cw2"], []))

    bw = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
    sc, bb, mu = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, 32).astype(np.float32)

    def conv_bn(f):
        c = conv2d(f["x"].astype(np.float64), bw, 1)
        k = (sc / np.sqrt(var.astype(np.float64) + 1e-5))[None, :, None, None]
        return {"y": np.maximum((c - mu[None, :, None, None]) * k + bb[None, :, None, None], 0)}

    out.append(("conv_bn", [helper.make_node("Conv", ["x", "bw"], ["c"], pads=[1, 1, 1, 1]),
                            helper.make_node("BatchNormalization", ["c", "sc", "bb", "mu", "var"], ["n"]),
                            helper.make_node("Relu", ["n"], ["y"])],
                [f32("x", [1, 16, 20, 20])], [f32("y", [1, 32, 20, 20])],
                [("bw", bw), ("sc", sc), ("bb", bb), ("mu", mu), ("var", var)], [{"x": cx}], conv_bn, ["bw"],
                ["sc", "bb", "mu", "var"]))

    wt = rng.standard_normal((256, 256)).astype(np.float32) * 0.05
    out.append(("tied", [helper.make_node("MatMul", ["x", "wt"], ["h"]), helper.make_node("Tanh", ["h"], ["t"]),
                         helper.make_node("MatMul", ["t", "wt"], ["y"])],
                [f32("x", [32, 256])], [f32("y", [32, 256])], [("wt", wt)], [{"x": x}],
                lambda f: {"y": np.tanh(f["x"].astype(np.float64) @ wt) @ wt}, ["wt"], []))

    ws = rng.standard_normal((256, 64)).astype(np.float32) * 0.05
    axis = np.array(0, np.int64)
    out.append(("shared", [helper.make_node("MatMul", ["x", "ws"], ["y"]),
                           helper.make_node("CumSum", ["ws", "axis"], ["z"])],
                [f32("x", [32, 256]), helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
                [f32("y", [32, 64]), f32("z", [256, 64])], [("ws", ws)], [{"x": x, "axis": axis}], lambda f: {"y": f["x"].astype(np.float64) @ ws, "z": np.cumsum(ws.astype(np.float64), 0)},
                [], ["ws"]))

    wo = rng.standard_normal((256, 64)).astype(np.float32) * 0.05
    out.append(("output", [helper.make_node("MatMul", ["x", "wo"], ["y"])],
                [f32("x", [32, 256])], [f32("y", [32, 64]), f32("wo", [256, 64])], [("wo", wo)], [{"x": x}],
                lambda f: {"y": f["x"].astype(np.float64) @ wo, "wo": wo}, [], ["wo"]))

    wd = rng.standard_normal((256, 96)).astype(np.float32) * 0.05
    x2 = rng.standard_normal((40, 256)).astype(np.float32)
    out.append(("dynamic", [helper.make_node("MatMul", ["x", "wd"], ["y"])],
                [f32("x", ["rows", 256])], [f32("y", ["rows", 96])], [("wd", wd)], [{"x": x}, {"x": x2}],
                lambda f: {"y": f["x"].astype(np.float64) @ wd}, [], ["wd"]))
    out += dynq_cases(rng)
    return out


def dynq_input(rng, rows, k):
    """Integers in [-128, 127] with both ends present: DynamicQuantizeLinear's
    scale is then exactly 1 and its zero point 128, so no value rounds."""
    x = rng.integers(-128, 128, (rows, k)).astype(np.float32)
    x[0, 0], x[-1, -1] = -128, 127
    return x


def dynq_chain(a, w, wzp, y):
    """DynamicQuantizeLinear(a) -> MatMulInteger(.., w) -> Cast -> Mul(a's scale)."""
    q = [a + "_q", a + "_s", a + "_z"]
    nodes = [helper.make_node("MatMulInteger", [q[0], w, q[2]] + ([wzp] if wzp else []), [y + "_i"]),
             helper.make_node("Cast", [y + "_i"], [y + "_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", [y + "_f", q[1]], [y])]
    return [helper.make_node("DynamicQuantizeLinear", [a], q)] + nodes


def dynq_expect(x, w, wzp=0):
    return (x.astype(np.float64) @ (w.astype(np.float64) - wzp))


def dynq_cases(rng):
    flags = cpu_flags()
    vnni = "avx512_vnni" in flags or "avx_vnni" in flags
    sevenbit = ([], ["w7"]) if vnni or "avx2" not in flags else (["w7"], [])
    k, n = 96, 80
    wq = rng.integers(-128, 128, (k, n)).astype(np.int8)
    wu = rng.integers(0, 256, (n, 48)).astype(np.uint8)
    zu = np.array(128, np.uint8)
    w7 = rng.integers(-64, 65, (k, n)).astype(np.int8)
    feeds = [{"x": dynq_input(rng, r, k)} for r in (5, 40, 17)]
    out = []

    xu = [{"x": f["x"], "xu": dynq_input(rng, f["x"].shape[0], n)} for f in feeds]
    out.append(("dynq", dynq_chain("x", "wq", None, "y") + dynq_chain("xu", "wu", "zu", "yu"),
                [f32("x", ["rows", k]), f32("xu", ["rows", n])], [f32("y", ["rows", n]), f32("yu", ["rows", 48])],
                [("wq", wq), ("wu", wu), ("zu", zu)], xu,
                lambda f: {"y": dynq_expect(f["x"], wq), "yu": dynq_expect(f["xu"], wu, 128)}, ["wq", "wu"], []))
    x2 = [{"x": f["x"], "x2": dynq_input(rng, f["x"].shape[0], k)} for f in feeds]
    out.append(("dynq_tied", dynq_chain("x", "wq", None, "y") + dynq_chain("x2", "wq", None, "y2"),
                [f32("x", ["rows", k]), f32("x2", ["rows", k])], [f32("y", ["rows", n]), f32("y2", ["rows", n])],
                [("wq", wq)], x2, lambda f: {"y": dynq_expect(f["x"], wq), "y2": dynq_expect(f["x2"], wq)},
                ["wq"], []))
    out.append(("dynq_out", dynq_chain("x", "wq", None, "y"),
                [f32("x", ["rows", k])], [f32("y", ["rows", n]), helper.make_tensor_value_info("wq", TensorProto.INT8,
                                                                                               [k, n])],
                [("wq", wq)], feeds, lambda f: {"y": dynq_expect(f["x"], wq), "wq": wq.astype(np.float64)}, [],
                ["wq"]))
    out.append(("dynq_7bit", dynq_chain("x", "w7", None, "y"), [f32("x", ["rows", k])], [f32("y", ["rows", n])],
                [("w7", w7)], feeds, lambda f: {"y": dynq_expect(f["x"], w7)}, *sevenbit))
    return out


def pb(path, name, a):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())


def check(tessera, out_dir):
    ok = True
    for name, nodes, ins, outs, inits, feeds, expect, freed, kept in cases(np.random.default_rng(20261207)):
        d = os.path.join(out_dir, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        model(path, nodes, ins, outs, inits)
        args = [tessera, "run", path, "-p", "onednn,reference", "--log-level", "info", "--repeat", "3",
                "-o", os.path.join(d, "out")]
        for k, f in enumerate(feeds):
            for n, a in f.items():
                p = os.path.join(d, "in%d_%s.pb" % (k, n))
                pb(p, n, a)
                args += ["-i", "%s=%s" % (n, p)]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL %s: tessera run exited %d\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
            ok = False
            continue
        got_freed = set(re.findall(r"constant '([^']*)' \(\d+ bytes\) is held by its readers' providers alone",
                                   r.stderr))
        # --repeat 3 with k input sets uses them in turn: the last run's set
        # (with three sets, the third row count is planned after any release)
        last = feeds[(3 - 1) % len(feeds)]
        want = expect(last)
        for o, a in want.items():
            t = onnx.load_tensor(os.path.join(d, "out", o + ".pb"))
            g = numpy_helper.to_array(t).astype(np.float64)
            err = np.max(np.abs(g - a)) if g.shape == a.shape else float("inf")
            if not err <= 1e-4 + 1e-4 * np.max(np.abs(a)):
                print("FAIL %s: output %s differs from numpy by %g (shape %s vs %s)" % (name, o, err, g.shape,
                                                                                         a.shape))
                ok = False
        if set(freed) != got_freed & (set(freed) | set(kept)):
            print("FAIL %s: freed %s, expected %s (kept %s)\n%s" % (name, sorted(got_freed), freed, kept, r.stderr))
            ok = False
        else:
            print("PASS %s (freed: %s)" % (name, ", ".join(sorted(got_freed)) or "none"))
    return ok


def check_fallback(tessera, out_dir, fail_plugin):
    """A piece compiled after onednn freed a weight fails (a test plugin
    claims Relu and fails to compile it): session creation must fail with
    an error saying so, not re-partition and compile again from the zeros
    the host left."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((256, 128)).astype(np.float32)
    d = os.path.join(out_dir, "fallback")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    model(path, [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
          [f32("x", [32, 256])], [f32("y", [32, 128])], [("w", w)])
    r = subprocess.run([tessera, "run", path, "-p", "%s,onednn,reference" % fail_plugin], capture_output=True,
                       text=True)
    if r.returncode != 0 and "released weights" in r.stderr:
        print("PASS fallback (session creation refused: %s)" % r.stderr.strip().splitlines()[-1][:160])
        return True
    print("FAIL fallback: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    return False


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] != "--check":
        print(__doc__)
        return 2
    if np is None:
        print("SKIP: python3 onnx/numpy missing")
        return 77
    tessera, out_dir = sys.argv[2], sys.argv[3]
    prov = subprocess.run([tessera, "providers"], capture_output=True, text=True).stdout
    if "onednn" not in prov:
        print("SKIP: no onednn provider")
        return 77
    os.makedirs(out_dir, exist_ok=True)
    ok = check(tessera, out_dir)
    if len(sys.argv) == 5:
        ok = check_fallback(tessera, out_dir, sys.argv[4]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
