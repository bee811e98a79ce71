// The shapes synth can write: real models' published hyperparameters (the
// table and its sources are in synth_shapes.cpp), or a custom shape.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/arch.h"

namespace tools {

struct SynthShape {
  std::string name;        // "llama-2-7b", or "custom"
  std::string arch;        // a registered architecture (engine/arch/registry.h): llama, qwen2, qwen3
  uint32_t n_embd = 0;     // hidden_size
  uint32_t n_layer = 0;    // num_hidden_layers
  uint32_t n_head = 0;     // num_attention_heads
  uint32_t n_head_kv = 0;  // num_key_value_heads
  uint32_t head_dim = 0;   // head_dim, else hidden_size / num_attention_heads
  uint32_t n_rot = 0;      // partial_rotary_factor x head_dim; 0: the whole head
  uint32_t n_ff = 0;       // intermediate_size
  uint32_t n_vocab = 0;    // vocab_size (rows of token_embd)
  uint32_t n_ctx = 0;      // max_position_embeddings
  float rope_base = 10000.0f;  // rope_theta
  float rms_eps = 1e-5f;       // rms_norm_eps
  bool tied = false;           // tie_word_embeddings: no output.weight, token_embd is the LM head
  // Llama 3.1+ rope_scaling {"rope_type": "llama3"}: written, as llama.cpp's
  // converter does, as per-pair frequency divisors in rope_freqs.weight.
  // factor 0: no scaling.
  float rope_factor = 0.0f;
  float rope_low_freq_factor = 0.0f;
  float rope_high_freq_factor = 0.0f;
  uint32_t rope_original_ctx = 0;
  // rope_scaling {"rope_type": "linear", "factor": F}: rope.scaling.type and
  // rope.scaling.factor where the family reads them. 0: none.
  float rope_linear_factor = 0.0f;
  // The family's further keys (engine/arch/arch.h, Param >= kFirstValueParam)
  // the shape sets: sliding window, soft-caps, ...; written as the family's
  // converter writes them.
  std::map<engine::arch::Param, double> values;
  // The same as one value per layer (gemma4's sliding_window_pattern, 1 for
  // a sliding-window layer), written as an array.
  std::map<engine::arch::Param, std::vector<double>> layer_values;
  // Keys that are arrays of their own length (qwen35's rope.dimension_sections).
  std::map<engine::arch::Param, std::vector<double>> arrays;
  std::vector<uint32_t> layer_n_ff;  // intermediate_size per layer when it varies (Gemma 4's double-wide MLP)
  // A hybrid model's layer list (LFM2's layer_types / full_attn_idxs): which
  // layers attend; the others are its family's other mixer (a short
  // convolution), written as head_count_kv 0. Empty: every layer attends.
  std::vector<bool> attention_layers;
  // Gemma 4's global layers (sliding_window_pattern 0): rope_parameters
  // "proportional" with this partial_rotary_factor, written as
  // rope_freqs.weight (0: none); and attention_k_eq_v, no attn_v.weight.
  float rope_partial_global = 0.0f;
  bool k_eq_v_global = false;
  // Phi-3's LongRoPE (rope_scaling {"type": "longrope"}): long and short
  // per-pair factors for an original context of rope_original_ctx, written as
  // rope_factors_long/short.weight with rope.scaling.attn_factor. The real
  // factors are learned; synth writes a smooth ramp (synth_model.cpp).
  bool longrope = false;
  // Granite's multipliers (embedding_multiplier, residual_multiplier,
  // attention_multiplier, logits_scaling); 0: the key is not written.
  float embedding_scale = 0.0f;
  float residual_scale = 0.0f;
  float attention_scale = 0.0f;
  float logit_scale = 0.0f;
  std::string source;  // where the numbers come from

  uint64_t n_params() const;  // weights in the file (of a registered architecture)
  // LongRoPE's attention factor as llama.cpp's converter computes it:
  // sqrt(1 + ln(scale) / ln(original context)), scale = n_ctx / original; 1
  // without LongRoPE or when the context is not extended.
  float longrope_attn_factor() const;
};

// LFM2's layer list for a custom shape of n_layer layers: attention in every
// third layer from layer 2 (2, 5, 8, ...), the rhythm of the first layers of
// LFM2-350M and LFM2-1.2B.
std::vector<bool> hybrid_attention_layers(uint32_t n_layer);

std::span<const SynthShape> named_shapes();
const SynthShape* find_shape(std::string_view name);  // nullptr when unknown
std::string shape_names();                            // "tinyllama-1.1b, llama-3.2-1b, ..."
// The first named shape of an architecture (its typical values for a custom
// shape, e.g. rms_eps), nullptr when none is.
const SynthShape* default_shape(std::string_view arch);

}  // namespace tools
