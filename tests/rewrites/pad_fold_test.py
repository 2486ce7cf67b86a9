#!/usr/bin/env python3
"""The `pad_fold` ctest: core/pad_fold.c at session creation.

tf2onnx writes Keras' ZeroPadding2D of an NCHW graph as
Transpose(0,2,3,1) -> Pad(NHWC pads) -> Transpose(0,3,1,2) -> Conv(pads 0).
The two Transposes must vanish (the Pad, pads permuted back, reads the
original tensor) and a zero Pad then folds into the Conv, so oneDNN gets one
piece. Every model here is also run, and its output compared with numpy
computed independently (the convolution written out as loops).

Cases:
  fold_*      the pattern before a Conv (opset 10 pads attribute, 11 with a
              Constant node, 13 with initializers, 18 with an axes input):
              no Pad or Transpose left; with onednn, a single onednn piece
  keep_pad_*  the Transposes go but the Pad stays (reflect mode into a Relu,
              a nonzero value before a Conv, Transposes without perm)
  shared_*    a middle value with a second reader (or a graph output): no
              rewrite, still correct
  nocancel    permutations that do not cancel: no rewrite, still correct

usage: pad_fold_test.py --tessera BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from rewrite_check import FAILURES, check, ops_of, partition, run_and_compare

NHWC, NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


# --- numpy, independently ---------------------------------------------------

def pad_np(x, pads, mode="constant", value=0.0):
    r = x.ndim
    width = [(pads[i], pads[r + i]) for i in range(r)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode={"reflect": "reflect", "edge": "edge"}[mode])


def conv_np(x, w, b, stride, pads):
    """NCHW convolution, pads [top, left, bottom, right], as plain loops."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for bi in range(n):
        for o in range(m):
            for i in range(oh):
                for j in range(ow):
                    win = xp[bi, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
                    y[bi, o, i, j] = np.sum(win * w[o]) + b[o]
    return y


# --- models -----------------------------------------------------------------

def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, arr):
    return numpy_helper.from_array(arr, name)


def save(work, name, nodes, inputs, outputs, inits, opset):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="pad_fold_test")
    m.ir_version = 8 if opset >= 13 else 6
    if opset <= 17:  # python3-onnx 1.12 knows opsets up to 17 (Pad's axes input is 18)
        onnx.checker.check_model(m)
    path = os.path.join(work, name + ".onnx")
    onnx.save(m, path)
    return path


def pad_node(opset, x, y, pads, name, mode="constant", value=None, axes=None, inits=None, nodes=None):
    """A Pad in the style of each opset: pads as attribute (< 11), as a
    Constant node (11), as initializers (13, 18 with axes)."""
    attrs = {"mode": mode}
    if opset < 11:
        if value is not None:
            attrs["value"] = float(value)
        return helper.make_node("Pad", [x], [y], name=name, pads=pads, **attrs)
    ins = [x, name + "/pads"]
    if opset == 11:
        nodes.append(helper.make_node("Constant", [], [name + "/pads"], name=name + "/pads_const",
                                      value=numpy_helper.from_array(np.array(pads, np.int64))))
    else:
        inits.append(init(name + "/pads", np.array(pads, np.int64)))
    if value is not None or axes is not None:
        ins.append("")
        if value is not None:
            ins[-1] = name + "/value"
            inits.append(init(name + "/value", np.array(value, np.float32)))
    if axes is not None:
        ins.append(name + "/axes")
        inits.append(init(name + "/axes", np.array(axes, np.int64)))
    return helper.make_node("Pad", ins, [y], name=name, **attrs)


