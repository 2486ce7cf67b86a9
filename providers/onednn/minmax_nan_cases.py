#!/usr/bin/python3
"""Backend-style cases for float Max and Min on the oneDNN provider, which
run as the C loop of odn_binary_loop.c and are never a post-op: oneDNN's
max/min (vmaxps) return their second operand when either is NaN, so a NaN
in the first operand came out as the other value, where ONNX Runtime and
the reference provider give NaN. NaN in either operand of a same-shape
Max, a broadcast Min with NaN in the full operand and in a broadcast
channel, +-inf, and a Conv's blocked output (NaN spread by its window) as
the first and as the second operand of a Max/Min against a per-channel
constant. Expected outputs: numpy.maximum / numpy.minimum (which keep NaN)
in float64.

usage: minmax_nan_cases.py OUT_DIR        (prints the case dirs)
       minmax_nan_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference and fails when
         one fails or onednn does not claim them whole (exit 77 without
         onnx or onednn)
"""
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import claimed_whole, float_conv, has_onednn, save_case, test_cases, written_cases

    rng = np.random.default_rng(20261207)


def binary_cases(out):
    a = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    b = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    a[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    b[0, 0, 1, :3] = [np.nan, -np.inf, np.inf]
    a[1, 2, 5, 5] = b[1, 2, 5, 5] = np.nan
    for op, f in (("Max", np.maximum), ("Min", np.minimum)):
        save_case(out, "odn_%s_nan_both" % op.lower(), [helper.make_node(op, ["A", "B"], ["Y"])],
                  [("A", a), ("B", b)], [("Y", f(a.astype(np.float64), b))])
    x = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    x[1, 4, 2, 3] = np.nan
    c = rng.standard_normal((1, 16, 1, 1)).astype(np.float32)
    c[0, 9] = np.nan
    save_case(out, "odn_min_nan_broadcast", [helper.make_node("Min", ["X", "C"], ["Y"])],
              [("X", x), ("C", c)], [("Y", np.minimum(x.astype(np.float64), c))])


def conv_cases(out):
    x = rng.standard_normal((1, 8, 9, 9)).astype(np.float32)
    x[0, 2, 4, 4] = np.nan
    w = (rng.standard_normal((16, 8, 3, 3)) * 0.3).astype(np.float32)
    t = (rng.standard_normal((1, 16, 1, 1)) * 0.5).astype(np.float32)
    conv = float_conv(x, w, [1, 1], [1, 1, 1, 1])
    for name, op, first, f in (("odn_conv_max_nan", "Max", True, np.maximum),
                               ("odn_conv_min_nan_second", "Min", False, np.minimum)):
        ins = ["Cv", "T"] if first else ["T", "Cv"]
        save_case(out, name, [helper.make_node("Conv", ["X", "W"], ["Cv"], pads=[1, 1, 1, 1]),
                              helper.make_node(op, ins, ["Y"])],
                  [("X", x)], [("Y", f(conv, t))], [("W", w), ("T", t)])


def write(out):
    os.makedirs(out, exist_ok=True)
    binary_cases(out)
    conv_cases(out)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    cases = written_cases(write, out)
    bad = [] if test_cases(tessera, cases) else ["tests"]
    for c in cases:
        part = subprocess.run([tessera, "partition", os.path.join(c, "model.onnx"), "-p", "onednn,reference"],
                              capture_output=True, text=True).stdout
        if not claimed_whole(part):
            print("not claimed whole by onednn: %s\n%s" % (os.path.basename(c), part))
            bad.append(c)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
