// gemma3 (Gemma 3 text models): Gemma 2's layers with an RMSNorm over each
// head of Q and K and no attention soft-cap. When the file gives a
// sliding_window, five of each six layers (sliding_window_pattern) attend to
// that window with their own RoPE base (rope.freq_base_swa, default 10000) and
// no RoPE scaling; the others use rope.freq_base and the file's linear
// scaling. The final logits are soft-capped only when the file says so.
#include "engine/arch/families.h"
#include "engine/arch/gemma.h"

namespace engine::arch {
namespace {

LayerSpec gemma3_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = gemma_layer(c, il, /*layers_27b=*/62);
  AttentionSpec& a = l.attention;
  a.qk_norm = true;
  const auto window = static_cast<uint32_t>(c.value(Param::sliding_window, 0));
  const auto period = static_cast<uint32_t>(c.value(Param::sliding_window_pattern, 6));
  if (window > 0 && is_sliding_layer(il, period)) {
    a.window = window;
    a.rope.freq_base = static_cast<float>(c.value(Param::rope_freq_base_swa, 10000.0));
    a.rope.freq_scale = 1.0f;
  }
  return l;
}

void gemma3_model(ModelConfig& c) {
  scale_gemma_embeddings(c);
  c.final_softcap = static_cast<float>(c.value(Param::final_softcap, 0.0));
}

}  // namespace

Architecture gemma3() {
  Architecture a;
  a.name = "gemma3";
  a.keys = written(written(gemma_keys(), Param::rope_scaling_type, Written::if_not_default),
                   Param::rope_scaling_factor, Written::if_not_default);
  a.tensors = transformer_tensors();
  a.layer = gemma3_layer;
  a.model = gemma3_model;
  return a;
}

}  // namespace engine::arch
