#!/bin/sh
# Runs the conformance cases of the ops the OpenCL provider claims with
# `-p opencl,reference`. Exit 77 (ctest SKIP) only when no OpenCL platform
# or device exists at all.
# usage: run_conformance.sh TESSERA PLUGIN NODE_CASES_DIR CASE_LIST
set -u
tessera=$1 plugin=$2 cases=$3 list=$4

if ! "$tessera" providers 2>/dev/null | awk '/^opencl /{o=1; next} /^[^ ]/{o=0} o && /device 0:/{f=1} END{exit !f}'; then
    echo "SKIP: no OpenCL platform or device found (on Debian: apt-get install pocl-opencl-icd)"
    exit 77
fi

set --
while IFS= read -r name; do
    case $name in ''|'#'*) continue ;; esac
    [ -d "$cases/$name" ] && set -- "$@" "$cases/$name"
done < "$list"
if [ $# -eq 0 ]; then
    echo "no listed case found under $cases"
    exit 1
fi
exec "$tessera" test -j 2 -p "$plugin,reference" "$@"
