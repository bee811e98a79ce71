// A session: one conversation's state on a loaded model — the KV cache, the
// scratch buffers and the position — and the forward pass. Prompts are
// evaluated as matrix-matrix products over up to n_batch tokens at a time
// (prefill); generation feeds one token at a time (decode, matrix-vector).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/kv_cache.h"
#include "engine/profile.h"
#include "engine/model.h"
#include "engine/session_memory.h"

namespace engine {

class ThreadPool;

struct SessionParams {
  uint32_t n_ctx = 0;     // 0: the model's training context, at most 4096
  uint32_t n_batch = 512; // tokens per prefill step
  KvType kv_type = KvType::f16;
  // Threads for the matmuls and attention; nullptr: the calling thread alone.
  // The pool must outlive the session.
  ThreadPool* pool = nullptr;
  // The most the session may allocate; 0: what the system has available
  // (memory_available()). A lower cap is for apps that share the device.
  uint64_t memory_limit = 0;
};

class Session {
 public:
  // Throws engine::ResourceError, with the bytes needed and available, when
  // the KV cache and scratch for params.n_ctx and n_batch would not fit: the
  // refusal comes before anything is allocated.
  Session(const Model& model, const SessionParams& params);

  // Evaluates `tokens` at positions n_past() .. n_past() + size - 1 and appends
  // them to the cache. Afterwards logits() holds the logits of the last token,
  // or of every token when all_logits. Throws engine::Error when the context
  // would overflow or a token id is out of range (nothing is evaluated then).
  // Throws engine::ModelError naming the layer when the model turns the
  // activations into NaN or Inf (a corrupt or overflowing model). After any
  // error none of the tokens were added: n_past() is what it was before, and
  // logits() is empty.
  void eval(std::span<const int32_t> tokens, bool all_logits = false);

  // (n_rows, n_vocab) floats: 1 row, or one per evaluated token with all_logits;
  // empty before the first eval and after a failed one.
  std::span<const float> logits() const { return logits_; }
  uint32_t n_past() const { return n_past_; }
  uint32_t n_ctx() const { return n_ctx_; }
  const KvCache& kv_cache() const { return kv_; }

  // Attaches a profile that every later evaluation adds its time to, by
  // operation class (nullptr detaches). Reads the clock around each step; the
  // profile must outlive the attachment.
  void set_profile(Profile* profile);
  void reset() { n_past_ = 0; }

 private:
  enum class Logits { none, last, all };
  void eval_batch(const int32_t* tokens, uint32_t n, Logits wanted);
  void attention(uint32_t layer, uint32_t n);
  void rope_tables(uint32_t n);
  // y[i, l.out] = x[i, l.in] * W^T for i < m.
  void linear(const Linear& l, const float* x, uint32_t m, float* y);
  // Several matrices applied to the same x: the activations are packed once
  // when their kernels share the packing.
  void linear_same_input(const float* x, uint32_t m, std::initializer_list<std::pair<const Linear*, float*>> outs);
  // fn(task, thread) for task < n_tasks, on the pool when there is one.
  template <class Fn>
  void parallel(size_t n_tasks, Fn&& fn);
  void rmsnorm_rows(uint32_t n, const float* weight);
  void finish_qkv(uint32_t layer, const LayerWeights& w, uint32_t i);
  void add_rows(uint32_t n);
  // fn(first, last) over [0, n) in pieces of whole multiples of `grain`,
  // across the pool: the per-token (and per-element) work between matmuls.
  template <class Fn>
  void parallel_range(size_t n, size_t grain, Fn&& fn);
  // step(), its time added to the profile when one is attached.
  template <class Step>
  void profiled(const kernels::MatmulKernel* kernel, Step&& step);
  void eval_layers(const int32_t* tokens, uint32_t n, Logits wanted);

  const Model& model_;
  const ModelConfig& c_;
  uint32_t n_ctx_;
  uint32_t n_batch_;
  uint32_t n_past_ = 0;
  ThreadPool* pool_;
  size_t n_threads_;
  SessionMemory memory_;  // checked against the limit before kv_ and the scratch exist
  uint64_t memory_limit_;
  KvCache kv_;

  // Scratch, sized for n_batch tokens (B):
  std::vector<float> x_;        // (B, n_embd) the residual stream
  std::vector<float> xn_;       // (B, n_embd) normalized input of a block
  std::vector<float> q_;        // (B, q_dim)
  std::vector<float> k_;        // (B, kv_dim_k)
  std::vector<float> v_;        // (B, kv_dim_v)
  std::vector<float> att_;      // (B, n_head * head_dim_v) attention output
  std::vector<float> gate_;     // (B, n_ff)
  std::vector<float> up_;       // (B, n_ff)
  std::vector<float> scores_;   // (threads, group, n_ctx) attention weights of a KV head's query heads
  std::vector<float> kv_rows_;  // (threads, n_ctx, head_dim_k + head_dim_v) one KV head's history
                                // as F32, per thread (empty with an F32 cache: read in place)
  std::vector<float> rope_;     // (B, n_rot) cos/sin pairs per token
  std::vector<float> logits_;   // (1 or B, n_vocab)
  std::vector<uint8_t> packed_; // activations packed for a kernel
  Profile* profile_ = nullptr;
};

}  // namespace engine
