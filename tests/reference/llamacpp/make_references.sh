#!/usr/bin/env bash
# Regenerates the llama.cpp references of models.json (all, or the models
# named as arguments): synth writes each model, logits_dump (logits_dump.cpp,
# built against an already built llama.cpp, see COMMANDS.md) runs it, with
# each KV cache type of the model's "kv" list (default f32), and for a model
# with a "prompts" list once more per prompt length: the first P tokens of
# t_i = (1 + 7 i + 13 i^2) mod n_vocab, a greedy decode of "decode" tokens, a
# 512-token context, the last 8 prompt rows kept (<name>-<type>-p<P>).
#   LLAMA_DIR=/path/to/llama.cpp SYNTH=build/native/bin/synth \
#     tests/reference/llamacpp/make_references.sh [MODEL...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LLAMA_DIR:?set LLAMA_DIR to a llama.cpp checkout built in LLAMA_DIR/build}"
: "${SYNTH:?set SYNTH to the synth binary}"
dump=${DUMP:-$LLAMA_DIR/build/bin/logits_dump}
commit=$(cat "$LLAMA_DIR/ORACLE_COMMIT" 2>/dev/null || git -C "$LLAMA_DIR" rev-parse HEAD)
if [[ ! -x $dump || $here/logits_dump.cpp -nt $dump ]]; then
  g++ -O2 -std=c++17 "$here/logits_dump.cpp" -I"$LLAMA_DIR/include" -I"$LLAMA_DIR/ggml/include" \
    -L"$LLAMA_DIR/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$LLAMA_DIR/build/bin" -o "$dump"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tokens=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tokens'])" "$here/models.json")
python3 - "$here/models.json" "$@" > "$tmp/list" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
want = set(sys.argv[2:])
for model in m["models"]:
    if want and model["name"] not in want:
        continue
    for t in model["types"]:
        for kv in model.get("kv", ["f32"]):
            for p in [0] + model.get("prompts", []):
                print(model["name"], t, kv, p, model.get("decode", 16), model["synth"])
PY
while read -r name type kv prompt decode args; do
  gguf=$tmp/$name-$type.gguf
  # A model with a "kv" list: one reference per KV cache type, named after it.
  out=$name-$type
  [[ $kv == f32 ]] || out=$name-$type-$kv
  # shellcheck disable=SC2086  # the arguments are words
  "$SYNTH" $args --type "$type" -o "$gguf" --no-progress > /dev/null
  sha=$(sha256sum "$gguf" | cut -d' ' -f1)
  extra=()
  case_tokens=$tokens
  if [[ $prompt != 0 ]]; then
    vocab=$(grep -o -- '--n-vocab [0-9]*' <<< "$args" | cut -d' ' -f2)
    case_tokens=$(python3 -c "import sys; v, p = map(int, sys.argv[1:]); print(','.join(str((1 + 7 * i + 13 * i * i) % v) for i in range(p)))" "$vocab" "$prompt")
    out=$out-p$prompt
    extra=(--greedy "$decode" --ctx 512 --ubatch $((prompt > 64 ? prompt : 64)) --keep-prompt-rows 8)
  fi
  "$dump" "$gguf" "$here/$out.llamacpp.json" --tokens "$case_tokens" --kv "$kv" "${extra[@]}" --sha256 "$sha" \
    --commit "$commit" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
  echo "$out: $(grep -o '"greedy": \[[^]]*\]' "$here/$out.llamacpp.json")"
done < "$tmp/list"
