#!/bin/sh
# The `compare_oracle` ctest: the float64 oracle (reference with
# precision=double) must equal numpy float64 on a small model, and
# `compare --oracle --per-node` must name the node that loses precision:
# a float32 MatMul summed in order (plugin_lossy.c) on a sum whose terms
# nearly cancel (make_oracle_models.py), also inside a Loop body's If
# branch (make_body_models.py), and a deliberately faulty provider's Mul
# (tests/plugins/plugin_faulty.c).
# usage: oracle_test.sh TESSERA FAULTY_PLUGIN LOSSY_PLUGIN PYTHON SRC_DIR WORK_DIR
set -u
TESSERA=$1 FAULTY=$2 LOSSY=$3 PY=$4 SRC=$5 WORK=$6
mkdir -p "$WORK" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
    echo "SKIP: $PY has no onnx or numpy module (Debian: python3-onnx)"
    exit 77
fi
"$PY" "$SRC/make_oracle_models.py" "$WORK" || exit 1
"$PY" "$SRC/make_chain_model.py" "$WORK/chain.onnx" || exit 1
MODEL=$WORK/sum.onnx

# 1. The oracle equals numpy float64 (to 1e-12) where the model hands the
# float64 value out (`wide`, after a Cast to double). The reference float32
# run is close too: its GEMM sums in double (docs/conformance.md).
"$TESSERA" run "$MODEL" -p reference --provider-option reference:precision=double \
    -i x="$WORK/x.pb" -o "$WORK/oracle" >"$WORK/oracle.txt" 2>&1 ||
    fail "oracle run: $(cat "$WORK/oracle.txt")"
"$TESSERA" run "$MODEL" -p reference -i x="$WORK/x.pb" -o "$WORK/f32" >"$WORK/f32.txt" 2>&1 ||
    fail "float32 run: $(cat "$WORK/f32.txt")"
"$PY" - "$WORK" <<'PYEOF' || fail "oracle vs numpy float64"
import sys
import numpy as np, onnx
from onnx import numpy_helper
w = sys.argv[1]
def pb(p):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)
want = np.load(w + "/expected_wide.npy")
got = pb(w + "/oracle/wide.pb")
assert got.dtype == np.float64, got.dtype
err = np.abs(got - want).max()
print("oracle vs numpy float64: max abs %.3g" % err)
assert err < 1e-12, err
# the float32 output is the oracle's value rounded once
assert (pb(w + "/oracle/y.pb") == want.astype(np.float32)).all()
f32 = np.abs(pb(w + "/f32/wide.pb") - want).max()
lossy = np.abs(np.load(w + "/lossy_wide.npy") - want).max()
print("float32 reference vs numpy float64: max abs %.3g (summing in float32: %.3g)" % (f32, lossy))
assert f32 < 1e-5 and lossy > 1e-4, (f32, lossy)
PYEOF

# 2. compare --oracle with the reference set and one whose MatMul sums in
# float32: figures as numpy computes them; --per-node names the MatMul.
"$TESSERA" compare "$MODEL" -i x="$WORK/x.pb" -p reference -p "$LOSSY,reference" --oracle \
    --per-node --json --rtol 1e-5 --atol 1e-6 >"$WORK/sum.json" 2>"$WORK/sum.err"
rc=$?
[ $rc -eq 1 ] || fail "compare --oracle: exit $rc, expected 1 ($(cat "$WORK/sum.err"))"
"$PY" - "$WORK" <<'PYEOF' || fail "compare --oracle --json: wrong report"
import json, sys
import numpy as np, onnx
from onnx import numpy_helper
w = sys.argv[1]
r = json.load(open(w + "/sum.json"))
assert r["baseline"] == "oracle" and r["oracle"] is True, r
ref, lossy = r["runs"]
assert ref["providers"] == "reference" and ref["agree"], ref
assert ref["first_divergent_node"] is None, ref
want = np.load(w + "/expected_wide.npy")
def pb(p):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)
# the reference run's figures, against numpy's on the same outputs
acc = {a["name"]: a["vs_oracle"] for a in ref["accuracy"]}
d = np.abs(pb(w + "/f32/wide.pb") - want)
a = acc["wide"]
for k in ("max_abs", "max_rel", "mean_abs", "ulp_p50", "ulp_p99", "ulp_max", "count"):
    assert k in a, k
assert a["count"] == want.size, a
assert abs(a["max_abs"] - d.max()) <= 1e-12 + 1e-9 * d.max(), (a, d.max())
assert abs(a["mean_abs"] - d.mean()) <= 1e-12 + 1e-9 * d.mean(), (a, d.mean())
# y is float32: ULPs of float32 between the two float32 results
yf, yo = pb(w + "/f32/y.pb"), want.astype(np.float32)
def ordered(v):
    i = v.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(2**31) - i, i)
