"""Helpers the load-time rewrite tests share (pad_fold_test.py,
einsum_lower_test.py): failures collected in FAILURES, `tessera partition`
as JSON, and `tessera run` outputs compared with expected arrays."""
import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    return cond


def partition(tessera, model, providers, extra=()):
    p = subprocess.run([tessera, "partition", model, "-p", providers, "--format", "json", *extra],
                       capture_output=True)
    if not check(p.returncode == 0, "%s: partition -p %s exit %d: %s" % (
            os.path.basename(model), providers, p.returncode, p.stderr.decode("utf-8", "replace"))):
        return None
    return json.loads(p.stdout)


def run_and_compare(tessera, work, model, inputs, expect, providers, tol=1e-4, extra=()):
    name = os.path.basename(model)[:-5]
    out = os.path.join(work, name + "-" + providers.replace(",", "_"))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    args = [tessera, "run", model, "-p", providers, "-o", out, *extra]
    for k, v in inputs.items():
        f = os.path.join(work, "%s-%s.pb" % (name, k))
        with open(f, "wb") as fh:
            fh.write(numpy_helper.from_array(v, k).SerializeToString())
        args += ["-i", "%s=%s" % (k, f)]
    p = subprocess.run(args, capture_output=True)
    if not check(p.returncode == 0, "%s -p %s: run exit %d: %s" % (
            name, providers, p.returncode, p.stderr.decode("utf-8", "replace"))):
        return
    for k, want in expect.items():
        t = onnx.TensorProto()
        with open(os.path.join(out, k + ".pb"), "rb") as fh:
            t.ParseFromString(fh.read())
        got = numpy_helper.to_array(t)
        if not check(got.shape == want.shape, "%s -p %s: %s shape %s, want %s" % (
                name, providers, k, got.shape, want.shape)):
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        check(err <= tol, "%s -p %s: %s differs by %g" % (name, providers, k, err))


def ops_of(part):
    return [op for piece in part["pieces"] for op in piece["ops"]]
