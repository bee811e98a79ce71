// What one layer computes, as the forward pass reads it (engine/runtime/session.cpp):
//   x += residual_scale * post_mixer_norm(mixer(attn_norm(x)))
//   x += residual_scale * post_ffn_norm(ffn_down(act(ffn_gate(xn)) * ffn_up(xn))),  xn = ffn_norm(x)
//   x += per_layer_post_norm(per_layer_proj(gelu(per_layer_gate(x)) * p_l))   with a per-layer input
//   x *= output_scale                                                          with an output scale
// The architecture descriptions (engine/arch/) fill one per layer.
#pragma once

#include <cstdint>

#include "engine/ops/ops.h"

namespace engine {

// How a layer mixes information across positions; each kind has its own file
// in engine/mixers/ and its own per-layer cache (engine/runtime/kv_cache.h).
//   attention:  causal attention over the layer's KV cache
//   shortconv:  LFM2's gated short convolution (engine/mixers/shortconv.h),
//               whose state is the last conv_kernel - 1 rows of its input
//   delta_net:  Qwen3.5's gated DeltaNet linear attention (engine/mixers/delta_net.h),
//               whose state is its convolution's last conv_kernel - 1 input rows
//               and one key x value matrix per value head
enum class MixerKind : uint8_t { attention, shortconv, delta_net };
const char* mixer_kind_name(MixerKind k);

enum class Activation : uint8_t {
  silu,  // SwiGLU: silu(gate) * up
  gelu,  // GeGLU: gelu(gate) * up, the tanh approximation
};
const char* activation_name(Activation a);

struct RopeSpec {
  uint32_t n_rot = 0;  // dimensions rotated, from the first of each head
  ops::RopeStyle style = ops::RopeStyle::normal;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / linear scaling factor
  // Divide by the file's per-pair frequency factors when it has them: llama3's
  // rope_freqs.weight, or LongRoPE's long or short factors, chosen by the
  // session's context against the original one (Model::rope_freq_factors).
  bool freq_factors = false;
  float attn_factor = 1.0f;  // multiplies cos and sin: LongRoPE's attention factor

  bool operator==(const RopeSpec&) const = default;
};

struct AttentionSpec {
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim_k = 0;
  uint32_t head_dim_v = 0;
  RopeSpec rope;
  uint32_t window = 0;       // attends to the last `window` positions; 0: to all of them
  float scale = 0.0f;        // multiplies q.k before the softmax
  float softcap = 0.0f;      // scores = softcap * tanh(scores / softcap); 0: none
  bool qkv_bias = false;     // attn_{q,k,v}.bias added after the projections
  bool qk_norm = false;      // RMSNorm over each head of Q and K before RoPE
  bool v_norm = false;       // RMSNorm without a weight over each head of V
  bool v_from_k = false;     // no V projection: V is K's projection (before K's norm and RoPE)
  // The earlier layer whose cache this layer attends to (kOwnCache: its own).
  // A layer that reads another's cache computes no keys or values and keeps none.
  static constexpr uint32_t kOwnCache = UINT32_MAX;
  uint32_t kv_source = kOwnCache;

  bool shares_kv() const { return kv_source != kOwnCache; }
  // One attn_qkv.weight of q_dim + kv_dim_k + kv_dim_v rows instead of three
  // matrices: one matmul writes each token's Q, K and V side by side, and the
  // mixer reads them where they lie.
  bool fused_qkv = false;

  // attn_q.weight holds, per head, its query and then a gate of the same size
  // (2 q_dim rows): the attention output is multiplied by sigmoid(gate)
  // before the output projection (Qwen3.5's gated attention).
  bool output_gate = false;

  uint32_t q_dim() const { return n_head * head_dim_k; }
  uint32_t q_rows() const { return output_gate ? 2 * q_dim() : q_dim(); }
  uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
  uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }
  uint32_t out_dim() const { return n_head * head_dim_v; }
};

// A gated DeltaNet layer's sizes (llama.cpp's ssm.* keys of qwen35): value
// head h reads key head h % n_k_heads (the converter orders the value heads
// so), and the state of each value head is head_k_dim x head_v_dim.
struct DeltaNetSpec {
  uint32_t n_k_heads = 0;   // ssm.group_count
  uint32_t n_v_heads = 0;   // ssm.time_step_rank
  uint32_t head_k_dim = 0;  // ssm.state_size
  uint32_t head_v_dim = 0;  // ssm.inner_size / n_v_heads

  uint32_t key_dim() const { return n_k_heads * head_k_dim; }
  uint32_t value_dim() const { return n_v_heads * head_v_dim; }
  // The convolution's channels: each token's Q, K and V side by side.
  uint32_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  uint64_t state_floats() const { return uint64_t{n_v_heads} * head_k_dim * head_v_dim; }
};

struct LayerSpec {
  MixerKind mixer = MixerKind::attention;
  AttentionSpec attention;  // when mixer == attention
  // when mixer == shortconv or delta_net: the taps of the convolution
  // (shortconv.l_cache, ssm.conv_kernel)
  uint32_t conv_kernel = 0;
  DeltaNetSpec delta_net;  // when mixer == delta_net
  uint32_t n_ff = 0;
  Activation activation = Activation::silu;
  // ffn_up.weight of 2 x n_ff rows, the gate's first, and no ffn_gate.weight:
  // one matmul, the activation reads both halves of each row.
  bool fused_gate_up = false;
  float residual_scale = 1.0f;   // multiplies each block's output before it is added to x
  bool post_mixer_norm = false;  // post_attention_norm.weight on the mixer's output
  bool post_ffn_norm = false;    // post_ffw_norm.weight on the FFN's output
  // The layer's slice p_l of the per-layer inputs (ModelConfig::per_layer_input)
  // added through inp_gate.weight, proj.weight and post_norm.weight.
  bool per_layer_input = false;
  bool output_scale = false;     // the layer's output times layer_output_scale.weight (one value)
};

}  // namespace engine
