#!/usr/bin/env bash
# Generates the onnx 1.12 suite into OUTDIR once (a .generated stamp marks a
# complete one). The ctest fixture `onnx_suite` runs it on machines without
# ../shared/onnx-tests, so provider tests and the conformance test share one
# copy. Exit 77 (ctest SKIP) when python3-onnx is missing.
# usage: tools/ensure_onnx112_suite.sh OUTDIR
set -u
out=$1
[ -e "$out/.generated" ] && exit 0
if ! "$(dirname "$0")/gen_onnx_suite.sh" "$out" >/dev/null; then
  echo "cannot generate the onnx 1.12 suite (is python3-onnx installed?)"
  exit 77
fi
touch "$out/.generated"
