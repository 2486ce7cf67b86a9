#!/usr/bin/env bash
# The `cli` ctest: the tessera command's contract — exit statuses (0 ok,
# 1 failure, 2 usage), `providers`, `run` (generated inputs, --dim, -o,
# -i, --explain, --info) and `test` (PASS, FAIL with a reason, the summary line) —
# on a two-node model made here, so it needs no suite data.
#
# usage: cli_smoke.sh TESSERA WORKDIR
# Exit 77 (ctest: skipped) when python3-onnx is missing.
set -uo pipefail
tessera=$1
work=$2
py=/usr/bin/python3
[ -x "$py" ] || py=python3
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0

# expect, grep_out (and the failure count they keep)
. "$(dirname "$0")/cli_harness.sh"

# A model y = a + b, z = Cast(a) with a symbolic batch dimension, and one
# test case for it (plus a copy whose expected output is wrong).
if ! "$py" - "$work" <<'PY'
import os, sys
import numpy as np
from onnx import helper, numpy_helper, save, TensorProto as T
w = sys.argv[1]
g = helper.make_graph(
    [helper.make_node("Add", ["a", "b"], ["y"]), helper.make_node("Cast", ["a"], ["z"], to=T.INT64)],
    "g",
    [helper.make_tensor_value_info("a", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("b", T.FLOAT, ["batch", 3])],
    [helper.make_tensor_value_info("y", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("z", T.INT64, ["batch", 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
a = np.array([[1.5, -2.25, 3], [0, 7, -1]], np.float32)
b = np.array([[0.5, 0.25, -3], [1, 1, 1]], np.float32)
for case, y in (("case_good", a + b), ("case_bad", a + b + np.float32(0.5))):
    d = os.path.join(w, "cases", case, "test_data_set_0")
    os.makedirs(d)
    save(m, os.path.join(w, "cases", case, "model.onnx"))
    for name, arr in (("input_0", a), ("input_1", b), ("output_0", y),
                      ("output_1", a.astype(np.int64))):
        with open(os.path.join(d, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
PY
then
  echo "python3-onnx is not available: skipping"
  exit 77
fi
model=$work/cases/case_good/model.onnx
data=$work/cases/case_good/test_data_set_0

expect 0 "--help" -- "$tessera" --help
expect 2 "no command is a usage error" -- "$tessera"
expect 2 "unknown command" -- "$tessera" frobnicate
expect 2 "run without a model" -- "$tessera" run
expect 2 "bad --provider-option" -- "$tessera" run "$model" --provider-option nocolon
expect 2 "bad --threads" -- "$tessera" run "$model" --threads many
expect 2 "bad --rtol" -- "$tessera" test --rtol x "$work/cases"
expect 2 "test of a missing path" -- "$tessera" test "$work/nonexistent"
expect 0 "run --help" -- "$tessera" run --help
expect 0 "test --help" -- "$tessera" test --help

expect 0 "providers" -- "$tessera" providers
grep_out "^reference " "providers lists the reference provider"

expect 0 "run with generated inputs" -- "$tessera" run "$model" -p reference --dim batch=2 \
  --explain -o "$work/out_dir"
grep_out "^output y: float \[2,3\]" "run prints the output's type and shape"
grep_out "min .* max .* mean" "run prints a summary"
grep_out "reference" "--explain prints the assignment"
[ -s "$work/out_dir/y.pb" ] && [ -s "$work/out_dir/z.pb" ] && echo "ok: -o writes NAME.pb" ||
  { echo "FAIL: -o did not write y.pb and z.pb"; failures=$((failures + 1)); }

expect 0 "run --info" -- "$tessera" run "$model" -p reference --info
grep_out "^input a: float \[batch,3\]" "--info prints declared inputs with symbolic dims"
grep_out "^output z: int64 \[batch,3\]" "--info prints declared outputs"
grep_out "^opset: ai.onnx 13" "--info prints the opsets"
grep_out "^producer: " "--info prints the producer"

expect 0 "partition" -- "$tessera" partition "$model" -p reference --dim batch=2
grep_out "^total: .* pieces" "partition prints the pieces"
grep_out "^copies: none" "partition prints the copies (none on the host)"
expect 1 "--assign to a provider not in the session" -- "$tessera" partition "$model" -p reference \
  --assign Relu=nosuch
grep_out "provider 'nosuch' is not in the session" "the error names the provider"
expect 2 "--assign without =" -- "$tessera" partition "$model" --assign Relu
expect 2 "partition without a model" -- "$tessera" partition

expect 0 "run without --dim notes the assumed dimension" -- "$tessera" run "$model" -p reference
grep_out "note: .*'batch'" "the note names the symbol"
grep_out "^output y: float \[1,3\]" "an unfixed symbolic dimension is 1"

expect 0 "run with -i inputs" -- "$tessera" run "$model" -p reference \
  -i "a=$data/input_0.pb" -i "b=$data/input_1.pb"
grep_out "values: 2 -2 0 1 8 0" "run feeds the given inputs"
expect 1 "-i with an unknown input name" -- "$tessera" run "$model" -p reference -i "nosuch=$data/input_0.pb"
expect 1 "an unknown provider" -- "$tessera" run "$model" -p no_such_provider

expect 0 "test of a passing case" -- "$tessera" test -p reference "$work/cases/case_good"
grep_out "^PASS case_good$" "PASS line"
grep_out "^1 passed, 0 failed, 0 skipped$" "summary line"
expect 1 "test of a failing case" -- "$tessera" test -p reference -j 2 "$work/cases"
grep_out "^FAIL case_bad: output 0 'y': element 0 \[0,0\]: got 2, expected 2.5" "FAIL names output, element and values"
grep_out "^1 passed, 1 failed, 0 skipped$" "summary counts both"
expect 0 "a looser tolerance passes" -- "$tessera" test -p reference --atol 0.6 "$work/cases"
expect 0 "--filter" -- "$tessera" test -p reference --filter 'case_g*' "$work/cases"
grep_out "^1 passed, 0 failed, 0 skipped$" "--filter keeps one case"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
