#!/usr/bin/python3
"""RMSNorm written out in primitive ops (odn_fuse_rmsnorm.c) in the forms
exporters write, all over the last axis: x / Sqrt(ReduceMean(Pow(x, 2)) + eps)
and x * Reciprocal(Sqrt(...)) (HF T5, LLaMA), the square as Mul(x, x), gamma
after or before (Mul(gamma, y)), float32-to-float32 Casts before and after
(LLaMA's `.to(torch.float32)`), ReduceMean's axes as an input (opset 18),
2-D and 3-D inputs, rows not a multiple of 8, eps as a 1-element tensor,
rows enough for both threads to share them. Each runs at 1 and 2 threads
against numpy in float64 and must run as one step: no oneDNN primitive but
reorders in ONEDNN_VERBOSE. Fused with gamma left a step of its own: y
before gamma also a graph output, a gamma per row, a gamma of higher rank
than x, a float16 export (Cast up, norm, Cast down, gamma in float16).
Hostile look-alikes must run unfused (the Sqrt an eltwise of its own) and
still be right: the mean also a graph output, a mean over a non-last axis,
keepdims=0, an eps of one value per column, a cube instead of a square. And
a lone Reciprocal (now oneDNN's: pow with beta -1, a division) against
numpy's float32 1/x exactly.
usage: rmsnorm_cases.py --check TESSERA OUT_DIR (exit 77 without onednn)."""
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

rng = np.random.default_rng(20261207) if np is not None else None
THREADS = (1, 2)


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def rms(x, eps, gamma=None):
    x64 = x.astype(np.float64)
    y = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
    return y if gamma is None else y * gamma.astype(np.float64)


def chain(square="pow", recip=False, gamma=None, gamma_first=False, cast=False, axes_input=False, eps_shape=(),
          axis=-1, keepdims=1, y_out=False, mean_out=False, eps=1e-6, cast_in=False):
    """Nodes from x to the output "y" (and the extra outputs named)."""
    x = "xc" if cast_in else "x"
    n = [helper.make_node("Cast", ["x"], ["xc"], to=TensorProto.FLOAT)] if cast_in else []
    n += [const("two", np.float32(3.0 if square == "cube" else 2.0)),
         const("eps", np.broadcast_to(np.asarray(eps, np.float32), eps_shape).copy())]
    if square == "mul":
        n.append(helper.make_node("Mul", [x, x], ["sq"]))
    else:
        n.append(helper.make_node("Pow", [x, "two"], ["sq"]))
    if axes_input:
        n.append(const("axes", np.array([axis], np.int64)))
        n.append(helper.make_node("ReduceMean", ["sq", "axes"], ["mean"], keepdims=keepdims))
    else:
        n.append(helper.make_node("ReduceMean", ["sq"], ["mean"], axes=[axis], keepdims=keepdims))
    n.append(helper.make_node("Add", ["mean", "eps"], ["var"]))
    n.append(helper.make_node("Sqrt", ["var"], ["r"]))
    norm = "y" if gamma is None and not y_out else "norm"
    if recip:
        n.append(helper.make_node("Reciprocal", ["r"], ["inv"]))
        n.append(helper.make_node("Mul", [x, "inv"], [norm]))
    else:
        n.append(helper.make_node("Div", [x, "r"], [norm]))
    if gamma is not None:
        src = norm
        if cast:
            n.append(helper.make_node("Cast", [norm], ["normc"], to=TensorProto.FLOAT))
            src = "normc"
        n.append(helper.make_node("Mul", ["gamma", src] if gamma_first else [src, "gamma"], ["y"]))
    elif y_out:
        n.append(helper.make_node("Identity", [norm], ["y"]))
    return n


def expected(x, eps, gamma=None, axis=-1, keepdims=1, square="pow"):
    x64 = x.astype(np.float64)
    p = 3 if square == "cube" else 2
    m = np.mean(x64 ** p, axis=axis, keepdims=bool(keepdims))
    y = x64 / np.sqrt(m + eps.astype(np.float64))
    return y if gamma is None else y * gamma.astype(np.float64)


