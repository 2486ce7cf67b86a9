#!/usr/bin/env bash
# The value_types ctest: after session creation's type inference, every value
# of every conformance case and of every small zoo model has a known element
# type (value_types.c says what "known" means for sequences and optionals).
#
# usage: run_value_types.sh VALUE_TYPES SUITE WORK
#   VALUE_TYPES  the checker (tests/value_types/value_types.c)
#   SUITE        folder holding node/, pytorch-converted/, pytorch-operator/,
#                simple/ (../shared/onnx-tests, or the generated onnx 1.12
#                suite of the onnx_suite fixture); the folders present are
#                checked
#   WORK         where the small zoo is written (tools/zoo/make_zoo.py)
#
# Two runs over the same models:
#   1. as a session infers: the model's declared types stay. Nothing may be
#      unknown but what allowed_unknown.txt lists.
#   2. --undeclared: the types the models declare for node outputs are
#      dropped first, so each must come from the rules, and what the rules
#      give is compared with what was declared (a single-op case declares
#      its output, which would hide a missing rule). Exceptions:
#      allowed_undeclared.txt.
# Exit 77 (ctest: skipped) when there is neither a suite nor a zoo to check.
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 VALUE_TYPES SUITE WORK" >&2
  exit 2
fi
checker=$1
suite=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3

paths=()
for f in node pytorch-converted pytorch-operator simple; do
  [ -d "$suite/$f" ] && paths+=("$suite/$f")
done
[ ${#paths[@]} -eq 0 ] && echo "run_value_types.sh: no conformance cases under $suite"

# The small zoo, made again only when its generator changed (it takes a few
# seconds of the test's time).
mkdir -p "$work"
zoo=$work/zoo
stamp=$work/zoo.stamp
if [ -x "$py" ] && "$py" -c "import onnx, numpy" 2>/dev/null; then
  if [ ! -e "$stamp" ] || [ -n "$(find "$root/tools/zoo" -name '*.py' -newer "$stamp")" ]; then
    rm -rf "$zoo" "$stamp"
    if "$py" "$root/tools/zoo/make_zoo.py" --out "$zoo" --size small >"$work/make_zoo.log" 2>&1; then
      touch "$stamp"
    else
      echo "run_value_types.sh: make_zoo.py failed:" >&2
      cat "$work/make_zoo.log" >&2
      exit 1
    fi
  fi
  paths+=("$zoo")
else
  echo "run_value_types.sh: $py has no onnx/numpy: the zoo is not checked"
fi
[ ${#paths[@]} -eq 0 ] && exit 77

status=0
echo "== as a session infers (allowed: allowed_unknown.txt)"
"$checker" --allow "$here/allowed_unknown.txt" --by-op "${paths[@]}" || status=1
echo
echo "== --undeclared: every node output typed by the rules alone (allowed: allowed_undeclared.txt)"
"$checker" --undeclared --allow "$here/allowed_undeclared.txt" --by-op "${paths[@]}" || status=1
exit $status
