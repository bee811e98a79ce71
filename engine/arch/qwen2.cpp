// qwen2 (Qwen2, Qwen2.5): llama's layers with NeoX RoPE (pairs half a head
// apart) and biases on the Q, K and V projections.
#include "engine/arch/families.h"

namespace engine::arch {
namespace {

LayerSpec qwen2_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  l.attention.rope.style = ops::RopeStyle::neox;
  l.attention.qkv_bias = true;
  return l;
}

}  // namespace

Architecture qwen2() {
  Architecture a;
  a.name = "qwen2";
  a.keys = transformer_keys();
  a.tensors = transformer_tensors();
  a.layer = qwen2_layer;
  return a;
}

}  // namespace engine::arch
