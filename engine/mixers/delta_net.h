// The gated DeltaNet mixer of Qwen3.5 (llama.cpp's src/models/qwen35.cpp and
// delta-net-base.cpp, which are the specification). Per token, with H value
// heads over n_k key heads (value head h reads key head h % n_k):
//   qkv = conv(xn W_qkv^T), silu            a causal depthwise convolution of K taps
//   q, k = l2norm(q), l2norm(k)             per key head; q also times 1/sqrt(head_k_dim)
//   beta = sigmoid(xn W_beta^T)             (H) the update gate
//   g = softplus(xn W_alpha^T + dt_bias) a  (H) the log-decay, a = -exp(A_log) < 0
//   S = e^g S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q     per head, S: (head_k, head_v)
//   xn = (rmsnorm(o) * silu(z)) W_out^T,    z = xn W_gate^T, the norm per head
// A batch of tokens runs the delta rule in chunks (delta_rule_chunk_ref), a
// single token the recurrence itself (delta_rule_token_ref). The state is
// the layer's RecurrentCache (engine/runtime/kv_cache.h): the convolution's
// last K - 1 input rows, then the H matrices.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/arch/layer_spec.h"
#include "engine/model/model_weights.h"
#include "engine/ops/ops.h"
#include "engine/runtime/compute.h"

namespace engine {

struct ModelConfig;

// The causal convolution of n tokens over channels first .. last - 1 of
// `channels`, then silu:
//   in:     (n, channels) each token's inputs
//   kernel: (channels, taps) each channel's taps, the oldest position's first
//   window: (taps - 1, channels) the inputs of the positions before the
//           batch, oldest first; afterwards those of the batch's last taps - 1
//   out:    (n, channels) silu(sum_i kernel[ch][i] * x[t + i - (taps - 1)][ch])
void delta_net_conv_ref(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                        float* window, const float* in, uint32_t n, float* out);

// One value head's delta rule over n tokens (ops::DeltaRuleRows: where each
// token's q, k, v, gates and output are), its state S (dk, dv) updated in
// place. The scalar forms; ops::delta_rule_token and delta_rule_chunk are
// their twins in vectors.
using DeltaRuleRows = ops::DeltaRuleRows;
// Token by token, as the recurrence is written (and as llama.cpp runs it).
void delta_rule_token_ref(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state);
// The chunked form: per chunk of c tokens, with G the decays' running sum
// from the chunk's start, the updates d solve a unit lower-triangular system,
//   d_t = beta_t (v_t - e^G_t S^T k_t - sum_{s<t} e^(G_t - G_s) (k_t . k_s) d_s),
//   o_t = e^G_t S^T q_t + sum_{s<=t} e^(G_t - G_s) (q_t . k_s) d_s,
//   S  <- e^G_c S + sum_s e^(G_c - G_s) k_s d_s^T,
// the same values as the recurrence up to rounding, with the state read as
// matrix products once per chunk instead of twice per token. scratch holds
// delta_rule_chunk_scratch(chunk, dk, dv) floats (the vector twin's need).
void delta_rule_chunk_ref(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                          float* scratch);
size_t delta_rule_chunk_scratch(uint32_t chunk, uint32_t dk, uint32_t dv);

class DeltaNetMixer {
 public:
  // Tokens per chunk of the delta rule: llama.cpp's chunk size.
  static constexpr uint32_t kChunk = 64;

  DeltaNetMixer(const ModelConfig& c, uint32_t n_batch, size_t n_threads);

  // Floats of scratch per batch row, and per thread (0 when no layer of c is
  // a gated DeltaNet).
  static uint64_t row_floats(const ModelConfig& c);
  static uint64_t thread_floats(const ModelConfig& c);

  // xn (n, n_embd): the normalized input of n tokens, replaced by the block's
  // output; window and state as in the layer's RecurrentCache, updated.
  void forward(Compute& compute, const LayerSpec& spec, const LayerWeights& w, float* window, float* state,
               float rms_eps, uint32_t n, float* xn);

 private:
  std::vector<float> mixed_;  // (B, conv_dim) Q, K and V before the convolution
  std::vector<float> qkv_;    // (B, conv_dim) after it: q, k (normalized) and v
  std::vector<float> z_;      // (B, value_dim) the output norm's gate
  std::vector<float> beta_;   // (B, H)
  std::vector<float> g_;      // (B, H) alpha, then the log-decay
  std::vector<float> out_;    // (B, value_dim)
  std::vector<float> scratch_;  // (threads, thread_floats)
  size_t thread_floats_ = 0;
};

}  // namespace engine
