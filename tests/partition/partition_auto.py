#!/usr/bin/env python3
"""The `partition_auto` ctest: cost placement is never worse than list order.

Two small models written here with python onnx, each with cheap scalar
Muls between pieces that oneDNN claims:

  dynquant  the pattern of ONNX Runtime's quantize_dynamic, twice:
            x -> DynamicQuantizeLinear -> MatMulInteger -> Cast
              -> Mul(Cast, Mul(x_scale, w_scale)) -> Add(Reshape(bias))
            with symbolic batch and sequence dims (the scalar Mul of the two
            scales and the Reshape of a constant bias once went to the
            reference provider under -p auto, splitting oneDNN's pieces);
  scaled    x[4,16] -> MatMul -> Mul(0.5) -> MatMul -> Mul(2) -> MatMul,
            static shapes, one oneDNN piece under list order.

For each, `tessera partition --format json` under `-p onednn,reference`
(list order), `-p onednn,reference --policy cost` and `-p auto`: every node
must sit on the same provider as under list order and the piece count must
be the same. Then `tessera run -p auto` must give the outputs computed here
with numpy (the ONNX definitions of the ops).

With --devmem (tests/plugins/plugin_device.c, a provider with its own
memory and a fixed estimate per node): four Relus on x[n,1024], n symbolic,
under `--policy cost -p reference,DEVICE`. Whether the copies to the device
pay depends on n (at n=1 they do not, at n=32 they do); a symbolic n must
be placed as n=32 (the host's guess), not as a size nobody can weigh.

usage: partition_auto.py --tessera BIN --work DIR [--devmem SO]
Exits 77 (skip) without python onnx or without the onednn provider.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("SKIP: python3-onnx is not installed")
    sys.exit(77)

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    return cond


def run(tessera, args):
    p = subprocess.run([tessera] + args, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


# --- the models ---------------------------------------------------------------

RNG = np.random.default_rng(7)
K = 16  # features


def quantize_weight(w):
    """Symmetric int8 weights as quantize_dynamic writes them."""
    scale = np.float32(np.abs(w).max() / 127.0)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale


def dynquant_model(path):
    nodes, inits = [], []
    layers = []
    prev = "x"
    for li in range(2):
        w = RNG.uniform(-1, 1, (K, K)).astype(np.float32)
        wq, ws = quantize_weight(w)
        bias = RNG.uniform(-1, 1, (K,)).astype(np.float32)
        layers.append((wq, ws, bias))
        p = "l%d_" % li
        inits += [numpy_helper.from_array(wq, p + "wq"),
                  numpy_helper.from_array(np.array(ws, np.float32), p + "ws"),
                  numpy_helper.from_array(np.array(0, np.int8), p + "wzp"),
                  numpy_helper.from_array(bias, p + "bias"),
                  numpy_helper.from_array(np.array([1, 1, K], np.int64), p + "bshape")]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [prev], [p + "xq", p + "xs", p + "xzp"], name=p + "dql"),
            helper.make_node("MatMulInteger", [p + "xq", p + "wq", p + "xzp", p + "wzp"], [p + "acc"], name=p + "mmi"),
            helper.make_node("Cast", [p + "acc"], [p + "accf"], to=TensorProto.FLOAT, name=p + "cast"),
            helper.make_node("Mul", [p + "xs", p + "ws"], [p + "scale"], name=p + "scales_mul"),
            helper.make_node("Mul", [p + "accf", p + "scale"], [p + "scaled"], name=p + "output_scale_mul"),
            helper.make_node("Reshape", [p + "bias", p + "bshape"], [p + "b3"], name=p + "bias_reshape"),
            helper.make_node("Add", [p + "scaled", p + "b3"], [p + "out"], name=p + "bias_add"),
        ]
        prev = p + "out"
        if li == 0:
            nodes.append(helper.make_node("Relu", [prev], ["h"], name="relu"))
            prev = "h"
    nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
    g = helper.make_graph(nodes, "dynquant",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", K])], inits)
    save(g, path)
    return layers


def scaled_model(path):
    ws = [RNG.uniform(-1, 1, (K, K)).astype(np.float32) for _ in range(3)]
    inits = [numpy_helper.from_array(w, "w%d" % i) for i, w in enumerate(ws)]
    inits += [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
              numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["a"], name="mm0"),
             helper.make_node("Mul", ["a", "half"], ["b"], name="mul_half"),
             helper.make_node("MatMul", ["b", "w1"], ["c"], name="mm1"),
             helper.make_node("Mul", ["c", "two"], ["d"], name="mul_two"),
             helper.make_node("MatMul", ["d", "w2"], ["y"], name="mm2")]
    g = helper.make_graph(nodes, "scaled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, K])], inits)
    save(g, path)
    return ws


def relu_chain_model(path):
    nodes, prev = [], "x"
    for i in range(4):
        nodes.append(helper.make_node("Relu", [prev], ["r%d" % i], name="relu%d" % i))
        prev = "r%d" % i
    g = helper.make_graph(nodes, "relus", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1024])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["n", 1024])])
    save(g, path)


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


# --- numpy, from the ONNX definitions ---------------------------------------------


def dynamic_quantize(x):
    """DynamicQuantizeLinear: uint8, the range widened to include 0."""
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    scale = np.float32((hi - lo) / 255.0)
    zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    q = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def dynquant_expected(x, layers):
    h = x
    for li, (wq, ws, bias) in enumerate(layers):
        q, xs, zp = dynamic_quantize(h)
        acc = (q.astype(np.int32) - np.int32(zp)) @ wq.astype(np.int32)
        h = acc.astype(np.float32) * np.float32(xs * ws) + bias
        if li == 0:
            h = np.maximum(h, 0)
    return h


# --- the checks ----------------------------------------------------------------


def placement(tessera, model, extra):
    rc, out, err = run(tessera, ["partition", model, "--format", "json"] + extra)
    if not check(rc == 0, "partition %s %s: exit %d: %s" % (os.path.basename(model), extra, rc, err[-400:])):
        return None
    j = json.loads(out)
    where = {n: p["provider"] for p in j["pieces"] for n in p["nodes"]}
    # A node of constants only (the scales' Mul, the bias Reshape) is
    # computed once when the session is made: no piece at all.
    where.update({f["node"]: "folded" for f in j.get("folded", [])})
    return where, len(j["pieces"]), j["placement"]["moved"]


def check_placements(tessera, model, must_be_onednn):
    name = os.path.basename(model)
    listed = placement(tessera, model, ["-p", "onednn,reference"])
    if not listed:
        return
    where, pieces, _ = listed
    # What list order is here follows from what oneDNN maps (MatMulInteger
    # needs VNNI); the cheap nodes themselves are always oneDNN's.
    for n in must_be_onednn:
        check(where.get(n) in ("onednn", "folded"), "%s: list order put %s on %s" % (name, n, where.get(n)))
    for extra in (["-p", "onednn,reference", "--policy", "cost"], ["-p", "auto"]):
        got = placement(tessera, model, extra)
        if not got:
            continue
        w, p, moved = got
        label = "%s %s" % (name, " ".join(extra))
        check(p == pieces, "%s: %d pieces, list order %d" % (label, p, pieces))
        off = sorted(n for n in where if w.get(n) != where[n])
        check(not off, "%s: off list order: %s" % (label, ", ".join("%s on %s" % (n, w.get(n)) for n in off)))
        check(moved == 0, "%s: %d node(s) reported moved" % (label, moved))


def check_symbolic(tessera, work, devmem):
    model = os.path.join(work, "relus.onnx")
    relu_chain_model(model)
    base = ["-p", "reference," + devmem, "--policy", "cost", "--provider-option", "device:cost=1e-7"]
    got = {}
    for label, extra in (("symbolic", []), ("n=1", ["--dim", "n=1"]), ("n=32", ["--dim", "n=32"])):
        r = placement(tessera, model, base + extra)
        if r:
            got[label] = r[0]
    if len(got) != 3:
        return
    # The sizes matter here: otherwise the next check proves nothing.
    check(got["n=1"] != got["n=32"], "relus.onnx: n=1 and n=32 placed alike: %s" % got["n=1"])
    check(got["symbolic"] == got["n=32"],
          "relus.onnx: symbolic n placed %s, n=32 %s" % (got["symbolic"], got["n=32"]))


def check_run(tessera, work, model, feeds, want, atol):
    out_dir = os.path.join(work, os.path.basename(model) + ".out")
    os.makedirs(out_dir, exist_ok=True)
    args = ["run", model, "-p", "auto", "-o", out_dir]
    for k, v in feeds.items():
        f = os.path.join(work, "%s_%s.pb" % (os.path.basename(model), k))
        with open(f, "wb") as fh:
            fh.write(numpy_helper.from_array(v, k).SerializeToString())
        args += ["-i", "%s=%s" % (k, f)]
    rc, _, err = run(tessera, args)
    if not check(rc == 0, "run %s -p auto: exit %d: %s" % (model, rc, err[-400:])):
        return
    t = onnx.TensorProto()
    with open(os.path.join(out_dir, "y.pb"), "rb") as fh:
        t.ParseFromString(fh.read())
    got = numpy_helper.to_array(t)
    check(got.shape == want.shape, "%s: output shape %s, want %s" % (model, got.shape, want.shape))
    if got.shape == want.shape:
        err = float(np.abs(got - want).max())
        check(err <= atol, "%s: output differs by %g (allowed %g)" % (model, err, atol))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--devmem")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)

    rc, out, _ = run(a.tessera, ["providers"])
    if rc != 0 or not any(line.startswith("onednn ") for line in out.splitlines()):
        print("SKIP: the onednn provider is not built")
        return 77

    dq = os.path.join(a.work, "dynquant.onnx")
    layers = dynquant_model(dq)
    check_placements(a.tessera, dq, ["l0_scales_mul", "l1_scales_mul", "l0_bias_reshape", "l1_bias_reshape"])
    x = RNG.uniform(-1, 1, (2, 3, K)).astype(np.float32)
    want = dynquant_expected(x, layers)
    # Random inputs make no rounding ties, so the integers agree exactly and
    # only float32 rounding of the scale and bias steps remains.
    check_run(a.tessera, a.work, dq, {"x": x}, want, 1e-4 * max(1.0, float(np.abs(want).max())))

    sc = os.path.join(a.work, "scaled.onnx")
    ws = scaled_model(sc)
    check_placements(a.tessera, sc, ["mm0", "mul_half", "mm1", "mul_two", "mm2"])
    listed = placement(a.tessera, sc, ["-p", "onednn,reference"])
    if listed:
        check(listed[1] == 1, "scaled.onnx: list order makes %d pieces, want 1" % listed[1])
    x = RNG.uniform(-1, 1, (4, K)).astype(np.float32)
    want = ((x @ ws[0]) * 0.5 @ ws[1]) * 2.0 @ ws[2]
    check_run(a.tessera, a.work, sc, {"x": x}, want, 1e-4 * max(1.0, float(np.abs(want).max())))

    if a.devmem:
        check_symbolic(a.tessera, a.work, a.devmem)

    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("partition_auto: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
