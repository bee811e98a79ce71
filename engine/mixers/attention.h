// The attention mixer: causal multi-head attention with grouped-query KV
// heads over an attention layer's cache, as its AttentionSpec says (biases,
// Q/K/V norms, RoPE, scale, soft-cap, V from K, another layer's cache). One
// object per session holds the scratch every attention layer shares; other
// mixer kinds go in files beside this one.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/arch/layer_spec.h"
#include "engine/runtime/compute.h"
#include "engine/runtime/kv_cache.h"
#include "engine/model/model_weights.h"

namespace engine {

struct ModelConfig;

class AttentionMixer {
 public:
  // Scratch for n_batch tokens and n_ctx positions of the largest layer.
  AttentionMixer(const ModelConfig& c, uint32_t n_batch, uint32_t n_ctx, KvType kv_type, size_t n_threads);

  // xn (n, n_embd): the normalized input of n tokens at positions n_past ..
  // n_past + n - 1, replaced by the block's output. Their keys and values go
  // into `cache`; rope holds (cos, sin) pairs of a.rope.n_rot dimensions per
  // token.
  void forward(Compute& compute, const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache,
               const float* rope, float rms_eps, uint32_t n_past, uint32_t n, float* xn);

 private:
  void finish_q(const AttentionSpec& a, const LayerWeights& w, const float* rope, float rms_eps, uint32_t i);
  void finish_kv(const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache, const float* rope,
                 float rms_eps, uint32_t pos, uint32_t i);
  void attend(Compute& compute, const AttentionSpec& a, const AttentionCache& cache, uint32_t n_past, uint32_t n);

  uint32_t n_ctx_;
  std::vector<float> q_;        // (B, q_dim)
  std::vector<float> k_;        // (B, kv_dim_k)
  std::vector<float> v_;        // (B, kv_dim_v)
  std::vector<float> att_;      // (B, n_head * head_dim_v) attention output
  std::vector<float> scores_;   // (threads, group, n_ctx) attention weights of a KV head's query heads
  std::vector<float> kv_rows_;  // (threads, n_ctx, head_dim_k + head_dim_v) one KV head's history
                                // as F32, per thread (empty with an F32 cache: read in place)
  std::vector<float> ones_;     // (head_dim_v) the weight of V's RMSNorm, which has none
};

}  // namespace engine
