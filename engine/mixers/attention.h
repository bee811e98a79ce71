// The attention mixer: causal multi-head attention with grouped-query KV
// heads over an attention layer's cache, as its AttentionSpec says (biases,
// Q/K norms, RoPE, scale, soft-cap). One object per session holds the scratch
// every attention layer shares; other mixer kinds go in files beside this one.
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
  void finish_qkv(const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache, const float* rope,
                  float rms_eps, uint32_t pos, uint32_t i);
  void attend(Compute& compute, const AttentionSpec& a, const AttentionCache& cache, uint32_t n_past, uint32_t n);

  // Token i's row of Q, K or V: at base + i * stride.
  struct Rows {
    float* base = nullptr;
    size_t stride = 0;
    float* row(size_t i) const { return base + i * stride; }
  };

  uint32_t n_ctx_;
  // (B, q_dim + kv_dim_k + kv_dim_v): with separate projections Q (B, q_dim),
  // then K (B, kv_dim_k), then V (B, kv_dim_v); with a fused attn_qkv one row
  // per token holding its Q, K and V side by side, as the matmul wrote it.
  std::vector<float> qkv_;
  Rows q_, k_, v_;  // the current layer's rows in qkv_
  std::vector<float> att_;      // (B, n_head * head_dim_v) attention output
  std::vector<float> scores_;   // (threads, group, n_ctx) attention weights of a KV head's query heads
  std::vector<float> kv_rows_;  // (threads, n_ctx, head_dim_k + head_dim_v) one KV head's history
                                // as F32, per thread (empty with an F32 cache: read in place)
};

}  // namespace engine
