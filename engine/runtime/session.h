// A session: one conversation's state on a loaded model — the KV cache, the
// scratch buffers and the position — and the forward pass. Prompts are
// evaluated as matrix-matrix products over up to n_batch tokens at a time
// (prefill); generation feeds one token at a time (decode, matrix-vector).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/runtime/compute.h"
#include "engine/runtime/kv_cache.h"
#include "engine/mixers/attention.h"
#include "engine/runtime/profile.h"
#include "engine/model/model.h"
#include "engine/runtime/session_memory.h"

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
  // A batch's (cos, sin) pairs for one RoPE spec: (B, n_rot) floats.
  struct RopeTable {
    RopeSpec spec;
    uint64_t batch = UINT64_MAX;  // the batch it was computed for
    std::vector<float> cos_sin;
  };

  void eval_batch(const int32_t* tokens, uint32_t n, Logits wanted);
  void eval_layers(const int32_t* tokens, uint32_t n, Logits wanted);
  // xn = mixer(xn) for layer l, by the kind its spec names.
  void mix(uint32_t l, const LayerSpec& spec, const LayerWeights& w, uint32_t n);
  // xn = W_down (act(xn W_gate^T) * (xn W_up^T)), the gate's rows the first
  // half of W_up's where the spec fuses them.
  void feed_forward(const LayerSpec& spec, const LayerWeights& w, uint32_t n);
  // The batch's per-layer inputs into per_layer_, and layer l's added to x.
  void per_layer_inputs(const int32_t* tokens, uint32_t n);
  void add_per_layer_input(uint32_t l, const LayerWeights& w, uint32_t n);
  // The current batch's table for `spec`, computed on first use.
  const float* rope_table(const RopeSpec& spec, uint32_t n);
  // out = rmsnorm(in) * weight, row by row (out may be in).
  void rmsnorm_rows(uint32_t n, const float* in, const float* weight, float* out);
  // x += scale * xn, row by row (xn is scaled in place).
  void add_rows(uint32_t n, float scale);

  const Model& model_;
  const ModelConfig& c_;
  uint32_t n_ctx_;
  uint32_t n_batch_;
  uint32_t n_past_ = 0;
  uint64_t batch_ = 0;  // batches evaluated, to date the RoPE tables
  Compute compute_;
  SessionMemory memory_;  // checked against the limit before kv_ and the scratch exist
  uint64_t memory_limit_;
  KvCache kv_;
  AttentionMixer attention_;

  // Scratch, sized for n_batch tokens (B):
  std::vector<float> x_;        // (B, n_embd) the residual stream
  std::vector<float> xn_;       // (B, n_embd) normalized input of a block, then its output
  std::vector<float> gate_;     // (B, n_ff) the gate's projection, then the activation's output
  std::vector<float> up_;       // (B, n_ff), or (B, 2 n_ff) gate then up where they are fused
  // With per-layer inputs (n_pl = ModelConfig::per_layer_input.n_embd, else empty):
  std::vector<float> per_layer_;       // (B, n_layer, n_pl) every layer's input
  std::vector<float> per_layer_proj_;  // (B, n_layer, n_pl) the embeddings' projection
  std::vector<float> per_layer_gate_;  // (B, n_pl) one layer's gate
  std::vector<RopeTable> rope_;  // one per distinct RoPE spec of the layers
  std::vector<float> logits_;   // (1 or B, n_vocab)
};

}  // namespace engine
