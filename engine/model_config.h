// Hyperparameters of a llama-family model, read from the GGUF `<arch>.*` keys
// with llama.cpp's defaults where a key is optional.
#pragma once

#include <cstdint>
#include <string>

#include "engine/ops.h"
#include "gguf/file.h"

namespace engine {

enum class Arch { llama, qwen2, qwen3 };

struct ModelConfig {
  Arch arch = Arch::llama;
  std::string arch_name;     // "llama", "qwen2", "qwen3"
  std::string name;          // general.name, if any
  uint32_t n_ctx_train = 0;  // <arch>.context_length
  uint32_t n_embd = 0;       // <arch>.embedding_length
  uint32_t n_layer = 0;      // <arch>.block_count
  uint32_t n_ff = 0;         // <arch>.feed_forward_length
  uint32_t n_head = 0;       // <arch>.attention.head_count
  uint32_t n_head_kv = 0;    // <arch>.attention.head_count_kv (default n_head)
  uint32_t head_dim_k = 0;   // <arch>.attention.key_length (default n_embd / n_head)
  uint32_t head_dim_v = 0;   // <arch>.attention.value_length (default head_dim_k)
  uint32_t n_rot = 0;        // <arch>.rope.dimension_count (default head_dim_k)
  uint32_t n_vocab = 0;      // <arch>.vocab_size, else the tokenizer's, else token_embd's rows
  float rope_freq_base = 10000.0f;  // <arch>.rope.freq_base
  float rope_freq_scale = 1.0f;     // 1 / <arch>.rope.scaling.factor for linear scaling
  float rms_eps = 0.0f;             // <arch>.attention.layer_norm_rms_epsilon (required)
  ops::RopeStyle rope_style = ops::RopeStyle::normal;  // normal for llama, neox for qwen2/qwen3
  bool qkv_bias = false;     // qwen2: biases on Q, K and V
  bool qk_norm = false;      // qwen3: RMSNorm over each head of Q and K before RoPE

  uint32_t q_dim() const { return n_head * head_dim_k; }
  uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
  uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }

  // Throws engine::Error naming the file and key (unsupported architecture,
  // missing key, values that contradict each other).
  static ModelConfig from_gguf(const gguf::File& file);
  std::string describe() const;
};

}  // namespace engine
