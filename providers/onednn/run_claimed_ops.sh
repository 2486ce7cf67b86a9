#!/bin/sh
# The onednn_conformance ctest: every ONNX backend case of an op the oneDNN
# provider claims must pass through `-p onednn,reference` whenever it passes
# through `-p reference` alone (a case the reference fails is not ours).
# usage: run_claimed_ops.sh TESSERA SUITE_DIR [PROVIDER_SO]
set -u
tessera=$1 suite=$2 provider=${3:-onednn}
ops='conv gemm matmul maxpool averagepool globalaveragepool globalmaxpool
batchnorm relu leakyrelu elu sigmoid tanh exp log sqrt abs neg clip hardsigmoid hardswish gelu
add sub mul div max min softmax logsoftmax layer_norm reshape flatten identity transpose erf concat pow reduce'
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
# shellcheck disable=SC2086
"$tessera" test -p reference $cases >"$work/ref.txt" 2>/dev/null
# shellcheck disable=SC2086
"$tessera" test -p "$provider",reference $cases >"$work/odn.txt" 2>/dev/null
grep '^PASS ' "$work/ref.txt" | awk '{print $2}' | sort >"$work/ref.pass"
grep '^PASS ' "$work/odn.txt" | awk '{print $2}' | sort >"$work/odn.pass"
lost=$(comm -23 "$work/ref.pass" "$work/odn.pass")
echo "reference: $(wc -l <"$work/ref.pass") passed; onednn,reference: $(wc -l <"$work/odn.pass") passed"
if [ -n "$lost" ]; then
  echo "passing with reference but not with $provider,reference:"
  for c in $lost; do grep "^[A-Z]* $c[: ]" "$work/odn.txt" || echo "  $c"; done
  exit 1
fi
exit 0
