#!/bin/sh
# The OpenCL provider's compiled-piece cache (--cache-dir): on a small CNN
# (make_opencl_case.py, expected output from numpy) the first session
# compiles each OpenCL piece and stores a blob for it; the second imports
# every one (the host's "imported from" and the provider's "none compiled"
# line per piece, as many as --explain shows OpenCL pieces; profile=1
# counts no program built from source while compiling) and gives the same
# bytes and numpy's answer. Then spoil_blobs.py spoils five blobs five
# ways (host-level damage; provider-level damage, cut, another piece's
# blob, a binary the driver refuses): each is refused with a warning naming
# the file and why, its piece compiled, the rest imported, the output the
# same. A last session with cpu_kernels=0 (other programs) sees every blob
# refused by the compatibility string, which names the build option.
# Exit 77 (skip) without an OpenCL device or without python3-onnx.
# usage: run_opencl_cache.sh TESSERA PLUGIN.so PYTHON WORKDIR
set -u
tessera=$1 plugin=$2 python=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

if ! TESSERA_PROVIDER_PATH=$(dirname "$plugin") "$tessera" providers 2>/dev/null | awk '/^opencl /{o=1; next} /^[^ ]/{o=0} o && /device 0:/{f=1} END{exit !f}'; then
    echo "SKIP: no OpenCL platform or device found (on Debian: apt-get install pocl-opencl-icd)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work/cache" || exit 1
"$python" "$here/make_opencl_case.py" make "$work/case"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "make_opencl_case.py exited $rc"
# The provider's own program cache (kernels built at run time) stays in here.
XDG_CACHE_HOME=$work/xdg
export XDG_CACHE_HOME

run() { # run NAME [options]: stdout, stderr in $work/NAME.{out,err}, outputs in $work/NAME/
    name=$1; shift
    "$tessera" run "$work/case" --case "$work/case" -p "$plugin,reference" --cache-dir "$work/cache" \
        --log-level info -o "$work/$name" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
        fail "$name: exit $? ($(cat "$work/$name.err"))"
    "$python" "$here/make_opencl_case.py" check "$work/case" "$work/$name" || fail "$name: output is not numpy's"
}
has() { grep -q -- "$2" "$work/$1.err" || fail "$1: no '$2' in: $(cat "$work/$1.err")"; }
count() { grep -c -- "$2" "$work/$1.err"; }
same() { cmp -s "$work/first/y.pb" "$work/$1/y.pb" || fail "$1: output differs from the first session's"; }

run first --explain --provider-option opencl:profile=1
pieces=$(grep -cE '^[0-9]+ +opencl ' "$work/first.out")
blobs=$(ls "$work/cache" | grep -c '^opencl-.*\.tsrpiece$')
[ "$pieces" -ge 6 ] || fail "first: --explain shows $pieces OpenCL pieces, the model makes at least 6"
[ "$blobs" = "$pieces" ] || fail "first: $blobs blobs stored for $pieces OpenCL pieces"
[ "$(count first 'imported from')" = 0 ] || fail "first: imported from an empty cache"
# with the host's cache on, the programs compile builds are not read from
# the provider's own program cache: they are compiled here
has first "programs: [1-9][0-9]* built from source while compiling pieces"

run second --provider-option opencl:profile=1
[ "$(count second "imported from '.*/opencl-")" = "$pieces" ] || fail "second: not all $pieces pieces imported: $(cat "$work/second.err")"
[ "$(count second 'none compiled$')" = "$pieces" ] || fail "second: the provider did not import $pieces pieces"
[ "$(count second 'compiled-piece cache:')" = 0 ] || fail "second: a blob was refused: $(cat "$work/second.err")"
has second "programs: 0 built from source while compiling pieces, .*; [1-9][0-9]* made from imported pieces' binaries"
same second

"$python" "$here/spoil_blobs.py" "$work/cache" >"$work/spoiled.list" || fail "spoil_blobs.py: $(cat "$work/spoiled.list")"
run spoiled
while read -r kind file; do
    case $kind in
    host_damaged) why="(damaged (its checksum does not match))" ;;
    damaged) why="(the provider refused it: opencl: not a usable compiled piece: damaged (its checksum does not match))" ;;
    cut) why="(the provider refused it: opencl: not a usable compiled piece: program 1 of 1 claims" ;;
    foreign) why="(the provider refused it: opencl: not a usable compiled piece: it holds no binary of program" ;;
    bad_binary) why="(the provider refused it: opencl: the driver refused a program binary" ;;
    *) fail "spoil_blobs.py: unknown kind $kind" ;;
    esac
    has spoiled "'$work/cache/$file' not used $why"
done <"$work/spoiled.list"
[ "$(count spoiled 'not used (')" = 5 ] || fail "spoiled: not 5 refusals: $(cat "$work/spoiled.err")"
[ "$(count spoiled "imported from '.*/opencl-")" = $((pieces - 5)) ] || fail "spoiled: the unspoiled pieces were not all imported"
same spoiled

# the refused pieces were compiled and stored again
run again
[ "$(count again "imported from '.*/opencl-")" = "$pieces" ] || fail "again: not all $pieces pieces imported: $(cat "$work/again.err")"
same again

# cpu_kernels=0 builds other programs: the compatibility string says so
run gpu_shaped --provider-option opencl:cpu_kernels=0
refusal="not used (written for 'opencl [^;]*; build options '' cpu_kernels=1; .*', this provider is 'opencl [^;]*; build options '' cpu_kernels=0; "
[ "$(count gpu_shaped "$refusal")" = "$pieces" ] ||
    fail "gpu_shaped: not every blob refused for its build options: $(cat "$work/gpu_shaped.err")"
[ "$(count gpu_shaped 'imported from')" = 0 ] || fail "gpu_shaped: a blob of other programs was imported"
echo "opencl piece cache: ok ($pieces pieces)"
