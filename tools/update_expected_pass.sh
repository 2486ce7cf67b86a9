#!/usr/bin/env bash
# Regenerates tests/conformance/expected_pass*.txt from a conformance run:
# every case that PASSes with `tessera test -p reference` goes on the list,
# so the conformance ctest then guards it against regressions.
#
# usage: tools/update_expected_pass.sh [--shared-only | --onnx112-only] [BUILD_DIR]
#        tools/update_expected_pass.sh --from-results RESULTS.tsv [LIST]
#
# The first form runs the suites with BUILD_DIR/bin/tessera (default: build):
# the shared data (../shared/onnx-tests) into expected_pass.txt, and the
# suite python3-onnx 1.12 generates into expected_pass_onnx112.txt.
# The second takes an existing run's results (the conformance ctest leaves
# BUILD_DIR/tests/conformance/conformance-results.tsv) and writes LIST
# (default: tests/conformance/expected_pass.txt).
# Review the diff before committing: a case that leaves the list is a
# regression someone accepted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
conf=$root/tests/conformance
py=/usr/bin/python3
[ -x "$py" ] || py=python3

header() {
  echo "# Cases that pass with \`tessera test -p reference\`."
  echo "# The conformance ctest fails when one of them stops passing."
  echo "# Regenerate with tools/update_expected_pass.sh; one FOLDER/CASE per line."
}

if [ "${1:-}" = --from-results ]; then
  [ $# -ge 2 ] || { echo "usage: $0 --from-results RESULTS.tsv [LIST]" >&2; exit 2; }
  list=${3:-$conf/expected_pass.txt}
  { header; awk -F'\t' '$2 == "PASS" { print $1 }' "$2" | LC_ALL=C sort; } > "$list.tmp"
  mv "$list.tmp" "$list"
  echo "wrote $(grep -vc '^#' "$list") cases to $list"
  exit 0
fi

shared=1 onnx112=1
case "${1:-}" in
  --shared-only) onnx112=0; shift ;;
  --onnx112-only) shared=0; shift ;;
  -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
esac
build=${1:-$root/build}
tessera=$build/bin/tessera
[ -x "$tessera" ] || { echo "$0: $tessera not found; build first" >&2; exit 2; }
work=$build/tests/conformance
mkdir -p "$work"

if [ $shared = 1 ]; then
  suite=$root/../shared/onnx-tests
  if [ -d "$suite" ]; then
    "$py" "$conf/run_conformance.py" --tessera "$tessera" --suite "$suite" --work "$work" --update
  else
    echo "$suite not found: expected_pass.txt left as it is" >&2
  fi
fi
if [ $onnx112 = 1 ]; then
  "$py" "$conf/run_conformance.py" --tessera "$tessera" --work "$work" --onnx112 --update \
    --results "$work/conformance-results-onnx112.tsv"
fi
