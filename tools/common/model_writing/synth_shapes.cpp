#include "tools/common/model_writing/synth_shapes.h"

#include <cmath>
#include <vector>

#include "tools/common/model_writing/synth_tensors.h"

namespace tools {
namespace {

// Each row is the model's config.json on the Hugging Face hub (base models):
// hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// head_dim (or hidden_size / heads), intermediate_size, vocab_size,
// max_position_embeddings, rope_theta (10000 when absent), rms_norm_eps,
// tie_word_embeddings, and for Llama 3.2 rope_scaling = {rope_type "llama3",
// factor 32.0, low_freq_factor 1.0, high_freq_factor 4.0,
// original_max_position_embeddings 8192}.
SynthShape shape(const char* name, const char* arch, uint32_t n_embd, uint32_t n_layer, uint32_t n_head,
                 uint32_t n_head_kv, uint32_t head_dim, uint32_t n_ff, uint32_t n_vocab, uint32_t n_ctx,
                 float rope_base, float rms_eps, bool tied, const char* source) {
  SynthShape s;
  s.name = name;
  s.arch = arch;
  s.n_embd = n_embd;
  s.n_layer = n_layer;
  s.n_head = n_head;
  s.n_head_kv = n_head_kv;
  s.head_dim = head_dim;
  s.n_ff = n_ff;
  s.n_vocab = n_vocab;
  s.n_ctx = n_ctx;
  s.rope_base = rope_base;
  s.rms_eps = rms_eps;
  s.tied = tied;
  s.source = source;
  return s;
}

SynthShape llama3_rope(SynthShape s) {
  s.rope_factor = 32.0f;
  s.rope_low_freq_factor = 1.0f;
  s.rope_high_freq_factor = 4.0f;
  s.rope_original_ctx = 8192;
  return s;
}

// The family's further keys (engine/arch/arch.h), as its converter writes them.
SynthShape with(SynthShape s, std::initializer_list<std::pair<engine::arch::Param, double>> values) {
  for (const auto& [p, v] : values) s.values[p] = v;
  return s;
}

SynthShape linear_rope(SynthShape s, float factor) {
  s.rope_linear_factor = factor;
  return s;
}

// Gemma 4's layer pattern (text_config.layer_types: the last of every
// `period` layers global), the double-wide MLP (use_double_wide_mlp: twice
// intermediate_size in the last num_kv_shared_layers layers, which share
// caches) and proportional RoPE on the global layers.
SynthShape gemma4_layers(SynthShape s, uint32_t period, float partial_rotary) {
  std::vector<double>& pattern = s.layer_values[engine::arch::Param::sliding_window_pattern];
  const auto shared = static_cast<uint32_t>(s.values.at(engine::arch::Param::shared_kv_layers));
  for (uint32_t il = 0; il < s.n_layer; ++il) {
    pattern.push_back(il % period == period - 1 ? 0.0 : 1.0);
    s.layer_n_ff.push_back(il + shared >= s.n_layer ? 2 * s.n_ff : s.n_ff);
  }
  s.rope_partial_global = partial_rotary;
  return s;
}

// Phi-3 / Phi-4-mini: rope_scaling {"type": "longrope"} over
// original_max_position_embeddings, partial_rotary_factor, sliding_window.
SynthShape phi3_rope(SynthShape s, uint32_t original_ctx, uint32_t n_rot, uint32_t sliding_window) {
  s.longrope = true;
  s.rope_original_ctx = original_ctx;
  s.n_rot = n_rot;
  s.values[engine::arch::Param::sliding_window] = sliding_window;
  return s;
}

// Granite 3.x: embedding_multiplier, residual_multiplier,
// attention_multiplier, logits_scaling.
SynthShape granite_scales(SynthShape s, float embedding, float residual, float attention, float logits) {
  s.embedding_scale = embedding;
  s.residual_scale = residual;
  s.attention_scale = attention;
  s.logit_scale = logits;
  return s;
}

// LFM2 (config.json of LiquidAI/LFM2-*): full_attn_idxs name the attention
// layers; conv_L_cache is written as shortconv.l_cache.
// Qwen3.5's gated DeltaNet sizes (linear_conv_kernel_dim, linear_key_head_dim,
// linear_num_key_heads, linear_num_value_heads, linear_value_head_dim x
// heads) and attention every full_attention_interval-th layer, with a quarter
// of each head rotated (partial_rotary_factor 0.25) in the sections
// [11, 11, 10, 0] the converter writes.
SynthShape qwen35_delta_net(SynthShape s, uint32_t k_heads, uint32_t v_heads, uint32_t head_dim) {
  using P = engine::arch::Param;
  s.n_rot = s.head_dim / 4;
  s = with(s, {{P::ssm_conv_kernel, 4},
               {P::ssm_state_size, head_dim},
               {P::ssm_group_count, k_heads},
               {P::ssm_time_step_rank, v_heads},
               {P::ssm_inner_size, v_heads * head_dim},
               {P::full_attention_interval, 4}});
  s.arrays[P::rope_dimension_sections] = {11, 11, 10, 0};
  return s;
}

SynthShape lfm2_layers(SynthShape s, std::initializer_list<uint32_t> attention, uint32_t conv_l_cache) {
  s.attention_layers.assign(s.n_layer, false);
  for (uint32_t il : attention) s.attention_layers[il] = true;
  s.values[engine::arch::Param::shortconv_l_cache] = conv_l_cache;
  return s;
}

std::vector<SynthShape> make_shapes() {
  using P = engine::arch::Param;
  // clang-format off
  //           name              arch    embd layer head kv hdim  n_ff  vocab   ctx     rope_theta  eps   tied
  return {
      shape("tinyllama-1.1b", "llama", 2048, 22, 32,  4,  64,  5632,  32000,   2048,     10000.0f, 1e-5f, false,
            "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T/config.json"),
      llama3_rope(
      shape("llama-3.2-1b",   "llama", 2048, 16, 32,  8,  64,  8192, 128256, 131072,    500000.0f, 1e-5f, true,
            "meta-llama/Llama-3.2-1B/config.json")),
      llama3_rope(
      shape("llama-3.2-3b",   "llama", 3072, 28, 24,  8, 128,  8192, 128256, 131072,    500000.0f, 1e-5f, true,
            "meta-llama/Llama-3.2-3B/config.json")),
      shape("llama-2-7b",     "llama", 4096, 32, 32, 32, 128, 11008,  32000,   4096,     10000.0f, 1e-5f, false,
            "meta-llama/Llama-2-7b-hf/config.json"),
      shape("llama-3-8b",     "llama", 4096, 32, 32,  8, 128, 14336, 128256,   8192,    500000.0f, 1e-5f, false,
            "meta-llama/Meta-Llama-3-8B/config.json (no rope_scaling)"),
      shape("qwen2.5-0.5b",   "qwen2",  896, 24, 14,  2,  64,  4864, 151936,  32768,   1000000.0f, 1e-6f, true,
            "Qwen/Qwen2.5-0.5B/config.json"),
      shape("qwen2.5-1.5b",   "qwen2", 1536, 28, 12,  2, 128,  8960, 151936, 131072,   1000000.0f, 1e-6f, true,
            "Qwen/Qwen2.5-1.5B/config.json"),
      shape("qwen3-0.6b",     "qwen3", 1024, 28, 16,  8, 128,  3072, 151936,  40960,   1000000.0f, 1e-6f, true,
            "Qwen/Qwen3-0.6B/config.json (head_dim 128 > hidden_size / heads)"),
      shape("qwen3-1.7b",     "qwen3", 2048, 28, 16,  8, 128,  6144, 151936,  40960,   1000000.0f, 1e-6f, true,
            "Qwen/Qwen3-1.7B/config.json"),
      shape("qwen3-4b",       "qwen3", 2560, 36, 32,  8, 128,  9728, 151936,  40960,   1000000.0f, 1e-6f, true,
            "Qwen/Qwen3-4B/config.json"),
      // Gemma: sliding_window, attn_logit_softcapping, final_logit_softcapping
      // as the config gives them (Gemma 3's final soft-cap is null: not written).
      with(
      shape("gemma-2-2b",     "gemma2", 2304, 26,  8,  4, 256,  9216, 256000,   8192,     10000.0f, 1e-6f, true,
            "google/gemma-2-2b/config.json"),
      {{P::sliding_window, 4096}, {P::attn_softcap, 50.0}, {P::final_softcap, 30.0}}),
      with(
      shape("gemma-3-270m",   "gemma3",  640, 18,  4,  1, 256,  2048, 262144,  32768,   1000000.0f, 1e-6f, true,
            "google/gemma-3-270m/config.json"),
      {{P::sliding_window, 512}}),
      with(
      shape("gemma-3-1b",     "gemma3", 1152, 26,  4,  1, 256,  6912, 262144,  32768,   1000000.0f, 1e-6f, true,
            "google/gemma-3-1b-pt/config.json"),
      {{P::sliding_window, 512}}),
      with(linear_rope(
      shape("gemma-3-4b",     "gemma3", 2560, 34,  8,  4, 256, 10240, 262208, 131072,   1000000.0f, 1e-6f, true,
            "google/gemma-3-4b-pt/config.json, text_config; rope_scaling linear, factor 8"), 8.0f),
      {{P::sliding_window, 1024}}),
      // Gemma 4 E2B, text_config: head_dim 256 (sliding layers), global_head_dim
      // 512 (the column), hidden_size_per_layer_input 256, num_kv_shared_layers
      // 20, use_double_wide_mlp, final_logit_softcapping 30, rope_parameters
      // full_attention {proportional, partial_rotary_factor 0.25, theta 1e6},
      // sliding_attention {theta 10000}; layer_types 4 sliding : 1 full.
      gemma4_layers(with(
      shape("gemma-4-e2b",    "gemma4", 1536, 35,  8,  1, 512,  6144, 262144, 131072,   1000000.0f, 1e-6f, true,
            "google/gemma-4-E2B/config.json, text_config"),
      {{P::sliding_window, 512}, {P::key_length_swa, 256}, {P::value_length_swa, 256},
       {P::rope_dimension_count_swa, 256}, {P::rope_freq_base_swa, 10000.0}, {P::shared_kv_layers, 20},
       {P::embedding_length_per_layer, 256}, {P::final_softcap, 30.0}}), 5, 0.25f),
      phi3_rope(
      shape("phi-4-mini",     "phi3",  3072, 32, 24,  8, 128,  8192, 200064, 131072,     10000.0f, 1e-5f, true,
            "microsoft/Phi-4-mini-instruct/config.json (longrope, original_max_position_embeddings 4096, "
            "partial_rotary_factor 0.75, sliding_window 262144)"),
            4096, 96, 262144),
      shape("smollm3-3b",   "smollm3", 2048, 36, 16,  4, 128, 11008, 128256,  65536,   5000000.0f, 1e-6f, true,
            "HuggingFaceTB/SmolLM3-3B/config.json (no_rope_layer_interval 4)"),
      granite_scales(
      shape("granite-3.3-2b", "granite", 2048, 40, 32, 8, 64,  8192,  49159, 131072,  10000000.0f, 1e-5f, true,
            "ibm-granite/granite-3.3-2b-instruct/config.json (embedding_multiplier 12, residual_multiplier 0.22, "
            "attention_multiplier 0.015625, logits_scaling 8)"),
            12.0f, 0.22f, 0.015625f, 8.0f),
      // LFM2: n_ff is block_ff_dim as llama.cpp's converter maps it
      // (block_auto_adjust_ff_dim: 2/3 of it, times block_ffn_dim_multiplier
      // 1.0, rounded up to block_multiple_of 256): 6656 -> 4608, 12288 -> 8192.
      lfm2_layers(
      shape("lfm2-350m",      "lfm2",  1024, 16, 16,  8,  64,  4608,  65536, 128000,   1000000.0f, 1e-5f, true,
            "LiquidAI/LFM2-350M/config.json (block_ff_dim 6656, full_attn_idxs [2,5,8,10,12,14], conv_L_cache 3)"),
            {2, 5, 8, 10, 12, 14}, 3),
      lfm2_layers(
      shape("lfm2-1.2b",      "lfm2",  2048, 16, 32,  8,  64,  8192,  65536, 128000,   1000000.0f, 1e-5f, true,
            "LiquidAI/LFM2-1.2B/config.json (block_ff_dim 12288, full_attn_idxs [2,5,8,10,12,14], conv_L_cache 3)"),
            {2, 5, 8, 10, 12, 14}, 3),
      // LFM2.5 is LFM2 trained longer: its card gives the same layers (10
      // convolutions + 6 GQA), vocabulary and 1.17B parameters as LFM2-1.2B,
      // and a 32k context.
      lfm2_layers(
      shape("lfm2.5-1.2b",    "lfm2",  2048, 16, 32,  8,  64,  8192,  65536,  32768,   1000000.0f, 1e-5f, true,
            "LiquidAI/LFM2.5-1.2B-Instruct model card (16 layers: 10 convolutions + 6 GQA, vocab 65536, ctx 32768)"),
            {2, 5, 8, 10, 12, 14}, 3),
      // Qwen3.5 (text_config of the released checkpoints; their MTP block,
      // mtp_num_hidden_layers 1, is not written: the engine does not run it).
      qwen35_delta_net(
      shape("qwen3.5-0.8b",   "qwen35", 1024, 24,  8,  2, 256,  3584, 248320, 262144, 10000000.0f, 1e-6f, true,
            "Qwen/Qwen3.5-0.8B config.json text_config (linear 16 key / 16 value heads of 128, conv 4, "
            "full_attention_interval 4, partial_rotary_factor 0.25, mrope_section [11,11,10])"),
            16, 16, 128),
      qwen35_delta_net(
      shape("qwen3.5-2b",     "qwen35", 2048, 24,  8,  2, 256,  6144, 248320, 262144, 10000000.0f, 1e-6f, true,
            "Qwen/Qwen3.5-2B config.json text_config (linear 16 key / 16 value heads of 128, conv 4, "
            "full_attention_interval 4, partial_rotary_factor 0.25, mrope_section [11,11,10])"),
            16, 16, 128),
      qwen35_delta_net(
      shape("qwen3.5-4b",     "qwen35", 2560, 32, 16,  4, 256,  9216, 248320, 262144, 10000000.0f, 1e-6f, true,
            "Qwen/Qwen3.5-4B config.json text_config (linear 16 key / 32 value heads of 128, conv 4, "
            "full_attention_interval 4, partial_rotary_factor 0.25, mrope_section [11,11,10])"),
            16, 32, 128),
  };
  // clang-format on
}

}  // namespace

float SynthShape::longrope_attn_factor() const {
  if (!longrope || rope_original_ctx == 0 || n_ctx <= rope_original_ctx) return 1.0f;
  const double scale = static_cast<double>(n_ctx) / rope_original_ctx;
  return static_cast<float>(std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(rope_original_ctx))));
}

uint64_t SynthShape::n_params() const {
  uint64_t total = 0;
  for (const SynthTensor& t : synth_tensors(synth_config(*this, n_vocab), *this)) {
    uint64_t n = 1;
    for (uint64_t d : t.ne) n *= d;
    total += n;
  }
  return total;
}

std::vector<bool> hybrid_attention_layers(uint32_t n_layer) {
  std::vector<bool> out(n_layer);
  for (uint32_t il = 0; il < n_layer; ++il) out[il] = il % 3 == 2;
  return out;
}

const SynthShape* default_shape(std::string_view arch) {
  for (const SynthShape& s : named_shapes()) {
    if (s.arch == arch) return &s;
  }
  return nullptr;
}

std::span<const SynthShape> named_shapes() {
  static const std::vector<SynthShape> shapes = make_shapes();
  return shapes;
}

const SynthShape* find_shape(std::string_view name) {
  for (const SynthShape& s : named_shapes()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string shape_names() {
  std::string out;
  for (const SynthShape& s : named_shapes()) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace tools