def conv_case(work, rng, name, opset, nhwc_pads, axes=None, value=None, stride=2):
    """X (NCHW) -> Transpose(NHWC) -> Pad -> Transpose(NCHW) -> Conv 3x3."""
    x = rng.uniform(-1, 1, (1, 3, 7, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 4).astype(np.float32)
    nodes, inits = [], [init("W", w), init("B", b)]
    nodes.append(helper.make_node("Transpose", ["X"], ["x_nhwc"], name="to_nhwc", perm=NHWC))
    pads = nhwc_pads
    if axes is not None:  # the pads of the listed axes only
        pads = [nhwc_pads[a] for a in axes] + [nhwc_pads[4 + a] for a in axes]
    nodes.append(pad_node(opset, "x_nhwc", "x_pad", pads, "zero_pad", value=value, axes=axes,
                          inits=inits, nodes=nodes))
    nodes.append(helper.make_node("Transpose", ["x_pad"], ["x_nchw"], name="to_nchw", perm=NCHW))
    nodes.append(helper.make_node("Conv", ["x_nchw", "W", "B"], ["Y"], name="conv", kernel_shape=[3, 3],
                                  strides=[stride, stride], pads=[0, 0, 0, 0]))
    # expected: pad the NHWC tensor in numpy, back to NCHW, valid conv
    xp = pad_np(x.transpose(NHWC), nhwc_pads, "constant", 0.0 if value is None else value).transpose(NCHW)
    expect = conv_np(xp.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, [0, 0, 0, 0])
    path = save(work, name, nodes, [vi("X", list(x.shape))], [vi("Y", list(expect.shape))], inits, opset)
    return path, {"X": x}, {"Y": expect}


def reflect_case(work, rng):
    """Reflect-mode Pad between Transposes into a Relu: the Transposes go."""
    x = rng.uniform(-1, 1, (2, 3, 5, 4)).astype(np.float32)
    nhwc_pads = [0, 1, 2, 0, 0, 2, 1, 0]
    inits, nodes = [], []
    nodes.append(helper.make_node("Transpose", ["X"], ["a"], name="to_nhwc", perm=NHWC))
    nodes.append(pad_node(13, "a", "b", nhwc_pads, "reflect_pad", mode="reflect", inits=inits, nodes=nodes))
    nodes.append(helper.make_node("Transpose", ["b"], ["c"], name="to_nchw", perm=NCHW))
    nodes.append(helper.make_node("Relu", ["c"], ["Y"], name="relu"))
    expect = np.maximum(pad_np(x.transpose(NHWC), nhwc_pads, "reflect").transpose(NCHW), 0)
    path = save(work, "keep_pad_reflect", nodes, [vi("X", list(x.shape))], [vi("Y", list(expect.shape))], inits, 13)
    return path, {"X": x}, {"Y": expect}


def default_perm_case(work, rng):
    """Transposes without perm (dims reversed, its own inverse), edge mode,
    the Pad's output straight to the graph output through the second one."""
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    rev_pads = [1, 0, 2, 0, 3, 1]  # for the reversed (4, 3, 2) tensor
    inits, nodes = [], []
    nodes.append(helper.make_node("Transpose", ["X"], ["a"], name="rev1"))
    nodes.append(pad_node(13, "a", "b", rev_pads, "edge_pad", mode="edge", inits=inits, nodes=nodes))
    nodes.append(helper.make_node("Transpose", ["b"], ["Y"], name="rev2"))
    expect = pad_np(x.transpose(2, 1, 0), rev_pads, "edge").transpose(2, 1, 0)
    path = save(work, "keep_pad_default_perm", nodes, [vi("X", list(x.shape))], [vi("Y", list(expect.shape))], inits, 13)
    return path, {"X": x}, {"Y": expect}


def shared_case(work, rng, which):
    """The pattern before a Conv, but a middle value has a second reader:
    'pad_out' (a Relu reads the Pad's output too), 'tr_out' (the first
    Transpose's output is also a graph output)."""
    x = rng.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 2).astype(np.float32)
    nhwc_pads = [0, 0, 0, 0, 0, 1, 1, 0]
    inits, nodes = [init("W", w), init("B", b)], []
    nodes.append(helper.make_node("Transpose", ["X"], ["a"], name="to_nhwc", perm=NHWC))
    nodes.append(pad_node(13, "a", "b", nhwc_pads, "zero_pad", inits=inits, nodes=nodes))
    nodes.append(helper.make_node("Transpose", ["b"], ["c"], name="to_nchw", perm=NCHW))
    nodes.append(helper.make_node("Conv", ["c", "W", "B"], ["Y"], name="conv", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[0, 0, 0, 0]))
    padded = pad_np(x.transpose(NHWC), nhwc_pads)
    expect = {"Y": conv_np(padded.transpose(NCHW).astype(np.float64), w.astype(np.float64),
                           b.astype(np.float64), 2, [0, 0, 0, 0])}
    if which == "pad_out":
        nodes.append(helper.make_node("Relu", ["b"], ["Z"], name="relu"))
        expect["Z"] = np.maximum(padded, 0)
    else:
        expect["a"] = x.transpose(NHWC)
    outputs = [vi(k, list(v.shape)) for k, v in expect.items()]
    path = save(work, "shared_" + which, nodes, [vi("X", list(x.shape))], outputs, inits, 13)
    return path, {"X": x}, expect


