// gemma4 (Gemma 4 dense text models: E2B, E4B, 31B): Gemma 3's sandwich-normed
// GeGLU layers, where the two kinds of layer differ in more than the window.
// The layers the file's sliding_window_pattern marks attend to the last
// sliding_window positions with their own head size (key_length_swa), RoPE
// dimensions and base (rope.freq_base_swa); the others attend to everything
// with proportional RoPE (rope_freqs.weight leaves the unrotated pairs at a
// frequency of ~0). Q and K are RMS-normed per head, V too without a weight,
// and a layer without attn_v.weight takes V from K's projection. The last
// attention.shared_kv_layers layers compute no keys or values: they read the
// cache of the last layer of their kind before them. Every layer adds its
// slice of the per-layer inputs and scales its output; the attention scale
// is 1 (the norms set the scores' size) and the final logits are soft-capped.
// Mixture-of-experts files are refused.
#include <algorithm>
#include <cmath>

#include "engine/arch/families.h"
#include "engine/arch/gemma.h"
#include "engine/support/error.h"

namespace engine::arch {
namespace {

bool sliding(const ModelConfig& c, uint32_t il) { return c.layer_value(Param::sliding_window_pattern, il, 0) != 0; }

// llama.cpp's choice: the last layers without a cache read the cache of layer
// kv_layers - 2 (sliding) or kv_layers - 1 (global), which a converted model
// has as its last sliding and last global layer with a cache.
uint32_t kv_source(const ModelConfig& c, uint32_t il) {
  const auto shared = static_cast<uint32_t>(c.value(Param::shared_kv_layers, 0));
  const uint32_t kv_layers = c.n_layer - std::min(shared, c.n_layer);
  if (il < kv_layers) return AttentionSpec::kOwnCache;
  const uint32_t behind = sliding(c, il) ? 2 : 1;
  return kv_layers >= behind ? kv_layers - behind : AttentionSpec::kOwnCache;
}

LayerSpec gemma4_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = gemma_layer(c, il, /*layers_27b=*/0);
  AttentionSpec& a = l.attention;
  a.scale = 1.0f;
  a.qk_norm = true;
  a.v_norm = true;
  a.kv_source = kv_source(c, il);
  a.v_from_k = !a.shares_kv() && il < c.layer_without_v.size() && c.layer_without_v[il];
  if (sliding(c, il)) {
    a.window = static_cast<uint32_t>(c.value(Param::sliding_window, 0));
    a.head_dim_k = static_cast<uint32_t>(c.value(Param::key_length_swa, c.head_dim_k));
    a.head_dim_v = static_cast<uint32_t>(c.value(Param::value_length_swa, c.head_dim_v));
    a.rope.n_rot = static_cast<uint32_t>(c.value(Param::rope_dimension_count_swa, c.n_rot));
    a.rope.freq_base = static_cast<float>(c.value(Param::rope_freq_base_swa, 10000.0));
    a.rope.freq_scale = 1.0f;
  } else {
    a.rope.freq_factors = true;  // proportional RoPE
  }
  l.per_layer_input = c.per_layer_input.n_embd != 0;
  l.output_scale = true;
  return l;
}

void gemma4_model(ModelConfig& c) {
  if (const double experts = c.value(Param::expert_count, 0); experts > 0) {
    throw ModelError("a Gemma 4 mixture-of-experts model (" + std::to_string(static_cast<uint64_t>(experts)) +
                     " experts) is not supported: only the dense Gemma 4 models (E2B, E4B, 31B) are");
  }
  scale_gemma_embeddings(c);
  c.final_softcap = static_cast<float>(c.value(Param::final_softcap, 0.0));
  // As llama.cpp scales the per-layer inputs (floats, not doubles).
  const auto n_pl = static_cast<uint32_t>(c.value(Param::embedding_length_per_layer, 0));
  c.per_layer_input.n_embd = n_pl;
  c.per_layer_input.table_scale = std::sqrt(static_cast<float>(n_pl));
  c.per_layer_input.proj_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd));
  c.per_layer_input.sum_scale = 1.0f / std::sqrt(2.0f);
}

bool has_per_layer_input(const LayerSpec& l) { return l.per_layer_input; }
bool has_output_scale(const LayerSpec& l) { return l.output_scale; }

}  // namespace

Architecture gemma4() {
  using P = Param;
  using D = Dim;
  using K = TensorKind;
  using L = LayerWeights;
  using G = GlobalWeights;
  Architecture a;
  a.name = "gemma4";
  a.keys = written(gemma_keys(), P::rope_dimension_count, Written::always);
  for (KeySpec& k : a.keys) k.per_layer |= k.param == P::sliding_window_pattern;
  a.keys.push_back({"attention.shared_kv_layers", P::shared_kv_layers});
  a.keys.push_back({"embedding_length_per_layer_input", P::embedding_length_per_layer});
  a.keys.push_back({"attention.key_length_swa", P::key_length_swa});
  a.keys.push_back({"attention.value_length_swa", P::value_length_swa});
  a.keys.push_back({"rope.dimension_count_swa", P::rope_dimension_count_swa});
  a.keys.push_back({"expert_count", P::expert_count, false, false, Written::never});
  a.tensors = transformer_tensors();
  // Present when the model has per-layer inputs, which layer 0's spec says.
  a.tensors.push_back({"per_layer_token_embd.weight", K::embedding, {D::n_pl_all, D::n_vocab},
                       &G::per_layer_token_embd, false, true, has_per_layer_input});
  a.tensors.push_back({"per_layer_model_proj.weight", K::matrix, {D::n_embd, D::n_pl_all}, &G::per_layer_model_proj,
                       false, true, has_per_layer_input});
  a.tensors.push_back({"per_layer_proj_norm.weight", K::norm, {D::n_pl}, &G::per_layer_proj_norm, false, true,
                       has_per_layer_input});
  a.tensors.push_back({"inp_gate.weight", K::matrix, {D::n_embd, D::n_pl}, &L::per_layer_gate, true, true,
                       has_per_layer_input});
  a.tensors.push_back({"proj.weight", K::matrix, {D::n_pl, D::n_embd}, &L::per_layer_proj, true, true,
                       has_per_layer_input});
  a.tensors.push_back({"post_norm.weight", K::norm, {D::n_embd}, &L::per_layer_post_norm, true, true,
                       has_per_layer_input});
  a.tensors.push_back({"layer_output_scale.weight", K::norm, {D::one}, &L::output_scale, true, true,
                       has_output_scale});
  a.layer = gemma4_layer;
  a.model = gemma4_model;
  return a;
}

}  // namespace engine::arch
