#!/usr/bin/env python3
"""What calling Tessera from Python costs: InferenceSession.run latency
against `tessera bench` (the same C API, no Python) on the same model,
providers and thread count; optionally ONNX Runtime's node binding
(../shared/bench/ort-bench) beside them.

The machine may be shared, so the contenders run interleaved: in each round
each one runs once (`--runs` timed runs after `--warmup`), in an order that
rotates by round, and the table gives the median over rounds of each
round's median.

usage: python/tools/bench_overhead.py MODEL.onnx|tiny_relu... [--tessera build/bin/tessera]
           [--providers onednn,reference] [--threads 1] [--rounds 5]
           [--runs 50] [--warmup 10] [--ort-bench ../shared/bench/ort-bench]
           [--markdown]

Needs the tessera package importable (PYTHONPATH=build/python) and
/usr/bin/python3 (numpy). Inputs: floats uniform in [-1, 1) (seed 0),
symbolic dims 1: `tessera bench` makes its own inputs by the same recipe.
`tiny_relu` names a one-Relu model on [1, 16] made on the spot (python3-onnx),
whose latency is the per-call cost alone.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import tessera


def tiny_relu(directory):
    """A model of one Relu on [1, 16]: the per-call cost alone."""
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny_relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(directory, "tiny_relu.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def cli_median(args, model):
    out = subprocess.run([args.tessera, "bench", model, "-p", args.providers, "--threads", str(args.threads),
                          "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    return json.loads(out)["median_ms"]


def ort_median(args, model):
    out = subprocess.run([args.ort_bench, "--json", "--threads", str(args.threads), "--runs", str(args.runs),
                          "--warmup", str(args.warmup), model],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    return json.loads(out.decode().strip().splitlines()[-1])["median_ms"]


def make_feed(sess):
    rng = np.random.default_rng(0)
    feed = {}
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type not in types:
            sys.exit("bench_overhead.py: input %s is %s; only float inputs are made up" % (i.name, i.type))
        feed[i.name] = rng.uniform(-1, 1, shape).astype(types[i.type])
    return feed


def python_median(args, sess, feed):
    run = sess.run
    out = None
    for _ in range(args.warmup):
        out = run(None, feed)
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        out = run(None, feed)  # the previous outputs are freed in here, as `tessera bench` frees its own
        times.append((time.perf_counter() - t0) * 1e3)
    del out
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--tessera", default=os.path.join(os.path.dirname(os.path.dirname(here)), "build", "bin", "tessera"))
    ap.add_argument("--providers", default="onednn,reference")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--ort-bench", default=None, help="ONNX Runtime's node bench (../shared/bench/ort-bench)")
    ap.add_argument("--markdown", action="store_true", help="a markdown table instead of text")
    args = ap.parse_args()

    so = tessera.SessionOptions()
    so.intra_op_num_threads = args.threads
    rows = []
    tmp = tempfile.TemporaryDirectory(prefix="bench-overhead-")
    models = [tiny_relu(tmp.name) if m == "tiny_relu" and not os.path.exists(m) else m for m in args.models]
    for model in models:
        sess = tessera.InferenceSession(model, sess_options=so, providers=args.providers.split(","))
        feed = make_feed(sess)
        contenders = [("python", lambda: python_median(args, sess, feed)), ("cli", lambda: cli_median(args, model))]
        if args.ort_bench:
            contenders.append(("ort", lambda: ort_median(args, model)))
        got = {name: [] for name, _ in contenders}
        for r in range(args.rounds):
            k = r % len(contenders)
            for name, fn in contenders[k:] + contenders[:k]:
                got[name].append(fn())
        med = {name: statistics.median(v) for name, v in got.items()}
        rows.append((os.path.basename(model), med, got))

    if args.markdown:
        head = "| model | Python run ms | `tessera bench` ms | Python − C µs | ratio |"
        sep = "|---|---:|---:|---:|---:|"
        if args.ort_bench:
            head += " ORT node ms |"
            sep += "---:|"
        print(head)
        print(sep)
        for name, med, _ in rows:
            line = "| %s | %.4f | %.4f | %.1f | %.3f |" % (name, med["python"], med["cli"],
                                                          (med["python"] - med["cli"]) * 1e3,
                                                          med["python"] / med["cli"])
            if args.ort_bench:
                line += " %.4f |" % med["ort"]
            print(line)
    else:
        for name, med, got in rows:
            print("%s: python %.4f ms, tessera bench %.4f ms (python - C %.1f us, ratio %.3f)%s" % (
                name, med["python"], med["cli"], (med["python"] - med["cli"]) * 1e3, med["python"] / med["cli"],
                ", ONNX Runtime node %.4f ms" % med["ort"] if "ort" in med else ""))
            for k, v in got.items():
                print("  %s per round: %s" % (k, " ".join("%.4f" % x for x in v)))


if __name__ == "__main__":
    main()
