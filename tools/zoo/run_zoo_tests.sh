#!/usr/bin/env bash
# The zoo test: every model of tools/zoo (small size) on every provider set,
# checked against ONNX Runtime's outputs.
#
# usage: tools/zoo/run_zoo_tests.sh TESSERA_BIN OUTDIR [NAME...]
#
# 1. make_zoo.py --size small writes OUTDIR/models/NAME.onnx and NAME.json
#    (dims, fill, rtol, atol).
# 2. Each model becomes a test case OUTDIR/cases/NAME: inputs and expected
#    outputs from ../shared/bench/ort-case (ONNX Runtime, with the json's
#    --dim/--fill). When ort-case cannot run (no ../shared/bench, or ONNX
#    Runtime cannot be set up, e.g. without network), the case's inputs come
#    from the same recipe and its expected outputs from `tessera run -p
#    reference`, and a note says so: the other provider sets are then checked
#    against the reference provider.
# 3. `tessera test -j` runs every case with each provider set: -p reference,
#    -p onednn,reference, -p opencl,reference, the default (no -p) and -p auto,
#    with the model's rtol/atol. A set whose plugin `tessera providers` does
#    not list is skipped, with a note.
# 4. A table model x provider set (PASS/FAIL/SKIP); exit 1 on any FAIL.
#
# Exit 77 when /usr/bin/python3 lacks onnx or numpy (ctest: skipped).
# Environment: TESSERA_BENCH_DIR (default: ../shared/bench beside the repo),
# ZOO_JOBS (tessera test -j; default: number of CPUs).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 TESSERA_BIN OUTDIR [NAME...]" >&2
  exit 2
fi
tessera=$1
out=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${TESSERA_BENCH_DIR:-$root/../shared/bench}
py=/usr/bin/python3
jobs=${ZOO_JOBS:-$(nproc 2>/dev/null || echo 2)}
sets=("reference" "onednn,reference" "opencl,reference" "" "auto")
set_label() { [ -n "$1" ] && echo "$1" || echo "default"; }

[ -x "$tessera" ] || { echo "run_zoo_tests.sh: no tessera at $tessera" >&2; exit 2; }
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "run_zoo_tests.sh: $py has no onnx/numpy (apt-get install python3-onnx): skipping"
  exit 77
fi

# --- per-model extra checks --------------------------------------------------
# extra_checks NAME SET CASE_DIR: runs after a case PASSes on a provider set
# (SET is the -p value, "" for the default). Prints a one-line reason and
# returns non-zero to turn the PASS into a FAIL.
# Where the oneDNN provider takes part: one profiled run must show no oneDNN
# reference implementation among the primitives its pieces ran (the
# provider's piece_describe, "impl" in the profile), and no piece it claimed
# may have failed to compile (it would have run elsewhere, silently slower).
# oneDNN 2.6's "ref" RNN is the one exception: its matrix products are JIT
# sgemm calls and its gate math JIT kernels (docs/onednn.md, "Recurrent ops").
extra_checks() {
  local name=$1 set=$2 case_dir=$3
  case $set in reference|opencl,reference) return 0 ;; esac
  local args=() prof log
  [ -n "$set" ] && args=(-p "$set")
  prof=$(mktemp) log=$(mktemp)
  if ! "$tessera" bench "$case_dir" "${args[@]}" --runs 1 --warmup 0 --json --profile "$prof" >/dev/null 2>"$log"; then
    echo "profiled run failed: $(tail -n 1 "$log")"
    rm -f "$prof" "$log"
    return 1
  fi
  local bad
  bad=$("$py" - "$prof" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
bad = set()
for e in events:
    a = e.get("args", {})
    if a.get("provider") != "onednn":
        continue
    for impl in filter(None, a.get("impl", "").split(";")):
        kind, _, name = impl.partition(" ")
        if (name.startswith("ref") or ":ref" in name or "_ref" in name) and kind != "rnn":
            bad.add(impl)
print("; ".join(sorted(bad)))
PY
)
  local failed_compile
  failed_compile=$(grep -m1 "onednn: piece .* failed to compile" "$log" || true)
  rm -f "$prof" "$log"
  if [ -n "$bad" ]; then echo "onednn ran a reference implementation: $bad"; return 1; fi
  if [ -n "$failed_compile" ]; then echo "$failed_compile"; return 1; fi
  return 0
}

# --- 1. models ---------------------------------------------------------------
rm -rf "$out/models" "$out/results" && mkdir -p "$out/models" "$out/cases" "$out/results" || exit 1
if ! "$py" "$root/tools/zoo/make_zoo.py" --out "$out/models" --size small "$@" >"$out/make_zoo.log" 2>&1; then
  echo "run_zoo_tests.sh: make_zoo.py failed:" >&2
  cat "$out/make_zoo.log" >&2
  exit 1
