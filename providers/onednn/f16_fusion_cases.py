#!/usr/bin/python3
"""Written-out patterns in float16 graphs as onnxconverter-common's
convert_float_to_float16 leaves them (float32 graph input, Cast to float16,
a float16 body whose constants are all float16, Cast back to float32):
LayerNorm as ReduceMean/Sub/Pow(2)/ReduceMean/Add eps/Sqrt/Div/Mul/Add,
exact Gelu (Div by 1.4140625, sqrt(2) in float16, or Mul by 0.70703125;
Erf, Add 1, Mul, Mul 0.5) after a MatMul and alone, tanh-Gelu (Pow(x, 3),
0.044708252, 0.79785156), RMSNorm (Pow 2 ... Div, gamma), Pow with float16
exponents 3 and 0.5 and Clip with float16 bounds, and a graph with float16
input and output (RMSNorm then Gelu). Each is checked against
numpy (float64 from the float16-rounded input and constants) at float16
tolerances, must be claimed whole by onednn and must run fused
(ONEDNN_VERBOSE: a layer_normalization, a gelu eltwise, no binary, no
reduction; no Erf loop in `tessera bench --profile`).
Look-alikes must stay unfused and right: a float32 Gelu whose sqrt(2) is
1.5, a float16 one dividing by 1.4150391 (the float16 after sqrt(2)'s). Erf alone (the 8-lane
loop of odn_erf.c) on special values (NaN, +-inf, -0, subnormals, +-6,
the region boundary) within 2 ulp of float64 erf. Hostile Pow exponents
(two values; a [1,1,1] exponent on a 2-D base, which makes a 3-D output)
are left to the reference provider and still right.
usage: f16_fusion_cases.py --check TESSERA OUT_DIR (exit 77 without onednn)."""
import json
import math
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import has_onednn, save_typed_case, test_cases, written_cases, partition, claimed_whole
except ImportError:
    np = None

rng = np.random.default_rng(20261208) if np is not None else None
H = np.float16 if np is not None else None
F16 = TensorProto.FLOAT16


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def wrap(body, out="b"):
    """x (float32) -> Cast float16 -> body (reads "h", writes `out`) -> Cast float32 -> y."""
    return ([helper.make_node("Cast", ["x"], ["h"], to=F16)] + body +
            [helper.make_node("Cast", [out], ["y"], to=TensorProto.FLOAT)])


def erf64(a):
    return np.vectorize(math.erf)(a.astype(np.float64))


def layernorm_body(mul_square=False, affine=True):
    n = [const("two", H(2.0)), const("eps", H(1e-5)),
         helper.make_node("ReduceMean", ["h"], ["m"], axes=[-1]), helper.make_node("Sub", ["h", "m"], ["d"])]
    n.append(helper.make_node("Mul", ["d", "d"], ["sq"]) if mul_square else
             helper.make_node("Pow", ["d", "two"], ["sq"]))
    n += [helper.make_node("ReduceMean", ["sq"], ["v"], axes=[-1]), helper.make_node("Add", ["v", "eps"], ["ve"]),
          helper.make_node("Sqrt", ["ve"], ["r"]), helper.make_node("Div", ["d", "r"], ["n" if affine else "b"])]
    if affine:
        n += [helper.make_node("Mul", ["n", "g"], ["ng"]), helper.make_node("Add", ["ng", "beta"], ["b"])]
    return n


def layernorm_case(out, name, shape, mul_square=False):
    x = rng.uniform(-3, 3, shape).astype(np.float32)
    g = rng.uniform(0.5, 1.5, shape[-1]).astype(H)
    beta = rng.uniform(-0.5, 0.5, shape[-1]).astype(H)
    h = x.astype(H).astype(np.float64)
    d = h - h.mean(-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(-1, keepdims=True) + float(H(1e-5))) * g.astype(np.float64) + beta.astype(np.float64)
    save_typed_case(out, name, wrap(layernorm_body(mul_square)), [("x", x)], [("y", y.astype(np.float32))],
                    [("g", g), ("beta", beta)], opset=13)


def gelu_body(src, scale_op="Div", scale=1.4140625):
    """Exact Gelu of `src` written out, float16 constants; writes "b"."""
    return [const("k", H(scale)), const("one", H(1.0)), const("half", H(0.5)),
            helper.make_node(scale_op, [src, "k"], ["s"]), helper.make_node("Erf", ["s"], ["e"]),
            helper.make_node("Add", ["e", "one"], ["e1"]), helper.make_node("Mul", [src, "e1"], ["p"]),
            helper.make_node("Mul", ["p", "half"], ["b"])]


