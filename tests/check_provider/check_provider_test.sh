#!/bin/sh
# One `tessera check-provider` run, judged by its exit status and by lines
# of its output, so a test asserts what was checked and found, not only
# that something returned 0 or 1.
#
# usage: check_provider_test.sh TESSERA CASES WANT_RC [-e REGEX]... [-n REGEX]...
#                               [-s REGEX]... [--json] [-M PYTHON SCRIPT]
#                               -- PLUGIN [ARGS...]
#   -e REGEX   a line of the output must match (grep -E)
#   -n REGEX   no line may match
#   -s REGEX   a matching line means this machine cannot run the check (a
#              plugin with no device here): exit 77, ctest's SKIP
#   --json     the output must be one JSON object with the documented keys
#              (checked with python3 when there is one)
#   -M PYTHON SCRIPT  run SCRIPT (make_models.py) with PYTHON to write the
#              whole-model cases into a temporary folder, and pass it as
#              --models; SCRIPT's exit status 77 (no python3-onnx) skips
# CASES is the node suite; when it does not exist (no shared data and no
# python3-onnx to generate the 1.12 suite) the test is skipped.
set -u
tessera=$1 cases=$2 want=$3
shift 3
musts='' nots='' skips='' json=0 mpy='' mscript=''
nl='
'
while [ $# -gt 0 ]; do
    case $1 in
    -e) musts="$musts$2$nl"; shift 2 ;;
    -n) nots="$nots$2$nl"; shift 2 ;;
    -s) skips="$skips$2$nl"; shift 2 ;;
    --json) json=1; shift ;;
    -M) mpy=$2 mscript=$3; shift 3 ;;
    --) shift; break ;;
    *) echo "check_provider_test.sh: bad argument '$1'"; exit 2 ;;
    esac
done
if [ ! -d "$cases" ]; then
    echo "SKIP: no ONNX node cases at $cases"
    exit 77
fi

out=$(mktemp) || exit 1
all=$(mktemp) || exit 1
models=$(mktemp -d) || exit 1
trap 'rm -rf "$out" "$all" "$models"' EXIT
if [ -n "$mscript" ]; then
    "$mpy" "$mscript" "$models/cases"
    mrc=$?
    [ "$mrc" -eq 77 ] && exit 77
    [ "$mrc" -ne 0 ] && { echo "WRONG: $mscript failed ($mrc)"; exit 1; }
    set -- "$@" --models "$models/cases"
fi
echo "+ tessera check-provider --cases $cases $*"
# stdout apart: with --json it must be the JSON object alone
"$tessera" check-provider --cases "$cases" "$@" >"$out" 2>"$all"
rc=$?
cat "$out" "$all"
cat "$out" >>"$all"

fail=0
IFS=$nl
for re in $skips; do
    if grep -Eq -- "$re" "$all"; then
        echo "SKIP: output matches '$re': this machine cannot run the check"
        exit 77
    fi
done
if [ "$rc" -ne "$want" ]; then
    echo "WRONG: exit status $rc, wanted $want"
    fail=1
fi
for re in $musts; do
    grep -Eq -- "$re" "$all" || { echo "WRONG: no line matches '$re'"; fail=1; }
done
for re in $nots; do
    grep -Eq -- "$re" "$all" && { echo "WRONG: a line matches '$re'"; fail=1; }
done
unset IFS
if [ "$json" = 1 ] && command -v python3 >/dev/null 2>&1; then
    python3 - "$out" <<'PY' || fail=1
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)  # the whole output: one object, nothing else
for key in ("plugin", "provider", "version", "devices", "checks", "totals"):
    assert key in doc, f"no '{key}'"
names = [c["name"] for c in doc["checks"]]
assert names == ["load", "negotiation", "op_conformance", "unknown_option", "wrong_shape",
                 "concurrency_sessions", "concurrency_shared", "device_copies", "compiled_cache",
                 "model_round_trip"], names
for c in doc["checks"]:
    assert c["status"] in ("PASS", "FAIL", "SKIP") and isinstance(c["detail"], str), c
t = doc["totals"]
assert t["failed"] == sum(c["status"] == "FAIL" for c in doc["checks"]), t
assert t["passed"] + t["failed"] + t["skipped"] == len(doc["checks"]), t
for d in doc["devices"]:
    assert d["memory_kind"] in ("host", "device") and d["name"], d
print("JSON ok:", t)
PY
fi
[ "$fail" = 0 ] && echo "OK"
exit "$fail"
