#!/usr/bin/env bash
# Sets up, builds the tools natively and runs the main job: text generation with
# the default model (models/stories260K.gguf, in the repository), greedy, 200
# tokens — the text llama2.c documents for this model. Arguments replace the
# defaults:
#   scripts/run.sh -m other.gguf -p "Once upon a time" -n 64
# Build progress goes to stderr; stdout has only the generated text.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$ROOT/scripts/setup.sh"
# Every tool, not only run: the README's next commands use gguf-info, tokenize,
# quantize, synth, bench and doctor from the same tree.
BUILD_TARGETS=tools build_tree native "${NATIVE_OPTIONS[@]}"
if [ "$#" -eq 0 ]; then
  set -- -m "$ROOT/models/stories260K.gguf" -n 200 --temp 0
fi
exec "$BUILD/native/bin/run" "$@"
