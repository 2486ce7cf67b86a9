#!/bin/sh
# The `compare` ctest: `tessera compare` against plugin_faulty.so (a Mul that
# adds 1e-3) must name exactly the node it ran, and a profile trace must be
# valid JSON with the documented fields.
# usage: compare_test.sh TESSERA FAULTY_PLUGIN PROFILE_PROBE PYTHON SRC_DIR WORK_DIR
set -u
TESSERA=$1 FAULTY=$2 PROBE=$3 PY=$4 SRC=$5 WORK=$6
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