ulps = np.sort(np.abs(ordered(yf) - ordered(yo)).ravel())
y = acc["y"]
assert y["ulp_max"] == ulps[-1] and y["ulp_p50"] == ulps[(len(ulps) - 1) // 2], (y, ulps)
# the lossy set: its MatMul is named, with numpy's cumsum error
assert not lossy["agree"], lossy
n = lossy["first_divergent_node"]
assert n["name"] == "dot" and n["op"] == "MatMul" and n["provider"] == "lossy", n
assert n["inputs_differed"] is False and n["inputs_max_abs"] == 0, n
dot_err = np.abs(np.load(w + "/lossy_dot.npy") - np.load(w + "/expected_dot.npy").astype(np.float32)).max()
assert abs(n["max_abs"] - dot_err) <= 1e-6 * dot_err, (n, dot_err)
assert lossy["differences_start"]["name"] == "dot", lossy
la = {a["name"]: a["vs_oracle"] for a in lossy["accuracy"]}["wide"]
lw = np.abs(np.load(w + "/lossy_wide.npy") - want).max()
assert abs(la["max_abs"] - lw) <= 0.05 * lw, (la, lw)
assert la["max_abs"] > 10 * a["max_abs"], (la, a)
PYEOF

"$TESSERA" compare "$MODEL" -i x="$WORK/x.pb" -p "$LOSSY,reference" --oracle --per-node \
    --rtol 1e-5 --atol 1e-6 >"$WORK/sum.txt" 2>&1
grep -q "baseline: oracle (reference, precision=double)" "$WORK/sum.txt" || fail "text: no baseline line"
grep -q "vs oracle: max_abs .* mean_abs .* ulp p50 .* p99 .* max" "$WORK/sum.txt" ||
    fail "text: no accuracy line ($(cat "$WORK/sum.txt"))"
grep -q "first divergent node: dot (MatMul) run by lossy, baseline reference" "$WORK/sum.txt" ||
    fail "text: dot not named"

# 3. A provider whose Mul adds 1e-5: against the oracle, only that set is
# off and its Mul is named; the plain reference set agrees at rtol 1e-3.
"$TESSERA" compare "$WORK/chain.onnx" --oracle --per-node -p reference -p "$FAULTY,reference" \
    --provider-option faulty:delta=1e-5 --rtol 1e-5 --atol 1e-7 --json \
    >"$WORK/faulty.json" 2>"$WORK/faulty.err"
[ $? -eq 1 ] || fail "faulty --oracle: exit status ($(cat "$WORK/faulty.err"))"
"$PY" - "$WORK/faulty.json" <<'PYEOF' || fail "faulty --oracle: wrong report"
import json, sys
r = json.load(open(sys.argv[1]))
ref, faulty = r["runs"]
assert ref["agree"] and ref["first_divergent_node"] is None, ref
d = faulty["first_divergent_node"]
assert d["name"] == "injected_mul" and d["provider"] == "faulty", d
assert d["baseline_provider"] == "reference" and not d["inputs_differed"], d
acc = faulty["accuracy"][0]["vs_oracle"]
assert 0.9e-5 < acc["max_abs"] < 1e-4, acc
PYEOF

# 4. The float32 MatMul inside an If branch inside a Loop body
# (make_body_models.py): named by path, in iteration 0, with numpy's error
# of a float32 sum in order against the float64 result rounded to float32.
"$PY" "$SRC/make_body_models.py" "$WORK/body" || exit 1
B=$WORK/body
"$TESSERA" compare "$B/loop_if.onnx" -i h0="$B/h0.pb" -i xl="$B/xl.pb" --oracle --per-node \
    -p "$LOSSY,reference" --rtol 1e-5 --atol 1e-6 --json >"$WORK/loop.json" 2>"$WORK/loop.err"
[ $? -eq 1 ] || fail "lossy loop --oracle: exit status ($(cat "$WORK/loop.err"))"
"$PY" - "$WORK/loop.json" "$B/expected.json" <<'PYEOF' || fail "lossy loop --oracle: wrong report"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
want = json.load(open(sys.argv[2]))["dot_lossy"]
d = run["first_divergent_node"]
assert d["name"] == "loop0/body/body_if/then_branch/dot_then" and d["op"] == "MatMul", d
assert d["provider"] == "lossy" and d["iteration"] == [0, 0], d
assert d["inputs_max_abs"] == 0 and d["nodes_introducing"] == 1, d
assert abs(d["max_abs"] - want) <= 1e-6 * want, (d["max_abs"], want)
PYEOF

# 5. Usage: --oracle needs only one set; a bad precision value is refused.
"$TESSERA" compare "$MODEL" --oracle >/dev/null 2>&1
[ $? -eq 2 ] || fail "--oracle without -p: expected usage error"
"$TESSERA" run "$MODEL" -p reference --provider-option reference:precision=quad \
    >"$WORK/bad.txt" 2>&1 && fail "precision=quad accepted"
grep -q "precision must be" "$WORK/bad.txt" || fail "precision=quad: no reason ($(cat "$WORK/bad.txt"))"

[ $fails -eq 0 ] && echo "oracle tests passed"
exit $((fails != 0))
