#!/bin/sh
# The `reduce` ctest: `tessera reduce` must shrink a 200-node model with one
# faulty op to a case of at most 3 nodes holding that op, which `tessera
# test` passes on the baseline and fails on the suspect: a wrong Mul
# (plugin_faulty), a Relu that errors (plugin_fail_run) and one that crashes
# (plugin_crash, --fail-on error). A fault that only shows once amplified
# must keep the nodes that amplify it, and only those. --json must say the
# same as one JSON object.
# usage: reduce_test.sh TESSERA FAULTY FAIL_RUN CRASH PYTHON SRC_DIR WORK_DIR
set -u
TESSERA=$1 FAULTY=$2 FAIL_RUN=$3 CRASH=$4 PY=$5 SRC=$6 WORK=$7
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$PY" -c "import onnx" 2>/dev/null; then
    echo "SKIP: $PY has no onnx module (Debian: python3-onnx)"
    exit 77
fi
MODEL=$WORK/long.onnx
"$PY" "$SRC/make_long_model.py" "$MODEL" 200 || exit 1
"$PY" "$SRC/../compare/make_chain_model.py" "$WORK/chain.onnx" || exit 1

# case_nodes CASE: the node names of CASE/model.onnx, one line, sorted.
case_nodes() {
    "$PY" -c "import onnx,sys; print(' '.join(sorted(n.name for n in onnx.load(sys.argv[1]).graph.node)))" \
        "$1/model.onnx"
}

# expect_case WHAT CASE NODE: the reduced case holds NODE and at most 3 nodes.
expect_case() {
    nodes=$(case_nodes "$2") || { fail "$1: $2/model.onnx unreadable"; return; }
    echo "$1: case nodes: $nodes"
    n=$(echo "$nodes" | wc -w)
    [ "$n" -le 3 ] || fail "$1: $n nodes in the case, expected <= 3"
    echo " $nodes " | grep -q " $3 " || fail "$1: $3 not in the case"
}

# test_case WHAT CASE EXPECTED_RC ARGS...: `tessera test` on the case.
test_case() {
    what=$1 dir=$2 want=$3
    shift 3
    "$TESSERA" test "$@" "$dir" >"$WORK/test.out" 2>&1
    rc=$?
    [ $rc -eq "$want" ] || fail "$what: tessera test $* exit $rc, expected $want ($(cat "$WORK/test.out"))"
}

# 1. A wrong Mul (adds 1 to every element), 120 nodes in.
OUT=$WORK/mul
"$TESSERA" reduce "$MODEL" -p reference -p "$FAULTY,reference" --provider-option faulty:delta=1 \
    -o "$OUT" >"$WORK/mul.txt" 2>&1
rc=$?
cat "$WORK/mul.txt"
[ $rc -eq 0 ] || fail "faulty Mul: exit $rc, expected 0"
grep -q "^reduced to 1 node" "$WORK/mul.txt" || fail "faulty Mul: not reduced to one node"
expect_case "faulty Mul" "$OUT" the_mul
test_case "faulty Mul on the baseline" "$OUT" 0 -p reference --atol 1e-4
test_case "faulty Mul on the suspect" "$OUT" 1 -p "$FAULTY,reference" \
    --provider-option faulty:delta=1 --atol 1e-4

# 2. A Relu whose run fails: --fail-on error.
OUT=$WORK/error
"$TESSERA" reduce "$MODEL" --fail-on error -p reference -p "$FAIL_RUN,reference" -o "$OUT" \
    >"$WORK/error.txt" 2>&1
rc=$?
cat "$WORK/error.txt"
[ $rc -eq 0 ] || fail "failing Relu: exit $rc, expected 0"
expect_case "failing Relu" "$OUT" the_relu
grep -q "run failed on purpose" "$WORK/error.txt" || fail "failing Relu: the error is not shown"
test_case "failing Relu on the baseline" "$OUT" 0 -p reference
test_case "failing Relu on the suspect" "$OUT" 1 -p "$FAIL_RUN,reference"

