// An architecture as a description: the metadata keys it reads, the tensors
// it has, and what each layer computes. The loader (engine/model/model.cpp) and the
// model writer (`synth`) both walk these tables, and the forward pass
// (engine/runtime/session.cpp) reads only the per-layer spec, so a new family is one
// file here plus one line in registry.cpp (and a mixer in engine/mixers/ when
// its layers mix tokens another way).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "engine/arch/layer_spec.h"
#include "engine/model/model_weights.h"

namespace engine {
struct ModelConfig;
}

namespace engine::arch {

// The hyperparameters a key can carry. A key is "<arch>." + its suffix.
enum class Param : uint8_t {
  context_length,        // u32
  embedding_length,      // u32
  block_count,           // u32
  feed_forward_length,   // u32, per layer allowed
  head_count,            // u32, per layer allowed
  head_count_kv,         // u32, per layer allowed (default head_count)
  key_length,            // u32 (default embedding_length / head_count)
  value_length,          // u32 (default key_length)
  rope_dimension_count,  // u32 (default key_length)
  rope_freq_base,        // float (default 10000)
  rope_scaling_type,     // string: none | linear
  rope_scaling_factor,   // float, required with linear scaling
  rms_epsilon,           // float
  vocab_size,            // u32 (default the tokenizer's, else token_embd's rows)
  rope_original_context,  // u32 rope.scaling.original_context_length (default context_length)
  rope_attn_factor,      // float rope.scaling.attn_factor (default 1)
  embedding_scale,       // float, multiplies the embeddings (default 0: not at all)
  residual_scale,        // float, multiplies each block's output (default 0: not at all)
  attention_scale,       // float, the q.k scale (default 0: 1 / sqrt(head size))
  logit_scale,           // float, divides the logits (default 1)
  // Read into ModelConfig::values when present; each family gives its own
  // default where it reads one (ModelConfig::value).
  sliding_window,          // u32, positions a sliding-window layer attends to
  sliding_window_pattern,  // u32, every n-th layer attends to all positions
  attn_softcap,            // float, attn_logit_softcapping
  final_softcap,           // float, final_logit_softcapping
  rope_freq_base_swa,      // float, the RoPE base of sliding-window layers
  shared_kv_layers,          // u32, the last layers that read an earlier layer's cache
  embedding_length_per_layer,  // u32, the per-layer inputs' width (0: none)
  key_length_swa,            // u32, the head size of sliding-window layers
  value_length_swa,          // u32
  rope_dimension_count_swa,  // u32, the dimensions RoPE rotates in sliding-window layers
  expert_count,              // u32, experts of a mixture-of-experts model
  shortconv_l_cache,         // u32, the taps of LFM2's short convolution
  ssm_conv_kernel,           // u32, the taps of a DeltaNet layer's convolution
  ssm_state_size,            // u32, a DeltaNet key head's size
  ssm_group_count,           // u32, DeltaNet key heads
  ssm_time_step_rank,        // u32, DeltaNet value heads
  ssm_inner_size,            // u32, DeltaNet value heads x value head size
  full_attention_interval,   // u32, every n-th layer attends (the others are recurrent)
  nextn_predict_layers,      // u32, multi-token-prediction blocks after the model's own
  recurrent_layers,          // bool per layer: the layer is recurrent (qwen35's attention.recurrent_layers)
  rope_dimension_sections,   // u32 array (KeySpec::array): multi-section RoPE's pairs per position kind
};
// The first Param read into ModelConfig::values, and whether one is a float.
inline constexpr Param kFirstValueParam = Param::sliding_window;
bool param_is_float(Param p);

// When a converter writes a key (synth writes what llama.cpp's converter does).
enum class Written : uint8_t { always, if_not_default, never };

struct KeySpec {
  const char* suffix;  // "attention.head_count_kv"
  Param param;
  bool required = false;
  bool per_layer = false;  // an array of block_count values is read as one value per layer
  Written written = Written::always;
  bool array = false;  // an array of any length, read into ModelConfig::arrays
};

// A size in which a tensor dimension is given, resolved from the model's
// hyperparameters and the layer's spec (resolve_dim in arch.cpp).
enum class Dim : uint8_t {
  n_embd,
  n_vocab,
  n_ff,        // the layer's feed-forward width
  q_dim,       // n_head x head_dim_k
  kv_dim_k,    // n_head_kv x head_dim_k
  kv_dim_v,    // n_head_kv x head_dim_v
  attn_out,    // n_head x head_dim_v, the attention output
  head_dim_k,
  rope_pairs,  // n_rot / 2 of the layers that divide by rope_freqs.weight (the first of them)
  qkv_dim,     // q_dim + kv_dim_k + kv_dim_v: a fused attn_qkv's rows
  up_rows,     // n_ff, or 2 x n_ff where the gate is fused into ffn_up
  n_pl,        // the per-layer inputs' width (ModelConfig::per_layer_input.n_embd)
  n_pl_all,    // n_pl x n_layer: every layer's per-layer input of a token
  one,         // 1: a scalar
  conv_kernel,   // the layer's short-convolution taps (LayerSpec::conv_kernel)
  conv_in_rows,  // 3 x n_embd: a short convolution's in_proj rows (B, C and x)
  q_rows,        // q_dim, or 2 x q_dim with an output gate (AttentionSpec::q_rows)
  dn_conv_dim,   // a DeltaNet layer's Q, K and V channels (DeltaNetSpec::conv_dim)
  dn_value_dim,  // n_v_heads x head_v_dim
  dn_v_heads,    // DeltaNet value heads
  dn_head_v_dim, // a DeltaNet value head's size
};
const char* dim_name(Dim d);

// What a tensor is, which tells the loader how to hold it and synth how to
// fill it: matrices N(0, 1/sqrt(row length)), norms 1 + N(0, 0.1), biases
// N(0, 0.5), the llama3 rope factors and LongRoPE's long and short factors
// computed, decay rates (a DeltaNet's ssm_a, -exp(A_log)) negative.
enum class TensorKind : uint8_t {
  embedding,
  matrix,
  norm,
  bias,
  rope_factors,
  rope_factors_long,
  rope_factors_short,
  decay_rates
};

// Where the loader puts a tensor.
using Slot = std::variant<std::monostate,                    // token_embd (Model keeps the tensor itself)
                          Linear GlobalWeights::*, std::vector<float> GlobalWeights::*,
                          const gguf::TensorInfo* GlobalWeights::*,  // a table read a row at a time
                          Linear LayerWeights::*, std::vector<float> LayerWeights::*>;

struct TensorSpec {
  const char* name;  // "token_embd.weight"; per layer without the "blk.N." prefix
  TensorKind kind;
  std::vector<Dim> shape;  // GGUF order: ne[0] (the row length) first
  Slot slot;
  bool per_layer = true;
  bool required = true;
  // Tensors present only where the spec says (nullptr: every layer); a
  // global tensor asks layer 0's spec.
  bool (*present)(const LayerSpec&) = nullptr;
  // An absent optional tensor stands in for by this one (the tied LM head).
  const char* fallback = nullptr;
};

struct Architecture {
  std::string name;  // general.architecture
  std::vector<KeySpec> keys;
  std::vector<TensorSpec> tensors;
  // Layer `il`'s spec from the hyperparameters read (c.layers is not set yet;
  // the per-layer values are in c's per-layer arrays).
  LayerSpec (*layer)(const ModelConfig& c, uint32_t il) = nullptr;
  // Whole-model values from the hyperparameters, before the layers are
  // built: ModelConfig::embed_scale and final_softcap (nullptr: neither).
  void (*model)(ModelConfig& c) = nullptr;
  // attention.head_count_kv 0 marks a layer without attention (LFM2's
  // convolution layers, as llama.cpp reads its layer list); refused otherwise.
  bool kv_heads_zero_without_attention = false;
};

// Fills c's model-wide values and every layer's spec from the
// hyperparameters read (c.arch set): what the loader and synth both do last.
void finish_config(ModelConfig& c);

// The tensors every layer of a pre-norm transformer has whichever family
// (attn_norm, attn_q/k/v/output, ffn_norm, ffn_gate/up/down), the global ones
// (token_embd, output_norm, output tied to token_embd when absent,
// rope_freqs, LongRoPE's rope_factors_long/short), and the optional per-layer
// ones switched by the spec (Q/K/V biases, Q/K norms, post-norms, a fused
// attn_qkv in place of attn_q/k/v, ffn_up holding the gate too).
std::vector<TensorSpec> transformer_tensors();
// The keys llama.cpp's llama, qwen2 and qwen3 read, in the order its
// converter writes them, the optional ones written only when they differ from
// their default; `written` changes that for one key.
std::vector<KeySpec> transformer_keys();
std::vector<KeySpec> written(std::vector<KeySpec> keys, Param p, Written w);
// transformer_keys() as llama.cpp's llama converter (LlamaModel, which
// smollm3's and granite's extend) writes them: vocab_size and
// rope.dimension_count always.
std::vector<KeySpec> llama_converter_keys();
// The spec llama's layers have (normal RoPE, SwiGLU, 1/sqrt(head_dim) scale),
// from the per-layer hyperparameters: the base the other families adjust.
LayerSpec transformer_layer(const ModelConfig& c, uint32_t il);
// Whether layer `il` is a sliding-window layer when the last layer of each
// group of `period` attends to all positions, as llama.cpp reads
// sliding_window_pattern: period 0 makes every layer sliding, 1 none.
bool is_sliding_layer(uint32_t il, uint32_t period);

// The size of `d` for a layer spec.
uint64_t resolve_dim(Dim d, const ModelConfig& c, const LayerSpec& layer);
// The shape of a tensor of layer `il` (of layer 0 for a global one).
std::vector<uint64_t> tensor_shape(const TensorSpec& t, const ModelConfig& c, uint32_t il);
// "blk.3.attn_q.weight" for a per-layer tensor, the name itself otherwise.
std::string tensor_name(const TensorSpec& t, uint32_t il);
// The key spec of a parameter, nullptr when the architecture does not read it.
const KeySpec* find_key(const Architecture& a, Param p);

}  // namespace engine::arch
