// gemma2 (Gemma 2): Gemma's sandwich-normed GeGLU layers, every other layer
// (sliding_window_pattern, default 2) attending to the last sliding_window
// positions (default 4096), and soft-capped attention scores (default 50) and
// final logits (default 30).
#include <cmath>

#include "engine/arch/families.h"
#include "engine/arch/gemma.h"

namespace engine::arch {
namespace {

LayerSpec gemma2_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = gemma_layer(c, il, /*layers_27b=*/46);
  AttentionSpec& a = l.attention;
  const auto period = static_cast<uint32_t>(c.value(Param::sliding_window_pattern, 2));
  if (is_sliding_layer(il, period)) {
    a.window = static_cast<uint32_t>(c.value(Param::sliding_window, 4096));
    a.rope.freq_base = static_cast<float>(c.value(Param::rope_freq_base_swa, c.rope_freq_base));
  }
  a.softcap = static_cast<float>(c.value(Param::attn_softcap, 50.0));
  return l;
}

void gemma2_model(ModelConfig& c) {
  scale_gemma_embeddings(c);
  c.final_softcap = static_cast<float>(c.value(Param::final_softcap, 30.0));
}

}  // namespace

Architecture gemma2() {
  Architecture a;
  a.name = "gemma2";
  a.keys = gemma_keys();
  a.keys.push_back({"attn_logit_softcapping", Param::attn_softcap});
  a.tensors = transformer_tensors();
  a.layer = gemma2_layer;
  a.model = gemma2_model;
  return a;
}

}  // namespace engine::arch
