// lfm2 (Liquid's LFM2 / LFM2.5): pre-norm blocks whose mixer is either
// attention or a gated short convolution (engine/mixers/shortconv.h), each
// followed by a SwiGLU feed-forward. The layer list is in the file as
// llama.cpp reads it (src/models/lfm2.cpp): attention.head_count_kv is one
// value per layer, 0 for a convolution layer. Attention layers have an
// RMSNorm over each head of Q and K and NeoX RoPE; the final norm is named
// token_embd_norm.weight (llama.cpp's LLM_TENSOR_OUTPUT_NORM_LFM2).
#include <string_view>

#include "engine/arch/families.h"
#include "engine/support/error.h"

namespace engine::arch {
namespace {

bool is_attention(const LayerSpec& l) { return l.mixer == MixerKind::attention; }
bool is_shortconv(const LayerSpec& l) { return l.mixer == MixerKind::shortconv; }

LayerSpec lfm2_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = transformer_layer(c, il);
  if (c.layer_n_head_kv[il] != 0) {
    l.attention.rope.style = ops::RopeStyle::neox;
    l.attention.qk_norm = true;
    return l;
  }
  // llama.cpp requires shortconv.l_cache, and more than one tap (its
  // state keeps l_cache - 1 rows).
  const double taps = c.value(Param::shortconv_l_cache, 0);
  if (taps < 2 || taps > 1024) {
    throw ModelError("lfm2: layer " + std::to_string(il) + " is a convolution layer (head_count_kv 0), but " +
                     c.arch_name + ".shortconv.l_cache is " +
                     (c.values.count(Param::shortconv_l_cache) != 0 ? std::to_string(static_cast<uint64_t>(taps))
                                                                    : std::string("missing")) +
                     " (2..1024 taps)");
  }
  l.mixer = MixerKind::shortconv;
  l.attention = AttentionSpec{};
  l.conv_kernel = static_cast<uint32_t>(taps);
  return l;
}

// The transformer's table, its attention projections only in the layers
// that attend, the final norm under llama.cpp's name for it, and the
// convolution's tensors in the others.
std::vector<TensorSpec> lfm2_tensors() {
  using D = Dim;
  using L = LayerWeights;
  std::vector<TensorSpec> t = transformer_tensors();
  for (TensorSpec& spec : t) {
    const std::string_view name = spec.name;
    if (name == "output_norm.weight") spec.name = "token_embd_norm.weight";
    if (name == "attn_q.weight" || name == "attn_k.weight" || name == "attn_v.weight" || name == "attn_output.weight") {
      spec.present = is_attention;
    }
  }
  // The taps are small numbers around 0, filled as biases by synth.
  t.push_back({"shortconv.conv.weight", TensorKind::bias, {D::conv_kernel, D::n_embd}, &L::conv_kernel, true, true,
               is_shortconv});
  t.push_back({"shortconv.in_proj.weight", TensorKind::matrix, {D::n_embd, D::conv_in_rows}, &L::conv_in, true, true,
               is_shortconv});
  t.push_back({"shortconv.out_proj.weight", TensorKind::matrix, {D::n_embd, D::n_embd}, &L::conv_out, true, true,
               is_shortconv});
  return t;
}

}  // namespace

Architecture lfm2() {
  Architecture a;
  a.name = "lfm2";
  // Its converter (conversion/lfm2.py) writes vocab_size and shortconv.l_cache
  // beside the usual keys, head_count_kv as one value per layer.
  a.keys = written(transformer_keys(), Param::vocab_size, Written::always);
  a.keys.push_back({"shortconv.l_cache", Param::shortconv_l_cache, true});
  a.tensors = lfm2_tensors();
  a.layer = lfm2_layer;
  a.kv_heads_zero_without_attention = true;
  return a;
}

}  // namespace engine::arch
