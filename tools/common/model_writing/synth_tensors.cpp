#include "tools/common/model_writing/synth_tensors.h"

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
  c.head_dim_k = c.head_dim_v = c.n_rot = s.head_dim;
  c.rope_freq_base = s.rope_base;
  c.rms_eps = s.rms_eps;
  c.layer_n_ff.assign(s.n_layer, s.n_ff);
  c.layer_n_head.assign(s.n_layer, s.n_head);
  c.layer_n_head_kv.assign(s.n_layer, s.n_head_kv);
  c.values = s.values;
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
      case P::feed_forward_length: key.value = s.n_ff; break;
      case P::head_count: key.value = s.n_head; break;
      case P::head_count_kv: key.value = s.n_head_kv; break;
      case P::key_length:
      case P::value_length:
      case P::rope_dimension_count:
        key.value = s.head_dim;
        is_default = head_dim_is_default;
        break;
      case P::vocab_size: key.value = c.n_vocab; break;
      case P::rope_freq_base: key.is_float = true;
        key.value = s.rope_base; break;
      case P::rms_epsilon: key.is_float = true;
        key.value = s.rms_eps; break;
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
      default: {
        // The family's further keys: written when the shape sets them.
        const auto it = s.values.find(k.param);
        if (it == s.values.end()) continue;
        key.is_float = engine::arch::param_is_float(k.param);
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
      const bool written = t.required || (t.fallback != nullptr && !s.tied) ||
                           (t.kind == TensorKind::rope_factors && s.rope_factor > 0.0f);
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
