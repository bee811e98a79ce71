// Where a loaded model's weights live. The architecture's tensor table
// (engine/arch/arch.h) names, for each tensor, the field it is loaded into;
// a field no tensor filled stays empty (a Linear with rhs == nullptr).
#pragma once

#include <string>
#include <vector>

#include "gguf/file.h"
#include "kernels/matmul.h"

namespace engine {

// A weight matrix W[out, in] (GGUF ne = [in, out]) with the kernel chosen for
// its type: y[m, out] = x[m, in] * W^T.
struct Linear {
  std::string name;
  size_t in = 0;
  size_t out = 0;
  gguf::GgmlType type = gguf::GgmlType::F32;
  const kernels::MatmulKernel* kernel = nullptr;
  const uint8_t* rhs = nullptr;  // in the kernel's layout: the mapping itself, or a repacked copy
};

struct LayerWeights {
  std::vector<float> attn_norm;       // (n_embd)
  std::vector<float> post_attn_norm;  // (n_embd), when the spec has post_mixer_norm
  std::vector<float> ffn_norm;        // (n_embd)
  std::vector<float> post_ffn_norm;   // (n_embd), when the spec has post_ffn_norm
  std::vector<float> q_bias;          // (q_dim), when the spec has qkv_bias
  std::vector<float> k_bias;          // (kv_dim_k)
  std::vector<float> v_bias;          // (kv_dim_v)
  std::vector<float> q_norm;          // (head_dim_k), when the spec has qk_norm
  std::vector<float> k_norm;          // (head_dim_k)
  Linear wq, wk, wv, wo;              // (q_dim, n_embd) (kv_dim_k, n_embd) (kv_dim_v, n_embd) (n_embd, attn_out)
  Linear wqkv;                        // (q_dim + kv_dim_k + kv_dim_v, n_embd), when the spec has fused_qkv
  Linear w_gate, w_up, w_down;        // (n_ff, n_embd) (n_ff or 2 n_ff, n_embd) (n_embd, n_ff)
  // When the spec has per_layer_input (n_pl = ModelConfig::per_layer_input.n_embd):
  Linear per_layer_gate, per_layer_proj;  // (n_pl, n_embd) (n_embd, n_pl)
  std::vector<float> per_layer_post_norm;  // (n_embd)
  std::vector<float> output_scale;         // (1), when the spec has output_scale
  // When the mixer is a short convolution (K = conv_kernel taps):
  Linear conv_in, conv_out;        // (3 n_embd, n_embd) B, C and x rows; (n_embd, n_embd)
  // (channels, K) each channel's taps, the oldest first: n_embd channels of a
  // short convolution, conv_dim of a DeltaNet layer.
  std::vector<float> conv_kernel;
  // When the mixer is a gated DeltaNet (DeltaNetSpec; H = n_v_heads):
  Linear dn_qkv;    // (conv_dim, n_embd) attn_qkv: Q, K and V before the convolution
  Linear dn_gate;   // (value_dim, n_embd) attn_gate: z, the output norm's gate
  Linear dn_beta;   // (H, n_embd) ssm_beta: the update gate before its sigmoid
  Linear dn_alpha;  // (H, n_embd) ssm_alpha: the decay before softplus
  Linear dn_out;    // (n_embd, value_dim) ssm_out
  std::vector<float> dn_dt_bias;  // (H) ssm_dt.bias, added to alpha
  std::vector<float> dn_a;        // (H) ssm_a = -exp(A_log): the decay's rate
  std::vector<float> dn_norm;     // (head_v_dim) ssm_norm.weight, the gated RMSNorm's
};

struct GlobalWeights {
  std::vector<float> output_norm;  // (n_embd)
  Linear output;                   // (n_vocab, n_embd), or token_embd when tied
  std::vector<float> rope_freqs;   // (n_rot / 2) llama3 frequency divisors, empty when absent
  // The per-layer inputs' tables, when the model has them (n_pl x n_layer = n_pl_all):
  const gguf::TensorInfo* per_layer_token_embd = nullptr;  // (n_vocab, n_pl_all), read a row at a time
  Linear per_layer_model_proj;                             // (n_pl_all, n_embd)
  std::vector<float> per_layer_proj_norm;                  // (n_pl)
  std::vector<float> rope_long;    // (n_rot / 2) LongRoPE's divisors past the original context, or empty
  std::vector<float> rope_short;   // (n_rot / 2) LongRoPE's divisors within it, or empty
};

}  // namespace engine