def case(out, name, shape, gamma_shape=None, opset=13, **kw):
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    if kw.get("square") == "cube":
        x = np.abs(x)  # a mean of cubes that Sqrt takes
    gamma = rng.uniform(0.5, 1.5, gamma_shape).astype(np.float32) if gamma_shape else None
    eps = np.broadcast_to(np.asarray(kw.get("eps", 1e-6), np.float32), kw.get("eps_shape", ()))
    y = expected(x, eps, gamma, kw.get("axis", -1), kw.get("keepdims", 1), kw.get("square", "pow"))
    outs = [("y", y.astype(np.float32))]
    nodes = chain(gamma=gamma, **kw)
    if kw.get("y_out"):
        outs.append(("norm", expected(x, eps).astype(np.float32)))
    if kw.get("mean_out"):
        outs.append(("mean", np.mean(x.astype(np.float64) ** 2, -1, keepdims=True).astype(np.float32)))
    inits = [("gamma", gamma)] if gamma is not None else []
    save_typed_case(out, name, nodes, [("x", x)], outs, inits, opset=opset)


FUSED = {
    "rms_div_gamma_after": dict(shape=(2, 5, 64), gamma_shape=(64,)),
    "rms_recip_gamma_before": dict(shape=(2, 5, 64), gamma_shape=(64,), recip=True, gamma_first=True),
    "rms_mulxx_no_gamma": dict(shape=(3, 4, 40), square="mul"),
    "rms_axes_input_opset18": dict(shape=(2, 3, 48), gamma_shape=(1, 1, 48), axes_input=True, opset=18),
    "rms_2d_tail": dict(shape=(7, 37), gamma_shape=(37,), recip=True),
    "rms_cast_gamma": dict(shape=(2, 6, 24), gamma_shape=(24,), recip=True, cast=True, gamma_first=True),
    "rms_cast_in_and_out": dict(shape=(2, 6, 24), gamma_shape=(24,), recip=True, cast=True, cast_in=True),
    "rms_eps_tensor": dict(shape=(2, 5, 13), gamma_shape=(13,), eps_shape=(1,), eps=1e-5),
    "rms_threads": dict(shape=(4, 64, 512), gamma_shape=(512,)),
}
UNFUSED = {
    "rms_mean_also_output": dict(shape=(2, 5, 20), gamma_shape=(20,), mean_out=True),
    "rms_bad_axis": dict(shape=(2, 5, 16), gamma_shape=(16,), axis=1),
    "rms_bad_keepdims": dict(shape=(6, 6), keepdims=0),
    "rms_bad_eps_vector": dict(shape=(2, 5, 16), eps_shape=(16,), eps=np.linspace(0.1, 1.6, 16) if np else 0),
    "rms_bad_cube": dict(shape=(2, 5, 16), square="cube"),
}
# fused, with the gamma Mul left a step of its own (a gamma per row)
GAMMA_APART = {"rms_f16_casts": None, "rms_bad_gamma_rows": dict(shape=(2, 5, 16), gamma_shape=(5, 1)),
               "rms_bad_gamma_rank": dict(shape=(7, 37), gamma_shape=(1, 1, 37)),
               "rms_norm_also_output": dict(shape=(2, 5, 20), gamma_shape=(20,), y_out=True)}


def reciprocal_case(out):
    x = np.concatenate([rng.uniform(-3, 3, 61), [0.0, -0.0, np.inf, -np.inf, 1e-38, 3e38, 7.0]]).astype(np.float32)
    with np.errstate(divide="ignore"):
        y = (np.float32(1) / x).astype(np.float32)
    save_typed_case(out, "rms_reciprocal_alone", [helper.make_node("Reciprocal", ["x"], ["y"])],
                    [("x", x.reshape(4, 17))], [("y", y.reshape(4, 17))], opset=13)


