"""How close float32 results are to the float64 oracle, per test case.

usage: oracle_accuracy.py TESSERA CASE_OR_FOLDER... [--timeout S] [--check]
                          [--providers LIST] [--filter SUBSTRING] [--allow CASE,...]
                          [--ort BENCH_DIR] [--seeds N] [--confirm N]
                          [--ort-status TSV]... [--jobs N] [--slack A]

A case is a folder with model.onnx and test_data_set_K/ folders (the zoo's
cases, ~/.cache/tessera-zoo/*/cases/NAME, hold ONNX Runtime's outputs there;
the ONNX backend cases hold ONNX's own expected outputs). For each data set
it runs the model on the set's inputs with `-p reference` (or --providers)
and with the oracle (`-p reference --provider-option
reference:precision=double`), and prints, per float output, the max and
mean absolute error against the oracle, over all the case's data sets, of

  tessera   the float32 run,
  other     the case's stored outputs or, with --ort, ONNX Runtime's
            outputs on the same inputs, computed here through BENCH_DIR's
            ort_run.js (../shared/bench; CPU provider, 1 thread, graph
            optimisation disabled, as ort-case makes the zoo's cases).

--seeds N adds N data sets to each case (needs --ort: nothing stores their
outputs): the inputs of test_data_set_0 drawn again (see redrawn()).
One input is one draw of the float32 rounding errors; the largest error
over a few hundred outputs (or over 3 outputs of a backend case) swings by
2-3x from draw to draw, so two maxima compare only over several draws.
--confirm N draws N more data sets for the cases that come out worse on
their own ones and judges them on all their sets together; a drawn set
that fails to run (inputs outside the op's domain) is left out.
--ort-status TSV (../shared/onnx-tests/onnxruntime-1.30/*.tsv) skips cases
ONNX Runtime cannot load (status error or skipped) without trying.

`ratio` is tessera's max error over the other's; with --check the exit
status is 1 when any output has tessera's max error above the other's by
more than 10% plus --slack (default 1e-7) (item 2 of issue 17: at least as
close to the oracle as ONNX Runtime). --allow lists cases whose excess is
known and explained (see docs/conformance.md, "Precision"): reported, not
failed. Cases that fail to run (either side) are listed and skipped; the
exit status is 77 when --ort is given and ONNX Runtime cannot be set up.
"""
import concurrent.futures
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (nor in ../shared/bench)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_outputs  # noqa: E402

FLOATS = (np.float16, np.float32, np.float64)


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def numbered(folder, prefix):
    """folder/prefixN(.pb) sorted by N"""
    found = glob.glob(os.path.join(folder, prefix + "*"))
    return sorted(found, key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))


