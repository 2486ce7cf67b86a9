#!/bin/sh
# The onednn_conformance ctest: every ONNX backend case of an op the oneDNN
# provider claims must pass through `-p onednn,reference` whenever it passes
# through `-p reference` alone (a case the reference fails is not ours).
# With python3, onnx and numpy it also runs (see the scripts' headers)
# const_cases.py's variants of the Resize and ReduceLogSum* cases, whose
# scales/sizes/axes the suite feeds as inputs (so nothing is claimed), and
# extra_cases.py's, extra_cases_lrn.py's, extra_cases_pool_rnn.py's, extra_cases_qlinear.py's, dynamic_cases.py's, dynquant_cases.py's (symbolic
# dims, data sets of several sizes in one session) and rnn_cases.py's
# (LSTM/GRU/RNN) cases and the suite's LSTM/GRU/RNN cases with W, R, B as
# initializers (const_cases.py), each of which onednn must claim whole, and qdq_cases.py's QDQ models (int8 fusion), which
# must be claimed whole and pass within one output quantization step
# (--rtol 0 --atol QDQ_ATOL: the int8 path and the float graph may round a
# value that lies within float error of a boundary to neighbouring steps),
# and f16_cases.py's float16 models, which must be claimed whole and pass
# within its RTOL/ATOL (one float16 rounding per piece output), and
# shape_cases.py's Reshapes to shapes computed at run time (onednn must
# claim each Reshape it names; the int64 shape arithmetic is not ours),
# and resize_rt_cases.py's Resizes to sizes computed at run time (onednn
# must claim each Resize it names).
# usage: run_claimed_ops.sh TESSERA SUITE_DIR [PROVIDER_SO]
set -u
tessera=$1 suite=$2 provider=${3:-onednn}
here=$(cd "$(dirname "$0")" && pwd)
ops='conv gemm matmul maxpool averagepool globalaveragepool globalmaxpool
batchnorm relu leakyrelu prelu elu sigmoid tanh exp log sqrt abs neg clip hardsigmoid hardswish gelu
add sub mul div max min softmax logsoftmax layer_norm reshape flatten identity transpose erf concat pow reduce
lrn resize qlinearmatmul qlinearconv quantizelinear dequantizelinear lstm gru rnn simple_rnn
matmulinteger dynamicquantizelinear cast instancenorm pad constant_pad edge_pad reflect_pad wrap_pad
depthtospace spacetodepth'
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
  extra_pool_rnn=$("$py" "$here/extra_cases_pool_rnn.py" "$work/extra_pool_rnn") ||
    { echo "extra_cases_pool_rnn.py failed"; exit 1; }
  extra_qlinear=$("$py" "$here/extra_cases_qlinear.py" "$work/extra_qlinear") ||
    { echo "extra_cases_qlinear.py failed"; exit 1; }
  extra_dyn=$("$py" "$here/dynamic_cases.py" "$work/extra_dyn") || { echo "dynamic_cases.py failed"; exit 1; }
  extra_rnn=$("$py" "$here/rnn_cases.py" "$work/extra_rnn") || { echo "rnn_cases.py failed"; exit 1; }
  extra_layout=$("$py" "$here/layout_cases.py" "$work/extra_layout") || { echo "layout_cases.py failed"; exit 1; }
  extra_dq=$("$py" "$here/dynquant_cases.py" "$work/extra_dq") || { echo "dynquant_cases.py failed"; exit 1; }
  extra_c1d=$("$py" "$here/conv1d_cases.py" "$work/extra_c1d") || { echo "conv1d_cases.py failed"; exit 1; }
  # the suite's LSTM/GRU/RNN cases feed W, R and B as inputs (declined: the
  # weights are converted once); with them as initializers onednn takes them
  rnn_dirs=$(for d in "$suite"/node/test_lstm_* "$suite"/node/test_gru_* "$suite"/node/test_rnn_* \
                      "$suite"/node/test_simple_rnn_*; do [ -d "$d" ] && echo "$d"; done)
  const_rnn=""
  if [ -n "$rnn_dirs" ]; then
    # shellcheck disable=SC2086
    const_rnn=$("$py" "$here/const_cases.py" "$work/const_rnn" $rnn_dirs) || { echo "const_cases.py (rnn) failed"; exit 1; }
  fi
  extra="$extra $extra_lrn $extra_pool_rnn $extra_qlinear $extra_dyn $extra_rnn $extra_layout $extra_dq $extra_c1d $const_rnn"
  qdq=$("$py" "$here/qdq_cases.py" "$work/qdq") || { echo "qdq_cases.py failed"; exit 1; }
  f16=$("$py" "$here/f16_cases.py" "$work/f16") || { echo "f16_cases.py failed"; exit 1; }
  shape=$("$py" "$here/shape_cases.py" "$work/shape") || { echo "shape_cases.py failed"; exit 1; }
  resize_rt=$("$py" "$here/resize_rt_cases.py" "$work/resize_rt") || { echo "resize_rt_cases.py failed"; exit 1; }
  # shellcheck disable=SC2086
  const=$("$py" "$here/const_cases.py" --f32 "$work/const" \
          $(for d in "$suite"/node/test_resize_* "$suite"/node/test_reduce_log_sum* "$suite"/node/test_slice* "$suite"/node/test_*_pad \
                     "$suite"/node/test_*_pad_*; do
              case "$d" in *expanded*) ;; *) [ -d "$d" ] && echo "$d" ;; esac; done)) ||
    { echo "const_cases.py failed"; exit 1; }
  cases="$cases $extra $const $shape $resize_rt"
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
# float16 cases (computed in float32, one rounding per piece output) within
# f16_cases.py's tolerances; f16_rounding, exact in float32, bit for bit
f16_fail=""
if [ -n "${f16:-}" ]; then
  f16_tol=$("$py" -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import f16_cases as f; print("--rtol", f.RTOL, "--atol", f.ATOL)' "$here")
  # shellcheck disable=SC2086
  "$tessera" test -p "$provider",reference $f16_tol $f16 >"$work/f16.txt" 2>/dev/null
  "$tessera" test -p "$provider",reference --rtol 0 --atol 0 "$work/f16/f16_rounding" >>"$work/f16.txt" 2>/dev/null
  f16_want=$(($(echo $f16 | wc -w) + 1))
  f16_got=$(grep -c '^PASS ' "$work/f16.txt")
  echo "float16 cases ($f16_tol; f16_rounding also exactly): $f16_got of $f16_want passed"
  [ "$f16_got" = "$f16_want" ] || f16_fail=$(grep -v '^PASS ' "$work/f16.txt" | grep -v ' passed, '; echo "$f16_got of $f16_want passed")
fi
# the extra cases exist to exercise the provider: each must be claimed whole
unclaimed=""
for c in $extra ${qdq:-} ${f16:-}; do
  "$tessera" partition "$c/model.onnx" -p "$provider",reference 2>/dev/null | grep -q '^total:.* reference 0, core 0' ||
    unclaimed="$unclaimed $(basename "$c")"
done
# shape_cases.py's shape arithmetic stays on the reference provider, but
# every Reshape it names (target shape computed at run time) must be ours
for c in ${shape:-}; do
  "$tessera" partition "$c/model.onnx" -p "$provider",reference --format json 2>/dev/null |
    "$py" -B -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import shape_cases
ours = {n for p in json.load(sys.stdin)["pieces"] if p["provider"] not in ("reference", "core") for n in p["nodes"]}
sys.exit(0 if set(shape_cases.RESHAPES[sys.argv[2]]) <= ours else 1)' "$here" "$(basename "$c")" ||
    unclaimed="$unclaimed $(basename "$c")(Reshape)"
done
# likewise every Resize resize_rt_cases.py names (sizes computed at run time)
for c in ${resize_rt:-}; do
  "$tessera" partition "$c/model.onnx" -p "$provider",reference --format json 2>/dev/null |
    "$py" -B -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import resize_rt_cases
ours = {n for p in json.load(sys.stdin)["pieces"] if p["provider"] not in ("reference", "core") for n in p["nodes"]}
sys.exit(0 if set(resize_rt_cases.RESIZES[sys.argv[2]]) <= ours else 1)' "$here" "$(basename "$c")" ||
    unclaimed="$unclaimed $(basename "$c")(Resize)"
done
[ -z "$unclaimed" ] || echo "extra cases not claimed whole by $provider:$unclaimed"
[ -z "$qdq_fail" ] || { echo "qdq cases failing with $provider,reference:"; echo "$qdq_fail"; }
[ -z "$f16_fail" ] || { echo "float16 cases failing with $provider,reference:"; echo "$f16_fail"; }
if [ -n "$lost" ] || [ -n "$unclaimed" ] || [ -n "$qdq_fail" ] || [ -n "$f16_fail" ]; then
  [ -z "$lost" ] || echo "passing with reference but not with $provider,reference:"
  for c in $lost; do grep "^[A-Z]* $c[: ]" "$work/odn.txt" || echo "  $c"; done
  exit 1
fi
exit 0
