// The attention mixer: causal multi-head attention with grouped-query KV
// heads over an attention layer's cache, as its AttentionSpec says (biases,
// Q/K/V norms, RoPE, scale, soft-cap, V from K, another layer's cache, a
// fused QKV projection). One
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
  // Scratch for n_batch tokens and, per thread, the positions one task
  // attends to (rows_attended).
  AttentionMixer(const ModelConfig& c, uint32_t n_batch, uint32_t n_ctx, KvType kv_type, size_t n_threads);

  // The most positions one task (a KV head and a chunk of tokens) attends to
  // in any layer of c: n_ctx, or when every layer has a window, the largest
  // window and a chunk. The per-thread scratch is sized by it, so a context
  // far longer than the windows costs no scratch.
  static uint32_t rows_attended(const ModelConfig& c, uint32_t n_ctx);
  // The floats of scratch one thread needs: its scores and one KV head's
  // rows converted to F32.
  static uint64_t thread_scratch_floats(const ModelConfig& c, uint32_t n_ctx);
  // The widest Q projection of c's attention layers: q_dim, or 2 q_dim where
  // a layer has an output gate (AttentionSpec::output_gate).
  static uint64_t gated_q_rows(const ModelConfig& c);

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

  // Tokens per task: with the 4 KV heads of TinyLlama a 128-token prompt is
  // 32 tasks, enough to keep 8 threads busy, and each F16 history is
  // converted for 16 x group queries instead of one.
  static constexpr uint32_t kChunk = 16;

  // Token i's row of Q, K or V: at base + i * stride.
  struct Rows {
    float* base = nullptr;
    size_t stride = 0;
    float* row(size_t i) const { return base + i * stride; }
  };

  uint32_t rows_;  // rows_attended: the stride of scores_ and kv_rows_
  // (B, q_dim + kv_dim_k + kv_dim_v): with separate projections Q (B, q_dim),
  // then K (B, kv_dim_k), then V (B, kv_dim_v); with a fused attn_qkv one row
  // per token holding its Q, K and V side by side, as the matmul wrote it.
  std::vector<float> qkv_;
  Rows q_, k_, v_;  // the current layer's rows in qkv_
  std::vector<float> att_;      // (B, n_head * head_dim_v) attention output
  std::vector<float> gate_;     // (B, q_dim) the output gates, when a layer has them
  std::vector<float> scores_;   // (threads, group, rows_) attention weights of a KV head's query heads
  std::vector<float> kv_rows_;  // (threads, rows_, head_dim_k + head_dim_v) one KV head's history
                                // as F32, per thread (empty with an F32 cache: read in place)
  std::vector<float> ones_;     // (head_dim_v) the weight of V's RMSNorm, which has none
};

}  // namespace engine
