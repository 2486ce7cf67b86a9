#!/bin/sh
# The `compare` ctest: `tessera compare` against plugin_faulty.so (a Mul that
# adds 1e-3) must name exactly the node it ran, and a profile trace must be
# valid JSON with the documented fields.
# Inside control-flow bodies (make_body_models.py) the node named must be
# the body node, by path, with the iteration it went wrong in and numpy's
# figure; body_probe.c checks the values the library hands back from bodies.
# usage: compare_test.sh TESSERA FAULTY_PLUGIN PROFILE_PROBE PYTHON SRC_DIR WORK_DIR BODY_PROBE
set -u
TESSERA=$1 FAULTY=$2 PROBE=$3 PY=$4 SRC=$5 WORK=$6 BODY_PROBE=$7
mkdir -p "$WORK" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$PY" -c "import onnx" 2>/dev/null; then
    echo "SKIP: $PY has no onnx module (Debian: python3-onnx)"
    exit 77
fi
MODEL=$WORK/chain.onnx
"$PY" "$SRC/make_chain_model.py" "$MODEL" || exit 1

# The same set twice agrees, exit 0.
"$TESSERA" compare "$MODEL" -p reference -p reference --per-node >"$WORK/same.txt" 2>&1 ||
    fail "reference vs reference: exit $? ($(cat "$WORK/same.txt"))"
grep -q "first divergent node: none" "$WORK/same.txt" || fail "reference vs reference names a node"

# The faulty Mul: exit 1, the node named, its inputs clean.
"$TESSERA" compare "$MODEL" --per-node -p reference -p "$FAULTY,reference" >"$WORK/faulty.txt" 2>&1
rc=$?
cat "$WORK/faulty.txt"
[ $rc -eq 1 ] || fail "faulty: exit $rc, expected 1"
grep -q "first divergent node: injected_mul (Mul) run by faulty, baseline reference" \
    "$WORK/faulty.txt" || fail "faulty: injected_mul not named"
grep -q "this node introduced the difference" "$WORK/faulty.txt" || fail "faulty: not attributed"

"$TESSERA" compare "$MODEL" --per-node --json -p reference -p "$FAULTY,reference" \
    >"$WORK/faulty.json" 2>"$WORK/faulty.err"
[ $? -eq 1 ] || fail "faulty --json: exit status"
"$PY" - "$WORK/faulty.json" <<'PYEOF' || fail "faulty --json: wrong report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["baseline"] == "reference", r
run = r["runs"][0]
out = run["outputs"][0]
for k in ("name", "max_abs", "max_rel", "mismatches", "worst_index", "baseline_value", "value"):
    assert k in out, k
assert out["mismatches"] > 0 and out["name"] == "y", out
d = run["first_divergent_node"]
assert d["name"] == "injected_mul" and d["op"] == "Mul" and d["provider"] == "faulty", d
assert d["inputs_differed"] is False and d["nodes_introducing"] == 1, d
assert d["max_abs"] > 5e-4, d
PYEOF

# The op comes from a provider option; the option reaches only the set
# holding the plugin (the baseline would refuse it).
"$TESSERA" compare "$MODEL" --per-node -p reference -p "$FAULTY,reference" \
    --provider-option faulty:op=Add >"$WORK/add.txt" 2>&1
grep -q "first divergent node: residual_add (Add) run by faulty" "$WORK/add.txt" ||
    fail "faulty op=Add: residual_add not named ($(cat "$WORK/add.txt"))"

# A fault too small to be over tolerance where it happens, magnified by a
# later node: that node is the first over tolerance, but alone on the
# baseline's inputs it agrees, and the differences start at the Mul.
"$TESSERA" compare "$MODEL" --per-node --json --rtol 0 -p reference -p "$FAULTY,reference" \
    --provider-option faulty:delta=1e-6 >"$WORK/tiny.json" 2>"$WORK/tiny.err"
[ $? -eq 1 ] || fail "tiny fault: exit status ($(cat "$WORK/tiny.err"))"
"$PY" - "$WORK/tiny.json" <<'PYEOF' || fail "tiny fault: wrong report"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
d = run["first_divergent_node"]
assert d["name"] == "amplify" and d["provider"] == "reference", d
assert d["inputs_max_abs"] > 0 and not d["inputs_differed"], d
assert d["isolated"]["ran"] and d["isolated"]["agree"], d
assert run["differences_start"]["name"] == "injected_mul", run
PYEOF

