#!/usr/bin/env bash
# Regenerates the ONNX backend test suite that Debian 12's python3-onnx (onnx
# 1.12, opset <= 17) ships, into OUTDIR (node/, simple/, real/). Used by the
# conformance test on machines without ../shared/onnx-tests.
#
# usage: tools/gen_onnx_suite.sh OUTDIR
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
py=/usr/bin/python3
[ -x "$py" ] || py=python3
mkdir -p "$out"
# onnx 1.12 still uses numpy aliases (numpy.float, numpy.object, ...) that
# numpy 1.24 removed; put them back before onnx is imported.
"$py" - "$out" <<'PY'
import sys, numpy
for a, t in (('float', float), ('int', int), ('bool', bool), ('object', object),
             ('str', str), ('complex', complex)):
    setattr(numpy, a, t)
from onnx.backend.test.cmd_tools import main
out = sys.argv[1]
sys.argv = ['gen_onnx_suite', 'generate-data', '-o', out]
main()
PY
