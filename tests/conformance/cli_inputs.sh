#!/usr/bin/env bash
# The `cli_inputs` ctest: how `tessera run` and `tessera bench` get their
# inputs (tools/cli_inputs.c) — -i FILE.pb, --case DIR (inputs matched by the
# TensorProto's name or by position; MODEL omitted or the case folder
# itself), --fill NAME=VALUE, made-up indices that stay in range, and the
# errors for a wrong file, type, shape or name — on a model made here whose
# outputs are known by hand.
#
# usage: cli_inputs.sh TESSERA WORKDIR
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

# The model: table = [[10,11,12],[20,21,22]] (an initializer with 2 rows, so
# an index of 2 or 3 — what `run` made up before — is out of range)
#   g = Gather(table, ids)          ids int64 [n]
#   y = x + ReduceSum(g, axis 0)    x float [batch,3]
#   s = Cast(sr, float) * 2         sr int64 scalar (a sample rate, say)
#   f = Cast(flag, int64)           flag bool scalar
# x = [[0.5,1,-2]], ids = [1,0,1]: g sums to [50,53,56], y = [50.5,54,54].
# Case "named" holds the four inputs named but shuffled (matched by name),
# case "positional" holds them unnamed in graph order (matched by position).
if ! "$py" - "$work" <<'PY'
import os, sys
import numpy as np
from onnx import helper, numpy_helper, save, TensorProto as T
w = sys.argv[1]
table = np.array([[10, 11, 12], [20, 21, 22]], np.float32)
nodes = [helper.make_node("Gather", ["table", "ids"], ["g"]),
         helper.make_node("ReduceSum", ["g", "axis0"], ["gs"], keepdims=0),
         helper.make_node("Add", ["x", "gs"], ["y"]),
         helper.make_node("Cast", ["sr"], ["srf"], to=T.FLOAT),
         helper.make_node("Mul", ["srf", "two"], ["s"]),
         helper.make_node("Cast", ["flag"], ["f"], to=T.INT64)]
