#include "engine/arch/arch.h"

#include <cmath>

#include "engine/model/model_config.h"

namespace engine {

const char* mixer_kind_name(MixerKind k) {
  switch (k) {
    case MixerKind::attention: return "attention";
    case MixerKind::shortconv: return "short convolution";
    case MixerKind::delta_net: return "gated delta net";
  }
  return "?";
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::silu: return "silu";
    case Activation::gelu: return "gelu";
  }
  return "?";
}

}  // namespace engine

namespace engine::arch {
namespace {

bool has_qkv_bias(const LayerSpec& l) { return l.attention.qkv_bias; }
bool has_qk_norm(const LayerSpec& l) { return l.attention.qk_norm; }
bool has_post_mixer_norm(const LayerSpec& l) { return l.post_mixer_norm; }
bool has_post_ffn_norm(const LayerSpec& l) { return l.post_ffn_norm; }
// A layer that reads another's cache computes no keys or values; a fused
// attn_qkv holds them where the file has one.
bool has_fused_qkv(const LayerSpec& l) { return l.attention.fused_qkv; }
bool has_separate_qkv(const LayerSpec& l) { return !l.attention.fused_qkv; }
bool has_own_k(const LayerSpec& l) { return !l.attention.fused_qkv && !l.attention.shares_kv(); }
bool has_own_v(const LayerSpec& l) { return has_own_k(l) && !l.attention.v_from_k; }
bool has_own_k_norm(const LayerSpec& l) { return l.attention.qk_norm && !l.attention.shares_kv(); }
bool has_separate_gate(const LayerSpec& l) { return !l.fused_gate_up; }

}  // namespace

bool param_is_float(Param p) {
  switch (p) {
    case Param::rope_freq_base:
    case Param::rope_scaling_factor:
    case Param::rms_epsilon:
    case Param::rope_attn_factor:
    case Param::embedding_scale:
    case Param::residual_scale:
    case Param::attention_scale:
    case Param::logit_scale:
    case Param::attn_softcap:
    case Param::final_softcap:
    case Param::rope_freq_base_swa: return true;
    default: return false;
  }
}

const char* dim_name(Dim d) {
  switch (d) {
    case Dim::n_embd: return "n_embd";
    case Dim::n_vocab: return "n_vocab";
    case Dim::n_ff: return "n_ff";
    case Dim::q_dim: return "q_dim";
    case Dim::kv_dim_k: return "kv_dim_k";
    case Dim::kv_dim_v: return "kv_dim_v";
    case Dim::attn_out: return "attn_out";
    case Dim::head_dim_k: return "head_dim_k";
    case Dim::rope_pairs: return "rope_pairs";
    case Dim::n_pl: return "n_pl";
    case Dim::n_pl_all: return "n_pl_all";
    case Dim::one: return "one";
    case Dim::qkv_dim: return "qkv_dim";
    case Dim::up_rows: return "up_rows";
    case Dim::conv_kernel: return "conv_kernel";
    case Dim::conv_in_rows: return "conv_in_rows";
    case Dim::q_rows: return "q_rows";
    case Dim::dn_conv_dim: return "dn_conv_dim";
    case Dim::dn_value_dim: return "dn_value_dim";
    case Dim::dn_v_heads: return "dn_v_heads";
    case Dim::dn_head_v_dim: return "dn_head_v_dim";
  }
  return "?";
}

std::vector<TensorSpec> transformer_tensors() {
  using D = Dim;
  using K = TensorKind;
  using L = LayerWeights;
  using G = GlobalWeights;
  return {
      {"token_embd.weight", K::embedding, {D::n_embd, D::n_vocab}, std::monostate{}, false},
      {"output_norm.weight", K::norm, {D::n_embd}, &G::output_norm, false},
      {"output.weight", K::matrix, {D::n_embd, D::n_vocab}, &G::output, false, false, nullptr, "token_embd.weight"},
      {"rope_freqs.weight", K::rope_factors, {D::rope_pairs}, &G::rope_freqs, false, false},
      {"rope_factors_long.weight", K::rope_factors_long, {D::rope_pairs}, &G::rope_long, false, false},
      {"rope_factors_short.weight", K::rope_factors_short, {D::rope_pairs}, &G::rope_short, false, false},
      {"attn_norm.weight", K::norm, {D::n_embd}, &L::attn_norm},
      {"attn_qkv.weight", K::matrix, {D::n_embd, D::qkv_dim}, &L::wqkv, true, true, has_fused_qkv},
      {"attn_q.weight", K::matrix, {D::n_embd, D::q_rows}, &L::wq, true, true, has_separate_qkv},
      {"attn_k.weight", K::matrix, {D::n_embd, D::kv_dim_k}, &L::wk, true, true, has_own_k},
      {"attn_v.weight", K::matrix, {D::n_embd, D::kv_dim_v}, &L::wv, true, true, has_own_v},
      {"attn_q.bias", K::bias, {D::q_dim}, &L::q_bias, true, true, has_qkv_bias},
      {"attn_k.bias", K::bias, {D::kv_dim_k}, &L::k_bias, true, true, has_qkv_bias},
      {"attn_v.bias", K::bias, {D::kv_dim_v}, &L::v_bias, true, true, has_qkv_bias},
      {"attn_q_norm.weight", K::norm, {D::head_dim_k}, &L::q_norm, true, true, has_qk_norm},
      {"attn_k_norm.weight", K::norm, {D::head_dim_k}, &L::k_norm, true, true, has_own_k_norm},
      {"attn_output.weight", K::matrix, {D::attn_out, D::n_embd}, &L::wo},
      {"post_attention_norm.weight", K::norm, {D::n_embd}, &L::post_attn_norm, true, true, has_post_mixer_norm},
      {"ffn_norm.weight", K::norm, {D::n_embd}, &L::ffn_norm},
      {"ffn_gate.weight", K::matrix, {D::n_embd, D::n_ff}, &L::w_gate, true, true, has_separate_gate},
      {"ffn_up.weight", K::matrix, {D::n_embd, D::up_rows}, &L::w_up},
      {"ffn_down.weight", K::matrix, {D::n_ff, D::n_embd}, &L::w_down},
      {"post_ffw_norm.weight", K::norm, {D::n_embd}, &L::post_ffn_norm, true, true, has_post_ffn_norm},
  };
}

std::vector<KeySpec> transformer_keys() {
  using P = Param;
  using W = Written;
  return {
      {"context_length", P::context_length, true},
      {"embedding_length", P::embedding_length, true},
      {"block_count", P::block_count, true},
      {"feed_forward_length", P::feed_forward_length, true, true},
      {"attention.head_count", P::head_count, true, true},
      {"attention.head_count_kv", P::head_count_kv, false, true},
      {"rope.freq_base", P::rope_freq_base},
      {"attention.layer_norm_rms_epsilon", P::rms_epsilon, true},
      {"attention.key_length", P::key_length, false, false, W::if_not_default},
      {"attention.value_length", P::value_length, false, false, W::if_not_default},
      {"vocab_size", P::vocab_size, false, false, W::never},
      {"rope.dimension_count", P::rope_dimension_count, false, false, W::never},
      {"rope.scaling.type", P::rope_scaling_type, false, false, W::never},
      {"rope.scaling.factor", P::rope_scaling_factor, false, false, W::never},
  };
}

std::vector<KeySpec> written(std::vector<KeySpec> keys, Param p, Written w) {
  for (KeySpec& k : keys) {
    if (k.param == p) k.written = w;
  }
  return keys;
}

std::vector<KeySpec> llama_converter_keys() {
  return written(written(transformer_keys(), Param::vocab_size, Written::always), Param::rope_dimension_count,
                 Written::always);
}

LayerSpec transformer_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l;
  l.mixer = MixerKind::attention;
  AttentionSpec& a = l.attention;
  a.n_head = c.layer_n_head[il];
  a.n_head_kv = c.layer_n_head_kv[il];
  a.head_dim_k = c.head_dim_k;
  a.head_dim_v = c.head_dim_v;
  a.rope = {c.n_rot, ops::RopeStyle::normal, c.rope_freq_base, c.rope_freq_scale, true, c.rope_attn_factor};
  // The file's attention.scale where the family reads one (granite's attention multiplier).
  a.scale = c.attention_scale != 0.0f ? c.attention_scale : 1.0f / std::sqrt(static_cast<float>(a.head_dim_k));
  l.n_ff = c.layer_n_ff[il];
  l.activation = Activation::silu;
  l.residual_scale = c.residual_scale;
  return l;
}

