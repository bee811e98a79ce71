// qwen35 (Qwen3.5 dense): a hybrid of gated DeltaNet linear-attention layers
// (engine/mixers/delta_net.h) and, every full_attention_interval-th layer
// (3 of 4 recurrent in the released models), gated attention: Q/K RMSNorm per
// head, NeoX-paired multi-section RoPE over rope.dimension_count dimensions,
// and the output multiplied by sigmoid of a gate that attn_q.weight computes
// beside each head's query. Each layer is attn_norm, its mixer, then the
// FFN's own norm, which the file calls post_attention_norm.weight, and
// SwiGLU. The layer list is attention.recurrent_layers where the file has
// it, else full_attention_interval. As llama.cpp reads it (src/models/qwen35.cpp, delta-net-base.cpp):
// multi-token-prediction blocks after the model's own (nextn_predict_layers)
// are in the file and not run, and the norms' weights are used as stored
// (the converter has already added Qwen's 1 to them).
#include <cmath>
#include <string_view>

#include "engine/arch/families.h"
#include "engine/support/error.h"

namespace engine::arch {
namespace {

bool is_attention(const LayerSpec& l) { return l.mixer == MixerKind::attention; }
bool is_delta_net(const LayerSpec& l) { return l.mixer == MixerKind::delta_net; }

[[noreturn]] void refuse(uint32_t il, const std::string& what) {
  throw ModelError("qwen35: layer " + std::to_string(il) + " " + what);
}

uint32_t required_u32(const ModelConfig& c, uint32_t il, Param p, const char* key) {
  const auto it = c.values.find(p);
  if (it == c.values.end()) refuse(il, std::string("is a gated delta net layer, but ") + c.arch_name + "." + key + " is missing");
  return static_cast<uint32_t>(it->second);
}

// Multi-section RoPE (llama.cpp's IMROPE) gives each rotated pair one of four
// positions by its sector: for text the first three are the token's position
// and the fourth is 0, so a pair in the fourth section would not turn. The
// released models' sections [11, 11, 10, 0] cover all 32 pairs of their 64
// rotated dimensions, where the rotation is plain NeoX RoPE; other sections
// are refused rather than computed wrong.
void check_sections(const ModelConfig& c, uint32_t il, uint32_t n_rot) {
  const auto it = c.arrays.find(Param::rope_dimension_sections);
  if (it == c.arrays.end() || it->second.size() != 4) {
    refuse(il, "attends with multi-section RoPE, but " + c.arch_name +
                      ".rope.dimension_sections is missing or not 4 numbers");
  }
  const std::vector<double>& s = it->second;
  for (double v : s) {
    if (!(v <= 65536) || v != std::floor(v)) {
      refuse(il, "has rope.dimension_sections value " + std::to_string(v) + " (whole numbers up to 65536)");
    }
  }
  const double total = s[0] + s[1] + s[2] + s[3];
  if (total <= 0) refuse(il, "has rope.dimension_sections that sum to 0");
  for (uint32_t pair = 0; pair < n_rot / 2; ++pair) {
    const auto sector = static_cast<uint32_t>(pair % static_cast<uint64_t>(total));
    const bool text_position = (sector % 3 == 0 && sector < 3 * s[0]) || (sector % 3 == 1 && sector < 3 * s[1]) ||
                               (sector % 3 == 2 && sector < 3 * s[2]);
    if (!text_position) {
      refuse(il, "rotates pair " + std::to_string(pair) +
                        " by the fourth (image) position of rope.dimension_sections, which text does not have");
    }
  }
}

// The most key or value channels of a DeltaNet layer (the released models
// have 2048 and 4096).
constexpr uint64_t kMaxChannels = uint64_t{1} << 20;

// Whether layer il attends: the file's attention.recurrent_layers when it
// has one (llama.cpp reads it first), else every full_attention_interval-th.
bool attends(const ModelConfig& c, uint32_t il) {
  if (const auto listed = c.layer_values.find(Param::recurrent_layers); listed != c.layer_values.end()) {
    return listed->second[il] == 0;
  }
  const double interval = c.value(Param::full_attention_interval, 4);
  if (interval < 1) refuse(il, "cannot be placed: full_attention_interval is 0");
  return (il + 1) % static_cast<uint64_t>(interval) == 0;
}

LayerSpec qwen35_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  if (attends(c, il)) {
    AttentionSpec& a = l.attention;
    a.rope.style = ops::RopeStyle::neox;
    a.rope.freq_factors = false;
    a.qk_norm = true;
    a.output_gate = true;
    // The gate multiplies the output head by head: llama.cpp asserts equal sizes.
    if (a.head_dim_k != a.head_dim_v) {
      refuse(il, "has keys of " + std::to_string(a.head_dim_k) + " and values of " + std::to_string(a.head_dim_v) +
                        " per head; gated attention needs them equal");
    }
    check_sections(c, il, a.rope.n_rot);
    return l;
  }
  l.mixer = MixerKind::delta_net;
  l.attention = AttentionSpec{};
  const uint32_t taps = required_u32(c, il, Param::ssm_conv_kernel, "ssm.conv_kernel");
  DeltaNetSpec& d = l.delta_net;
  d.head_k_dim = required_u32(c, il, Param::ssm_state_size, "ssm.state_size");
  d.n_k_heads = required_u32(c, il, Param::ssm_group_count, "ssm.group_count");
  d.n_v_heads = required_u32(c, il, Param::ssm_time_step_rank, "ssm.time_step_rank");
  const uint32_t inner = required_u32(c, il, Param::ssm_inner_size, "ssm.inner_size");
  if (taps < 2 || taps > 1024) refuse(il, "has a convolution of " + std::to_string(taps) + " taps (2..1024)");
  if (d.head_k_dim == 0 || d.head_k_dim > 4096 || d.n_k_heads == 0 || d.n_v_heads == 0 ||
      d.n_v_heads % d.n_k_heads != 0 || inner % d.n_v_heads != 0) {
    refuse(il, "has " + std::to_string(d.n_v_heads) + " value heads (ssm.time_step_rank) over " +
                      std::to_string(d.n_k_heads) + " key heads (ssm.group_count) of " + std::to_string(d.head_k_dim) +
                      " (ssm.state_size) and ssm.inner_size " + std::to_string(inner) +
                      ": the value heads must be a positive multiple of the key heads and divide the inner size");
  }
  // The channels index the convolution and the state in 32 bits: a file whose
  // sizes overflow them is refused before anything is sized by them.
  if (uint64_t{d.n_k_heads} * d.head_k_dim > kMaxChannels || inner > kMaxChannels) {
    refuse(il, "has " + std::to_string(uint64_t{d.n_k_heads} * d.head_k_dim) + " key and " + std::to_string(inner) +
                   " value channels (at most " + std::to_string(kMaxChannels) + " each)");
  }
  d.head_v_dim = inner / d.n_v_heads;
  // llama.cpp's state is square (its delta net asserts S_k == S_v).
  if (d.head_v_dim != d.head_k_dim) {
    refuse(il, "has value heads of " + std::to_string(d.head_v_dim) + " and key heads of " +
                      std::to_string(d.head_k_dim) + " values; the gated delta net needs them equal");
  }
  l.conv_kernel = taps;
  return l;
}

// The transformer's table with the FFN's norm under the name the file gives
// it, attention's projections and norms only in the layers that attend, and
// the DeltaNet's tensors in the others.
std::vector<TensorSpec> qwen35_tensors() {
  using D = Dim;
  using K = TensorKind;
  using L = LayerWeights;
  std::vector<TensorSpec> t;
  for (TensorSpec& spec : transformer_tensors()) {
    const std::string_view name = spec.name;
    if (name == "post_attention_norm.weight") continue;  // the FFN's norm is named so here
    if (name == "ffn_norm.weight") spec.name = "post_attention_norm.weight";
    if (name == "attn_q.weight" || name == "attn_k.weight" || name == "attn_v.weight" || name == "attn_output.weight") {
      spec.present = is_attention;
    }
    t.push_back(spec);
  }
  const auto dn = [&](const char* name, K kind, std::vector<Dim> shape, auto slot) {
    t.push_back({name, kind, std::move(shape), slot, true, true, is_delta_net});
  };
  dn("attn_qkv.weight", K::matrix, {D::n_embd, D::dn_conv_dim}, &L::dn_qkv);
  dn("attn_gate.weight", K::matrix, {D::n_embd, D::dn_value_dim}, &L::dn_gate);
  // The taps are small numbers around 0, filled as biases by synth.
  dn("ssm_conv1d.weight", K::bias, {D::conv_kernel, D::dn_conv_dim}, &L::conv_kernel);
  dn("ssm_dt.bias", K::bias, {D::dn_v_heads}, &L::dn_dt_bias);
  dn("ssm_a", K::decay_rates, {D::dn_v_heads}, &L::dn_a);
  dn("ssm_beta.weight", K::matrix, {D::n_embd, D::dn_v_heads}, &L::dn_beta);
  dn("ssm_alpha.weight", K::matrix, {D::n_embd, D::dn_v_heads}, &L::dn_alpha);
  dn("ssm_norm.weight", K::norm, {D::dn_head_v_dim}, &L::dn_norm);
  dn("ssm_out.weight", K::matrix, {D::dn_value_dim, D::n_embd}, &L::dn_out);
  return t;
}

}  // namespace