g = helper.make_graph(nodes, "g",
    [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("ids", T.INT64, ["n"]),
     helper.make_tensor_value_info("sr", T.INT64, []),
     helper.make_tensor_value_info("flag", T.BOOL, [])],
    [helper.make_tensor_value_info("y", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("g", T.FLOAT, ["n", 3]),
     helper.make_tensor_value_info("s", T.FLOAT, []),
     helper.make_tensor_value_info("f", T.INT64, [])],
    [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array(2, np.float32), "two"),
     numpy_helper.from_array(np.array([0], np.int64), "axis0")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
save(m, os.path.join(w, "m.onnx"))
ins = [("x", np.array([[0.5, 1, -2]], np.float32)), ("ids", np.array([1, 0, 1], np.int64)),
       ("sr", np.array(8000, np.int64)), ("flag", np.array(True))]
def write(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())
for case, order, named in (("named", [2, 0, 3, 1], True), ("positional", [0, 1, 2, 3], False)):
    d = os.path.join(w, case, "test_data_set_0")
    os.makedirs(d)
    save(m, os.path.join(w, case, "model.onnx"))
    for k, i in enumerate(order):
        write(os.path.join(d, "input_%d.pb" % k), ins[i][1], ins[i][0] if named else "")
for name, arr in ins:
    write(os.path.join(w, name + ".pb"), arr, name)
write(os.path.join(w, "x_float64.pb"), ins[0][1].astype(np.float64), "x")
write(os.path.join(w, "x_wide.pb"), np.zeros((1, 4), np.float32), "x")
with open(os.path.join(w, "garbage.pb"), "wb") as f:
    f.write(b"\xff\xff\xff\xff not a tensor")
os.makedirs(os.path.join(w, "empty_case"))
save(m, os.path.join(w, "empty_case", "model.onnx"))
os.makedirs(os.path.join(w, "no_model"))
PY
then
  echo "python3-onnx is not available: skipping"
  exit 77
fi
w=$work

# -i with names, --fill for the scalars: every output known by hand.
expect 0 "run -i and --fill" -- "$tessera" run "$w/m.onnx" -p reference \
  -i "x=$w/x.pb" -i "$w/ids.pb" --fill sr=16000 --fill flag=1
grep_out "^  values: 50.5 54 54$" "y from the given x and ids"
grep_out "^  values: 20 21 22 10 11 12 20 21 \.\.\. \(9 total\)$" "g gathers the given ids"
grep_out "^  values: 32000$" "--fill sr=16000 (int64 scalar): s = 32000"
grep_out "^  values: 1$" "--fill flag=1 (bool scalar): f = 1"
expect 0 "--fill flag=0" -- "$tessera" run "$w/m.onnx" -p reference --fill flag=0 --fill sr=-3
grep_out "^  values: -6$" "--fill sr=-3: s = -6"
grep_out "^  values: 0$" "--fill flag=0: f = 0"
expect 0 "--fill of a float input with --dim" -- "$tessera" run "$w/m.onnx" -p reference \
  --fill x=0.25 --dim batch=2 -i "$w/ids.pb"
grep_out "^output y: float \[2,3\]$" "--fill takes the shape from the model and --dim"
grep_out "^  values: 50.25 53.25 56.25 50.25 53.25 56.25$" "y = 0.25 + [50,53,56]"

# Made-up indices stay inside the 2-row table (the old recipe made 0..3).
expect 0 "made-up Gather indices are in range" -- "$tessera" run "$w/m.onnx" -p reference --dim n=200
grep_out "^  min 10  max 22  mean" "every gathered row is a row of the table"
grep_out "^output s: float \[\]$" "made-up scalars"

# Test cases: by name, by position, MODEL omitted or the folder itself.
for c in named positional; do
  expect 0 "run CASE_DIR ($c)" -- "$tessera" run "$w/$c" -p reference
  grep_out "^  values: 50.5 54 54$" "$c case: y"
  grep_out "^  values: 16000$" "$c case: s from sr = 8000"
  grep_out "^  values: 1$" "$c case: f from flag = true"
done
expect 0 "run MODEL --case DIR" -- "$tessera" run "$w/m.onnx" --case "$w/named" -p reference
grep_out "^  values: 50.5 54 54$" "--case with a separate model"
expect 0 "--fill overrides a case input" -- "$tessera" run --case "$w/positional" -p reference --fill sr=5
grep_out "^  values: 10$" "s from --fill sr=5, not the case"
expect 0 "bench CASE_DIR --json" -- "$tessera" bench "$w/named" -p reference --runs 3 --warmup 1 --json
grep_out "^\{\"model\": \".*named\", \"threads\": 0, \"runs\": 3, \"median_ms\": [0-9.]+" "bench reports JSON"
expect 0 "bench --case DIR (no MODEL)" -- "$tessera" bench --case "$w/positional" -p reference --runs 2 --warmup 0
grep_out "^runs +2 \(after 0 warm-up\)$" "bench runs the case"
expect 0 "bench -i and --fill" -- "$tessera" bench "$w/m.onnx" -p reference --runs 2 --warmup 0 --json \
  -i "x=$w/x.pb" -i "ids=$w/ids.pb" --fill sr=44100 --fill flag=1
expect 0 "bench --help" -- "$tessera" bench --help
grep_out "--case DIR" "bench --help describes --case"
grep_out "--fill NAME=VALUE" "bench --help describes --fill"

# Errors: a clear message naming the input or file, exit 1 (bad data) or 2
# (bad usage), never a crash.
expect 1 "-i with an unknown input name" -- "$tessera" bench "$w/m.onnx" -p reference -i "nosuch=$w/x.pb"
grep_out "x.pb: the model has no input named 'nosuch'" "names the file and the input"
expect 1 "-i of the wrong type" -- "$tessera" bench "$w/m.onnx" -p reference -i "$w/x_float64.pb"
grep_out "input 'x' is float in the model, the file holds double" "names both types"
expect 1 "-i of the wrong shape" -- "$tessera" run "$w/m.onnx" -p reference -i "$w/x_wide.pb"
grep_out "input 'x' has shape \[\?,3\] in the model .*the file holds \[1,4\]" "names both shapes"
expect 1 "-i of a missing file" -- "$tessera" bench "$w/m.onnx" -p reference -i "x=$w/nosuch.pb"
grep_out "cannot read .*nosuch.pb: No such file" "names the missing file"
# special files: refused before reading (a FIFO would block in open,
# /dev/zero would grow a buffer without end); a model that is a FIFO too
mkfifo "$w/fifo.pb" "$w/fifo.onnx"
expect 1 "-i of a FIFO" -- timeout 20 "$tessera" run "$w/m.onnx" -p reference -i "x=$w/fifo.pb"
grep_out "cannot read .*fifo.pb: not a regular file" "refuses the FIFO"
expect 1 "-i of /dev/zero" -- timeout 20 "$tessera" run "$w/m.onnx" -p reference -i "x=/dev/zero"
grep_out "cannot read /dev/zero: not a regular file" "refuses /dev/zero"
expect 1 "a FIFO as the model" -- timeout 20 "$tessera" run "$w/fifo.onnx" -p reference
grep_out "fifo.onnx' is not a regular file" "refuses the FIFO model"
expect 1 "-i of a file that is not a TensorProto" -- "$tessera" bench "$w/m.onnx" -p reference -i "x=$w/garbage.pb"
grep_out "garbage.pb is not a readable TensorProto" "names the unreadable file"
expect 1 "the same input twice" -- "$tessera" bench "$w/m.onnx" -p reference -i "$w/x.pb" --fill x=1
grep_out "input 'x' given twice" "says which input"
expect 1 "--fill of an unknown input" -- "$tessera" bench "$w/m.onnx" -p reference --fill rate=1
grep_out "no input named 'rate'" "names the input"
expect 1 "--fill that the type cannot hold" -- "$tessera" bench "$w/m.onnx" -p reference --fill sr=0.5
grep_out "--fill sr=0.5: 0.5 does not fit int64" "says why"
expect 2 "--fill without a value" -- "$tessera" bench "$w/m.onnx" --fill sr
expect 2 "--fill with a non-number" -- "$tessera" run "$w/m.onnx" --fill sr=fast
expect 1 "--case without test_data_set_0" -- "$tessera" bench "$w/empty_case" -p reference
grep_out "no input_0.pb" "says what is missing"
expect 2 "a folder without model.onnx" -- "$tessera" bench "$w/no_model"
grep_out "without a model.onnx" "says what is missing"
expect 2 "bench with neither MODEL nor --case" -- "$tessera" bench --runs 2

# --limit tensor_bytes: an Expand to [2048,2048] floats (16 MiB) runs by
# default and fails, naming the limit and the node, under a 1 MiB limit
"$py" - "$w" <<'PY'
import sys
import numpy as np
from onnx import helper, numpy_helper, save, TensorProto as T
g = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"], name="grow")], "grow",
                      [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [2048, 2048])],
                      [numpy_helper.from_array(np.array([2048, 2048], np.int64), "shape")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/grow.onnx")
PY
expect 0 "a 16 MiB tensor under the default limit" -- "$tessera" run "$w/grow.onnx" -p reference
expect 1 "a 16 MiB tensor over --limit tensor_bytes" -- "$tessera" run "$w/grow.onnx" -p reference \
  --limit tensor_bytes=1048576
grep_out "16777216 bytes exceeds the session's tensor_bytes limit \(1048576\)" "names the limit and the size"
grep_out "node 'grow' \(Expand\)" "names the node"
expect 1 "the same tensor over --limit working_bytes" -- "$tessera" run "$w/grow.onnx" -p reference \
  --limit working_bytes=1048576
grep_out "over the working_bytes limit \(1048576\)" "names the limit"
grep_out "node 'grow' \(Expand\)" "names the node"
expect 1 "a model file over --limit model_bytes" -- "$tessera" run "$w/grow.onnx" -p reference \
  --limit model_bytes=16
grep_out "over the model_bytes limit \(16\)" "names the limit"
expect 1 "an unknown limit" -- "$tessera" run "$w/grow.onnx" -p reference --limit heap_bytes=5
grep_out "no limit named 'heap_bytes' \(known: tensor_bytes, working_bytes, model_bytes, external_bytes, graph_depth, function_nodes, function_depth, fold_bytes\)" "says which names exist"
expect 1 "graph_depth above its ceiling" -- "$tessera" run "$w/grow.onnx" -p reference --limit graph_depth=100000
grep_out "graph_depth=100000: at most 256" "says the most it may be"
expect 2 "a limit of 0" -- "$tessera" run "$w/grow.onnx" --limit tensor_bytes=0

# --repeat and input sets: exec_dynamic.onnx is y = Relu(x) + k over [N,3];
# -i x=... twice gives two sets (N=1, N=2) used in turn; the outputs
# printed are the last run's (set 0 again: Relu([1,-2,3]) + k)
"$py" - "$w" <<'PY'
import sys
import numpy as np
from onnx import numpy_helper
for name, a in (("x1", [[1, -2, 3]]), ("x2", [[1, -2, 3], [-4, 5, -6]])):
    with open("%s/%s.pb" % (sys.argv[1], name), "wb") as f:
        f.write(numpy_helper.from_array(np.array(a, np.float32), "x").SerializeToString())
PY
dyn="$(dirname "$0")/../data/exec_dynamic.onnx"
expect 0 "--repeat 3 over two input sets" -- "$tessera" run "$dyn" -p reference -i "x=$w/x1.pb" -i "x=$w/x2.pb" \
  --repeat 3
grep_out "set 1 input x: float \[2,3\]" "shows the second set's shape"
grep_out "run 1 \(input set 1\)" "runs the second set second"
grep_out "run 2 \(input set 0\)" "and the first again third"
grep_out "output y: float \[1,3\]" "prints the last run's output"
expect 2 "--repeat 0" -- "$tessera" run "$dyn" --repeat 0
expect 1 "--timeout-ms on a run of hours" -- "$tessera" run "$(dirname "$0")/../data/abi_slow_pool.onnx" -p reference \
  --timeout-ms 200
grep_out "stopped: the run was cancelled" "says it was stopped"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