bool is_sliding_layer(uint32_t il, uint32_t period) { return period == 0 || il % period < period - 1; }

void finish_config(ModelConfig& c) {
  if (c.arch->model != nullptr) c.arch->model(c);
  c.layers.clear();
  c.layers.reserve(c.n_layer);
  for (uint32_t il = 0; il < c.n_layer; ++il) c.layers.push_back(c.arch->layer(c, il));
}

uint64_t resolve_dim(Dim d, const ModelConfig& c, const LayerSpec& l) {
  const AttentionSpec& a = l.attention;
  switch (d) {
    case Dim::n_embd: return c.n_embd;
    case Dim::n_vocab: return c.n_vocab;
    case Dim::n_ff: return l.n_ff;
    case Dim::q_dim: return a.q_dim();
    case Dim::kv_dim_k: return a.kv_dim_k();
    case Dim::kv_dim_v: return a.kv_dim_v();
    case Dim::attn_out: return a.out_dim();
    case Dim::head_dim_k: return a.head_dim_k;
    case Dim::rope_pairs:
      for (const LayerSpec& divided : c.layers) {
        if (divided.attention.rope.freq_factors) return divided.attention.rope.n_rot / 2;
      }
      return a.rope.n_rot / 2;
    case Dim::n_pl: return c.per_layer_input.n_embd;
    case Dim::n_pl_all: return uint64_t{c.per_layer_input.n_embd} * c.n_layer;
    case Dim::one: return 1;
    case Dim::qkv_dim: return uint64_t{a.q_dim()} + a.kv_dim_k() + a.kv_dim_v();
    case Dim::up_rows: return l.fused_gate_up ? 2 * uint64_t{l.n_ff} : l.n_ff;
    case Dim::conv_kernel: return l.conv_kernel;
    case Dim::conv_in_rows: return 3 * uint64_t{c.n_embd};
    case Dim::q_rows: return a.q_rows();
    case Dim::dn_conv_dim: return l.delta_net.conv_dim();
    case Dim::dn_value_dim: return l.delta_net.value_dim();
    case Dim::dn_v_heads: return l.delta_net.n_v_heads;
    case Dim::dn_head_v_dim: return l.delta_net.head_v_dim;
  }
  return 0;
}

std::vector<uint64_t> tensor_shape(const TensorSpec& t, const ModelConfig& c, uint32_t il) {
  std::vector<uint64_t> shape;
  for (Dim d : t.shape) shape.push_back(resolve_dim(d, c, c.layers[t.per_layer ? il : 0]));
  return shape;
}

std::string tensor_name(const TensorSpec& t, uint32_t il) {
  return t.per_layer ? "blk." + std::to_string(il) + "." + t.name : std::string(t.name);
}

const KeySpec* find_key(const Architecture& a, Param p) {
  for (const KeySpec& k : a.keys) {
    if (k.param == p) return &k;
  }
  return nullptr;
}

}  // namespace engine::arch