def reciprocal_tiny_case(out):
    """Values where glibc's powf(x, -1) is an ulp off 1 / x (the eltwise C
    loop of odn_loops.c divides for beta -1, as oneDNN's JIT does)."""
    x = np.array([1.00196266, -1.00253451, 1.00256968], np.float32)
    save_typed_case(out, "rms_reciprocal_tiny", [helper.make_node("Reciprocal", ["x"], ["y"])], [("x", x)],
                    [("y", (np.float32(1) / x).astype(np.float32))], opset=13)


def f16_case(out):
    """A float16 export: Cast up, the norm in float32, Cast down, gamma in
    float16 (the float32 part fused, the rest steps of their own)."""
    x = rng.uniform(-2, 2, (2, 6, 40)).astype(np.float16)
    g = rng.uniform(0.5, 1.5, 40).astype(np.float16)
    nodes = [helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT), const("two", np.float32(2.0)),
             const("eps", np.float32(1e-6)), helper.make_node("Pow", ["xf", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["mean"], axes=[-1]),
             helper.make_node("Add", ["mean", "eps"], ["var"]), helper.make_node("Sqrt", ["var"], ["r"]),
             helper.make_node("Reciprocal", ["r"], ["inv"]), helper.make_node("Mul", ["xf", "inv"], ["n"]),
             helper.make_node("Cast", ["n"], ["n16"], to=TensorProto.FLOAT16),
             helper.make_node("Mul", ["g", "n16"], ["y"])]
    y = rms(x, 1e-6).astype(np.float16) * g
    save_typed_case(out, "rms_f16_casts", nodes, [("x", x)], [("y", y)], [("g", g)], opset=13)


def write_all(out):
    for name, kw in {**FUSED, **UNFUSED, **GAMMA_APART}.items():
        if kw:
            case(out, name, **kw)
    reciprocal_case(out)
    reciprocal_tiny_case(out)
    f16_case(out)


def onednn_steps(tessera, case_dir, threads):
    """The kinds of oneDNN primitives a run of the case executes."""
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    r = subprocess.run([tessera, "bench", case_dir, "-p", "onednn,reference", "--threads", str(threads), "--runs",
                        "1", "--warmup", "0"], capture_output=True, text=True, env=env)
    kinds = [line.split(",")[3] for line in (r.stdout + r.stderr).splitlines()
             if line.startswith("onednn_verbose,exec") and line.count(",") > 3]
    return [k for k in kinds if k != "reorder"]


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    os.makedirs(out, exist_ok=True)
    cases = written_cases(write_all, out)
    bad = 0
    exact = [c for c in cases if "reciprocal" in c]
    half = [c for c in cases if "f16" in c]
    for t in THREADS:
        rest = [c for c in cases if c not in exact + half]
        bad += not test_cases(tessera, rest, "-t", str(t), "--rtol", "1e-5", "--atol", "1e-6")
        bad += not test_cases(tessera, exact, "-t", str(t), "--rtol", "0", "--atol", "0")
        bad += not test_cases(tessera, half, "-t", str(t), "--rtol", "2e-3", "--atol", "1e-3")
    for c in cases:
        name = os.path.basename(c)
        if not claimed_whole(partition(tessera, c)):
            print("%s: not all claimed by onednn:\n%s" % (name, partition(tessera, c)))
            bad += 1
            continue
        for t in THREADS:
            steps = onednn_steps(tessera, c, t)
            if name in FUSED:
                ok = not steps
            elif name in GAMMA_APART:  # the Mul may be oneDNN's binary or a C loop
                ok = not [k for k in steps if k != "binary"]
            elif name in UNFUSED:  # Sqrt (at least) an eltwise of its own
                ok = "eltwise" in steps
            else:
                ok = True
            print("%s: %s (%d threads): %s" % ("ok" if ok else "FAIL", name, t, ",".join(steps) or "one loop step"))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--check":
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[2], sys.argv[3]))
