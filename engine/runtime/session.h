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
#include "engine/runtime/recurrent_checkpoints.h"
#include "engine/mixers/attention.h"
#include "engine/mixers/delta_net.h"
#include "engine/mixers/shortconv.h"
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

  // Evaluates `tokens` after the session's tokens() and appends them to the
  // cache (first the kept tokens whose cache a truncate could not keep, see
  // truncate). Afterwards logits() holds the logits of the last token, or of
  // every token when all_logits. Throws engine::Error when the context would
  // overflow or a token id is out of range (nothing is evaluated then).
  // Throws engine::ModelError naming the layer when the model turns the
  // activations into NaN or Inf (a corrupt or overflowing model). After any
  // error none of the tokens were added: tokens() is what it was before, and
  // logits() is empty.
  //
  // The abort check (set_abort) is asked before every layer of every batch;
  // when it says stop, eval throws engine::Aborted and the session keeps the
  // batches of n_batch tokens it completed (a decode's one token, or none):
  // tokens() ends at the last whole batch, and the batch in flight is
  // dropped. The next call goes on from there.
  void eval(std::span<const int32_t> tokens, bool all_logits = false);

  // Evaluates a whole prompt: the tokens it shares with the start of tokens()
  // are kept (their cache reused), the rest of tokens() dropped, and only
  // the prompt's new tokens evaluated. The last token is evaluated even when
  // the prompt adds none, for its logits (unless the logits of this very
  // prompt are still there). Returns the tokens whose cache was reused. A
  // prompt longer than the context or with a token outside the vocabulary is
  // refused before anything is dropped.
  uint32_t eval_prompt(std::span<const int32_t> prompt);

  // Keeps the first n tokens (throws engine::Error when there are fewer) and
  // no logits. A sliding-window layer's ring holds only the last window +
  // n_batch - 1 positions evaluated: if those before token n were already
  // overwritten (n is more than n_batch behind the furthest position
  // evaluated), the cache cannot be kept and the next eval evaluates the n
  // kept tokens again first (n_past() says 0 until then). A recurrent
  // layer's state (a short convolution's) holds only the end of what was
  // evaluated: for any n short of n_past() the session goes back to its
  // newest checkpoint at or before n (engine/runtime/recurrent_checkpoints.h;
  // n_past() says where) and evaluates the kept tokens after it again.
  void truncate(uint32_t n);

  // The tokens the session holds, in order: those of the cache and any kept
  // tokens still to be evaluated again (after n_past()).
  std::span<const int32_t> tokens() const { return tokens_; }
  // Tokens evaluated since the session was created: what prompt reuse saves.
  uint64_t n_evaluated() const { return n_evaluated_; }
  // The copies of the recurrent states kept for truncations (none for a
  // model without recurrent layers).
  const RecurrentCheckpoints& checkpoints() const { return checkpoints_; }

  // fn(user) is asked before each layer of each batch whether to stop
  // (nullptr: never). Called on the evaluating thread.
  using AbortFn = bool (*)(void* user);
  void set_abort(AbortFn fn, void* user) {
    abort_ = fn;
    abort_user_ = user;
  }

  // (n_rows, n_vocab) floats: 1 row, or one per evaluated token with all_logits;
  // empty before the first eval and after a failed one.
  std::span<const float> logits() const { return logits_; }
  // Positions in the cache (tokens().size() unless kept tokens await their
  // evaluation after a truncate).
  uint32_t n_past() const { return n_past_; }
  uint32_t n_ctx() const { return n_ctx_; }
  const KvCache& kv_cache() const { return kv_; }
  const Model& model() const { return model_; }

  // Attaches a profile that every later evaluation adds its time to, by
  // operation class (nullptr detaches). Reads the clock around each step; the
  // profile must outlive the attachment.
  void set_profile(Profile* profile);
  void reset();

  // A saved session's state (engine/runtime/session_file.h): the tokens, of
  // which the first n_past have their cache restored by the caller into
  // kv_cache_for_restore(), and the recurrent states after n_past positions
  // (KvCache::recurrent_state; nullptr: not saved), with no logits.
  KvCache& kv_cache_for_restore() { return kv_; }
  void restored(std::vector<int32_t> tokens, uint32_t n_past, const std::vector<float>* recurrent);

 private:
  enum class Logits { none, last, all };
  // A batch's (cos, sin) pairs for one RoPE spec: (B, n_rot) floats.
  struct RopeTable {
    RopeSpec spec;
    uint64_t batch = UINT64_MAX;  // the batch it was computed for
    std::vector<float> cos_sin;
  };

  void eval_batches(std::span<const int32_t> tokens, bool all_logits);
  // Throws engine::Error naming the first token id outside the vocabulary.
  void check_vocabulary(std::span<const int32_t> tokens) const;
  // Drops the tokens after n (n <= tokens_.size()), keeping the cache when
  // the rings still hold what token n attends to.
  void keep(uint32_t n);
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
  std::vector<int32_t> tokens_;  // the session's tokens: the first n_past_ in the cache
  uint64_t n_evaluated_ = 0;
  AbortFn abort_ = nullptr;
  void* abort_user_ = nullptr;
  uint64_t batch_ = 0;  // batches evaluated, to date the RoPE tables
  Compute compute_;
  SessionMemory memory_;  // checked against the limit before kv_ and the scratch exist
  uint64_t memory_limit_;
  KvCache kv_;
  AttentionMixer attention_;
  ShortConvMixer shortconv_;
  DeltaNetMixer delta_net_;
  RecurrentCheckpoints checkpoints_;

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
