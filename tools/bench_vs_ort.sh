#!/bin/sh
# Tessera (onednn provider) against ONNX Runtime on the benchmark models of
# ../shared/bench, side by side: for each round, model and thread count the
# two run back to back (which goes first alternates by round), so both see
# the same machine load. Writes the table, with the ratio Tessera/ORT of the
# median latencies, to docs/benchmarks.md.
#
# usage: tools/bench_vs_ort.sh [--rounds N] [--runs N] [--warmup N] [--threads 1,2]
#                              [--models DIR] [--providers LIST] [--out FILE]
#                              [--ocl-runs N] [--ref-runs N] [--zoo] [--zoo-dir DIR]
#                              [--zoo-size full|small] [MODEL...]
# MODEL is any of resnet50 mobilenetv2 bert_base mlp, or a tools/zoo model
# (make_zoo.py --list); --zoo adds every zoo model. Default: the four.
# Zoo models (--zoo-size, default full) and their ort-case test cases are
# cached in --zoo-dir; both sides get the same inputs (Tessera the case's
# .pb files via `tessera bench CASE`, ort-bench the same seed, --dim, --fill).
# A -p reference column (1 thread, --ref-runs timed runs, 0 to skip) shows
# the default never loses to the yardstick. When an OpenCL device is present,
# a last table gives -p opencl,reference latency with kernel and copy time
# apart (--ocl-runs timed runs each).
# Needs build/bin/tessera (or $TESSERA) built with the onednn provider.
set -eu
invocation="tools/bench_vs_ort.sh $*"
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${TESSERA_BENCH_DIR:-$root/../shared/bench}
tessera=${TESSERA:-$root/build/bin/tessera}
models_dir=${TESSERA_BENCH_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera-bench-models}
rounds=3 runs=20 warmup=5 threads=1,2 providers=onednn,reference out=$root/docs/benchmarks.md
ocl_runs=3 # OpenCL on a CPU driver is slow: fewer runs for its rows
ref_runs=3 # the reference provider is slow: fewer runs, 1 thread, round 1 only
zoo_dir=${TESSERA_ZOO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera-zoo}
zoo_size=full all_zoo=0
names=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models_dir=$2; shift 2 ;;
    --providers) providers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ocl-runs) ocl_runs=$2; shift 2 ;;
    --ref-runs) ref_runs=$2; shift 2 ;;
    --zoo) all_zoo=1; shift ;;
    --zoo-dir) zoo_dir=$2; shift 2 ;;
    --zoo-size) zoo_size=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "bench_vs_ort.sh: unknown option $1" >&2; exit 2 ;;
    *) names="$names $1"; shift ;;
  esac
done
[ -x "$tessera" ] || { echo "bench_vs_ort.sh: no tessera at $tessera (set TESSERA=...)" >&2; exit 1; }
[ -x "$bench/ort-bench" ] || { echo "bench_vs_ort.sh: no $bench/ort-bench" >&2; exit 1; }
case $zoo_size in full|small) ;; *) echo "bench_vs_ort.sh: --zoo-size full or small" >&2; exit 2 ;; esac

# Split the names: the four of make_models.py, and the zoo's.
make_zoo=$root/tools/zoo/make_zoo.py
zoo_all=$(/usr/bin/python3 "$make_zoo" --list 2>/dev/null | awk '{print $1}')
four_all=" resnet50 mobilenetv2 bert_base mlp "
four="" zoo=""
for m in $names; do
  case $four_all in
    *" $m "*) four="$four $m" ;;
    *) echo "$zoo_all" | grep -qx "$m" || { echo "bench_vs_ort.sh: no model '$m' (the four:$four_all; zoo: $(echo "$zoo_all" | tr '\n' ' '))" >&2; exit 2; }
       zoo="$zoo $m" ;;
  esac
done
if [ "$all_zoo" = 1 ]; then
  for m in $zoo_all; do case "$zoo " in *" $m "*) ;; *) zoo="$zoo $m" ;; esac; done
