#!/bin/sh
# An unnamed OpenCL provider stays out when PoCL's CPU device is the only
# platform (ocl_icd_probe.c), starts when the ICD files cannot be read for
# certain, and always starts when named. Skips (77) where the machine has
# another OpenCL platform or no OpenCL provider.
# usage: unnamed_test.sh TESSERA MODEL
set -u
tessera=$1 model=$2
"$tessera" providers 2>/dev/null | grep -q '^opencl ' || { echo "no opencl provider"; exit 77; }
for f in /etc/OpenCL/vendors/*.icd; do
    case "$(basename "$(cat "$f" 2>/dev/null)")" in
        libpocl.so*) ;;
        *) echo "$f is not PoCL's"; exit 77 ;;
    esac
done
unset OCL_ICD_VENDORS OCL_ICD_FILENAMES OPENCL_VENDOR_PATH POCL_DEVICES
fail=0
totals() { "$@" --explain 2>&1 | grep '^total:'; }
expect() { # DESCRIPTION PATTERN (grep -E) TEXT
    if printf '%s\n' "$3" | grep -Eq "$2"; then echo "ok: $1"; else echo "FAIL: $1: got: $3"; fail=1; fi
}
out=$("$tessera" run "$model" --log-level info 2>&1)
expect "default list: the info line says why opencl is out" "opencl: not used: .*PoCL" "$out"
expect "default list: opencl not in the session" "^total: [^;]*; onednn [0-9]+, reference 0, core 0$|^total: [^;]*; reference [0-9]+, core 0$" "$(totals "$tessera" run "$model")"
expect "cost policy: opencl not in the session" "^total:" "$(totals "$tessera" run "$model" -p auto | grep -v opencl)"
expect "POCL_DEVICES=pthread: still out" "^total:" "$(POCL_DEVICES=pthread totals "$tessera" run "$model" | grep -v opencl)"
expect "OCL_ICD_VENDORS set: cannot tell, opencl starts" "opencl 0" "$(OCL_ICD_VENDORS=/etc/OpenCL/vendors totals "$tessera" run "$model")"
expect "named: opencl starts and runs the nodes" "opencl [1-9]" "$(totals "$tessera" run "$model" -p opencl,reference)"
exit $fail
