#!/usr/bin/env python3
"""The `compose` ctest: chains of models (core/model_compose.c) through
`tessera run A.onnx B.onnx [C.onnx]` and `tessera compose ... -o`.

Models made here with onnx.helper:
  pre18    image uint8 [1,16,16,3] -> Cast -> Transpose to NCHW -> Resize
           (linear, antialias, scales 0.5) -> CenterCropPad to 6x6 -> Sub
           mean -> Div std -> pixels [1,3,6,6]                    (opset 18)
  cls18    input [1,3,6,6] -> Conv 3x3 -> Relu -> GlobalAveragePool ->
           Flatten -> Gemm -> Softmax -> probs [1,5]              (opset 18)
  post18   scores [1,5] -> ArgMax -> label, ReduceMax -> confidence
  pre17/cls17  the same at opset 17 (Resize without antialias, Slice as the
           crop), which onnx 1.12's checker knows
Every expected value is computed here with numpy, independently of both
tessera and onnx (the antialiased 2x linear downscale is the [1,3,3,1]/8
filter with edge clamping), and the onnx.compose-merged models are run too.

Cases, on every provider set built (reference; onednn,reference;
opencl,reference):
  chain        run pre18 cls18 == numpy == run of onnx.compose's merge
  chain3       run pre18 cls18 post18 (two seams) == numpy == merge of merges
  seam         with oneDNN one piece holds pre18's Sub, Div and cls18's Conv
  compose      `tessera compose` of pre18+cls18 is onnx.compose's model
               (inputs, outputs, nodes, attributes, initializers, opsets);
               of pre17+cls17 it passes onnx.checker (full_check) and runs
  connect      cls2 takes (bias, input): positional feeding is refused with
               a message naming both; --connect pixels=input works
  clash        a classifier reusing the name 'normalized': the error names
               it and both files; --prefix p_,c_ works and equals
               onnx.compose with prefix1/prefix2
  opset        a classifier at opset 13 (ReduceMean with an axes attribute,
               an input from 18) after pre18: the chain runs, == numpy ==
               running pre18 then cls13 one after the other, on every
               provider set; compose -o rewrites ReduceMean to opset 18's
               form; a classifier at opset 11 (Softmax's 2-D coercion too)
               the same; a stage with Resize-10, whose meaning changed at
               11, runs as a chain and compose -o refuses it by name
  external     the classifier's weights as external data in another folder
  subgraph     an If whose branches read the connected input (prefixed)
  passthrough  a middle stage whose output is its connected input
  functions    two stages defining one model-local function: refused; with
               prefixes renamed with their calls, as onnx.compose.add_prefix

usage: compose_test.py --tessera BIN --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnx.compose
from onnx import TensorProto, helper, numpy_helper

FAILURES = []
rng = np.random.default_rng(11)


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    return cond


# --- numpy, independently -----------------------------------------------------

def downscale2_antialias(a, axis):
    """Resize by 0.5 along `axis`, linear with antialias, half_pixel: output i
    is (a[2i-1] + 3 a[2i] + 3 a[2i+1] + a[2i+2]) / 8, indices clamped."""
    n = a.shape[axis]
    idx = np.arange(n // 2)
    take = lambda k: np.take(a, np.clip(k, 0, n - 1), axis=axis)
    return (take(2 * idx - 1) + 3 * take(2 * idx) + 3 * take(2 * idx + 1) + take(2 * idx + 2)) / 8.0


def downscale2_plain(a, axis):
    """Resize by 0.5 along `axis`, linear, half_pixel, no antialias: the mean
    of each pair."""
    n = a.shape[axis]
    idx = np.arange(n // 2)
    return (np.take(a, 2 * idx, axis=axis) + np.take(a, 2 * idx + 1, axis=axis)) / 2.0


MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], np.float32) * 255


def pre_np(image, antialias=True):
    x = image.astype(np.float64).transpose(0, 3, 1, 2)
    down = downscale2_antialias if antialias else downscale2_plain
    x = down(down(x, 2), 3)          # 16x16 -> 8x8
    x = x[:, :, 1:7, 1:7]            # centre 6x6 of 8x8
    return (x - MEAN.reshape(1, 3, 1, 1)) / STD.reshape(1, 3, 1, 1)


def conv3x3_pad1(x, w, b):
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2, wd + 2))
    xp[:, :, 1:-1, 1:-1] = x
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def cls_np(x, p, bias=None):
    y = np.maximum(conv3x3_pad1(x, p["W"], p["B"]), 0)
    g = y.mean(axis=(2, 3))
    logits = g @ p["G"] + p["GB"]
    if bias is not None:
        logits = logits + bias
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- models -------------------------------------------------------------------

def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, a):
    return numpy_helper.from_array(a, name)


def save(model, work, name):
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    return path


def make_pre(opset):
    """Cast, NHWC->NCHW, downscale 2x, centre crop 6x6, normalize."""
    nodes = [helper.make_node("Cast", ["image"], ["image_f"], name="decode", to=TensorProto.FLOAT),
             helper.make_node("Transpose", ["image_f"], ["nchw"], name="to_nchw", perm=[0, 3, 1, 2])]
    inits = [init("scales", np.array([1, 1, 0.5, 0.5], np.float32)),
             init("mean", MEAN.reshape(1, 3, 1, 1)), init("std", STD.reshape(1, 3, 1, 1))]
    if opset >= 18:
        nodes.append(helper.make_node("Resize", ["nchw", "", "scales"], ["small"], name="resize",
                                      mode="linear", antialias=1))
        inits.append(init("crop", np.array([6, 6], np.int64)))
        nodes.append(helper.make_node("CenterCropPad", ["small", "crop"], ["cropped"], name="crop",
                                      axes=[2, 3]))
    else:
        nodes.append(helper.make_node("Resize", ["nchw", "", "scales"], ["small"], name="resize",
                                      mode="linear"))
        inits += [init("starts", np.array([1, 1], np.int64)), init("ends", np.array([7, 7], np.int64)),
                  init("axes", np.array([2, 3], np.int64))]
        nodes.append(helper.make_node("Slice", ["small", "starts", "ends", "axes"], ["cropped"], name="crop"))
    nodes += [helper.make_node("Sub", ["cropped", "mean"], ["centred"], name="sub_mean"),
              helper.make_node("Div", ["centred", "std"], ["pixels"], name="div_std")]
    g = helper.make_graph(nodes, "pre", [vi("image", TensorProto.UINT8, [1, 16, 16, 3])],
                          [vi("pixels", TensorProto.FLOAT, [1, 3, 6, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


CLS = {"W": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5,
       "B": rng.standard_normal(4).astype(np.float32) * 0.1,
       "G": rng.standard_normal((4, 5)).astype(np.float32),
       "GB": rng.standard_normal(5).astype(np.float32) * 0.1}


def make_cls(opset, conv_out="conv", with_bias_input=False):
    """Conv, Relu, GlobalAveragePool, Flatten, Gemm (+ bias input), Softmax."""
    nodes = [helper.make_node("Conv", ["input", "W", "B"], [conv_out], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", [conv_out], ["act"], name="relu"),
             helper.make_node("GlobalAveragePool", ["act"], ["pooled"], name="gap"),
             helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "G", "GB"], ["logits"], name="fc")]
    inputs = [vi("input", TensorProto.FLOAT, [1, 3, 6, 6])]
    last = "logits"
    if with_bias_input:  # first input, so feeding by position picks it
        inputs.insert(0, vi("bias", TensorProto.FLOAT, [1, 5]))
        nodes.append(helper.make_node("Add", ["logits", "bias"], ["biased"], name="add_bias"))
        last = "biased"
    nodes.append(helper.make_node("Softmax", [last], ["probs"], name="softmax", axis=-1))
    g = helper.make_graph(nodes, "cls", inputs, [vi("probs", TensorProto.FLOAT, [1, 5])],
                          [init(k, v) for k, v in CLS.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def make_cls_reduce(opset):
    """The classifier with ReduceMean (axes as an attribute: opset < 18) in
    place of GlobalAveragePool and Flatten, and Softmax axis 1 (the 2-D
    coercion before 13, the same here on [1,5])."""
    nodes = [helper.make_node("Conv", ["input", "W", "B"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["act"], name="relu"),
             helper.make_node("ReduceMean", ["act"], ["pooled"], name="pool", axes=[2, 3], keepdims=0),
             helper.make_node("Gemm", ["pooled", "G", "GB"], ["logits"], name="fc"),
             helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1)]
    g = helper.make_graph(nodes, "cls_reduce", [vi("input", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [vi("probs", TensorProto.FLOAT, [1, 5])], [init(k, v) for k, v in CLS.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def make_up10():
    """y = Resize-10(x, scales [1,1,2,2], nearest): Resize's coordinate
    mapping changed at opset 11, so no later opset reads this node the same."""
    nodes = [helper.make_node("Resize", ["x", "up_scales"], ["y"], name="up", mode="nearest")]
    g = helper.make_graph(nodes, "up10", [vi("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [vi("y", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [init("up_scales", np.array([1, 1, 2, 2], np.float32))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)], ir_version=5)


def make_post():
    nodes = [helper.make_node("ArgMax", ["scores"], ["label"], name="argmax", axis=1, keepdims=0),
             helper.make_node("ReduceMax", ["scores", "rmax_axes"], ["confidence"], name="rmax", keepdims=0)]
    g = helper.make_graph(nodes, "post", [vi("scores", TensorProto.FLOAT, [1, 5])],
                          [vi("label", TensorProto.INT64, [1]), vi("confidence", TensorProto.FLOAT, [1])],
                          [init("rmax_axes", np.array([1], np.int64))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def make_branchy():
    """y = If(flag, then: Relu(x), else: Neg(x)) * 2: branches read the
    input from the enclosing graph."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="t_relu")], "then_b", [],
                               [vi("t", TensorProto.FLOAT, [1, 5])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="e_neg")], "else_b", [],
                               [vi("e", TensorProto.FLOAT, [1, 5])])
    nodes = [helper.make_node("If", ["flag"], ["picked"], name="branch", then_branch=then_g, else_branch=else_g),
             helper.make_node("Mul", ["picked", "two"], ["y"], name="double")]
    g = helper.make_graph(nodes, "branchy", [vi("x", TensorProto.FLOAT, [1, 5])],
                          [vi("y", TensorProto.FLOAT, [1, 5])],
                          [init("flag", np.array(True)), init("two", np.array(2, np.float32))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def make_passthrough():
    """Outputs its input as it is (first), and the input's mean."""
    nodes = [helper.make_node("ReduceMean", ["p"], ["pmean"], name="mean", keepdims=0)]
    g = helper.make_graph(nodes, "passthrough", [vi("p", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [vi("p", TensorProto.FLOAT, [1, 3, 6, 6]), vi("pmean", TensorProto.FLOAT, [])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def make_scaler():
    """y = local.Scale2(x), a model-local function: Mul(x, 2)."""
    two = helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.array(2, np.float32)))
    fn = helper.make_function("local", "Scale2", ["fx"], ["fy"], [two, helper.make_node("Mul", ["fx", "two"], ["fy"])],
                              [helper.make_opsetid("", 18)])
    g = helper.make_graph([helper.make_node("Scale2", ["x"], ["y"], name="scale", domain="local")], "scaler",
                          [vi("x", TensorProto.FLOAT, [1, 5])], [vi("y", TensorProto.FLOAT, [1, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                          ir_version=8, functions=[fn])
    return m


def merge(m1, m2, io_map, **kw):
    """onnx.compose.merge_models; its closing onnx.checker call is skipped
    for opset 18, which onnx 1.12's schemas end before (17), as they end
    before CenterCropPad and Resize's antialias."""
    saved = onnx.compose.checker.check_model
    if max(o.version for o in list(m1.opset_import) + list(m2.opset_import)) > onnx.defs.onnx_opset_version():
        onnx.compose.checker.check_model = lambda *a, **k: None
    try:
        return onnx.compose.merge_models(m1, m2, io_map, **kw)
    finally:
        onnx.compose.checker.check_model = saved


# --- running ------------------------------------------------------------------

def tessera(t, args):
    p = subprocess.run([t] + args, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def write_input(work, name, a):
    f = os.path.join(work, "in-%s.pb" % name)
    with open(f, "wb") as fh:
        fh.write(numpy_helper.from_array(a, name).SerializeToString())
    return f


def run(t, work, what, models, providers, inputs, extra=()):
    """`tessera run MODELS...`; the outputs by name, or None."""
    out = os.path.join(work, "out-%s-%s" % (what, providers.replace(",", "_")))
    shutil.rmtree(out, ignore_errors=True)
    args = ["run"] + models + ["-p", providers, "-o", out] + list(extra)
    for k, f in inputs.items():
        args += ["-i", "%s=%s" % (k, f)]
    rc, _, err = tessera(t, args)
    if not check(rc == 0, "%s -p %s: exit %d: %s" % (what, providers, rc, err.strip())):
        return None
    got = {}
    for f in os.listdir(out):
        tp = onnx.TensorProto()
        with open(os.path.join(out, f), "rb") as fh:
            tp.ParseFromString(fh.read())
        got[tp.name or f[:-3]] = numpy_helper.to_array(tp)
    return got


def expect_close(what, got, name, want, tol=2e-5):
    if got is None:
        return
    if not check(name in got, "%s: no output '%s' (got %s)" % (what, name, sorted(got))):
        return
    g = got[name]
    if not check(g.shape == want.shape, "%s: %s shape %s, want %s" % (what, name, g.shape, want.shape)):
        return
    err = float(np.max(np.abs(g.astype(np.float64) - want))) if want.size else 0.0
    check(err <= tol, "%s: %s differs by %g" % (what, name, err))


def expect_error(t, what, args, *needles):
    rc, _, err = tessera(t, args)
    if check(rc == 1, "%s: exit %d, want 1 (stderr: %s)" % (what, rc, err.strip())):
        for n in needles:
            check(n in err, "%s: the message lacks %r: %s" % (what, n, err.strip()))


def same_graph(what, a, b):
    """The parts of two models that make them the same model."""
    def attrs(n):
        return sorted((x.name, helper.get_attribute_value(x) if x.type != onnx.AttributeProto.GRAPH else
                       [(m.op_type, list(m.input), list(m.output)) for m in x.g.node]) for x in n.attribute)
    ga, gb = a.graph, b.graph
    check([i.name for i in ga.input] == [i.name for i in gb.input],
          "%s: inputs %s, onnx.compose has %s" % (what, [i.name for i in ga.input], [i.name for i in gb.input]))
    check([i.type for i in ga.input] == [i.type for i in gb.input], "%s: input types differ" % what)
    check([o.name for o in ga.output] == [o.name for o in gb.output],
          "%s: outputs %s, onnx.compose has %s" % (what, [o.name for o in ga.output], [o.name for o in gb.output]))
    na = [(n.name, n.op_type, n.domain, list(n.input), list(n.output), attrs(n)) for n in ga.node]
    nb = [(n.name, n.op_type, n.domain, list(n.input), list(n.output), attrs(n)) for n in gb.node]
    check(na == nb, "%s: nodes differ:\n  %s\n  %s" % (what, na, nb))
    ia = {i.name: numpy_helper.to_array(i) for i in ga.initializer}
    ib = {i.name: numpy_helper.to_array(i) for i in gb.initializer}
    if check(sorted(ia) == sorted(ib), "%s: initializers %s, onnx.compose has %s" % (what, sorted(ia), sorted(ib))):
        for k in ia:
            check(ia[k].dtype == ib[k].dtype and np.array_equal(ia[k], ib[k]), "%s: initializer %s differs" % (what, k))
    # onnx.compose lists a domain both import twice; once is the same model
    oa = sorted(set((o.domain, o.version) for o in a.opset_import))
    ob = sorted(set((o.domain, o.version) for o in b.opset_import))
    check(oa == ob, "%s: opsets %s, onnx.compose has %s" % (what, oa, ob))


def opsets_of(m):
    return sorted((o.domain or "ai.onnx", o.version) for o in m.opset_import)


def opset_case(t, work, sets, pre, pre18, img, image):
    """pre18 before classifiers at opsets 13 and 11, and before a Resize-10."""
    pixels = pre_np(image)
    want = cls_np(pixels, CLS)
    c13 = save(make_cls_reduce(13), work, "cls13")
    c11 = save(make_cls_reduce(11), work, "cls11")
    try:
        merge(pre18, make_cls_reduce(13), [("pixels", "input")])
        check(False, "onnx.compose merged opsets 18 and 13; the opset case is no longer beyond it")
    except ValueError:
        pass
    for ps in sets:
        got = run(t, work, "opset", [pre, c13], ps, {"image": img})
        expect_close("run pre18 cls13 -p " + ps, got, "probs", want)
        # the same two models one after the other: pre18's output fed to cls13
        first = run(t, work, "opset-pre", [pre], ps, {"image": img})
        if first is None or not check("pixels" in first, "run pre18 -p %s: no pixels" % ps):
            continue
        expect_close("run pre18 -p " + ps, first, "pixels", pixels)
        px = write_input(work, "pixels-" + ps.replace(",", "_"), first["pixels"])
        second = run(t, work, "opset-cls", [c13], ps, {"input": px})
        expect_close("run cls13 on pre18's output -p " + ps, second, "probs", want)
        if got and second and "probs" in got and "probs" in second:
            check(np.allclose(got["probs"], second["probs"], rtol=0, atol=1e-6),
                  "-p %s: the chain and its stages run one after the other differ" % ps)
        got = run(t, work, "opset11", [pre, c11], ps, {"image": img})
        expect_close("run pre18 cls11 -p " + ps, got, "probs", want)

    # compose -o: ReduceMean-13's axes attribute becomes opset 18's input
    composed = os.path.join(work, "composed_opset.onnx")
    rc, _, err = tessera(t, ["compose", pre, c13, "-o", composed])
    if check(rc == 0, "compose pre18 cls13: exit %d: %s" % (rc, err.strip())):
        m = onnx.load(composed)
        check(opsets_of(m) == [("ai.onnx", 18)], "compose pre18 cls13: opsets %s" % opsets_of(m))
        pool = [n for n in m.graph.node if n.name == "pool"]
        if check(len(pool) == 1, "compose pre18 cls13: no node 'pool'"):
            axes = pool[0].input[1] if len(pool[0].input) > 1 else ""
            inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
            check(not [a for a in pool[0].attribute if a.name == "axes"] and axes in inits
                  and list(inits[axes]) == [2, 3],
                  "compose pre18 cls13: ReduceMean keeps opset 13's form: %s" % pool[0])
        for ps in sets:
            expect_close("run composed pre18 cls13 -p " + ps,
                         run(t, work, "composed_opset", [composed], ps, {"image": img}), "probs", want)
    # opset 11: ReduceMean too, and Softmax (2-D coercion as Flatten, Softmax, Reshape)
    composed = os.path.join(work, "composed_opset11.onnx")
    rc, _, err = tessera(t, ["compose", pre, c11, "-o", composed])
    if check(rc == 0, "compose pre18 cls11: exit %d: %s" % (rc, err.strip())):
        m = onnx.load(composed)
        ops = [n.op_type for n in m.graph.node]
        check("Flatten" in ops and "Reshape" in ops, "compose pre18 cls11: Softmax not rewritten: %s" % ops)
        sm = [n for n in m.graph.node if n.name == "softmax"]
        check(len(sm) == 1 and [a.i for a in sm[0].attribute if a.name == "axis"] == [-1],
              "compose pre18 cls11: softmax %s" % sm)
        for ps in sets:
            expect_close("run composed pre18 cls11 -p " + ps,
                         run(t, work, "composed_opset11", [composed], ps, {"image": img}), "probs", want)

    # Resize-10 maps coordinates as no later Resize does: the chain runs,
    # one file at opset 18 cannot hold it
    up = save(make_up10(), work, "up10")
    up_want = pixels.repeat(2, axis=2).repeat(2, axis=3)
    expect_close("run pre18 up10", run(t, work, "up10", [pre, up], "reference", {"image": img}), "y", up_want)
    expect_error(t, "compose pre18 up10", ["compose", pre, up, "-o", os.path.join(work, "x.onnx")],
                 "node 'up' (Resize, opset 10)", "opset 18", "at opset 11", "tessera run")
    check(not os.path.exists(os.path.join(work, "x.onnx")), "compose pre18 up10 wrote a file")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    t, work = a.tessera, a.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prov = tessera(t, ["providers"])[1].split()
    sets = ["reference"] + ["%s,reference" % p for p in ("onednn", "opencl") if p in prov]

    pre18, cls18, post18 = make_pre(18), make_cls(18), make_post()
    pre = save(pre18, work, "pre18")
    cls = save(cls18, work, "cls18")
    post = save(post18, work, "post18")
    merged = save(merge(pre18, cls18, [("pixels", "input")]), work, "merged18")
    merged3 = save(merge(onnx.load(merged), post18, [("probs", "scores")]), work, "merged3")

    image = rng.integers(0, 256, (1, 16, 16, 3), dtype=np.uint8)
    img = write_input(work, "image", image)
    probs = cls_np(pre_np(image), CLS)
    check(abs(probs.sum() - 1) < 1e-9 and probs.max() < 0.99, "the test's own probabilities are degenerate")

    # chain == numpy == onnx.compose's merge, on every provider set
    for ps in sets:
        got = run(t, work, "chain", [pre, cls], ps, {"image": img})
        expect_close("run pre18 cls18 -p " + ps, got, "probs", probs)
        ref = run(t, work, "merged", [merged], ps, {"image": img})
        expect_close("run merged18 (onnx.compose) -p " + ps, ref, "probs", probs)
        if got and ref and "probs" in got and "probs" in ref:
            check(np.allclose(got["probs"], ref["probs"], rtol=0, atol=1e-6),
                  "-p %s: the chain and onnx.compose's model differ" % ps)
        got = run(t, work, "chain3", [pre, cls, post], ps, {"image": img})
        expect_close("run pre18 cls18 post18 -p " + ps, got, "confidence", probs.max(axis=1))
        if got is not None and check("label" in got, "chain3 -p %s: no label" % ps):
            check(list(got["label"]) == [int(np.argmax(probs))], "chain3 -p %s: label %s, want %d" % (
                ps, got["label"], int(np.argmax(probs))))
        ref = run(t, work, "merged3", [merged3], ps, {"image": img})
        expect_close("run merged3 (onnx.compose twice) -p " + ps, ref, "confidence", probs.max(axis=1))

    # one graph: with oneDNN, one piece holds the normalization (pre18's
    # Sub, Div) and the classifier's Conv: fused across the seam
    if "onednn,reference" in sets:
        rc, out, err = tessera(t, ["partition", pre, cls, "-p", "onednn,reference", "--format", "json"])
        if check(rc == 0, "partition pre18 cls18: exit %d: %s" % (rc, err)):
            pieces = [p["nodes"] for p in json.loads(out)["pieces"]]
            check(any({"sub_mean", "div_std", "conv", "softmax"} <= set(p) for p in pieces),
                  "partition pre18 cls18 -p onednn,reference: no piece across the seam: %s" % pieces)

    # tessera compose == onnx.compose (opset 18: structure and values)
    composed = os.path.join(work, "composed18.onnx")
    rc, _, err = tessera(t, ["compose", pre, cls, "-o", composed])
    if check(rc == 0, "compose pre18 cls18: exit %d: %s" % (rc, err)):
        same_graph("compose pre18 cls18", onnx.load(composed), onnx.load(merged))
        expect_close("run composed18", run(t, work, "composed18", [composed], "reference", {"image": img}),
                     "probs", probs)
    # opset 17: onnx 1.12's checker knows every op
    pre17, cls17 = make_pre(17), make_cls(17)
    p17, c17 = save(pre17, work, "pre17"), save(cls17, work, "cls17")
    composed = os.path.join(work, "composed17.onnx")
    rc, _, err = tessera(t, ["compose", p17, c17, "-o", composed])
    if check(rc == 0, "compose pre17 cls17: exit %d: %s" % (rc, err)):
        m = onnx.load(composed)
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001 - any checker complaint fails the case
            check(False, "composed17.onnx fails onnx.checker: %s" % e)
        same_graph("compose pre17 cls17", m, merge(pre17, cls17, [("pixels", "input")]))
        expect_close("run composed17", run(t, work, "composed17", [composed], "reference", {"image": img}),
                     "probs", cls_np(pre_np(image, antialias=False), CLS))

    # --connect: by position the pixels would feed 'bias'
    cls2 = make_cls(18, with_bias_input=True)
    c2 = save(cls2, work, "cls2")
    expect_error(t, "run pre18 cls2 (by position)", ["run", pre, c2, "-p", "reference", "-i", "image=" + img],
                 "cannot feed its input 'bias'", "'pixels'", "rank 4 against 2")
    bias = (rng.standard_normal((1, 5)) * 0.5).astype(np.float32)
    bf = write_input(work, "bias", bias)
    want = cls_np(pre_np(image), CLS, bias)
    merged2 = save(merge(pre18, cls2, [("pixels", "input")]), work, "merged2")
    for ps in sets:
        got = run(t, work, "connect", [pre, c2], ps, {"image": img, "bias": bf}, ["--connect", "pixels=input"])
        expect_close("run pre18 cls2 --connect pixels=input -p " + ps, got, "probs", want)
        got = run(t, work, "connect1", [pre, c2], ps, {"image": img, "bias": bf}, ["--connect", "1:pixels=input"])
        expect_close("run pre18 cls2 --connect 1:pixels=input -p " + ps, got, "probs", want)
    expect_close("run merged2 (onnx.compose)", run(t, work, "merged2", [merged2], "reference",
                                                   {"image": img, "bias": bf}), "probs", want)
    expect_error(t, "--connect to a missing input", ["run", pre, c2, "--connect", "pixels=nope", "-p", "reference"],
                 "has no graph input 'nope'", "'bias', 'input'")
    expect_error(t, "--connect from a missing output", ["run", pre, c2, "--connect", "pix=input", "-p", "reference"],
                 "has a graph output 'pix'", "'pixels'")

    # a name both use: refused, naming it; prefixes fix it, as onnx.compose's
    clash18 = make_cls(18, conv_out="centred")
    cc = save(clash18, work, "cls_clash")
    expect_error(t, "run pre18 cls_clash", ["run", pre, cc, "-p", "reference", "-i", "image=" + img],
                 "name clash: 'centred'", "pre18.onnx", "cls_clash.onnx", "--prefix")
    try:
        merge(pre18, clash18, [("pixels", "input")])
        check(False, "onnx.compose merged pre18 and cls_clash; the clash case is no clash")
    except ValueError:
        pass
    for ps in sets:
        got = run(t, work, "prefix", [pre, cc], ps, {"p_image": img}, ["--prefix", "p_,c_"])
        expect_close("run pre18 cls_clash --prefix p_,c_ -p " + ps, got, "c_probs", probs)
    composed = os.path.join(work, "composed_prefix.onnx")
    rc, _, err = tessera(t, ["compose", pre, cc, "--prefix", "p_,c_", "-o", composed])
    if check(rc == 0, "compose --prefix: exit %d: %s" % (rc, err)):
        same_graph("compose --prefix p_,c_", onnx.load(composed),
                   merge(pre18, clash18, [("pixels", "input")], prefix1="p_", prefix2="c_"))

    # opsets: stages at different versions of ai.onnx. Each node keeps its
    # own file's version, so the chain runs; one written file has one
    # version per domain, so compose -o rewrites what changed in form only
    opset_case(t, work, sets, pre, pre18, img, image)

    # external data beside its own file, in another folder than the first's
    ext_dir = os.path.join(work, "elsewhere")
    os.makedirs(ext_dir)
    ext = os.path.join(ext_dir, "cls_ext.onnx")
    onnx.save(make_cls(18), ext, save_as_external_data=True, location="cls_ext.weights", size_threshold=0)
    check(os.path.exists(os.path.join(ext_dir, "cls_ext.weights")), "no external data file was written")
    expect_close("run pre18 elsewhere/cls_ext", run(t, work, "external", [pre, ext], "reference", {"image": img}),
                 "probs", probs)

    # subgraphs reading the connected input, with prefixes
    br = save(make_branchy(), work, "branchy")
    for ps in sets:
        got = run(t, work, "subgraph", [pre, cls, br], ps, {"a_image": img}, ["--prefix", "a_,b_,c_"])
        expect_close("run pre18 cls18 branchy --prefix -p " + ps, got, "c_y", 2 * probs)

    # model-local functions: united; one defined twice is refused; prefixes
    # rename them and their calls, as onnx.compose.add_prefix
    sc = save(make_scaler(), work, "scaler")
    expect_error(t, "run cls18 scaler scaler", ["run", cls, sc, sc, "-p", "reference"],
                 "model-local function 'Scale2' of domain 'local' is defined by stage 1", "--prefix")
    x5 = write_input(work, "x5", pre_np(image).astype(np.float32))
    for ps in sets:
        got = run(t, work, "functions", [cls, sc, sc], ps, {"input": x5}, ["--prefix", ",s1_,s2_"])
        expect_close("run cls18 scaler scaler --prefix ,s1_,s2_ -p " + ps, got, "s2_y", 4 * probs)
    composed = os.path.join(work, "composed_functions.onnx")
    rc, _, err = tessera(t, ["compose", sc, sc, "--prefix", "s1_,s2_", "-o", composed])
    if check(rc == 0, "compose scaler scaler: exit %d: %s" % (rc, err)):
        m = onnx.load(composed)
        want = merge(make_scaler(), make_scaler(), [("y", "x")], prefix1="s1_", prefix2="s2_")
        same_graph("compose scaler scaler --prefix s1_,s2_", m, want)
        check(sorted(f.name for f in m.functions) == sorted(f.name for f in want.functions),
              "compose scaler scaler: functions %s, onnx.compose has %s" % (
                  [f.name for f in m.functions], [f.name for f in want.functions]))

    # a stage passing its (connected) input through as an output
    pt = save(make_passthrough(), work, "passthrough")
    got = run(t, work, "passthrough", [pre, pt, cls], "reference", {"image": img})
    expect_close("run pre18 passthrough cls18", got, "probs", probs)
    expect_close("run pre18 passthrough cls18", got, "pmean", np.array(pre_np(image).mean()))

    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("compose: all cases pass (%s)" % ", ".join(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
