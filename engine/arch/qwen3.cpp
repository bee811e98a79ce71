// qwen3 (Qwen3 dense): llama's layers with NeoX RoPE and an RMSNorm over each
// head of Q and K before RoPE; the head size is given (128 where
// n_embd / n_head is 64 in the small models).
#include "engine/arch/families.h"

namespace engine::arch {
namespace {

LayerSpec qwen3_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  l.attention.rope.style = ops::RopeStyle::neox;
  l.attention.qk_norm = true;
  return l;
}

}  // namespace

Architecture qwen3() {
  Architecture a;
  a.name = "qwen3";
  // The converter writes the head size whatever it is.
  a.keys = written(written(transformer_keys(), Param::key_length, Written::always), Param::value_length,
                   Written::always);
  a.tensors = transformer_tensors();
  a.layer = qwen3_layer;
  return a;
}

}  // namespace engine::arch
