#include "tools/common/model_writing/synth_tensors.h"

#include <algorithm>

#include "engine/arch/registry.h"

namespace tools {

engine::ModelConfig synth_config(const SynthShape& s, uint32_t n_vocab) {
  engine::ModelConfig c;
  c.arch = engine::arch::find_architecture(s.arch);
  c.arch_name = s.arch;
  c.n_ctx_train = s.n_ctx;
  c.n_embd = s.n_embd;
  c.n_layer = s.n_layer;
  c.n_vocab = n_vocab;
  c.n_ff = s.n_ff;
  c.n_head = s.n_head;
  c.n_head_kv = s.n_head_kv;
  c.head_dim_k = c.head_dim_v = s.head_dim;
  c.n_rot = s.n_rot != 0 ? s.n_rot : s.head_dim;
  c.rope_freq_base = s.rope_base;
  c.rms_eps = s.rms_eps;
  c.n_ctx_orig = s.longrope ? s.rope_original_ctx : s.n_ctx;
  c.rope_attn_factor = s.longrope_attn_factor();
  if (s.residual_scale != 0.0f) c.residual_scale = s.residual_scale;
  c.attention_scale = s.attention_scale;
  if (s.logit_scale != 0.0f) c.logit_scale = s.logit_scale;
  if (s.embedding_scale != 0.0f) c.embed_scale = s.embedding_scale;
  c.layer_n_ff = s.layer_n_ff.size() == s.n_layer ? s.layer_n_ff : std::vector<uint32_t>(s.n_layer, s.n_ff);
  c.n_ff = *std::max_element(c.layer_n_ff.begin(), c.layer_n_ff.end());
  c.layer_n_head.assign(s.n_layer, s.n_head);
  c.layer_n_head_kv.assign(s.n_layer, s.n_head_kv);
  if (s.attention_layers.size() == s.n_layer) {
    for (uint32_t il = 0; il < s.n_layer; ++il) c.layer_n_head_kv[il] = s.attention_layers[il] ? s.n_head_kv : 0;
  }
  c.values = s.values;
  c.layer_values = s.layer_values;
  c.arrays = s.arrays;
  c.layer_without_v.resize(s.n_layer);
  for (uint32_t il = 0; il < s.n_layer; ++il) {
    c.layer_without_v[il] =
        s.k_eq_v_global && c.layer_value(engine::arch::Param::sliding_window_pattern, il, 1) == 0;
  }
  if (c.arch != nullptr) engine::arch::finish_config(c);
  return c;
}

std::vector<SynthKey> synth_keys(const engine::ModelConfig& c, const SynthShape& s) {
  using P = engine::arch::Param;
  using W = engine::arch::Written;
  // What the loader assumes for a key that is absent: key_length and
  // value_length default to n_embd / n_head, when it divides.
  const bool head_dim_is_default = uint64_t{s.head_dim} * s.n_head == s.n_embd;
  std::vector<SynthKey> out;
  for (const engine::arch::KeySpec& k : c.arch->keys) {
    SynthKey key;
    key.key = c.arch_name + "." + k.suffix;
    bool is_default = false;
    switch (k.param) {
      case P::context_length: key.value = s.n_ctx; break;
      case P::embedding_length: key.value = s.n_embd; break;
      case P::block_count: key.value = s.n_layer; break;
      case P::feed_forward_length:
        key.value = s.n_ff;
        if (s.layer_n_ff.size() == s.n_layer) key.array.assign(s.layer_n_ff.begin(), s.layer_n_ff.end());
        break;
      case P::head_count: key.value = s.n_head; break;
      case P::head_count_kv:
        key.value = s.n_head_kv;
        // A hybrid's layer list: 0 for the layers that do not attend.
        if (s.attention_layers.size() == s.n_layer) key.array.assign(c.layer_n_head_kv.begin(), c.layer_n_head_kv.end());
        break;
      case P::key_length:
      case P::value_length:
        key.value = s.head_dim;
        is_default = head_dim_is_default;
        break;
      case P::rope_dimension_count:
        key.value = c.n_rot;
        is_default = head_dim_is_default && c.n_rot == s.head_dim;
        break;
      case P::vocab_size: key.value = c.n_vocab; break;
      case P::rope_freq_base:
        key.is_float = true;
        key.value = s.rope_base;
        break;
      case P::rms_epsilon:
        key.is_float = true;
        key.value = s.rms_eps;
        break;
      case P::rope_scaling_type:
        // Linear scaling as the converter writes it; llama3 scaling is
        // written as factors instead (rope_freqs.weight).
        if (s.rope_linear_factor <= 0.0f) continue;
        key.text = "linear";
        break;
      case P::rope_scaling_factor:
        if (s.rope_linear_factor <= 0.0f) continue;
        key.is_float = true;
        key.value = s.rope_linear_factor;
        break;
      case P::rope_original_context: key.value = c.n_ctx_orig; break;
      case P::rope_attn_factor:
        key.is_float = true;
        key.value = c.rope_attn_factor;
        is_default = !s.longrope;  // the converter writes it with the factors
        break;
      // Granite's multipliers, written when config.json has them (the logit
      // scale, which llama.cpp requires, always).
      case P::embedding_scale:
      case P::residual_scale:
      case P::attention_scale:
      case P::logit_scale: {
        const float v = k.param == P::embedding_scale   ? s.embedding_scale
                        : k.param == P::residual_scale  ? s.residual_scale
                        : k.param == P::attention_scale ? s.attention_scale
                                                        : (s.logit_scale != 0.0f ? s.logit_scale : 1.0f);
        if (v == 0.0f) continue;
        key.is_float = true;
        key.value = v;
        break;
      }
      default: {
        // The family's further keys: written when the shape sets them, as
        // one value or one per layer (a layer pattern as bools, as gemma4's
        // converter writes it).
        key.is_float = engine::arch::param_is_float(k.param);
        if (const auto arr = s.arrays.find(k.param); arr != s.arrays.end()) {
          key.array = arr->second;
          break;
        }
        if (const auto arr = s.layer_values.find(k.param); arr != s.layer_values.end()) {
          key.array = arr->second;
          key.is_bool = k.param == P::sliding_window_pattern;
          break;
        }
        const auto it = s.values.find(k.param);
        if (it == s.values.end()) continue;
        key.value = it->second;
        break;
      }
    }
    if (k.written == W::always || (k.written == W::if_not_default && !is_default)) out.push_back(key);
  }
  return out;
}

std::vector<SynthTensor> synth_tensors(const engine::ModelConfig& c, const SynthShape& s) {
  using engine::arch::TensorKind;
  std::vector<SynthTensor> out;
  for (const engine::arch::TensorSpec& t : c.arch->tensors) {
    if (!t.per_layer) {
      const bool rope_factors = s.rope_factor > 0.0f || s.rope_partial_global > 0.0f;
      const bool longrope = t.kind == TensorKind::rope_factors_long || t.kind == TensorKind::rope_factors_short;
      const bool written = (t.present == nullptr || t.present(c.layers[0])) &&
                           (t.required || (t.fallback != nullptr && !s.tied) ||
                            (t.kind == TensorKind::rope_factors && rope_factors) || (longrope && s.longrope));
      if (written) out.push_back({t.name, engine::arch::tensor_shape(t, c, 0), t.kind});
      continue;
    }
    for (uint32_t il = 0; il < c.n_layer; ++il) {
      if (t.present != nullptr ? t.present(c.layers[il]) : t.required) {
        out.push_back({engine::arch::tensor_name(t, il), engine::arch::tensor_shape(t, c, il), t.kind});
      }
    }
  }
  return out;
}

}  // namespace tools
