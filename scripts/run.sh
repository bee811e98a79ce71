#!/usr/bin/env bash
# Sets up, builds the tools natively and runs the main job on the default model.
# For now the main job describes the model with gguf-info; text generation
# replaces it when the runtime lands.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$ROOT/scripts/setup.sh"
build_tree native -DCMAKE_BUILD_TYPE=Release -DENGINE_BUILD_TESTS=OFF -DENGINE_BUILD_BENCH=OFF
model="${1:-$ROOT/../shared/models/stories260K.gguf}"
exec "$BUILD/native/bin/gguf-info" --kernels "$model"