def gelu_case(out, name, shape, matmul=True, scale_op="Div", scale=1.4140625, dtype=H):
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    src, inits, body = "h", [], []
    if matmul:
        w = (rng.uniform(-1, 1, (shape[-1], 64)) / math.sqrt(shape[-1])).astype(dtype)
        inits = [("w", w)]
        body = [helper.make_node("MatMul", ["h", "w"], ["mm"])]
        src = "mm"
    hx = x.astype(dtype).astype(np.float64)
    t = hx @ inits[0][1].astype(np.float64) if matmul else hx
    k = float(dtype(scale))
    z = t / k if scale_op == "Div" else t * k
    y = t * (erf64(z) + 1) * 0.5
    nodes = body + gelu_body(src, scale_op, scale)
    if dtype == H:
        nodes = wrap(nodes)
    else:  # float32 throughout: constants as float32
        for n in nodes:
            if n.op_type == "Constant":
                n.attribute[0].t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(n.attribute[0].t).astype(np.float32), n.output[0]))
        nodes = [helper.make_node("Identity", ["x"], ["h"])] + nodes + [helper.make_node("Identity", ["b"], ["y"])]
    save_typed_case(out, name, nodes, [("x", x)], [("y", y.astype(np.float32))], inits, opset=13)


def gelu_tanh_case(out, name, shape):
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    c3, k, half, one = H(3.0), H(0.044715), H(0.5), H(1.0)
    s = H(math.sqrt(2 / math.pi))
    body = [const("c3", c3), const("k", k), const("s", s), const("half", half), const("one", one),
            helper.make_node("Pow", ["h", "c3"], ["cube"]), helper.make_node("Mul", ["k", "cube"], ["kc"]),
            helper.make_node("Add", ["h", "kc"], ["in"]), helper.make_node("Mul", ["in", "s"], ["u"]),
            helper.make_node("Tanh", ["u"], ["t"]), helper.make_node("Add", ["t", "one"], ["t1"]),
            helper.make_node("Mul", ["h", "half"], ["hh"]), helper.make_node("Mul", ["hh", "t1"], ["b"])]
    h = x.astype(H).astype(np.float64)
    y = 0.5 * h * (1 + np.tanh(float(s) * (h + float(k) * h ** 3)))
    save_typed_case(out, name, wrap(body), [("x", x)], [("y", y.astype(np.float32))], opset=13)


def rmsnorm_case(out, name, shape):
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    g = rng.uniform(0.5, 1.5, shape[-1]).astype(H)
    body = [const("two", H(2.0)), const("eps", H(1e-5)), helper.make_node("Pow", ["h", "two"], ["sq"]),
            helper.make_node("ReduceMean", ["sq"], ["m"], axes=[-1]), helper.make_node("Add", ["m", "eps"], ["v"]),
            helper.make_node("Sqrt", ["v"], ["r"]), helper.make_node("Div", ["h", "r"], ["n"]),
            helper.make_node("Mul", ["n", "g"], ["b"])]
    h = x.astype(H).astype(np.float64)
    y = h / np.sqrt((h * h).mean(-1, keepdims=True) + float(H(1e-5))) * g.astype(np.float64)
    save_typed_case(out, name, wrap(body), [("x", x)], [("y", y.astype(np.float32))], [("g", g)], opset=13)


def f16_io_case(out):
    """float16 graph input and output (keep_io_types=False): RMSNorm, then
    an exact Gelu whose output is the graph's."""
    x = rng.uniform(-2, 2, (3, 4, 40)).astype(H)
    g = rng.uniform(0.5, 1.5, 40).astype(H)
    body = [const("two", H(2.0)), const("eps", H(1e-5)), helper.make_node("Pow", ["h", "two"], ["sq"]),
            helper.make_node("ReduceMean", ["sq"], ["m"], axes=[-1]), helper.make_node("Add", ["m", "eps"], ["v"]),
            helper.make_node("Sqrt", ["v"], ["r"]), helper.make_node("Div", ["h", "r"], ["n"]),
            helper.make_node("Mul", ["g", "n"], ["gn"])] + gelu_body("gn")
    body = [helper.make_node("Identity", ["x"], ["h"])] + body[:-1] + [
        helper.make_node("Mul", ["p", "half"], ["y"])]
    h = x.astype(np.float64)
    t = h / np.sqrt((h * h).mean(-1, keepdims=True) + float(H(1e-5))) * g.astype(np.float64)
    y = t * (erf64(t / 1.4140625) + 1) * 0.5
    save_typed_case(out, "f16_io_rmsnorm_gelu", body, [("x", x)], [("y", y.astype(H))], [("g", g)], opset=13)