# Without --per-node: outputs only, still exit 1; JSON has a null node.
"$TESSERA" compare "$MODEL" --json -p reference -p "$FAULTY,reference" >"$WORK/plain.json" 2>&1
[ $? -eq 1 ] || fail "plain: exit status"
"$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['runs'][0]['first_divergent_node'] is None" \
    "$WORK/plain.json" || fail "plain: first_divergent_node not null"

# Usage and input errors: clear messages, no crash.
"$TESSERA" compare "$MODEL" -p reference >/dev/null 2>&1
[ $? -eq 2 ] || fail "one provider set: expected usage error"
"$TESSERA" compare "$WORK/missing.onnx" -p reference -p reference >/dev/null 2>"$WORK/missing.err"
[ $? -eq 1 ] || fail "missing model: expected exit 1"
head -c 100 "$MODEL" >"$WORK/truncated.onnx"
"$TESSERA" compare "$WORK/truncated.onnx" --per-node -p reference -p reference >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "truncated model: exit $rc, expected 1"

# --- Inside control-flow bodies ------------------------------------------------
B=$WORK/body
"$PY" "$SRC/make_body_models.py" "$B" || exit 1
LOOP_IN="-i h0=$B/h0.pb -i xl=$B/xl.pb"

# The library hands a body value back per run of its body, nested per
# enclosing body: then_branch ran in iterations 0 and 1, else_branch in 2.
"$BODY_PROBE" "$B/loop_if.onnx" "h0=$B/h0.pb" "xl=$B/xl.pb" -- loop0/body/body_if/then_branch/m \
    loop0/body/body_if/else_branch/t_else loop0/body/hr loop0/body/h_out loop0/body/t ts \
    >"$WORK/body_values.json" 2>&1 || fail "body_probe: $(cat "$WORK/body_values.json")"
"$PY" - "$WORK/body_values.json" "$B" <<'PYEOF' || fail "body values: wrong structure or values"
import json, sys
import numpy as np, onnx
from onnx import numpy_helper
r = json.load(open(sys.argv[1]))
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[2] + "/h0.pb", "rb").read())
h0 = numpy_helper.to_array(t)
def arr(v):
    return np.array(v["data"], np.float32).reshape(v["dims"])
m, e = r["loop0/body/body_if/then_branch/m"], r["loop0/body/body_if/else_branch/t_else"]
assert [len(x) for x in m] == [1, 1, 0] and [len(x) for x in e] == [0, 0, 1], (m, e)
hr = [arr(v) for v in r["loop0/body/hr"]]
h_out = [arr(v) for v in r["loop0/body/h_out"]]
assert len(hr) == 3 and len(h_out) == 3
scale = np.array([0.5, -1.0, 2.0], np.float32)
assert (hr[0] == np.maximum(h0, 0)).all(), hr[0]
assert (arr(m[0][0]) == np.maximum(h0, 0) * scale).all(), m[0][0]
for k in (0, 1):  # the carried value: iteration k's output is k+1's input
    assert (hr[k + 1] == np.maximum(h_out[k], 0)).all(), k
assert (arr(e[2][0]) == -hr[2]).all()
assert (np.stack([arr(v) for v in r["loop0/body/t"]]) == arr(r["ts"])).all()
PYEOF
"$BODY_PROBE" "$B/loop_if.onnx" "h0=$B/h0.pb" "xl=$B/xl.pb" -- loop0/body/nope >"$WORK/nope.txt" 2>&1 &&
    fail "body_probe: an unknown body value was accepted"
grep -q "no output 'loop0/body/nope'" "$WORK/nope.txt" || fail "unknown body value: $(cat "$WORK/nope.txt")"

# A faulty Mul inside the If inside the Loop: named by path, in iteration 0,
# with numpy's figure; the Loop and the nodes after it only inherit.
"$TESSERA" compare "$B/loop_if.onnx" $LOOP_IN --per-node -p reference -p "$FAULTY,reference" \
    >"$WORK/loop.txt" 2>&1
[ $? -eq 1 ] || fail "loop: exit status ($(cat "$WORK/loop.txt"))"
grep -q "first divergent node: loop0/body/body_if/then_branch/mul_then (Mul) run by faulty, baseline reference, in iteration 0 of loop0" \
    "$WORK/loop.txt" || fail "loop: mul_then not named ($(cat "$WORK/loop.txt"))"
