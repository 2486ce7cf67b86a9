#!/bin/sh
# Runs the conformance cases of the ops the OpenCL provider claims with
# `-p opencl,reference`. Exit 77 (ctest SKIP) only when no OpenCL platform
# or device exists at all.
# usage: run_conformance.sh TESSERA PLUGIN NODE_CASES_DIR CASE_LIST
set -u
tessera=$1 plugin=$2 cases=$3 list=$4

# the plugin's own folder first: it need not be on the search path
if ! TESSERA_PROVIDER_PATH=$(dirname "$plugin") "$tessera" providers 2>/dev/null | awk '/^opencl /{o=1; next} /^[^ ]/{o=0} o && /device 0:/{f=1} END{exit !f}'; then
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
# Views: Reshape/Flatten/Squeeze/Unsqueeze/Identity inside a piece share
# their input's buffer. The counts below follow from the graph in
# make_cases.py: six views inside pieces, two at a piece's edge (the
# int64 Identity that is a graph output, the Reshape read by two nodes), and
# no kernel for any of them.
if /usr/bin/python3 "$root/providers/opencl/make_cases.py" "$work/views" 2>/dev/null; then
  "$tessera" test --policy first -p "$plugin,reference" "$work/views" || {
    echo "FAIL: view and bias cases with $plugin,reference"; exit 1; }
  # every activation fused as a GEMM epilogue: one opencl piece per MatMul,
  # nothing left to reference (a program that fails to compile falls back)
  part=$("$tessera" partition "$work/views/opencl_matmul_epilogues/model.onnx" --policy first -p "$plugin,reference")
  case $part in *"opencl 14, reference 0"*) ;; *) echo "FAIL: epilogues not fused on opencl:"; echo "$part"; exit 1 ;; esac
  c=$work/views/opencl_views d=$c/test_data_set_0
  log=$("$tessera" run "$c/model.onnx" --policy first -p "$plugin,reference" --provider-option opencl:profile=1 \
        -i x="$d/input_0.pb" -i z="$d/input_1.pb" -i w="$d/input_2.pb" -i shape="$d/input_3.pb" \
        -i ints="$d/input_4.pb" 2>&1 >/dev/null)
  for want in "5 kernel launches, 2 device-side copies, 6 views" \
              "steps led by Reshape: 3 runs, 0 kernels, 1 copies, 2 views" \
              "steps led by Unsqueeze: 1 runs, 0 kernels, 0 copies, 1 views" \
              "steps led by Flatten: 1 runs, 0 kernels, 0 copies, 1 views" \
              "steps led by Squeeze: 1 runs, 0 kernels, 0 copies, 1 views" \
              "steps led by Identity: 2 runs, 0 kernels, 1 copies, 1 views"; do
    case $log in *"$want"*) ;; *) echo "FAIL: view counters: expected '$want' in:"; echo "$log"; exit 1 ;; esac
  done
fi
"$tessera" test -j 2 --policy first -p "$plugin,reference" "$@"
