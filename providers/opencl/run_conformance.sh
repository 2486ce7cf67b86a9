#!/bin/sh
# Runs the conformance cases of the ops the OpenCL provider claims with
# `-p opencl,reference`. Exit 77 (ctest SKIP) only when no OpenCL platform
# or device exists at all.
# usage: run_conformance.sh TESSERA PLUGIN NODE_CASES_DIR CASE_LIST
set -u
tessera=$1 plugin=$2 cases=$3 list=$4

if ! "$tessera" providers 2>/dev/null | awk '/^opencl /{o=1; next} /^[^ ]/{o=0} o && /device 0:/{f=1} END{exit !f}'; then
    echo "SKIP: no OpenCL platform or device found (on Debian: apt-get install pocl-opencl-icd)"
    exit 77
fi

set --
while IFS= read -r name; do
    case $name in ''|'#'*) continue ;; esac
    [ -d "$cases/$name" ] && set -- "$@" "$cases/$name"
done < "$list"
if [ $# -eq 0 ]; then
    echo "no listed case found under $cases"
    exit 1
fi
# A whole model run several times in one session (weights stay on the
# device between runs) must agree with the reference provider.
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
if model=$(/usr/bin/python3 "$root/tools/make_demo_model.py" --out "$work" 2>/dev/null); then
  "$tessera" bench "$model" -p "$plugin,reference" --runs 3 --warmup 1 >/dev/null || {
    echo "FAIL: bench of the demo model with $plugin,reference"; exit 1; }
  "$tessera" compare "$model" -p reference -p "$plugin,reference" --per-node || {
    echo "FAIL: the demo model differs between reference and $plugin,reference"; exit 1; }
fi
"$tessera" test -j 2 -p "$plugin,reference" "$@"