# 3. A Relu that crashes the process: each candidate runs in a child. (Under
# the sanitizers the child reports the NULL write and exits with status 1.)
OUT=$WORK/crash
"$TESSERA" reduce "$MODEL" --fail-on error -p reference -p "$CRASH,reference" -o "$OUT" \
    >"$WORK/crash.txt" 2>&1
rc=$?
cat "$WORK/crash.txt"
[ $rc -eq 0 ] || fail "crashing Relu: exit $rc, expected 0"
expect_case "crashing Relu" "$OUT" the_relu
grep -Eq "crashed \(signal|exited with status" "$WORK/crash.txt" ||
    fail "crashing Relu: the crash is not named"
test_case "crashing Relu on the baseline" "$OUT" 0 -p reference
test_case "crashing Relu on the suspect" "$OUT" 1 -p "$CRASH,reference"

# --error-contains: only a matching error counts.
"$TESSERA" reduce "$MODEL" --fail-on error --error-contains "failed on purpose" -p reference \
    -p "$FAIL_RUN,reference" -o "$WORK/error_text" >"$WORK/error_text.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--error-contains 'failed on purpose': exit $rc, expected 0"
expect_case "--error-contains 'failed on purpose'" "$WORK/error_text" the_relu
"$TESSERA" reduce "$MODEL" --fail-on error --error-contains "no such words" -p reference \
    -p "$FAIL_RUN,reference" -o "$WORK/error_other" >"$WORK/error_other.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "--error-contains that does not match: exit $rc, expected 1"
grep -q "does not contain 'no such words'" "$WORK/error_other.txt" ||
    fail "--error-contains that does not match: not explained ($(cat "$WORK/error_other.txt"))"

# 4. A fault within tolerance where it happens (1e-6), over it only after a
# Div by 1e-4: the case keeps the Mul and the nodes between it and the Div
# (residual_add, squash, amplify), the only output is the Div's, and its
# inputs come from the baseline (r, x).
OUT=$WORK/amplified
"$TESSERA" reduce "$WORK/chain.onnx" --rtol 0 -p reference -p "$FAULTY,reference" \
    --provider-option faulty:delta=1e-6 -o "$OUT" >"$WORK/amplified.txt" 2>&1
rc=$?
cat "$WORK/amplified.txt"
[ $rc -eq 0 ] || fail "amplified: exit $rc, expected 0"
nodes=$(case_nodes "$OUT")
[ "$nodes" = "amplify injected_mul residual_add squash" ] ||
    fail "amplified: case nodes '$nodes', expected amplify injected_mul residual_add squash"
"$PY" - "$OUT/model.onnx" <<'PYEOF' || fail "amplified: wrong case inputs or outputs"
import onnx, sys
g = onnx.load(sys.argv[1]).graph
assert sorted(i.name for i in g.input) == ["r", "x"], g.input
assert [o.name for o in g.output] == ["big"], g.output
PYEOF
test_case "amplified on the baseline" "$OUT" 0 -p reference --rtol 0 --atol 1e-4
test_case "amplified on the suspect" "$OUT" 1 -p "$FAULTY,reference" \
    --provider-option faulty:delta=1e-6 --rtol 0 --atol 1e-4

# The faulty Mul inside an If body that reads an outer value: the If alone,
# fed its condition and, implicitly, that value.
"$PY" "$SRC/make_if_model.py" "$WORK/if.onnx" || exit 1
OUT=$WORK/if
"$TESSERA" reduce "$WORK/if.onnx" -p reference -p "$FAULTY,reference" -o "$OUT" \
    >"$WORK/if.txt" 2>&1