def run(tessera, model, inputs_dir, out, providers, oracle, timeout):
    cmd = [tessera, "run", model, "--case", inputs_dir, "-p", "reference" if oracle else providers,
           "-o", out]
    if oracle:
        cmd += ["--provider-option", "reference:precision=double"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return None if p.returncode == 0 else (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]


def errors(got, oracle):
    """(max, sum, count) of |got - oracle| over pairs of finite numbers"""
    a = oracle.astype(np.float64)
    b = got.astype(np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    if not ok.any():
        return 0.0, 0.0, 0
    d = np.abs(a[ok] - b[ok])
    return float(d.max()), float(d.sum()), int(d.size)


def cases_of(paths, flt):
    for p in paths:
        if os.path.exists(os.path.join(p, "model.onnx")):
            found = [p]
        else:
            found = sorted(os.path.dirname(m) for m in glob.glob(os.path.join(p, "*", "model.onnx")))
        for c in found:
            if not flt or any(f in os.path.basename(c) for f in flt):
                yield c


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def load_sets(case, model):
    """[(inputs [(name, array, file)], stored {name: array})] per test_data_set_K;
    raises ValueError when an input is not a tensor (a sequence, an optional)"""
    names = [vi.name for vi in graph_inputs(model)]
    sets = []
    for ds in numbered(case, "test_data_set_"):
        inputs = []
        for k, f in enumerate(numbered(ds, "input_")):
            try:
                n, v = read_pb(f)
            except Exception:
                raise ValueError("input %s is not a tensor onnx can read" % os.path.basename(f))
            inputs.append((n or (names[k] if k < len(names) else ""), v, f))
        stored = {}
        for f in numbered(ds, "output_"):
            try:
                n, v = read_pb(f)
            except Exception:  # a type this onnx cannot read, a sequence
                continue
            stored[n] = v
        sets.append((inputs, stored))
    return sets


def redrawn(benchlib, model, set0, seed):
    """set 0's inputs drawn again by ort-case's recipe (benchlib.make_inputs)
    with another seed: symbolic dims as in set 0, inputs that hold one value
    throughout kept (a sample rate, a flag, a mask). When set 0 is not that
    recipe's own draw (the backend cases), integer and bool inputs (shapes,
    axes, indices the model needs as they are) are kept too and only float
    inputs are drawn again."""
    dims, fills = {}, {}
    given = {n: v for n, v, _ in set0}
    for vi in graph_inputs(model):
        v = given.get(vi.name)
        if v is None:
            continue
        for d, size in zip(vi.type.tensor_type.shape.dim, v.shape):
            if d.dim_param:
                dims[d.dim_param] = int(size)
        if v.size and (v == v.flat[0]).all():
            fills[vi.name] = v.flat[0].item()
    with open(os.devnull, "w") as quiet:  # make_inputs' notes on stderr: dims set 0 fixed
        old, sys.stderr = sys.stderr, quiet
        try:
            own = benchlib.make_inputs(model, dims, 0, fills)
            drawn = benchlib.make_inputs(model, dims, seed, fills)
        finally:
            sys.stderr = old
    recipe = len(own) == len(set0) and all(
        a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        for (_, a), (_, b, _) in zip(own, set0))
    if recipe:
        return [(n, v, None) for n, v in drawn]
    drawn = dict(drawn)
    return [(n, drawn[n] if n in drawn and v.dtype.type in FLOATS and drawn[n].shape == v.shape else v, None)
            for n, v, _ in set0]


def ort_skipped(tsvs):
    skip = set()
    for path in tsvs:
        with open(path) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row.get("status") in ("error", "skipped"):
                    skip.add(row["case"])
    return skip


def measure(tessera, providers, timeout, case, model_path, k, inputs, tmp):
    """runs set k of a case on both sides; returns (error or None, ref dir, oracle dir)"""
    base = os.path.join(tmp, "%s.%d" % (os.path.basename(case), k))
    ds = os.path.join(base, "in", "test_data_set_0")
    os.makedirs(ds)
    for i, (name, value, f) in enumerate(inputs):
        dst = os.path.join(ds, "input_%d.pb" % i)
        if f:
            os.symlink(os.path.abspath(f), dst)
        else:
            with open(dst, "wb") as out:
                out.write(numpy_helper.from_array(value, name).SerializeToString())
    ref_dir, orc_dir = os.path.join(base, "ref"), os.path.join(base, "oracle")
    err = run(tessera, model_path, os.path.join(base, "in"), orc_dir, providers, True, timeout) or \
        run(tessera, model_path, os.path.join(base, "in"), ref_dir, providers, False, timeout)
    return err, ref_dir, orc_dir


class Tally:
    """one output of one case over its data sets: max and mean error of both
    sides, and in how many sets tessera's max error was over the other's by
    more than 10% + slack"""
    def __init__(self):
        self.tmax = self.tsum = self.omax = self.osum = 0.0
        self.tn = self.on = self.sets = self.worse_sets = 0

    def add(self, t, o, slack):
        self.tmax, self.tsum, self.tn = max(self.tmax, t[0]), self.tsum + t[1], self.tn + t[2]
        self.omax, self.osum, self.on = max(self.omax, o[0]), self.osum + o[1], self.on + o[2]
        self.sets += 1
        self.worse_sets += t[0] > o[0] * 1.1 + slack

    def worse(self):
        """further from the oracle in more than half of the sets: each set is
        one draw of the rounding errors, and a single draw's maximum swings
        both ways by a few ULPs (see the module's doc)"""
        return 2 * self.worse_sets > self.sets


def measure_all(units, other, tessera, providers, timeout, jobs, slack, acc, errs):
    """runs every unit (case, set) whose other outputs are known on both sides
    and adds its errors to acc[case][output], a Tally;
    errs[case] = the first run error of a required set"""
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        todo = [u for u in units if (u.name, u.k) in other]
        futures = [pool.submit(measure, tessera, providers, timeout, u.case, u.model_path, u.k, u.inputs, tmp)
                   for u in todo]
        for u, fut in zip(todo, futures):
            err, ref_dir, orc_dir = fut.result()
            if err:
                if u.required:
                    errs.setdefault(u.name, err)
                continue
            for n, want in other[(u.name, u.k)].items():
                if want.dtype.type not in FLOATS:
                    continue
                fname = n.replace("/", "_") + ".pb"
                try:
                    _, orc = read_pb(os.path.join(orc_dir, fname))
                    _, ref = read_pb(os.path.join(ref_dir, fname))
                except Exception:
                    continue
                if orc.shape != ref.shape or orc.shape != want.shape:
                    continue
                tally = acc.setdefault(u.name, {}).setdefault(n, Tally())
                tally.add(errors(ref, orc), errors(want, orc), slack)


def ort_for(units, benchlib, bench, other, failed):
    """ONNX Runtime's outputs for the units into other[(case, set)]; a case
    whose required set fails there is listed in failed. Returns the version."""
    items = [((u.name, u.k), u.model_path, [(n, v) for n, v, _ in u.inputs]) for u in units]
    got, ort_failed, version = ort_outputs.run(benchlib, bench, items)
    other.update(got)
    required = {(u.name, u.k) for u in units if u.required}
    for key, err in sorted(ort_failed.items()):
        if key in required:
            failed.append((key[0], "ONNX Runtime: " + err))
    return version


class Unit:
    """one data set of one case; `required`: set 0 and --seeds sets, whose
    failure to run makes the case 'not run' (a --confirm draw that fails is
    left out: redrawn inputs may leave the op's domain)"""
    def __init__(self, name, case, model_path, k, inputs, stored, required):
        self.name, self.case, self.model_path, self.k = name, case, model_path, k
        self.inputs, self.stored, self.required = inputs, stored, required


def main(argv):
    args, timeout, check, providers, flt, allow = [], 600, False, "reference", [], set()
    bench, seeds, confirm, tsvs, jobs, slack = None, 0, 0, [], 1, 1e-7
    i = 1
    while i < len(argv):
        if argv[i] == "--timeout":
            timeout = float(argv[i + 1]); i += 2
        elif argv[i] == "--providers":
            providers = argv[i + 1]; i += 2
        elif argv[i] == "--filter":
            flt.append(argv[i + 1]); i += 2
        elif argv[i] == "--allow":
            allow.update(argv[i + 1].split(",")); i += 2
        elif argv[i] == "--ort":
            bench = os.path.abspath(argv[i + 1]); i += 2
        elif argv[i] == "--seeds":
            seeds = int(argv[i + 1]); i += 2
        elif argv[i] == "--confirm":
            confirm = int(argv[i + 1]); i += 2
        elif argv[i] == "--ort-status":
            tsvs.append(argv[i + 1]); i += 2
        elif argv[i] == "--jobs":
            jobs = max(1, int(argv[i + 1])); i += 2
        elif argv[i] == "--slack":
            slack = float(argv[i + 1]); i += 2
        elif argv[i] == "--check":
            check = True; i += 1
        else:
            args.append(argv[i]); i += 1
    if len(args) < 2 or ((seeds or confirm) and not bench):
        print(__doc__)
        return 2
    benchlib = None
    if bench:
        benchlib = ort_outputs.load_benchlib(bench)
        if benchlib is None:
            print("oracle_accuracy.py: no ort_run.js in %s" % bench, file=sys.stderr)
            return 2
    tessera, paths = args[0], args[1:]
    skip = ort_skipped(tsvs)
    failed, units, cases, models = [], [], [], {}
    for case in cases_of(paths, flt):
        name = os.path.basename(case.rstrip("/"))
        if name in skip:
            continue
        model_path = os.path.join(case, "model.onnx")
        try:
            model = onnx.load(model_path, load_external_data=False)
            sets = load_sets(case, model)
            if not sets:
                continue
            if not bench and not any(v.dtype.type in FLOATS for v in sets[0][1].values()):
                continue  # nothing to compare with
            if bench and not any(o.type.tensor_type.elem_type in (1, 10, 11) for o in model.graph.output):
                continue
            for s in range(1, seeds + 1):
                sets.append((redrawn(benchlib, model, sets[0][0], s), {}))
        except (ValueError, SystemExit) as e:
            failed.append((name, str(e)))
            continue
        cases.append(name)
        models[name] = (case, model_path, model, sets[0][0], len(sets))
        for k, (inputs, stored) in enumerate(sets):
            units.append(Unit(name, case, model_path, k, inputs, stored, True))

    other, acc, errs = {}, {}, {}
    if bench:
        try:
            version = ort_for(units, benchlib, bench, other, failed)
        except SystemExit as e:  # benchlib.die: ONNX Runtime could not be set up
            print("SKIP: ONNX Runtime cannot run here: %s" % e)
            return 77
        print("other: ONNX Runtime %s (CPU, 1 thread, graph optimisation disabled); %d data set(s) per case"
              % (version, seeds + 1))
    else:
        other.update({(u.name, u.k): u.stored for u in units})
        print("other: the cases' stored outputs")
    measure_all(units, other, tessera, providers, timeout, jobs, slack, acc, errs)

    # Cases found worse on their own sets get `confirm` more draws.
    again = [n for n in cases if n not in errs and n not in allow
             and any(a.worse() for a in acc.get(n, {}).values())]
    if confirm and again:
        more = []
        for name in again:
            case, model_path, model, set0, n_sets = models[name]
            for s in range(n_sets, n_sets + confirm):
                try:
                    more.append(Unit(name, case, model_path, s, redrawn(benchlib, model, set0, s), {}, False))
                except SystemExit:  # an input the recipe cannot draw
                    break
        ort_for(more, benchlib, bench, other, failed)
        measure_all(more, other, tessera, providers, timeout, jobs, slack, acc, errs)
        print("confirmed on up to %d more draws: %s" % (confirm, ", ".join(again)))

    worse = []
    print("%-44s %-12s %10s %10s %10s %10s %7s %5s" % ("case", "output", "tsr max", "tsr mean",
                                                       "other max", "other mean", "ratio", "worse"))
    for name in cases:
        if name in errs:
            failed.append((name, errs[name]))
            continue
        for n, a in acc.get(name, {}).items():
            tmean, omean = a.tsum / max(a.tn, 1), a.osum / max(a.on, 1)
            ratio = a.tmax / a.omax if a.omax > 0 else (1.0 if a.tmax == 0 else float("inf"))
            bad = a.worse()
            if bad and name not in allow:
                worse.append("%s/%s" % (name, n))
            print("%-44s %-12s %10.3g %10.3g %10.3g %10.3g %7.2f %5s%s" % (
                name[:44], n[:12], a.tmax, tmean, a.omax, omean, ratio, "%d/%d" % (a.worse_sets, a.sets),
                ("  WORSE" + (" (allowed)" if name in allow else "")) if bad else ""))
    for name, err in failed:
        print("not run: %s: %s" % (name, err))
    print("%d outputs less accurate than the other's%s" % (
        len(worse), (": " + ", ".join(worse)) if worse else ""))
    return 1 if check and worse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