def nocancel_case(work, rng):
    """Transpose(0,2,3,1) -> Pad -> Transpose(0,3,2,1): not the identity."""
    x = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)
    pads = [0, 1, 0, 0, 0, 0, 2, 1]
    inits, nodes = [], []
    nodes.append(helper.make_node("Transpose", ["X"], ["a"], name="t1", perm=NHWC))
    nodes.append(pad_node(13, "a", "b", pads, "pad", inits=inits, nodes=nodes))
    nodes.append(helper.make_node("Transpose", ["b"], ["Y"], name="t2", perm=[0, 3, 2, 1]))
    expect = pad_np(x.transpose(NHWC), pads).transpose(0, 3, 2, 1)
    path = save(work, "nocancel", nodes, [vi("X", list(x.shape))], [vi("Y", list(expect.shape))], inits, 13)
    return path, {"X": x}, {"Y": expect}


# --- running ----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    prov = subprocess.run([a.tessera, "providers"], capture_output=True).stdout.decode()
    sets = ["reference"] + (["onednn,reference"] if "onednn" in prov.split() else [])
    rng = np.random.default_rng(7)

    folds = [conv_case(a.work, rng, "fold_opset13", 13, [0, 0, 0, 0, 0, 1, 1, 0]),
             conv_case(a.work, rng, "fold_opset11_const", 11, [0, 2, 0, 0, 0, 1, 3, 0], stride=1),
             conv_case(a.work, rng, "fold_opset10_attr", 10, [0, 0, 1, 0, 0, 1, 0, 0]),
             conv_case(a.work, rng, "fold_opset18_axes", 18, [0, 1, 0, 0, 0, 0, 1, 0], axes=[1, 2])]
    for model, inputs, expect in folds:
        name = os.path.basename(model)
        for ps in sets:
            run_and_compare(a.tessera, a.work, model, inputs, expect, ps)
        part = partition(a.tessera, model, "reference")
        if part:
            check(ops_of(part) == ["Conv"], "%s: -p reference ops %s, want only the Conv" % (name, ops_of(part)))
        if "onednn,reference" in sets:
            part = partition(a.tessera, model, "onednn,reference")
            if part:
                pieces = [(pc["provider"], pc["ops"]) for pc in part["pieces"]]
                check(pieces == [("onednn", ["Conv"])],
                      "%s: -p onednn,reference pieces %s, want one onednn piece [Conv]" % (name, pieces))

    # the Transposes go, the Pad stays
    keeps = [(conv_case(a.work, rng, "keep_pad_nonzero", 13, [0, 0, 0, 0, 0, 1, 1, 0], value=0.5),
              ["Pad", "Conv"], "zero_pad"),
             (reflect_case(a.work, rng), ["Pad", "Relu"], "reflect_pad"),
             (default_perm_case(a.work, rng), ["Pad"], "edge_pad")]
    for (model, inputs, expect), want, pad_name in keeps:
        for ps in sets:
            run_and_compare(a.tessera, a.work, model, inputs, expect, ps)
        part = partition(a.tessera, model, "reference")
        if part:
            check(sorted(ops_of(part)) == sorted(want), "%s: -p reference ops %s, want %s" % (
                os.path.basename(model), ops_of(part), want))
            names = [n for pc in part["pieces"] for n in pc["nodes"]]
            check(pad_name in names, "%s: the Pad is not named '%s' (nodes %s)" % (
                os.path.basename(model), pad_name, names))

    # no rewrite: all four nodes (or three) stay
    untouched = [(shared_case(a.work, rng, "pad_out"), ["Transpose", "Pad", "Transpose", "Conv", "Relu"]),
                 (shared_case(a.work, rng, "tr_out"), ["Transpose", "Pad", "Transpose", "Conv"]),
                 (nocancel_case(a.work, rng), ["Transpose", "Pad", "Transpose"])]
    for (model, inputs, expect), want in untouched:
        for ps in sets:
            run_and_compare(a.tessera, a.work, model, inputs, expect, ps)
        part = partition(a.tessera, model, "reference")
        if part:
            check(sorted(ops_of(part)) == sorted(want), "%s: -p reference ops %s, want %s" % (
                os.path.basename(model), ops_of(part), want))

    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("pad_fold: all cases pass (%s)" % ", ".join(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