def pow_clip_case(out):
    """Pow by float16 3 and 0.5 and Clip with float16 bounds: oneDNN's."""
    x = rng.uniform(0.1, 3, (3, 5, 17)).astype(np.float32)
    body = [const("three", H(3.0)), const("halfe", H(0.5)), const("lo", H(0.5)), const("hi", H(6.0)),
            helper.make_node("Pow", ["h", "three"], ["c"]), helper.make_node("Pow", ["h", "halfe"], ["q"]),
            helper.make_node("Add", ["c", "q"], ["cq"]), helper.make_node("Clip", ["cq", "lo", "hi"], ["b"])]
    h = x.astype(H).astype(np.float64)
    y = np.clip(h ** 3 + np.sqrt(h), 0.5, 6.0)
    save_typed_case(out, "f16_pow_clip", wrap(body), [("x", x)], [("y", y.astype(np.float32))], opset=13)


def erf_case(out):
    """Erf alone (no Gelu around it): special values and the loop's edges."""
    sp = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40, 1e-30, 1e-8, 0.921875, -0.921875, 0.92187494,
          0.9416679, 1.0, 2.5, 3.9, 3.92, 4.0, -4.5, 6.0, -6.0, 10.0, 1e30, -3e38]
    x = np.concatenate([np.array(sp, np.float32), rng.uniform(-6, 6, 1000).astype(np.float32),
                        rng.uniform(-1e-3, 1e-3, 37).astype(np.float32)])
    with np.errstate(invalid="ignore"):
        y = erf64(x).astype(np.float32)
    save_typed_case(out, "erf_alone", [helper.make_node("Erf", ["x"], ["y"])], [("x", x)], [("y", y)], opset=13)


def hostile_pow_cases(out):
    x = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    body = [const("e", np.array([2.0, 2.0, 2.0], H)), helper.make_node("Pow", ["h", "e"], ["b"])]
    save_typed_case(out, "hostile_pow_exponent_vector", wrap(body), [("x", x)],
                    [("y", (x.astype(H).astype(np.float64) ** 2).astype(np.float32))], opset=13)
    body = [const("e", np.full((1, 1, 1), 2.0, H)), helper.make_node("Pow", ["h", "e"], ["b"])]
    y = (x.astype(H).astype(np.float64) ** 2).reshape(1, 2, 3)
    save_typed_case(out, "hostile_pow_exponent_rank3", wrap(body), [("x", x)], [("y", y.astype(np.float32))],
                    opset=13)
    body = [const("e", np.full((1, 1, 1), 2.0, np.float32)), helper.make_node("Pow", ["x", "e"], ["y"])]
    save_typed_case(out, "hostile_pow_exponent_rank3_f32", body, [("x", x)],
                    [("y", (x.astype(np.float64) ** 2).reshape(1, 2, 3).astype(np.float32))], opset=13)


# name -> what ONEDNN_VERBOSE must show: the primitive kinds besides
# reorder (None: any), an algorithm that must appear (None: any)
FUSED = {
    "f16_layernorm": ({"layer_normalization"}, None),
    "f16_layernorm_mul_square": ({"layer_normalization"}, None),
    "f16_gelu_after_matmul": (None, "gelu_erf"),
    "f16_gelu_alone": ({"eltwise"}, "gelu_erf"),
    "f16_gelu_mul_form": ({"eltwise"}, "gelu_erf"),
    "f16_gelu_tanh": (set(), None),  # odn_gelu_loop.c: a C loop step
    "f16_rmsnorm": (set(), None),  # odn_fuse_rmsnorm.c: a C loop step
    "f16_pow_clip": (None, None),
    "f16_io_rmsnorm_gelu": ({"eltwise"}, "gelu_erf"),
}
UNFUSED = {"f32_gelu_off": "gelu_erf", "f16_gelu_off": "gelu_erf"}