rc=$?
cat "$WORK/if.txt"
[ $rc -eq 0 ] || fail "Mul in an If body: exit $rc, expected 0"
nodes=$(case_nodes "$OUT")
[ "$nodes" = "branch" ] || fail "Mul in an If body: case nodes '$nodes', expected branch"
"$PY" - "$OUT/model.onnx" <<'PYEOF' || fail "Mul in an If body: wrong case inputs"
import onnx, sys
g = onnx.load(sys.argv[1]).graph
assert sorted(i.name for i in g.input) == ["cond", "r"], g.input
PYEOF
test_case "Mul in an If body on the baseline" "$OUT" 0 -p reference --atol 1e-4
test_case "Mul in an If body on the suspect" "$OUT" 1 -p "$FAULTY,reference" --atol 1e-4

# Weights held as external data: the case carries them inline and runs
# from anywhere.
mkdir -p "$WORK/ext_model" || exit 1
"$PY" - "$WORK/chain.onnx" "$WORK/ext_model/chain.onnx" <<'PYEOF' || exit 1
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.save(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True,
          location="chain.data", size_threshold=0)
PYEOF
OUT=$WORK/ext_case
"$TESSERA" reduce "$WORK/ext_model/chain.onnx" -p reference -p "$FAULTY,reference" -o "$OUT" \
    >"$WORK/ext.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "external data: exit $rc, expected 0 ($(cat "$WORK/ext.txt"))"
mkdir -p "$WORK/moved" && rm -rf "$WORK/moved/ext_case" && cp -r "$OUT" "$WORK/moved/" || exit 1
test_case "external data, moved, on the baseline" "$WORK/moved/ext_case" 0 -p reference --atol 1e-4
test_case "external data, moved, on the suspect" "$WORK/moved/ext_case" 1 -p "$FAULTY,reference" \
    --atol 1e-4

# --oracle: the float64 reference is the baseline (when this build's
# reference provider has precision=double).
if "$TESSERA" run "$MODEL" -p reference --provider-option reference:precision=double \
    >/dev/null 2>&1; then
    OUT=$WORK/oracle
    "$TESSERA" reduce "$MODEL" --oracle -p "$FAULTY,reference" --provider-option faulty:delta=1 \
        -o "$OUT" >"$WORK/oracle.txt" 2>&1
    rc=$?
    cat "$WORK/oracle.txt"
    [ $rc -eq 0 ] || fail "--oracle: exit $rc, expected 0"
    expect_case "--oracle" "$OUT" the_mul
    test_case "--oracle on the oracle" "$OUT" 0 -p reference \
        --provider-option reference:precision=double --atol 1e-4
    test_case "--oracle on the suspect" "$OUT" 1 -p "$FAULTY,reference" \
        --provider-option faulty:delta=1 --atol 1e-4
    "$TESSERA" reduce "$MODEL" --oracle -p reference -p reference >/dev/null 2>&1
    [ $? -eq 2 ] || fail "--oracle with two sets: expected usage error"
else
    echo "note: the reference provider has no precision=double; --oracle not tested"
fi

# --json: one JSON object on stdout and nothing else, saying what the text
# report says; its `tessera test` lines pass and fail as they should.
OUT=$WORK/json_mul
"$TESSERA" reduce "$MODEL" -p reference -p "$FAULTY,reference" --provider-option faulty:delta=1 \
    -o "$OUT" --json >"$WORK/json_mul.json" 2>"$WORK/json_mul.err"
rc=$?
[ $rc -eq 0 ] || fail "--json: exit $rc, expected 0 ($(cat "$WORK/json_mul.err"))"
tries=$(sed -n 's/^reduced to .* (\([0-9]*\) tries.*/\1/p' "$WORK/mul.txt")
"$PY" - "$WORK/json_mul.json" "$OUT" "$FAULTY,reference" "$tries" "$MODEL" >"$WORK/json_checks.txt" \
    <<'PYEOF' || fail "--json: wrong summary"
