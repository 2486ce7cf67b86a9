# Shared by the CLI test scripts (cli_smoke.sh, cli_inputs.sh), sourced
# after they set $work and failures=0.

# expect RC DESCRIPTION -- COMMAND...: runs COMMAND, output to $work/out.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$work/out" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit status $got, expected $want; output:"
    sed 's/^/    /' "$work/out"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

# grep_out PATTERN DESCRIPTION: the last command's output must match.
grep_out() {
  if grep -Eq -- "$1" "$work/out"; then
    echo "ok: $2"
  else
    echo "FAIL: $2: no line matches '$1' in:"
    sed 's/^/    /' "$work/out"
    failures=$((failures + 1))
  fi
}
