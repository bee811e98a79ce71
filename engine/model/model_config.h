// Hyperparameters of a model, read from the GGUF `<arch>.*` keys that its
// architecture's description lists (engine/arch/), with llama.cpp's defaults
// where a key is optional, and the spec of every layer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/arch/layer_spec.h"
#include "gguf/file.h"

namespace engine {

namespace arch {
struct Architecture;
enum class Param : uint8_t;
}

struct ModelConfig {
  const arch::Architecture* arch = nullptr;  // the description it was read by
  std::string arch_name;     // general.architecture
  std::string name;          // general.name, if any
  uint32_t n_ctx_train = 0;  // <arch>.context_length
  uint32_t n_embd = 0;       // <arch>.embedding_length
  uint32_t n_layer = 0;      // <arch>.block_count, less the multi-token-prediction blocks
  uint32_t n_layer_nextn = 0;  // <arch>.nextn_predict_layers: blocks after the model's own, not run
  uint32_t n_vocab = 0;      // <arch>.vocab_size, else the tokenizer's, else token_embd's rows
  // The largest of any layer (the scratch buffers are sized by them); a
  // layer's own are in layers[il].
  uint32_t n_ff = 0;         // <arch>.feed_forward_length
  uint32_t n_head = 0;       // <arch>.attention.head_count
  uint32_t n_head_kv = 0;    // <arch>.attention.head_count_kv (default n_head)
  // <arch>.attention.key_length (default n_embd / n_head) and value_length
  // (default head_dim_k), raised to the largest of any layer once the layers are read.
  uint32_t head_dim_k = 0;
  uint32_t head_dim_v = 0;
  uint32_t n_rot = 0;        // <arch>.rope.dimension_count (default head_dim_k)
  float rope_freq_base = 10000.0f;  // <arch>.rope.freq_base
  float rope_freq_scale = 1.0f;     // 1 / <arch>.rope.scaling.factor for linear scaling
  float rms_eps = 0.0f;             // <arch>.attention.layer_norm_rms_epsilon (required)
  uint32_t n_ctx_orig = 0;          // <arch>.rope.scaling.original_context_length (default n_ctx_train)
  float rope_attn_factor = 1.0f;    // <arch>.rope.scaling.attn_factor: multiplies RoPE's cos and sin
  float embed_scale = 1.0f;         // the embeddings are multiplied by it (1: not at all)
  float residual_scale = 1.0f;      // <arch>.residual_scale: each block's output is multiplied by it
  float attention_scale = 0.0f;     // <arch>.attention.scale: the q.k scale (0: 1 / sqrt(head size))
  float logit_scale = 1.0f;         // <arch>.logit_scale: the logits are divided by it
  float final_softcap = 0.0f;       // logits = softcap * tanh(logits / softcap); 0: none
  // Per-layer inputs (Gemma 4's per-layer embeddings): for each token, n_embd
  // values for every layer, from a table of their own plus a projection of
  // the token's embedding, each part and their sum scaled (0 wide: none).
  struct PerLayerInput {
    uint32_t n_embd = 0;        // <arch>.embedding_length_per_layer_input
    float table_scale = 1.0f;   // per_layer_token_embd's rows are multiplied by it
    float proj_scale = 1.0f;    // the embedding's projection by per_layer_model_proj
    float sum_scale = 1.0f;     // the sum of the two (after the projection's norm)
  } per_layer_input;
  // Keys that may hold one value per layer, as one value per layer.
  std::vector<uint32_t> layer_n_ff, layer_n_head, layer_n_head_kv;
  std::vector<LayerSpec> layers;  // (n_layer) what each layer computes
  // The description's further keys (Param >= kFirstValueParam) the file has.
  std::map<arch::Param, double> values;
  double value(arch::Param p, double fallback) const {
    const auto it = values.find(p);
    return it == values.end() ? fallback : it->second;
  }
  // The same keys given as an array of one value per layer (KeySpec::per_layer).
  std::map<arch::Param, std::vector<double>> layer_values;
  // Keys that are arrays of their own length (KeySpec::array: qwen35's
  // rope.dimension_sections), as read.
  std::map<arch::Param, std::vector<double>> arrays;
  // Layer il's value: from the array, else the scalar, else `fallback`.
  double layer_value(arch::Param p, uint32_t il, double fallback) const {
    const auto it = layer_values.find(p);
    return it != layer_values.end() && il < it->second.size() ? it->second[il] : value(p, fallback);
  }
  // (n_layer) whether blk.N.attn_v.weight is absent: V is K's projection in
  // families that allow it (AttentionSpec::v_from_k), a missing tensor in others.
  std::vector<bool> layer_without_v;

  uint32_t q_dim() const { return n_head * head_dim_k; }
  uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
  uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }

  // Throws engine::Error naming the file and key (unsupported architecture,
  // missing key, values that contradict each other).
  static ModelConfig from_gguf(const gguf::File& file);
  std::string describe() const;
};

}  // namespace engine
