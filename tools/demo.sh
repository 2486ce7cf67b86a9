#!/usr/bin/env bash
# The main job: set up, build, and run a real model on each provider set,
# showing where every node ran and the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup_debian.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
MODELS=build/models
if [ -x ../shared/bench/make_models.py ]; then
  [ -f $MODELS/resnet50.onnx ] || /usr/bin/python3 ../shared/bench/make_models.py --out $MODELS mlp resnet50 >/dev/null
  MODEL=$MODELS/resnet50.onnx
else
  MODEL=$(/usr/bin/python3 tools/make_demo_model.py --out $MODELS)
fi
build/bin/tessera providers
# The provider sets to compare: every accelerated provider found, each with
# the reference provider behind it for what it declines.
SETS=(reference)
for p in onednn opencl; do
  if build/bin/tessera providers 2>/dev/null | grep -q "^$p "; then SETS+=("$p,reference"); fi
done
for set in "${SETS[@]}"; do
  echo "== $MODEL with -p $set: where each node runs, and the outputs"
  build/bin/tessera run "$MODEL" -p "$set" --explain
done
echo "== $MODEL with -p auto: every provider found (an OpenCL platform that is only PoCL on the CPU stays out unless named), each node where its estimated time, copies included, is least"
build/bin/tessera run "$MODEL" -p auto --explain
if [ ${#SETS[@]} -gt 1 ]; then
  args=()
  for set in "${SETS[@]}"; do args+=(-p "$set"); done
  echo "== the same inputs on every set, compared with the first"
  build/bin/tessera compare "$MODEL" "${args[@]}" || true
  echo "== latency with -p ${SETS[1]}"
  build/bin/tessera bench "$MODEL" -p "${SETS[1]}" --runs 10 --warmup 2
fi