def write_all(out):
    layernorm_case(out, "f16_layernorm", (4, 64, 96))
    layernorm_case(out, "f16_layernorm_mul_square", (3, 7, 37), mul_square=True)
    gelu_case(out, "f16_gelu_after_matmul", (2, 9, 48))
    gelu_case(out, "f16_gelu_alone", (5, 67), matmul=False)
    gelu_case(out, "f16_gelu_mul_form", (5, 67), matmul=False, scale_op="Mul", scale=1 / math.sqrt(2))
    gelu_tanh_case(out, "f16_gelu_tanh", (3, 5, 41))
    rmsnorm_case(out, "f16_rmsnorm", (2, 9, 72))
    pow_clip_case(out)
    f16_io_case(out)
    gelu_case(out, "f32_gelu_off", (5, 67), matmul=False, scale=1.5, dtype=np.float32)
    gelu_case(out, "f16_gelu_off", (5, 67), matmul=False, scale=1.4150390625)
    erf_case(out)
    hostile_pow_cases(out)


def verbose(tessera, case_dir):
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    r = subprocess.run([tessera, "bench", case_dir, "-p", "onednn,reference", "--threads", "1", "--runs", "1",
                        "--warmup", "0"], capture_output=True, text=True, env=env)
    lines = [line for line in (r.stdout + r.stderr).splitlines()
             if line.startswith("onednn_verbose,exec") and line.count(",") > 3]
    return {line.split(",")[3] for line in lines} - {"reorder"}, "\n".join(lines)


def profile_impls(tessera, case_dir, out):
    """The implementations `tessera bench --profile` records for the run's
    pieces ("loop Erf", "eltwise jit:avx2", ...)."""
    f = os.path.join(out, os.path.basename(case_dir) + ".profile.json")
    subprocess.run([tessera, "bench", case_dir, "-p", "onednn,reference", "--runs", "1", "--warmup", "0",
                    "--profile", f], capture_output=True, text=True)
    if not os.path.exists(f):
        return set()
    events = json.load(open(f)).get("traceEvents", [])
    return {i for e in events for i in e.get("args", {}).get("impl", "").split(";") if i}


def check_fused(tessera, c, out):
    name = os.path.basename(c)
    kinds, text = verbose(tessera, c)
    want_kinds, want_alg = FUSED[name]
    ok = "loop Erf" not in profile_impls(tessera, c, out)
    if want_kinds is not None:
        ok = ok and kinds == want_kinds
    if want_alg:
        ok = ok and want_alg in text
    if name != "f16_pow_clip":  # that one has an Add of its own
        ok = ok and "binary" not in kinds and "reduction" not in kinds
    print("%s: %s fused: %s" % ("ok" if ok else "FAIL", name, ",".join(sorted(kinds)) or "C loop steps only"))
    return ok


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    os.makedirs(out, exist_ok=True)
    cases = written_cases(write_all, out)
    bad = 0
    erf = [c for c in cases if c.endswith("erf_alone")]
    f32 = [c for c in cases if "f32" in os.path.basename(c)]
    half = [c for c in cases if c not in erf + f32]
    for t in ("1", "2"):
        bad += not test_cases(tessera, half, "-t", t, "--rtol", "2e-3", "--atol", "2e-3")
        bad += not test_cases(tessera, f32, "-t", t, "--rtol", "1e-5", "--atol", "1e-6")
        bad += not test_cases(tessera, erf, "-t", t, "--rtol", "2.4e-7", "--atol", "0")
    for c in cases:
        name = os.path.basename(c)
        report = partition(tessera, c)
        whole = claimed_whole(report)
        if name.startswith("hostile"):  # the Pow left to the reference provider
            ok = "reference 1," in report
            print("%s: %s Pow declined" % ("ok" if ok else "FAIL", name))
            bad += not ok
            continue
        if not whole:
            print("FAIL: %s not all claimed by onednn:\n%s" % (name, report))
            bad += 1
            continue
        if name in FUSED:
            bad += not check_fused(tessera, c, out)
        elif name in UNFUSED:
            kinds, text = verbose(tessera, c)
            ok = UNFUSED[name] not in text and "loop Erf" in profile_impls(tessera, c, out)
            print("%s: %s unfused: %s" % ("ok" if ok else "FAIL", name, ",".join(sorted(kinds))))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--check":
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[2], sys.argv[3]))
