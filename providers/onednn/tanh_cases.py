#!/usr/bin/python3
"""Backend-style cases for Tanh on the oneDNN provider, which runs a
standalone Tanh as the C loop of odn_tanh_loop.c (oneDNN 2.6's tanh is 5x
its logistic on AVX2): sizes with 1-7 element tails, a tensor large enough
to be split over threads, +-inf, NaN, -0, tiny and huge values, a Conv's
blocked output read by a Tanh and a Sigmoid (WaveNet's gated unit
tanh(a) * sigmoid(b)), and a gated unit on two inputs. Expected outputs:
numpy's tanh (and logistic) in float64, within rtol 1e-6 (the loop is
within 2.5 ulp, check/tanh.c; 1e-4 after the Conv, for its float32 sums).

usage: tanh_cases.py OUT_DIR        (prints the case dirs)
       tanh_cases.py --check TESSERA OUT_DIR
         writes the cases, runs them with -p onednn,reference at 1 and 2
         threads and fails when one fails, onednn does not claim them whole
         or a standalone Tanh did not run as the loop (exit 77 without
         onnx or onednn)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    np = None

if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from extra_cases import claimed_whole, explain, float_conv, has_onednn, partition, save_case, test_cases, \
        written_cases

    rng = np.random.default_rng(20261208)

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e-30, 1e-7, -3e-4, 0.6249, 0.625, -0.6251, 9.0, -9.1,
           20.0, 44.0, -100.0, 3e38, -3e38, 1e-3, 0.3, -5.0]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def unary_cases(out):
    for name, shape in (("odn_tanh_tail5", (5,)), ("odn_tanh_tail", (3, 1001)), ("odn_tanh_4d", (2, 3, 7, 9)),
                        ("odn_tanh_threads", (2, 70001))):
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        flat = x.reshape(-1)
        k = min(len(SPECIAL), flat.size)
        flat[:k] = SPECIAL[:k]
        save_case(out, name, [helper.make_node("Tanh", ["X"], ["Y"])], [("X", x)],
                  [("Y", np.tanh(x.astype(np.float64)))])


def gated_cases(out):
    a = (rng.standard_normal((1, 64, 1003)) * 2).astype(np.float32)
    b = (rng.standard_normal((1, 64, 1003)) * 2).astype(np.float32)
    a[0, 0, :4] = [np.nan, np.inf, -np.inf, 0.01]
    save_case(out, "odn_tanh_gated", [helper.make_node("Tanh", ["A"], ["T"]), helper.make_node("Sigmoid", ["B"], ["S"]),
                                      helper.make_node("Mul", ["T", "S"], ["Y"])],
              [("A", a), ("B", b)], [("Y", np.tanh(a.astype(np.float64)) * sigmoid(b.astype(np.float64)))])
    x = rng.standard_normal((1, 8, 11, 13)).astype(np.float32)
    w = (rng.standard_normal((16, 8, 3, 3)) * 0.3).astype(np.float32)
    conv = float_conv(x, w, [1, 1], [1, 1, 1, 1])
    save_case(out, "odn_tanh_conv_gated",
              [helper.make_node("Conv", ["X", "W"], ["C"], pads=[1, 1, 1, 1]), helper.make_node("Tanh", ["C"], ["T"]),
               helper.make_node("Sigmoid", ["C"], ["S"]), helper.make_node("Mul", ["T", "S"], ["Y"])],
              [("X", x)], [("Y", np.tanh(conv) * sigmoid(conv))], [("W", w)])


def write(out):
    os.makedirs(out, exist_ok=True)
    unary_cases(out)
    gated_cases(out)


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    cases = written_cases(write, out)
    bad = []
    # the Conv's float32 sums differ from float64 ones by more than tanh's
    conv = [c for c in cases if "conv" in os.path.basename(c)]
    exact = [c for c in cases if c not in conv]
    for threads in ("1", "2"):
        if not test_cases(tessera, exact, "--rtol", "1e-6", "--atol", "1e-37", "-t", threads) or \
                not test_cases(tessera, conv, "--rtol", "1e-4", "--atol", "1e-6", "-t", threads):
            bad.append("tests at %s threads" % threads)
    for c in cases:
        name = os.path.basename(c)
        if not claimed_whole(partition(tessera, c)):
            print("not claimed whole by onednn: %s\n%s" % (name, partition(tessera, c)))
            bad.append(name)
        if name.startswith("odn_tanh_tail") and "loop tanh:avx2" not in explain(tessera, c):
            print("%s: the Tanh did not run as the loop\n%s" % (name, explain(tessera, c)))
            bad.append(name)
    return 1 if bad else 0


if __name__ == "__main__":
    from case_main import main

    main(__doc__, write, check, np is not None)