fi
names=()
for f in "$out"/models/*.onnx; do
  [ -e "$f" ] || continue
  names+=("$(basename "$f" .onnx)")
done
if [ ${#names[@]} -eq 0 ]; then
  echo "run_zoo_tests.sh: the zoo has no models" >&2
  exit 1
fi

# meta NAME FIELD: from NAME.json, "args" (--dim/--fill words, one per line),
# "rtol" or "atol" (defaults 1e-3 and 1e-5, tessera test's own).
meta() {
  "$py" - "$out/models/$1.json" "$2" <<'PY'
import json, sys
path, field = sys.argv[1:3]
try:
    m = json.load(open(path))
except (OSError, ValueError):
    m = {}
if field == "args":
    for k, v in sorted(m.get("dims", {}).items()):
        print("--dim"); print("%s=%d" % (k, v))
    for k, v in sorted(m.get("fill", {}).items()):
        print("--fill"); print("%s=%r" % (k, v))
else:
    print(m.get(field, 1e-3 if field == "rtol" else 1e-5))
PY
}

# --- 2. cases -----------------------------------------------------------------
# reference_case NAME ARGS...: the fallback. Inputs by ort-case's recipe
# (benchlib.make_inputs when ../shared/bench is there, else a copy of its
# rules), expected outputs from `tessera run -p reference`.
reference_case() {
  local name=$1
  shift
  local dir=$out/cases/$name
  rm -rf "$dir" && mkdir -p "$dir/test_data_set_0" || return 1
  "$py" - "$out/models/$name.onnx" "$dir" "$bench" "$@" <<'PY' || return 1
import os, shutil, sys
sys.dont_write_bytecode = True
import numpy as np
import onnx
from onnx import numpy_helper
src, d, bench, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
dims = {k: int(v) for k, v in (args[i + 1].split("=", 1) for i in range(0, len(args), 2) if args[i] == "--dim")}
fills = {k: float(v) for k, v in (args[i + 1].split("=", 1) for i in range(0, len(args), 2) if args[i] == "--fill")}
model = onnx.load(src, load_external_data=False)
shutil.copy(src, os.path.join(d, "model.onnx"))
for loc in {e.value for t in model.graph.initializer if t.data_location == 1 for e in t.external_data if e.key == "location"}:
    shutil.copy(os.path.join(os.path.dirname(src), loc), os.path.join(d, loc))  # external data, as ort-case copies it
try:
    sys.path.insert(0, bench)
    import benchlib
    inputs = benchlib.make_inputs(model, dims, 0, fills)
except ImportError:  # no ../shared/bench: the same rules, minus Gather bounds (indices 0)
    rng, inputs = np.random.default_rng(0), []
    init = {t.name for t in model.graph.initializer}
    gather = {n.input[1] for n in model.graph.node if n.op_type.startswith(("Gather", "Scatter")) and len(n.input) > 1}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        tt = vi.type.tensor_type
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type) if hasattr(onnx.helper, "tensor_dtype_to_np_dtype") \
            else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type]
        shape = [x.dim_value if x.dim_value > 0 else dims.get(x.dim_param, 1) for x in tt.shape.dim]
        if vi.name in fills:
            a = np.full(shape, fills[vi.name], dt)
        elif dt.kind == "f":
            a = (rng.random(shape) * 2 - 1).astype(dt)
        elif dt.kind == "b":
            a = np.ones(shape, dt) if "mask" in vi.name.lower() else rng.integers(0, 2, shape).astype(dt)
        elif vi.name in gather:
            a = np.zeros(shape, dt)
        else:
            a = np.ones(shape, dt) if "mask" in vi.name.lower() else rng.integers(1, 5, shape).astype(dt)
        inputs.append((vi.name, np.array(a, dtype=dt)))
for k, (name, a) in enumerate(inputs):
    with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())
PY
  local tmp=$dir/reference_outputs
  if ! "$tessera" run "$dir" -p reference "$@" -o "$tmp" >"$dir/reference_run.log" 2>&1; then
    echo "  $name: tessera run -p reference failed:" >&2
    sed 's/^/    /' "$dir/reference_run.log" >&2
    return 1
  fi
  # NAME.pb (as `run -o` names them) -> output_K.pb in graph output order
  "$py" - "$dir" "$tmp" <<'PY'
import os, shutil, sys
import onnx
d, tmp = sys.argv[1:3]
model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
for k, o in enumerate(model.graph.output):
    f = (o.name or "unnamed").replace("/", "_").replace("\\", "_")
    if f.startswith("."):
        f = "_" + f[1:]
    shutil.move(os.path.join(tmp, f + ".pb"), os.path.join(d, "test_data_set_0", "output_%d.pb" % k))
shutil.rmtree(tmp)
PY
}

use_ort=1
if [ ! -x "$bench/ort-case" ]; then
  echo "note: no $bench/ort-case: expected outputs come from -p reference (provider sets are checked against it)"
  use_ort=0
fi
declare -A source
broken=()
for name in "${names[@]}"; do
  mapfile -t args < <(meta "$name" args)
  dir=$out/cases/$name
  # An ORT case is kept while the model's files and arguments are the same;
  # a reference case is remade every time (the reference provider changes).
  stamp="$(cat "$out/models/$name".* | cksum) ${args[*]}"
  if [ "$use_ort" = 1 ] && [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] &&
    [ "$(cat "$dir/.source")" = ort ]; then
    source[$name]=ort
    continue
  fi
  rm -rf "$dir"
  if [ "$use_ort" = 1 ]; then
    if "$bench/ort-case" "$out/models/$name.onnx" "$dir" "${args[@]}" >"$out/ort-case.$name.log" 2>&1; then
      source[$name]=ort
    else
      echo "note: ort-case failed on $name; its expected outputs come from -p reference instead:"
      tail -n 3 "$out/ort-case.$name.log" | sed 's/^/    /'
      rm -rf "$dir"
    fi
  fi
  if [ -z "${source[$name]:-}" ]; then
    if reference_case "$name" "${args[@]}"; then
      source[$name]=reference
    else
      broken+=("$name")
      source[$name]=none
      continue
    fi
  fi
  echo "$stamp" >"$dir/.stamp"
  echo "${source[$name]}" >"$dir/.source"
done

# --- 3. provider sets --------------------------------------------------------
"$tessera" providers >"$out/providers.txt" 2>&1
have_plugin() { grep -q "^$1 " "$out/providers.txt"; }
declare -A result reason
for set in "${sets[@]}"; do
  label=$(set_label "$set")
  missing=""
  for p in ${set//,/ }; do
    [ "$p" = auto ] || have_plugin "$p" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "note: skipping -p $label: no plugin for$missing (see tessera providers)"
    for name in "${names[@]}"; do result[$name,$label]=SKIP; done
    continue
  fi
  # one `tessera test -j` per tolerance pair, so cases run in parallel
  declare -A groups=()
  for name in "${names[@]}"; do
    [ "${source[$name]}" = none ] && continue
    key="$(meta "$name" rtol) $(meta "$name" atol)"
    groups[$key]="${groups[$key]:-} $out/cases/$name"
  done
  for key in "${!groups[@]}"; do
    read -r rtol atol <<<"$key"
    popt=()
    [ -n "$set" ] && popt=(-p "$set")
    # shellcheck disable=SC2086
    "$tessera" test -j "$jobs" --rtol "$rtol" --atol "$atol" "${popt[@]}" ${groups[$key]} \
      >>"$out/results/${label//,/_}.txt" 2>&1
  done
  unset groups
  for name in "${names[@]}"; do
    if [ "${source[$name]}" = none ]; then
      result[$name,$label]=FAIL
      reason[$name,$label]="no test case (see above)"
      continue
    fi
    line=$(grep -E "^(PASS|FAIL|SKIP) $name(:|$)" "$out/results/${label//,/_}.txt" | head -n 1)
    case $line in
      PASS*)
        if why=$(extra_checks "$name" "$set" "$out/cases/$name"); then
          result[$name,$label]=PASS
        else
          result[$name,$label]=FAIL
          reason[$name,$label]="extra check: $why"
        fi ;;
      SKIP*) result[$name,$label]=SKIP; reason[$name,$label]=${line#SKIP "$name"} ;;
      FAIL*) result[$name,$label]=FAIL; reason[$name,$label]=${line#FAIL "$name": } ;;
      *) result[$name,$label]=FAIL; reason[$name,$label]="no result line from tessera test" ;;
    esac
  done
done

# --- 4. table ----------------------------------------------------------------
failed=0
printf '\n%-18s %-10s' model expected
for set in "${sets[@]}"; do printf ' %-17s' "$(set_label "$set")"; done
printf '\n'
for name in "${names[@]}"; do
  printf '%-18s %-10s' "$name" "${source[$name]/none/-}"
  for set in "${sets[@]}"; do
    r=${result[$name,$(set_label "$set")]}
    [ "$r" = FAIL ] && failed=$((failed + 1))
    printf ' %-17s' "$r"
  done
  printf '\n'
done
for name in "${names[@]}"; do
  for set in "${sets[@]}"; do
    label=$(set_label "$set")
    [ -n "${reason[$name,$label]:-}" ] && echo "${result[$name,$label]} $name -p $label: ${reason[$name,$label]}"
  done
done
echo "(expected: ort = ONNX Runtime's outputs, reference = tessera -p reference's; logs in $out/results)"
if [ "$failed" -ne 0 ]; then
  echo "$failed of $((${#names[@]} * ${#sets[@]})) model x provider-set runs failed"
  exit 1
fi
echo "all ${#names[@]} models passed on every provider set that is present"
