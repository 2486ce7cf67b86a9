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
echo "== $MODEL on every provider found (accelerated first, reference last)"
build/bin/tessera run "$MODEL" --explain
echo "== $MODEL on the reference provider alone"
build/bin/tessera run "$MODEL" -p reference