import json, sys
r = json.load(open(sys.argv[1]))  # the whole of stdout: one object
out, suspect, tries, model = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
assert r["model"] == model and r["model_nodes"] == 200, r
assert r["baseline"] == {"providers": "reference", "oracle": False}, r
assert r["suspect"] == {"providers": suspect, "oracle": False}, r
assert r["failure_kind"] == "difference" and r["error_contains"] is None, r
assert r["rtol"] == 1e-3 and r["atol"] == 1e-4, r
assert r["result"] == "reduced" and r["error"] is None, r
assert "differs" in r["whole_model"], r
assert r["reduced"]["nodes"] == [{"name": "the_mul", "op": "Mul", "domain": ""}], r
assert len(r["reduced"]["inputs"]) == 1 and len(r["reduced"]["outputs"]) == 1, r
assert r["case"] == out and r["case_shows_it"] and "differs" in r["case_detail"], r
assert r["tries"] == tries and not r["stopped_at_max_tries"], (r["tries"], tries)
assert 0 < r["seconds"] < 300, r
c = r["check"]
assert c["passes"].startswith("tessera test -p reference ") and c["passes"].endswith(" " + out), c
assert c["fails"].startswith("tessera test -p " + suspect + " ") and "faulty:delta=1" in c["fails"], c
print(c["passes"][len("tessera "):])
print(c["fails"][len("tessera "):])
PYEOF
if [ -s "$WORK/json_checks.txt" ]; then
    # shellcheck disable=SC2046
    "$TESSERA" $(sed -n 1p "$WORK/json_checks.txt") >/dev/null 2>&1 ||
        fail "--json: its 'passes' line fails"
    # shellcheck disable=SC2046
    "$TESSERA" $(sed -n 2p "$WORK/json_checks.txt") >/dev/null 2>&1 &&
        fail "--json: its 'fails' line passes"
fi

"$TESSERA" reduce "$MODEL" --fail-on error --error-contains "failed on purpose" -p reference \
    -p "$FAIL_RUN,reference" -o "$WORK/json_error" --json >"$WORK/json_error.json" 2>/dev/null
rc=$?
[ $rc -eq 0 ] || fail "--json --fail-on error: exit $rc, expected 0"
"$PY" - "$WORK/json_error.json" <<'PYEOF' || fail "--json --fail-on error: wrong summary"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["failure_kind"] == "error" and r["error_contains"] == "failed on purpose", r
assert [n["name"] for n in r["reduced"]["nodes"]] == ["the_relu"], r
assert "failed on purpose" in r["case_detail"], r
PYEOF

"$TESSERA" reduce "$MODEL" -p reference -p reference -o "$WORK/json_none" --json \
    >"$WORK/json_none.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] || fail "--json, nothing to reduce: exit $rc, expected 1"
"$PY" - "$WORK/json_none.json" <<'PYEOF' || fail "--json, nothing to reduce: wrong summary"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["result"] == "not_shown" and r["whole_model"] == "outputs agree", r
assert r["reduced"] is None and r["case"] is None and r["check"] is None and r["tries"] == 1, r
PYEOF

"$TESSERA" reduce "$WORK/missing.onnx" -p reference -p reference --json >"$WORK/json_missing.json" \
    2>/dev/null
rc=$?
[ $rc -eq 1 ] || fail "--json, missing model: exit $rc, expected 1"
"$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['result']=='error' and 'missing.onnx' in r['error'], r" \
    "$WORK/json_missing.json" || fail "--json, missing model: wrong summary"

# A faulty Mul in an If branch inside a Loop body (tests/compare/
# make_body_models.py): cuts stay in the main graph, so the case is the Loop
# alone, fed its input h0 and the value xl its body reads from outside.
"$PY" "$SRC/../compare/make_body_models.py" "$WORK/body" || exit 1
OUT=$WORK/loop
"$TESSERA" reduce "$WORK/body/loop_if.onnx" -i h0="$WORK/body/h0.pb" -i xl="$WORK/body/xl.pb" \
    -p reference -p "$FAULTY,reference" -o "$OUT" --json >"$WORK/loop.json" 2>"$WORK/loop.err"
