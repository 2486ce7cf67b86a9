#!/usr/bin/python3
"""Variants of ONNX backend cases whose operands the oneDNN provider can see.

The backend cases feed Resize's scales/sizes and the Reduce* axes as graph
inputs, which a provider cannot read when it claims nodes; and the
ReduceLogSumExp cases are float64. For each CASE_DIR this writes
OUT_DIR/<case>_const/ where every graph input but the first that holds the
same value in every test_data_set becomes an initializer, and (with --f32)
every float64 tensor becomes float32. Expected outputs stay ONNX's own
(rounded to float32 with --f32), so the variants still test against data
computed independently of Tessera. A case with nothing to change is
skipped. usage: const_cases.py [--f32] OUT_DIR CASE_DIR...
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper, TensorProto


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def to_f32(t):
    if t.data_type != TensorProto.DOUBLE:
        return t
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name)


def retype(value_infos):
    for v in value_infos:
        if v.type.tensor_type.elem_type == TensorProto.DOUBLE:
            v.type.tensor_type.elem_type = TensorProto.FLOAT


def convert(case, out_dir, f32):
    model = onnx.load(os.path.join(case, "model.onnx"))
    sets = sorted(glob.glob(os.path.join(case, "test_data_set_*")))
    if not sets:
        return False
    inputs = list(model.graph.input)
    init_names = {i.name for i in model.graph.initializer}
    feeds = [i for i in inputs if i.name not in init_names]
    fold = []
    for k, vi in enumerate(feeds):
        if k == 0:
            continue
        vals = []
        for s in sets:
            p = os.path.join(s, "input_%d.pb" % k)
            if not os.path.exists(p):
                break
            vals.append(numpy_helper.to_array(load(p)))
        if len(vals) == len(sets) and all(v.dtype == vals[0].dtype and np.array_equal(v, vals[0]) for v in vals):
            fold.append((k, vi.name))
    has_double = any(i.type.tensor_type.elem_type == TensorProto.DOUBLE for i in list(inputs) + list(model.graph.output))
    if not fold and not (f32 and has_double):
        return False
    name = os.path.basename(os.path.normpath(case)) + "_const"
    dst = os.path.join(out_dir, name)
    os.makedirs(dst, exist_ok=True)
    folded = {k for k, _ in fold}
    for k, nm in fold:
        t = load(os.path.join(sets[0], "input_%d.pb" % k))
        t.name = nm
        model.graph.initializer.append(t)
    keep = [vi for k, vi in enumerate(feeds) if k not in folded]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    if f32:
        retype(model.graph.input)
        retype(model.graph.output)
        retype(model.graph.value_info)
        for i, t in enumerate(model.graph.initializer):
            if t.data_type == TensorProto.DOUBLE:
                model.graph.initializer[i].CopyFrom(to_f32(t))
    onnx.save(model, os.path.join(dst, "model.onnx"))
    for s in sets:
        sd = os.path.join(dst, os.path.basename(s))
        os.makedirs(sd, exist_ok=True)
        j = 0
        for k in range(len(feeds)):
            if k in folded:
                continue
            t = load(os.path.join(s, "input_%d.pb" % k))
            if f32:
                t = to_f32(t)
            with open(os.path.join(sd, "input_%d.pb" % j), "wb") as f:
                f.write(t.SerializeToString())
            j += 1
        for p in sorted(glob.glob(os.path.join(s, "output_*.pb"))):
            t = load(p)
            if f32:
                t = to_f32(t)
            with open(os.path.join(sd, os.path.basename(p)), "wb") as f:
                f.write(t.SerializeToString())
    return True


def main(argv):
    f32 = "--f32" in argv
    args = [a for a in argv if a != "--f32"]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    for case in args[1:]:
        if convert(case, out_dir, f32):
            print(os.path.join(out_dir, os.path.basename(os.path.normpath(case)) + "_const"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
