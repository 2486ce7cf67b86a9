#!/bin/sh
# Tessera (onednn provider) against ONNX Runtime on the benchmark models of
# ../shared/bench, side by side: for each round, model and thread count the
# two run back to back (which goes first alternates by round), so both see
# the same machine load. Writes the table, with the ratio Tessera/ORT of the
# median latencies, to docs/benchmarks.md.
#
# usage: tools/bench_vs_ort.sh [--rounds N] [--runs N] [--warmup N] [--threads 1,2]
#                              [--models DIR] [--providers LIST] [--out FILE]
#                              [--ocl-runs N] [MODEL...]
# When an OpenCL device is present, a second table gives -p opencl,reference
# latency with kernel and copy time apart (--ocl-runs timed runs each).
# MODEL is any of resnet50 mobilenetv2 bert_base mlp (default: all four).
# Needs build/bin/tessera (or $TESSERA) built with the onednn provider.
set -eu
invocation="tools/bench_vs_ort.sh $*"
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${TESSERA_BENCH_DIR:-$root/../shared/bench}
tessera=${TESSERA:-$root/build/bin/tessera}
models_dir=${TESSERA_BENCH_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera-bench-models}
rounds=3 runs=20 warmup=5 threads=1,2 providers=onednn,reference out=$root/docs/benchmarks.md
ocl_runs=3 # OpenCL on a CPU driver is slow: fewer runs for its rows
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
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "bench_vs_ort.sh: unknown option $1" >&2; exit 2 ;;
    *) names="$names $1"; shift ;;
  esac
done
[ -n "$names" ] || names=" resnet50 mobilenetv2 bert_base mlp"
[ -x "$tessera" ] || { echo "bench_vs_ort.sh: no tessera at $tessera (set TESSERA=...)" >&2; exit 1; }
[ -x "$bench/ort-bench" ] || { echo "bench_vs_ort.sh: no $bench/ort-bench" >&2; exit 1; }

mkdir -p "$models_dir"
missing=""
for m in $names; do [ -f "$models_dir/$m.onnx" ] || missing="$missing $m"; done
# shellcheck disable=SC2086
[ -z "$missing" ] || "$bench/make_models.py" --out "$models_dir" $missing

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
    for t in $(echo "$threads" | tr ',' ' '); do
      model=$models_dir/$m.onnx
      run_tessera() {
        "$tessera" bench "$model" -p "$providers" --threads "$t" --runs "$runs" --warmup "$warmup" --json |
          sed "s/^{/{\"who\": \"tessera\", \"name\": \"$m\", \"round\": $r, /" >>"$results"
      }
      run_ort() {
        "$bench/ort-bench" --json --threads "$t" --runs "$runs" --warmup "$warmup" "$model" |
          sed "s/^{/{\"who\": \"ort\", \"name\": \"$m\", \"round\": $r, /" >>"$results"
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
    "$tessera" bench "$models_dir/$m.onnx" -p opencl,reference --threads 1 --runs "$ocl_runs" --warmup 1 \
      --json --provider-option opencl:profile=1 2>"$log" |
      sed "s|^{|{\"name\": \"$m\", \"log\": \"$log\", |" >>"$ocl_results" || true
    echo "opencl: $m done" >&2
  done
fi

cmdline="${TESSERA:+TESSERA=$TESSERA }$invocation  # rounds $rounds, runs $runs, warm-up $warmup, threads $threads, -p $providers, models:$names"
/usr/bin/python3 - "$results" "$out" "$cmdline" "$models_dir" "$ocl_results" "$ocl_runs" <<'PY'
import json, os, statistics, subprocess, sys, time
results, out, cmdline, models_dir, ocl_results, runs = sys.argv[1:7]
rows, peaks = {}, {}
for line in open(results):
    line = line.strip()
    if not line.startswith("{"):
        continue
    rec = json.loads(line)
    if rec["who"] == "peak":
        peaks[rec["threads"]] = max(peaks.get(rec["threads"], 0.0), rec["gflops"])
        continue
    rows.setdefault((rec["name"], rec["threads"]), {}).setdefault(rec["who"], []).append(rec)
try:
    flops = {k: v["flops"] for k, v in json.load(open(os.path.join(models_dir, "flops.json"))).items()}
except (OSError, ValueError, KeyError):
    flops = {}
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
    "| model | threads | Tessera median ms | ORT median ms | ratio T/ORT | paired ratios: median [min-max], rounds <= 0.9 | Tessera min ms | ORT min ms | Tessera GFLOP/s | % peak | Tessera create ms | Tessera peak RSS MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
]
for (name, t), who in sorted(rows.items()):
    ts, os_ = who.get("tessera", []), who.get("ort", [])
    if not ts or not os_:
        lines.append(f"| {name} | {t} | {'-' if not ts else ''} | {'-' if not os_ else ''} | missing | | | | | | | |")
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
                 f"{min(r['min_ms'] for r in os_):.3f} | {gf} | {pk} | {statistics.median(r['create_ms'] for r in ts):.0f} | "
                 f"{max(r['peak_rss_mb'] for r in ts):.0f} |")
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
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