rc=$?
[ $rc -eq 0 ] || fail "Mul in a Loop body: exit $rc, expected 0 ($(cat "$WORK/loop.err"))"
"$PY" - "$WORK/loop.json" <<'PYEOF' || fail "Mul in a Loop body: wrong summary"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["reduced"]["nodes"] == [{"name": "loop0", "op": "Loop", "domain": ""}], r
assert sorted(r["reduced"]["inputs"]) == ["h0", "xl"], r
PYEOF
test_case "Mul in a Loop body on the baseline" "$OUT" 0 -p reference --atol 1e-4
test_case "Mul in a Loop body on the suspect" "$OUT" 1 -p "$FAULTY,reference" --atol 1e-4

# 5. Nothing to reduce: exit 1, no case written.
"$TESSERA" reduce "$MODEL" -p reference -p reference -o "$WORK/none" >"$WORK/none.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "same sets: exit $rc, expected 1"
grep -q "does not show it" "$WORK/none.txt" || fail "same sets: no explanation ($(cat "$WORK/none.txt"))"
[ ! -e "$WORK/none/model.onnx" ] || fail "same sets: a case was written"
# A suspect that fails, looked for as a difference: exit 1 and a hint.
"$TESSERA" reduce "$MODEL" -p reference -p "$FAIL_RUN,reference" -o "$WORK/hint" >"$WORK/hint.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "error as difference: exit $rc, expected 1"
grep -q "fail-on error" "$WORK/hint.txt" || fail "error as difference: no hint ($(cat "$WORK/hint.txt"))"

# 6. Usage and input errors: clear messages, no crash.
"$TESSERA" reduce "$MODEL" -p reference >/dev/null 2>&1
[ $? -eq 2 ] || fail "one provider set: expected usage error"
"$TESSERA" reduce "$MODEL" -p reference -p reference -p reference >/dev/null 2>&1
[ $? -eq 2 ] || fail "three provider sets: expected usage error"
"$TESSERA" reduce "$MODEL" -p reference -p reference --fail-on nothing >/dev/null 2>&1
[ $? -eq 2 ] || fail "--fail-on nothing: expected usage error"
"$TESSERA" reduce "$MODEL" -p reference -p reference --error-contains x >/dev/null 2>&1
[ $? -eq 2 ] || fail "--error-contains without --fail-on error: expected usage error"
"$TESSERA" reduce "$MODEL" -p reference -p reference --rtol -1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--rtol -1: expected usage error"
"$TESSERA" reduce "$WORK/missing.onnx" -p reference -p reference >/dev/null 2>"$WORK/missing.err"
rc=$?
[ $rc -eq 1 ] || fail "missing model: exit $rc, expected 1"
grep -q "missing.onnx" "$WORK/missing.err" || fail "missing model: not named ($(cat "$WORK/missing.err"))"
head -c 100 "$MODEL" >"$WORK/truncated.onnx"
"$TESSERA" reduce "$WORK/truncated.onnx" -p reference -p reference >/dev/null 2>"$WORK/trunc.err"
rc=$?
[ $rc -eq 1 ] || fail "truncated model: exit $rc, expected 1 ($(cat "$WORK/trunc.err"))"
"$TESSERA" reduce "$MODEL" -p reference -p no_such_provider -o "$WORK/nop" >"$WORK/nop.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "unknown suspect provider (difference): exit $rc, expected 1"
"$TESSERA" reduce "$MODEL" -p no_such_provider -p reference >"$WORK/nob.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "unknown baseline provider: exit $rc, expected 1"
grep -q "no_such_provider" "$WORK/nob.txt" || fail "unknown baseline provider: not named"

[ $fails -eq 0 ] && echo "reduce tests: all passed"
[ $fails -eq 0 ]
