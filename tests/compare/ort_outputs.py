"""ONNX Runtime's outputs on given inputs, many models in one process.

Used by oracle_accuracy.py --ort. ../shared/bench's ort-case runs one model
on inputs it draws itself; here the inputs are the test case's own (or
drawn by the same recipe with other seeds), so this drives ../shared/bench's
ort_run.js directly: its 'ref' mode (CPU provider, 1 thread, graph
optimisation disabled, as ort-case) on a job of many models, so node and
ONNX Runtime start once, not once per case.

ort_run.js stops at the first model that fails (a load error: an op or
opset ONNX Runtime lacks); the job then restarts after that model, which is
reported as failed. ort_run.js prints a model's outputs only once its run
has finished, so a model that printed anything printed all of them.
"""
import json
import os
import subprocess
import sys
import tempfile


def load_benchlib(bench_dir):
    """../shared/bench's benchlib (input recipe, types, ensure_ort), or None"""
    if not os.path.exists(os.path.join(bench_dir, "ort_run.js")):
        return None
    sys.dont_write_bytecode = True  # never write __pycache__ into that read-only folder
    if bench_dir not in sys.path:
        sys.path.insert(0, bench_dir)
    import benchlib  # noqa: E402
    return benchlib


def run(benchlib, bench_dir, items):
    """items: [(key, model_path, [(input_name, ndarray)])].
    Returns ({key: {output_name: ndarray}}, {key: error line}) and the ORT
    version; SystemExit (benchlib.die) when ONNX Runtime cannot be set up."""
    pkg = benchlib.ensure_ort()
    results, failed, version = {}, {}, "?"
    with tempfile.TemporaryDirectory(prefix="tessera-ort-") as tmp:
        models = []
        for k, (key, path, inputs) in enumerate(items):
            try:
                feeds = benchlib.write_feeds(inputs, os.path.join(tmp, "in%d" % k))
            except KeyError as e:  # an element type ort_run.js cannot feed (string, bfloat16, ...)
                failed[key] = "input type %s not fed to ONNX Runtime" % e
                continue
            models.append((key, {"path": os.path.abspath(path), "feeds": feeds}))
        start = 0
        while start < len(models):
            batch = models[start:]
            out_dir = os.path.join(tmp, "out%d" % start)
            os.makedirs(out_dir)
            job_file = os.path.join(tmp, "job%d.json" % start)
            with open(job_file, "w") as f:
                json.dump({"ort": pkg, "mode": "ref", "outdir": out_dir,
                           "models": [m for _, m in batch]}, f)
            p = subprocess.Popen(["node", os.path.join(bench_dir, "ort_run.js"), job_file],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            got = {}
            for line in p.stdout:
                rec = json.loads(line)
                if "ort_version" in rec:
                    version = rec["ort_version"]
                    continue
                i = rec["model"]
                if rec.get("type") == "string":  # not compared; the model did run
                    got.setdefault(i, {})
                    continue
                try:
                    got.setdefault(i, {})[rec["name"]] = benchlib.read_output(rec)
                except SystemExit:  # benchlib.die: a type it cannot read back
                    got.setdefault(i, {})
            err = p.stderr.read().strip().splitlines()
            rc = p.wait()
            done = max(got) + 1 if got else 0
            for i in range(done):
                results[batch[i][0]] = got.get(i, {})
            if rc == 0:
                break
            # model `done` failed: ort_run.js printed nothing for it and stopped
            if done < len(batch):
                failed[batch[done][0]] = (err or ["ort_run.js exit %d" % rc])[-1]
            start += done + 1
    return results, failed, version
