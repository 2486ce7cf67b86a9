#!/usr/bin/env bash
# Builds Tessera and runs every test: the normal build with -Werror (unit,
# ABI and conformance tests), then the unit and provider tests under ASan and
# UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -DTESSERA_WERROR=ON >/dev/null
cmake --build build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS")
cmake -S . -B build-asan -DTESSERA_SANITIZE=ON -DTESSERA_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$JOBS"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest -L "unit|onednn|opencl" --output-on-failure -j"$JOBS")
echo "all tests passed"