fi
[ -n "$four$zoo" ] || four=" resnet50 mobilenetv2 bert_base mlp"
names="$four$zoo"

if [ -n "$four" ]; then
  mkdir -p "$models_dir"
  missing=""
  for m in $four; do [ -f "$models_dir/$m.onnx" ] || missing="$missing $m"; done
  # shellcheck disable=SC2086
  [ -z "$missing" ] || "$bench/make_models.py" --out "$models_dir" $missing
fi

# zoo_args M: the --dim/--fill words of zoo model M's json, one per line.
zoo_args() {
  /usr/bin/python3 - "$zoo_dir/$zoo_size/models/$1.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k, v in sorted(m.get("dims", {}).items()):
    print("--dim"); print("%s=%d" % (k, v))
for k, v in sorted(m.get("fill", {}).items()):
    print("--fill"); print("%s=%r" % (k, v))
PY
}
# The zoo's models are rewritten each run (their generators may have changed;
# the bytes are seeded) and their ort-case cases remade when a model's files
# or arguments changed: the case's .pb inputs are what Tessera is fed.
if [ -n "$zoo" ]; then
  zd=$zoo_dir/$zoo_size
  mkdir -p "$zd/models" "$zd/cases"
  # shellcheck disable=SC2086
  /usr/bin/python3 "$make_zoo" --out "$zd/models" --size "$zoo_size" $zoo >/dev/null
  for m in $zoo; do
    stamp="$(cat "$zd/models/$m".* | cksum) $(zoo_args "$m" | tr '\n' ' ')"
    if [ ! -f "$zd/cases/$m/.stamp" ] || [ "$(cat "$zd/cases/$m/.stamp")" != "$stamp" ]; then
      rm -rf "$zd/cases/$m"
      # shellcheck disable=SC2046
      "$bench/ort-case" "$zd/models/$m.onnx" "$zd/cases/$m" $(zoo_args "$m") >&2
      echo "$stamp" >"$zd/cases/$m/.stamp"
    fi
  done
fi

