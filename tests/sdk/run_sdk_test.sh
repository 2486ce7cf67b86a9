#!/usr/bin/env bash
# The installed SDK end to end (ctest sdk_install): install the build to a
# fresh prefix, then, seeing only that prefix through pkg-config (no -I into
# the source tree), build a vendor plugin and an application, run the
# application on it, and let the installed CLI discover the plugin in the
# install tree's provider directory. Then build examples/provider with CMake
# from the install alone and check it on a model numpy computed.
# Usage: run_sdk_test.sh BUILD_DIR SDK_SOURCE_DIR LIBDIR [CC] [CMAKE]
# Exit 77 (skip) when pkg-config or python3-onnx is missing.
set -euo pipefail
build=$1
src=$2
libdir=$3
cc=${4:-cc}
cmake=${5:-cmake}
python=/usr/bin/python3

command -v pkg-config >/dev/null || { echo "sdk: SKIP: pkg-config not installed"; exit 77; }
"$python" -c 'import onnx, numpy' 2>/dev/null || { echo "sdk: SKIP: python3-onnx/numpy missing"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "sdk: FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }

# Only the SDK's own pkg-config files, and no plugin directory from outside.
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
unset TESSERA_PROVIDER_PATH
pkg-config --exists tessera tessera-provider || fail "pkg-config cannot find tessera / tessera-provider in $PKG_CONFIG_PATH"
providerdir=$(pkg-config --variable=providerdir tessera-provider)
[ -z "$(pkg-config --libs tessera-provider)" ] || fail "tessera-provider.pc has Libs: a plugin must not link libtessera"

# What was installed, and nothing else.
for h in tessera.h provider.h provider_util.h types.h; do
  [ -f "$prefix/include/tessera/$h" ] || fail "$h not installed in $prefix/include/tessera"
done
for l in libtessera.so libtessera.so.0; do
  [ -L "$prefix/$libdir/$l" ] || fail "SONAME link $l not installed in $prefix/$libdir"
done
[ "$(ls "$prefix/bin")" = tessera ] || fail "bin/ holds more than the CLI: $(ls "$prefix/bin" | tr '\n' ' ')"
[ -f "$providerdir/libtessera_provider_reference.so" ] || fail "reference plugin not in $providerdir"
for f in "$providerdir"/*; do
  case $(basename "$f") in
    libtessera_provider_reference.so|libtessera_provider_onednn.so|libtessera_provider_opencl.so) ;;
    *) fail "unexpected file installed in $providerdir: $f" ;;
  esac
  ! readelf -d "$f" | grep -q 'NEEDED.*libtessera\.so' || fail "$f links libtessera"
done
readelf -d "$prefix/bin/tessera" | grep -Eq "R(UN)?PATH.*\\\$ORIGIN/\.\./$libdir" ||
  fail "bin/tessera has no \$ORIGIN/../$libdir rpath"

# a. The vendor's plugin, from the installed headers alone.
plugin=$tmp/vendor/libtessera_provider_sdkrelu.so
mkdir -p "$tmp/vendor"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
  $(pkg-config --cflags tessera-provider) -o "$plugin" "$src/sdk_relu_provider.c" ||
  fail "building the plugin against the installed headers"
! readelf -d "$plugin" | grep -q 'NEEDED.*libtessera\.so' || fail "the vendor plugin links libtessera"

# A one-node model y = Relu(x), x float [2,3], and an input with negatives.
"$python" - "$tmp" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "sdk_relu",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, d + "/relu.onnx")
x = np.array([[-4.0, -0.5, 0.0], [0.25, 2.0, -7.0]], dtype=np.float32)
open(d + "/x.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
PY

# b. The application, linked against the installed library.
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags tessera) -o "$tmp/sdk_app" \
  "$src/sdk_app.c" $(pkg-config --libs tessera) -Wl,-rpath,"$(pkg-config --variable=libdir tessera)" ||
  fail "building the application against the installed SDK"
"$tmp/sdk_app" "$tmp/relu.onnx" "$plugin" reference || fail "sdk_app with the plugin by path"

# c. The vendor installs into providerdir; discovery finds it by name.
cp "$plugin" "$providerdir/"
"$tmp/sdk_app" "$tmp/relu.onnx" sdkrelu reference || fail "sdk_app with the plugin by name"
"$prefix/bin/tessera" providers >"$tmp/providers.txt" || { cat "$tmp/providers.txt"; fail "tessera providers"; }
# The listed paths ("bin/../lib/...") and providerdir ("pkgconfig/../..")
# spell the same directory differently: compare them resolved.
sed -n 's/^  path: //p' "$tmp/providers.txt" | xargs -r realpath >"$tmp/paths.txt"
for p in sdkrelu reference; do
  grep -qxF "$(realpath "$providerdir/libtessera_provider_$p.so")" "$tmp/paths.txt" ||
    { cat "$tmp/providers.txt"; fail "installed tessera providers does not list $p in $providerdir"; }
done
"$prefix/bin/tessera" run "$tmp/relu.onnx" -p sdkrelu,reference --explain -i "x=$tmp/x.pb" \
  -o "$tmp/out" >"$tmp/run.txt" || { cat "$tmp/run.txt"; fail "installed tessera run -p sdkrelu,reference"; }
grep -q sdkrelu "$tmp/run.txt" || { cat "$tmp/run.txt"; fail "tessera run --explain does not show sdkrelu"; }
"$python" - "$tmp" <<'PY' || fail "tessera run output is not relu(x)"
import sys
import numpy as np
import onnx
from onnx import numpy_helper
d = sys.argv[1]
x = numpy_helper.to_array(onnx.load_tensor(d + "/x.pb"))
y = numpy_helper.to_array(onnx.load_tensor(d + "/out/y.pb"))
want = np.maximum(x, 0)
if y.shape != want.shape or not np.array_equal(y, want):
    sys.exit("y = %s, want %s" % (y.tolist(), want.tolist()))
PY

# d. examples/provider, the vendor's starting point: configured with CMake
#    seeing only the installed SDK (PKG_CONFIG_PATH above), installed into
#    providerdir, then run on a model with its fused pattern, a plain MatMul
#    and a node it declines, against outputs numpy computed.
example=$(cd "$src/../../examples/provider" && pwd)
tessera=$prefix/bin/tessera
pretend=$providerdir/libtessera_provider_pretend.so
{ "$cmake" -S "$example" -B "$tmp/example-build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
    -DPRETEND_WERROR=ON && "$cmake" --build "$tmp/example-build" && "$cmake" --install "$tmp/example-build"; } \
  >"$tmp/example.log" 2>&1 || { cat "$tmp/example.log"; fail "building examples/provider against the installed SDK"; }
[ -f "$pretend" ] || { cat "$tmp/example.log"; fail "examples/provider did not install into $providerdir"; }
! readelf -d "$pretend" | grep -q 'NEEDED.*libtessera\.so' || fail "the example plugin links libtessera"
exports=$(nm -D --defined-only "$pretend" | awk '$2 == "T" {print $3}')
[ "$exports" = tessera_provider_entry ] || fail "the example plugin exports more than its entry: $exports"
# It is also meant to compile as C99 with -pedantic.
# shellcheck disable=SC2046
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags tessera-provider) \
  "$example/pretend_device.c" || fail "examples/provider/pretend_device.c is not clean C99"

cases=$tmp/cases
case=$cases/test_pretend_example
"$python" "$example/make_example_model.py" "$case" || fail "make_example_model.py"
"$tessera" partition "$case/model.onnx" -p "$pretend,reference" >"$tmp/partition.txt" 2>&1 ||
  { cat "$tmp/partition.txt"; fail "tessera partition -p pretend,reference"; }
# The piece table has one line per piece: number, provider, node count, ops.
partition_has() {
  grep -Eq "$1" "$tmp/partition.txt" || { cat "$tmp/partition.txt"; fail "tessera partition: $2"; }
}
partition_has '^[0-9]+ +pretend +3 +MatMul,Add,Relu ' "pretend did not take MatMul+Add+Relu as one piece"
partition_has 'pretend: fused matmul_bias_relu' "the fused piece does not describe its kernel"
partition_has '^[0-9]+ +pretend +1 +MatMul ' "pretend did not take the plain MatMul"
partition_has '^[0-9]+ +reference +1 +Sigmoid ' "reference does not run the declined Sigmoid"
partition_has "pretend +Sigmoid 'gate': " "pretend gave no reason for declining Sigmoid"
partition_has ' h +pretend -> host' "no copy device -> host before the declined node"
partition_has ' g +host -> pretend' "no copy host -> device after the declined node"
# Outputs against numpy's, by path, and by name (found in providerdir) on two chips.
"$tessera" test "$case" -p "$pretend,reference" -v >"$tmp/test.txt" 2>&1 ||
  { cat "$tmp/test.txt"; fail "tessera test with the example plugin"; }
"$tessera" test "$case" -p pretend,reference --provider-option pretend:devices=2 -v >"$tmp/test2.txt" 2>&1 ||
  { cat "$tmp/test2.txt"; fail "tessera test with the example plugin on two devices"; }
"$tessera" run "$case/model.onnx" -p "$pretend,reference" --case "$case" >"$tmp/run2.txt" 2>&1 ||
  { cat "$tmp/run2.txt"; fail "tessera run with the example plugin"; }
# An unknown option is refused, by name.
! "$tessera" run "$case/model.onnx" -p "$pretend,reference" --provider-option pretend:colour=blue \
  >"$tmp/option.txt" 2>&1 || fail "the example plugin accepted an unknown option"
grep -q "'colour'" "$tmp/option.txt" || { cat "$tmp/option.txt"; fail "the refusal does not name the option"; }
# The whole-plugin checker, when this build has it: the example case, then a
# sample of the ONNX node cases of its ops where a suite is at hand.
if "$tessera" help check-provider >/dev/null 2>&1; then
  "$tessera" check-provider "$pretend" --cases "$cases" >"$tmp/check.txt" 2>&1 ||
    { cat "$tmp/check.txt"; fail "tessera check-provider on the example plugin"; }
  grep -q '^PASS op_conformance' "$tmp/check.txt" || { cat "$tmp/check.txt"; fail "check-provider ran no case"; }
  for suite in "${TESSERA_ONNX_TESTS:-/nonexistent}/node" "$src/../../../shared/onnx-tests/node" \
    "$build/tests/conformance/onnx112-suite/node"; do
    [ -d "$suite" ] || continue
    "$tessera" check-provider "$pretend" --cases "$suite" --ops Relu,Add,MatMul --max-cases 20 \
      >"$tmp/check_node.txt" 2>&1 || { cat "$tmp/check_node.txt"; fail "tessera check-provider on $suite"; }
    break
  done
else
  echo "sdk: note: this build has no tessera check-provider; skipped"
fi
echo "sdk: ok (installed to a temporary prefix, plugin, application and examples/provider built from it)"
