#!/bin/sh
# The onednn_conformance ctest: every ONNX backend case of an op the oneDNN
# provider claims must pass through `-p onednn,reference` whenever it passes
# through `-p reference` alone (a case the reference fails is not ours).
# With python3, onnx and numpy it also runs (see the scripts' headers)
# const_cases.py's variants of the Resize and ReduceLogSum* cases, whose
# scales/sizes/axes the suite feeds as inputs (so nothing is claimed), and
# extra_cases.py's, extra_cases_lrn.py's and dynamic_cases.py's (symbolic
# dims, data sets of several sizes in one session) cases, each of which
# onednn must claim whole, and qdq_cases.py's QDQ models (int8 fusion), which
# must be claimed whole and pass within one output quantization step
# (--rtol 0 --atol QDQ_ATOL: the int8 path and the float graph may round a
# value that lies within float error of a boundary to neighbouring steps).
# usage: run_claimed_ops.sh TESSERA SUITE_DIR [PROVIDER_SO]
set -u
tessera=$1 suite=$2 provider=${3:-onednn}
here=$(cd "$(dirname "$0")" && pwd)
ops='conv gemm matmul maxpool averagepool globalaveragepool globalmaxpool
batchnorm relu leakyrelu elu sigmoid tanh exp log sqrt abs neg clip hardsigmoid hardswish gelu
add sub mul div max min softmax logsoftmax layer_norm reshape flatten identity transpose erf concat pow reduce
lrn resize qlinearmatmul qlinearconv quantizelinear dequantizelinear'
cases=""
for op in $ops; do
  for d in "$suite"/node/test_"$op"*; do
    [ -d "$d" ] || continue
    case "$d" in *expanded*) continue ;; esac
    cases="$cases $d"
  done
done
[ -n "$cases" ] || { echo "no cases under $suite/node"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
py=$(command -v /usr/bin/python3 || command -v python3)
extra=""
if [ -n "$py" ] && "$py" -c 'import onnx, numpy' 2>/dev/null; then
  extra=$("$py" "$here/extra_cases.py" "$work/extra") || { echo "extra_cases.py failed"; exit 1; }
  extra_lrn=$("$py" "$here/extra_cases_lrn.py" "$work/extra_lrn") || { echo "extra_cases_lrn.py failed"; exit 1; }
  extra_dyn=$("$py" "$here/dynamic_cases.py" "$work/extra_dyn") || { echo "dynamic_cases.py failed"; exit 1; }
  extra="$extra $extra_lrn $extra_dyn"
  qdq=$("$py" "$here/qdq_cases.py" "$work/qdq") || { echo "qdq_cases.py failed"; exit 1; }
  # shellcheck disable=SC2086
  const=$("$py" "$here/const_cases.py" --f32 "$work/const" \
          $(for d in "$suite"/node/test_resize_* "$suite"/node/test_reduce_log_sum*; do
              case "$d" in *expanded*) ;; *) [ -d "$d" ] && echo "$d" ;; esac; done)) ||
    { echo "const_cases.py failed"; exit 1; }
  cases="$cases $extra $const"
else
  echo "no python3 with onnx and numpy: constant-operand and extra cases skipped"
fi
# shellcheck disable=SC2086
"$tessera" test -p reference $cases >"$work/ref.txt" 2>/dev/null
# shellcheck disable=SC2086
"$tessera" test -p "$provider",reference $cases >"$work/odn.txt" 2>/dev/null
grep '^PASS ' "$work/ref.txt" | awk '{print $2}' | sort >"$work/ref.pass"
grep '^PASS ' "$work/odn.txt" | awk '{print $2}' | sort >"$work/odn.pass"
lost=$(comm -23 "$work/ref.pass" "$work/odn.pass")
echo "reference: $(wc -l <"$work/ref.pass") passed; onednn,reference: $(wc -l <"$work/odn.pass") passed"
qdq_fail=""
if [ -n "${qdq:-}" ]; then
  qdq_atol=$("$py" -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import qdq_cases; print(qdq_cases.ATOL)' "$here")
  # shellcheck disable=SC2086
  "$tessera" test -p "$provider",reference --rtol 0 --atol "$qdq_atol" $qdq >"$work/qdq.txt" 2>/dev/null
  qdq_fail=$(grep -v '^PASS ' "$work/qdq.txt" | grep -v ' passed, ' || true)
  echo "qdq cases (atol $qdq_atol): $(grep -c '^PASS ' "$work/qdq.txt") of $(echo $qdq | wc -w) passed"
fi
# the extra cases exist to exercise the provider: each must be claimed whole
unclaimed=""
for c in $extra ${qdq:-}; do
  "$tessera" partition "$c/model.onnx" -p "$provider",reference 2>/dev/null | grep -q '^total:.* reference 0, core 0' ||
    unclaimed="$unclaimed $(basename "$c")"
done
[ -z "$unclaimed" ] || echo "extra cases not claimed whole by $provider:$unclaimed"
[ -z "$qdq_fail" ] || { echo "qdq cases failing with $provider,reference:"; echo "$qdq_fail"; }
if [ -n "$lost" ] || [ -n "$unclaimed" ] || [ -n "$qdq_fail" ]; then
  [ -z "$lost" ] || echo "passing with reference but not with $provider,reference:"
  for c in $lost; do grep "^[A-Z]* $c[: ]" "$work/odn.txt" || echo "  $c"; done
  exit 1
fi
exit 0