# model_path M, tessera_model M, ort_args M: what each side is given.
model_path() {
  case " $zoo " in *" $1 "*) echo "$zoo_dir/$zoo_size/models/$1.onnx" ;; *) echo "$models_dir/$1.onnx" ;; esac
}
tessera_model() { # a zoo model runs as its case: the .pb inputs ORT's recipe made
  case " $zoo " in *" $1 "*) echo "$zoo_dir/$zoo_size/cases/$1" ;; *) echo "$models_dir/$1.onnx" ;; esac
}
ort_args() {
  case " $zoo " in *" $1 "*) zoo_args "$1" ;; esac
}
group() { case " $zoo " in *" $1 "*) echo zoo ;; *) echo four ;; esac; }
# ORT's peak RSS: ort-bench reports none, so this measures the largest of
# its processes (getrusage of the children: the node process running ORT,
# Node.js's own ~40 MB included) and adds it to each JSON line.
ort_bench_rss() {
  /usr/bin/python3 - "$@" <<'PY'
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
for line in p.stdout.splitlines():
    if line.startswith("{"):
        rec = json.loads(line)
        rec["peak_rss_mb"] = round(rss, 1)
        print(json.dumps(rec))
sys.exit(p.returncode)
PY
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
# The FMA peak is measured in every round too (tools/peak/fma_peak.c, built
# next to tessera): on a shared machine it moves with the co-tenants, so
# "% of peak" divides by the best figure of this run, not a fixed one.
peak=$(dirname "$tessera")/fma_peak
r=1
while [ "$r" -le "$rounds" ]; do
  if [ -x "$peak" ]; then
    for t in $(echo "$threads" | tr ',' ' '); do
      "$peak" "$t" | awk -v t="$t" '{sub("gflops=", "", $4); print "{\"who\": \"peak\", \"name\": \"fma\", \"threads\": " t ", \"gflops\": " $4 "}"}' >>"$results"
    done
  fi
  for m in $names; do
    model=$(model_path "$m")
    g=$(group "$m")
    if [ "$r" = 1 ] && [ "$ref_runs" -gt 0 ]; then
      "$tessera" bench "$(tessera_model "$m")" -p reference --threads 1 --runs "$ref_runs" --warmup 1 --json |
        sed "s/^{/{\"who\": \"reference\", \"group\": \"$g\", \"name\": \"$m\", \"round\": $r, /" >>"$results"
      echo "round $r: $m on -p reference done" >&2
    fi
    for t in $(echo "$threads" | tr ',' ' '); do
      run_tessera() {
        "$tessera" bench "$(tessera_model "$m")" -p "$providers" --threads "$t" --runs "$runs" --warmup "$warmup" --json |
          sed "s/^{/{\"who\": \"tessera\", \"group\": \"$g\", \"name\": \"$m\", \"round\": $r, /" >>"$results"
      }
      run_ort() {
        # shellcheck disable=SC2046
        ort_bench_rss "$bench/ort-bench" --json --threads "$t" --runs "$runs" --warmup "$warmup" $(ort_args "$m") "$model" |
          sed "s/^{/{\"who\": \"ort\", \"group\": \"$g\", \"name\": \"$m\", \"round\": $r, /" >>"$results"
      }
      if [ $((r % 2)) -eq 1 ]; then run_tessera; run_ort; else run_ort; run_tessera; fi
      echo "round $r: $m, $t thread(s) done" >&2
    done
  done
  r=$((r + 1))
done

# OpenCL rows: latency with -p opencl,reference, and the provider's own
# profile (profile=1: kernel time from OpenCL events, copies apart), logged
# when the session ends.
ocl_results=$(mktemp)
trap 'rm -f "$results" "$ocl_results" "$ocl_results".*.json' EXIT
if "$tessera" providers 2>/dev/null | awk '/^opencl /{o=1; next} /^[^ ]/{o=0} o && /device 0:/{f=1} END{exit !f}'; then
  for m in $names; do
    log=$ocl_results.$m.json
    "$tessera" bench "$(tessera_model "$m")" -p opencl,reference --threads 1 --runs "$ocl_runs" --warmup 1 \
      --json --provider-option opencl:profile=1 2>"$log" |
      sed "s|^{|{\"name\": \"$m\", \"log\": \"$log\", |" >>"$ocl_results" || true
    echo "opencl: $m done" >&2
  done
fi

cmdline="${TESSERA:+TESSERA=$TESSERA }$invocation  # rounds $rounds, runs $runs, warm-up $warmup, threads $threads, -p $providers, reference runs $ref_runs, models:$names${zoo:+ (zoo size $zoo_size)}"
/usr/bin/python3 - "$results" "$out" "$cmdline" "$models_dir" "$ocl_results" "$ocl_runs" "$zoo_dir/$zoo_size/models" <<'PY'
import json, os, statistics, subprocess, sys, time
results, out, cmdline, models_dir, ocl_results, runs, zoo_models = sys.argv[1:8]
rows, peaks, ref, zoo = {}, {}, {}, {}
for line in open(results):
    line = line.strip()
    if not line.startswith("{"):
        continue
    rec = json.loads(line)
    if rec["who"] == "peak":
        peaks[rec["threads"]] = max(peaks.get(rec["threads"], 0.0), rec["gflops"])
        continue
    if rec["who"] == "reference":
        ref.setdefault(rec["name"], []).append(rec)
        continue
    table = zoo if rec.get("group") == "zoo" else rows
    table.setdefault((rec["name"], rec["threads"]), {}).setdefault(rec["who"], []).append(rec)
try:
    flops = {k: v["flops"] for k, v in json.load(open(os.path.join(models_dir, "flops.json"))).items()}
except (OSError, ValueError, KeyError):
    flops = {}
# A zoo model's FLOPs, when its NAME.json gives them ("gflop"/"gflops" or "flops").
for name in {n for n, _ in zoo}:
    try:
        meta = json.load(open(os.path.join(zoo_models, name + ".json")))
    except (OSError, ValueError):
        continue
    g = meta.get("gflop", meta.get("gflops"))
    if g is not None:
        flops[name] = float(g) * 1e9
    elif meta.get("flops") is not None:
        flops[name] = float(meta["flops"])
def ref_ms(name):
    return f"{statistics.median(r['median_ms'] for r in ref[name]):.3f}" if name in ref else "-"
def med(recs, key):
    vals = [r[key] for r in recs if r.get(key) is not None]
    return statistics.median(vals) if vals else None
def fmt(x, spec=".0f"):
    return "-" if x is None else format(x, spec)
cpu = "unknown CPU"
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    pass
lines = [
    "# Benchmarks: Tessera (oneDNN provider) vs ONNX Runtime",
    "",
    "Written by `tools/bench_vs_ort.sh`; do not edit by hand. Command:",
    "",
    "    " + cmdline,
    "",
    f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu} ({os.cpu_count()} CPUs), "
    f"load average before the table was written: {os.getloadavg()[0]:.1f}.",
    "Each cell is the median over rounds of each round's median latency; Tessera and ONNX Runtime",
    "ran back to back in every round (alternating who goes first). Ratio < 1 means Tessera is faster.",
    "FP32 FMA peak measured in this run (`fma_peak`, best of every round): "
    + (", ".join(f"{peaks[t]:.1f} GFLOP/s at {t} thread{'s' if t > 1 else ''}" for t in sorted(peaks))
       if peaks else "not measured (no fma_peak next to tessera)")
    + "; % peak is Tessera's GFLOP/s at its median over that.",
    "",
    "Paired ratios: each round's Tessera median over the ORT median of the same round (the two ran",
    "back to back, so the host's slow and fast phases mostly cancel); the column gives their",
    "median, range, and how many rounds met the issue's target ratio <= 0.9.",
    "",
    "Reference ms: `-p reference` (the naive kernels, the yardstick) at 1 thread, round 1 only;",
    "create ms: session creation (ORT's includes its graph optimisation); peak RSS: Tessera's from",
    "`tessera bench` (the process), ORT's the largest process of `ort-bench` (the node process",
    "running ONNX Runtime, Node.js's own ~40 MB included), so the two are only roughly comparable.",
    "",
    "| model | threads | Tessera median ms | ORT median ms | ratio T/ORT | paired ratios: median [min-max], rounds <= 0.9 | Tessera min ms | ORT min ms | Tessera GFLOP/s | % peak | reference ms (1 thr) | Tessera create ms | ORT create ms | Tessera peak RSS MB | ORT peak RSS MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]
for (name, t), who in sorted(rows.items()):
    ts, os_ = who.get("tessera", []), who.get("ort", [])
    if not ts or not os_:
        lines.append(f"| {name} | {t} | {'-' if not ts else ''} | {'-' if not os_ else ''} | missing | | | | | | | | | | |")
        continue
    tm = statistics.median(r["median_ms"] for r in ts)
    om = statistics.median(r["median_ms"] for r in os_)
    gf = f"{flops[name] / (tm * 1e6):.1f}" if name in flops else "-"
    pk = f"{100 * flops[name] / (tm * 1e6) / peaks[t]:.0f}%" if name in flops and peaks.get(t) else "-"
    by_round = {r["round"]: r["median_ms"] for r in os_}
    paired = sorted(r["median_ms"] / by_round[r["round"]] for r in ts if r["round"] in by_round)
    pr = (f"{statistics.median(paired):.3f} [{paired[0]:.3f}-{paired[-1]:.3f}], "
          f"{sum(x <= 0.9 for x in paired)} of {len(paired)}") if paired else "-"
    lines.append(f"| {name} | {t} | {tm:.3f} | {om:.3f} | {tm / om:.3f} | {pr} | {min(r['min_ms'] for r in ts):.3f} | "
                 f"{min(r['min_ms'] for r in os_):.3f} | {gf} | {pk} | {ref_ms(name) if t == 1 else ''} | "
                 f"{statistics.median(r['create_ms'] for r in ts):.0f} | {fmt(med(os_, 'create_ms'))} | "
                 f"{max(r['peak_rss_mb'] for r in ts):.0f} | {fmt(med(os_, 'peak_rss_mb'))} |")
if not rows:
    lines.append("| (none of the four in this run) |" + " |" * 14)
if zoo:
    tlist = sorted({t for _, t in zoo})
    lines += ["", "## Model zoo (`tools/zoo`, models written by `make_zoo.py`)", "",
              "Both sides get the same inputs: Tessera the `.pb` files `ort-case` wrote (`tessera bench CASE`),",
              "ONNX Runtime the same seed, `--dim` and `--fill` from the model's json. GFLOP is blank where the",
              "model's json gives none. Ratio is Tessera's median over ORT's; % peak is Tessera's GFLOP/s at",
              "its median over the FMA peak of this run.", ""]
    head = ["model", "GFLOP"]
    for t in tlist:
        th = f"{t} thr"
        head += [f"Tessera ms {th}", f"ORT ms {th}", f"ratio {th}", f"% peak {th}"]
    head += ["reference ms (1 thr)", "Tessera create ms", "ORT create ms", "Tessera peak RSS MB", "ORT peak RSS MB"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in sorted({n for n, _ in zoo}):
        gfl = f"{flops[name] / 1e9:.3f}" if name in flops else ""
        cells, ts_all, os_all = [name, gfl], [], []
        for t in tlist:
            who = zoo.get((name, t), {})
            ts, os_ = who.get("tessera", []), who.get("ort", [])
            ts_all += ts
            os_all += os_
            tm, om = med(ts, "median_ms"), med(os_, "median_ms")
            pk = (f"{100 * flops[name] / (tm * 1e6) / peaks[t]:.0f}%"
                  if tm and name in flops and peaks.get(t) else "-")
            cells += [fmt(tm, ".3f"), fmt(om, ".3f"), f"{tm / om:.3f}" if tm and om else "-", pk]
        rss_t = max((r["peak_rss_mb"] for r in ts_all), default=None)
        cells += [ref_ms(name), fmt(med(ts_all, "create_ms")), fmt(med(os_all, "create_ms")), fmt(rss_t),
                  fmt(med(os_all, "peak_rss_mb"))]
        lines.append("| " + " | ".join(cells) + " |")
ocl = [json.loads(l) for l in open(ocl_results) if l.strip().startswith("{")]
if ocl:
    import re
    lines += ["", "## OpenCL provider (`-p opencl,reference`, 1 thread, on this machine's OpenCL device)", "",
              "Kernel time comes from OpenCL events and copy time is wall-clock, both from the provider's "
              "`profile=1` report, per run averaged over the warm-up run and the timed runs (the first run "
              "also uploads the weights, which then stay on the device).", "",
              "| model | median ms | min ms | kernels ms/run | host->device ms/run | host->device MiB/run | device->host ms/run |",
              "|---|---|---|---|---|---|---|"]
    for rec in sorted(ocl, key=lambda r: r["name"]):
        text = open(rec["log"]).read() if os.path.exists(rec["log"]) else ""
        m = re.search(r"kernels ([0-9.]+) ms; host->device ([0-9.]+) ms \(([0-9.]+) MiB\); device->host ([0-9.]+) ms", text)
        n = rec["runs"] + 1
        if m:
            k, hd, mib, dh = (float(x) / n for x in m.groups())
            lines.append(f"| {rec['name']} | {rec['median_ms']:.3f} | {rec['min_ms']:.3f} | {k:.3f} | {hd:.3f} | {mib:.2f} | {dh:.3f} |")
        else:
            lines.append(f"| {rec['name']} | {rec['median_ms']:.3f} | {rec['min_ms']:.3f} | - | - | - | - |")
# What is written by hand after the marker (other measurements, such as
# the Python call overhead) survives regeneration.
MARK = "<!-- written by hand below this line: kept when the file is regenerated -->"
kept = ""
if os.path.exists(out):
    old = open(out).read()
    if MARK in old:
        kept = "\n" + old[old.index(MARK):]
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n" + kept)
print("\n".join(lines))
PY
