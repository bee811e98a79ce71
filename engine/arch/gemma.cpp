#include "engine/arch/gemma.h"

#include <cmath>

namespace engine::arch {

LayerSpec gemma_layer(const ModelConfig& c, uint32_t il, uint32_t layers_27b) {
  LayerSpec l = transformer_layer(c, il);
  AttentionSpec& a = l.attention;
  a.rope.style = ops::RopeStyle::neox;
  a.rope.freq_factors = false;
  const float head = c.n_layer == layers_27b ? static_cast<float>(c.n_embd / c.layer_n_head[il])
                                             : static_cast<float>(a.head_dim_k);
  a.scale = 1.0f / std::sqrt(head);
  l.activation = Activation::gelu;
  l.post_mixer_norm = true;
  l.post_ffn_norm = true;
  return l;
}

void scale_gemma_embeddings(ModelConfig& c) { c.embed_scale = std::sqrt(static_cast<float>(c.n_embd)); }

std::vector<KeySpec> gemma_keys() {
  std::vector<KeySpec> keys = written(written(transformer_keys(), Param::key_length, Written::always),
                                      Param::value_length, Written::always);
  keys.push_back({"attention.sliding_window", Param::sliding_window});
  keys.push_back({"attention.sliding_window_pattern", Param::sliding_window_pattern});
  keys.push_back({"final_logit_softcapping", Param::final_softcap});
  keys.push_back({"rope.freq_base_swa", Param::rope_freq_base_swa});
  return keys;
}

}  // namespace engine::arch
