// phi3 (Phi-3, Phi-3.5, Phi-4-mini): llama's layers with NeoX RoPE over the
// first rope.dimension_count values of each head (3/4 of them in Phi-4-mini),
// one fused attn_qkv.weight, and the SwiGLU gate fused into ffn_up.weight (2 x
// n_ff rows, the gate's first). LongRoPE: per-pair frequency divisors
// rope_factors_long/short.weight, the long ones when the session's context
// exceeds rope.scaling.original_context_length, and rope.scaling.attn_factor
// on cos and sin. llama.cpp's src/models/phi3.cpp is the specification.
#include "engine/arch/families.h"

namespace engine::arch {
namespace {

LayerSpec phi3_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  l.attention.rope.style = ops::RopeStyle::neox;
  l.attention.fused_qkv = true;
  l.fused_gate_up = true;
  // The converter writes attention.sliding_window (Phi-3-mini: 2047,
  // Phi-4-mini: 262144), and llama.cpp reads it but attends to every position
  // all the same (its phi3 sliding window has been disabled since
  // ggml-org/llama.cpp#13676, as the files give no window pattern): so do we,
  // to generate what it generates. The model's description says so
  // (ModelConfig::describe).
  l.attention.window = 0;
  return l;
}

}  // namespace

Architecture phi3() {
  using P = Param;
  using W = Written;
  Architecture a;
  a.name = "phi3";
  a.keys = written(transformer_keys(), P::rope_dimension_count, W::always);
  a.keys.push_back({"rope.scaling.original_context_length", P::rope_original_context});
  a.keys.push_back({"attention.sliding_window", P::sliding_window});
  // Written with the LongRoPE factors only.
  a.keys.push_back({"rope.scaling.attn_factor", P::rope_attn_factor, false, false, W::if_not_default});
  a.tensors = transformer_tensors();
  a.layer = phi3_layer;
  return a;
}

}  // namespace engine::arch