"$TESSERA" compare "$B/loop_if.onnx" $LOOP_IN --per-node --json -p reference -p "$FAULTY,reference" \
    >"$WORK/loop.json" 2>"$WORK/loop.err"
[ $? -eq 1 ] || fail "loop --json: exit status ($(cat "$WORK/loop.err"))"
"$PY" - "$WORK/loop.json" "$B/expected.json" <<'PYEOF' || fail "loop --json: wrong report"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
want = json.load(open(sys.argv[2]))["mul_fault"]["0.001"]
d = run["first_divergent_node"]
assert d["name"] == "loop0/body/body_if/then_branch/mul_then" and d["op"] == "Mul", d
assert d["iteration"] == [0, 0] and d["where"] == "iteration 0 of loop0", d
assert d["provider"] == "faulty" and d["baseline_provider"] == "reference", d
assert d["output"] == "loop0/body/body_if/then_branch/m", d
assert d["inputs_max_abs"] == 0 and not d["inputs_differed"] and not d["inputs_unobserved"], d
assert d["nodes_introducing"] == 1, d  # not the Loop, not carried values
assert abs(d["max_abs"] - want) <= 1e-8 * want, (d["max_abs"], want)
s = run["differences_start"]
assert s["name"] == d["name"] and s["iteration"] == [0, 0], s
PYEOF

# A fault within tolerance, magnified by a later Div in the same branch: that
# Div is the first over tolerance, agrees when run alone on the baseline's
# values of that iteration, and the differences start at the Mul.
"$TESSERA" compare "$B/loop_if.onnx" $LOOP_IN --per-node --json --rtol 0 -p reference \
    -p "$FAULTY,reference" --provider-option faulty:delta=1e-6 >"$WORK/loop_tiny.json" \
    2>"$WORK/loop_tiny.err"
[ $? -eq 1 ] || fail "loop tiny fault: exit status ($(cat "$WORK/loop_tiny.err"))"
"$PY" - "$WORK/loop_tiny.json" "$B/expected.json" <<'PYEOF' || fail "loop tiny fault: wrong report"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
want = json.load(open(sys.argv[2]))["mul_fault"]["1e-06"]
d = run["first_divergent_node"]
assert d["name"] == "loop0/body/body_if/then_branch/amp_then" and d["provider"] == "reference", d
assert d["iteration"] == [0, 0] and 0 < d["inputs_max_abs"] and not d["inputs_differed"], d
assert d["isolated"]["ran"] and d["isolated"]["agree"], d
s = run["differences_start"]
assert s["name"] == "loop0/body/body_if/then_branch/mul_then" and s["iteration"] == [0, 0], s
assert abs(s["max_abs"] - want) <= 1e-8 * want, (s, want)
PYEOF

# A Scan whose only Add is faulty: named in iteration 0; later iterations
# read the carried state it spoiled and do not count as new sources.
"$TESSERA" compare "$B/scan.onnx" -i s0="$B/s0.pb" -i xs="$B/xs.pb" --per-node --json \
    -p reference -p "$FAULTY,reference" --provider-option faulty:op=Add >"$WORK/scan.json" \
    2>"$WORK/scan.err"
[ $? -eq 1 ] || fail "scan: exit status ($(cat "$WORK/scan.err"))"
"$PY" - "$WORK/scan.json" "$B/expected.json" <<'PYEOF' || fail "scan: wrong report"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
want = json.load(open(sys.argv[2]))["add_fault"]
d = run["first_divergent_node"]
assert d["name"] == "scan0/body/scan_add" and d["iteration"] == [0], d
assert d["where"] == "iteration 0 of scan0" and d["nodes_introducing"] == 1, d
assert abs(d["max_abs"] - want) <= 1e-8 * want, (d["max_abs"], want)
PYEOF

# Profiling: the trace file opens as JSON with the documented fields, and the
# summary names both providers.
"$PROBE" "$MODEL" "$WORK/trace.json" "$FAULTY" reference >"$WORK/summary.txt" 2>&1 ||
    fail "profile_probe: exit $? ($(cat "$WORK/summary.txt"))"
cat "$WORK/summary.txt"
"$PY" "$SRC/check_trace.py" "$WORK/trace.json" 10 || fail "trace does not validate"
grep -q "^  faulty " "$WORK/summary.txt" || fail "summary lacks provider faulty"
grep -q "^  Mul " "$WORK/summary.txt" || fail "summary lacks op type Mul"

[ $fails -eq 0 ] && echo "compare tests: all passed"
[ $fails -eq 0 ]
