#!/usr/bin/env bash
# Sets up, builds the tools natively and runs the main job: text generation with
# the default model (../shared/models/stories260K.gguf), greedy, 200 tokens —
# the text llama2.c documents for this model. Arguments replace the defaults:
#   scripts/run.sh -m other.gguf -p "Once upon a time" -n 64
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$ROOT/scripts/setup.sh"
BUILD_TARGETS=run build_tree native "${NATIVE_OPTIONS[@]}"
if [ "$#" -eq 0 ]; then
  set -- -m "$ROOT/../shared/models/stories260K.gguf" -n 200 --temp 0
fi
exec "$BUILD/native/bin/run" "$@"
