// smollm3 (SmolLM3): llama's layers, except that every fourth one (layers 3,
// 7, 11, ...) applies no RoPE at all (NoPE). llama.cpp fixes the interval at 4
// (src/models/smollm3.cpp, n_no_rope_layer_step) and its converter writes no
// key for it, so the file marks nothing: the interval is the family's.
#include "engine/arch/families.h"

namespace engine::arch {
namespace {

constexpr uint32_t kNoRopeInterval = 4;

LayerSpec smollm3_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  if ((il + 1) % kNoRopeInterval == 0) l.attention.rope.n_rot = 0;  // rotates nothing
  return l;
}

}  // namespace

Architecture smollm3() {
  Architecture a;
  a.name = "smollm3";
  a.keys = llama_converter_keys();  // its converter is llama's
  a.tensors = transformer_tensors();
  a.layer = smollm3_layer;
  return a;
}

}  // namespace engine::arch
