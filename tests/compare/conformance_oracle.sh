#!/bin/sh
# The `conformance_oracle` ctest: on every ONNX backend case with a float
# output that ONNX Runtime 1.30 can load (../shared/onnx-tests, its
# onnxruntime-1.30/*.tsv), the reference provider's float32 result must be
# at least as close to the float64 oracle as ONNX Runtime's on the case's
# inputs; a case worse there is drawn again 8 times (--confirm 8) and
# judged on the 9 draws (issue 17, item 2; oracle_accuracy.py --check).
# 30 s to 2 minutes on 2 cores. Skipped without the suite, ../shared/bench
# or node.
# usage: conformance_oracle.sh TESSERA PYTHON SRC_DIR ONNX_TESTS_DIR
set -u
TESSERA=$1 PY=$2 SRC=$3 SUITE=$4
BENCH=${TESSERA_BENCH_DIR:-$SRC/../../../shared/bench}
if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
    echo "SKIP: $PY has no onnx or numpy module"
    exit 77
fi
if [ ! -d "$SUITE/node" ]; then
    echo "SKIP: no ONNX backend cases in $SUITE"
    exit 77
fi
if [ ! -f "$BENCH/ort_run.js" ] || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: no ONNX Runtime ($BENCH/ort_run.js and node)"
    exit 77
fi
set --
for d in node simple pytorch-converted pytorch-operator; do
    [ -d "$SUITE/$d" ] && set -- "$@" "$SUITE/$d"
    [ -f "$SUITE/onnxruntime-1.30/$d.tsv" ] && set -- "$@" --ort-status "$SUITE/onnxruntime-1.30/$d.tsv"
done
# test_flexattention_fp16_expanded_ver26: float16 between nodes, as
# fp16_mlp_cnn in zoo_oracle.sh: the body's Cast pairs around its float32
# Softmax are what ONNX Runtime drops, keeping float32 where the graph
# declares float16.
exec "$PY" "$SRC/oracle_accuracy.py" "$TESSERA" "$@" --check --ort "$BENCH" --confirm 8 \
    --allow test_flexattention_fp16_expanded_ver26 --timeout 120 --jobs 2
