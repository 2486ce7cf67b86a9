#!/usr/bin/env bash
# Builds Tessera and runs every test: the normal build with -Werror (unit,
# ABI and conformance tests); then the unit, provider, conformance, CLI and
# compare tests under ASan and UBSan; then the threading tests under TSan;
# then each libFuzzer target for a fixed
# number of inputs with a fixed seed (tools/fuzz.sh; clang).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -DTESSERA_WERROR=ON >/dev/null
cmake --build build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS")
cmake -S . -B build-asan -DTESSERA_SANITIZE=ON -DTESSERA_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$JOBS"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest -L "unit|onednn|opencl|conformance|cli|compare" \
  --output-on-failure -j"$JOBS")
# ThreadSanitizer over the threading tests, reference provider only (oneDNN's
# OpenMP runtime and PoCL are not instrumented: their synchronisation is
# invisible to it).
cmake -S . -B build-tsan -DTESSERA_TSAN=ON -DTESSERA_WERROR=ON >/dev/null
cmake --build build-tsan -j"$JOBS" --target tessera tessera_provider_reference threads_runs
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest -L threads --output-on-failure -j"$JOBS")
FUZZ_SEED=1 FUZZ_RUNS=${FUZZ_RUNS:-3000} tools/fuzz.sh all 120
echo "all tests passed"