Architecture qwen35() {
  Architecture a;
  a.name = "qwen35";
  // Its converter (conversion/qwen.py, Qwen3_5TextModel) writes the head size,
  // rope.dimension_count (a quarter of the head) and the sections always,
  // the ssm.* sizes and the attention interval, and nextn_predict_layers
  // when the checkpoint has multi-token-prediction blocks.
  std::vector<KeySpec> keys = written(written(written(transformer_keys(), Param::key_length, Written::always),
                                              Param::value_length, Written::always),
                                      Param::rope_dimension_count, Written::always);
  keys.push_back({"rope.dimension_sections", Param::rope_dimension_sections, true, false, Written::always, true});
  keys.push_back({"ssm.conv_kernel", Param::ssm_conv_kernel, true});
  keys.push_back({"ssm.state_size", Param::ssm_state_size, true});
  keys.push_back({"ssm.group_count", Param::ssm_group_count, true});
  keys.push_back({"ssm.time_step_rank", Param::ssm_time_step_rank, true});
  keys.push_back({"ssm.inner_size", Param::ssm_inner_size, true});
  keys.push_back({"full_attention_interval", Param::full_attention_interval});
  keys.push_back({"attention.recurrent_layers", Param::recurrent_layers, false, true, Written::never});
  keys.push_back({"nextn_predict_layers", Param::nextn_predict_layers, false, false, Written::if_not_default});
  a.keys = std::move(keys);
  a.tensors = qwen35_tensors();
  a.layer = qwen35_layer;
  return a;
}

}  // namespace engine::arch
