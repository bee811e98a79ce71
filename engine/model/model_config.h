// Hyperparameters of a model, read from the GGUF `<arch>.*` keys that its
// architecture's description lists (engine/arch/), with llama.cpp's defaults
// where a key is optional, and the spec of every layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/layer_spec.h"
#include "gguf/file.h"

namespace engine {

namespace arch {
struct Architecture;
}

struct ModelConfig {
  const arch::Architecture* arch = nullptr;  // the description it was read by
  std::string arch_name;     // general.architecture
  std::string name;          // general.name, if any
  uint32_t n_ctx_train = 0;  // <arch>.context_length
  uint32_t n_embd = 0;       // <arch>.embedding_length
  uint32_t n_layer = 0;      // <arch>.block_count
  uint32_t n_vocab = 0;      // <arch>.vocab_size, else the tokenizer's, else token_embd's rows
  // The largest of any layer (the scratch buffers are sized by them); a
  // layer's own are in layers[il].
  uint32_t n_ff = 0;         // <arch>.feed_forward_length
  uint32_t n_head = 0;       // <arch>.attention.head_count
  uint32_t n_head_kv = 0;    // <arch>.attention.head_count_kv (default n_head)
  uint32_t head_dim_k = 0;   // <arch>.attention.key_length (default n_embd / n_head)
  uint32_t head_dim_v = 0;   // <arch>.attention.value_length (default head_dim_k)
  uint32_t n_rot = 0;        // <arch>.rope.dimension_count (default head_dim_k)
  float rope_freq_base = 10000.0f;  // <arch>.rope.freq_base
  float rope_freq_scale = 1.0f;     // 1 / <arch>.rope.scaling.factor for linear scaling
  float rms_eps = 0.0f;             // <arch>.attention.layer_norm_rms_epsilon (required)
  uint32_t n_ctx_orig = 0;          // <arch>.rope.scaling.original_context_length (default n_ctx_train)
  float rope_attn_factor = 1.0f;    // <arch>.rope.scaling.attn_factor: multiplies RoPE's cos and sin
  uint32_t sliding_window = 0;      // <arch>.attention.sliding_window, as the file gives it (0: none)
  float embed_scale = 1.0f;         // the embeddings are multiplied by it (1: not at all)
  float residual_scale = 1.0f;      // <arch>.residual_scale: each block's output is multiplied by it
  float attention_scale = 0.0f;     // <arch>.attention.scale: the q.k scale (0: 1 / sqrt(head size))
  float logit_scale = 1.0f;         // <arch>.logit_scale: the logits are divided by it
  float final_softcap = 0.0f;       // logits = softcap * tanh(logits / softcap); 0: none
  // Keys that may hold one value per layer, as one value per layer.
  std::vector<uint32_t> layer_n_ff, layer_n_head, layer_n_head_kv;
  std::vector<LayerSpec> layers;  // (n_layer) what each layer computes

  uint32_t q_dim() const { return n_head * head_dim_k; }
  uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
  uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }

  // Throws engine::Error naming the file and key (unsupported architecture,
  // missing key, values that contradict each other).
  static ModelConfig from_gguf(const gguf::File& file);
  std::string describe() const;
};

}  // namespace engine
