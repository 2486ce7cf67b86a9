#!/usr/bin/env bash
# Runs one libFuzzer target (tests/fuzz/fuzz_TARGET.c) for SECONDS, or each
# in turn with TARGET `all`. Builds build-fuzz with clang and
# -DTESSERA_FUZZ=ON (ASan + UBSan + libFuzzer coverage) when needed.
#
# usage: tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   TARGET: model | tensor | onnx_text | session | all
#
# Seeds: the models and .pb files under tests/data and, when present, the
# conformance cases of ../shared/onnx-tests (else the generated onnx 1.12
# suite in build/onnx112-suite); the function texts of partitioner/functions
# for onnx_text. The growing corpus stays in build-fuzz/corpus/TARGET, and a
# crashing input is written to build-fuzz/crashes/TARGET/ (exit status 1).
# Limits: 2 GiB RSS, 512 MiB per allocation, 10 s per input — exceeding one
# is a finding, like a crash. With FUZZ_SEED set, libFuzzer's -seed is fixed,
# and with FUZZ_RUNS it stops after that many inputs (CI sets both, so its
# short runs are repeatable); SECONDS still bounds the run.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-}
seconds=${2:-}
shift 2 2>/dev/null || true
case "$target" in model | tensor | onnx_text | session | all) ;; *)
  sed -n '2,18p' "$0" >&2
  exit 2 ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a number" >&2; exit 2; }
build=${FUZZ_BUILD:-$here/build-fuzz}
if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is needed (apt-get install clang)" >&2
  exit 1
fi
CC=clang cmake -S "$here" -B "$build" -DTESSERA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$build" -j"$(nproc)" --target fuzz_model fuzz_tensor fuzz_onnx_text fuzz_session >/dev/null || exit 1

suite=$here/../shared/onnx-tests
[ -d "$suite" ] || suite=$here/build/onnx112-suite

# seed DIR PATTERN...: small files matching the patterns, copied into DIR
seed() {
  local dir=$1
  shift
  mkdir -p "$dir"
  find "$@" -maxdepth 0 -type f -size -256k 2>/dev/null | head -4000 | while read -r f; do
    cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-16)" 2>/dev/null
  done
}

run_one() {
  local t=$1 corpus=$build/corpus/$1 seeds=$build/seeds/$1 crashes=$build/crashes/$1
  shift
  mkdir -p "$corpus" "$crashes"
  if [ ! -d "$seeds" ]; then
    case $t in
      model | session)
        seed "$seeds" "$here"/tests/data/*.onnx "$here"/tests/data/loader/*.onnx "$suite"/*/*/model.onnx ;;
      tensor)
        seed "$seeds" "$suite"/node/*/test_data_set_0/*.pb ;;
      onnx_text)
        seed "$seeds" "$here"/partitioner/functions/* ;;
    esac
  fi
  local extra=()
  [ -n "${FUZZ_SEED:-}" ] && extra+=(-seed="$FUZZ_SEED")
  [ -n "${FUZZ_RUNS:-}" ] && extra+=(-runs="$FUZZ_RUNS")
  echo "fuzz_$t: ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$build/bin/fuzz_$t" "$corpus" "$seeds" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -timeout=10 -max_len=262144 -artifact_prefix="$crashes/" -print_final_stats=1 \
    ${extra[@]+"${extra[@]}"} "$@" 2>"$build/fuzz_$t.log"
  local rc=$?
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/fuzz_$t.log" | sed 's/^/  /'
  if [ $rc -ne 0 ]; then
    echo "fuzz_$t: FAILED (exit $rc); see $build/fuzz_$t.log and $crashes/" >&2
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$build/fuzz_$t.log" | head -5 >&2
    return 1
  fi
}

status=0
if [ "$target" = all ]; then
  for t in model tensor onnx_text session; do run_one $t "$@" || status=1; done
else
  run_one "$target" "$@" || status=1
fi
exit $status
