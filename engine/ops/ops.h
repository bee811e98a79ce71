// Elementwise and row operations of the forward pass, in fp32 with xsimd,
// compiled for the target's baseline (SSE2 on x86-64, NEON on aarch64); the
// attention products, softmax, SwiGLU and fp16_to_fp32 also for AVX2 and
// AVX-512 on x86-64, picked at run time (ops_isa.h). The matmuls are not here:
// they go through the kernel registry.
#pragma once

#include <cstddef>
#include <cstdint>

namespace engine::ops {

// out[i] = x[i] / rms(x) * weight[i]; out may alias x.
void rmsnorm(float* out, const float* x, const float* weight, size_t n, float eps);

// x[i] = exp(x[i] - max) / sum, in place, over n values.
void softmax(float* x, size_t n);

// out[i] = silu(gate[i]) * up[i] (SwiGLU); out may be gate (in place). Out of
// place it reads the two halves of a fused gate/up row into a row of its own.
void silu_mul(float* out, const float* gate, const float* up, size_t n);
// out[i] = gelu(gate[i]) * up[i] (GeGLU), GELU's tanh approximation:
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void gelu_mul(float* out, const float* gate, const float* up, size_t n);

// LFM2's gated short convolution of n tokens over channels first .. last - 1,
// its state updated: engine::shortconv_rows_ref (engine/mixers/shortconv.h,
// the arguments' layout and the scalar twin) in vectors over channels.
void shortconv_rows(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                    float* bcx, uint32_t n, float* y);

// Qwen3.5's gated DeltaNet (engine/mixers/delta_net.h holds the layout of
// the arguments, the math and the scalar twins delta_net_conv_ref,
// delta_rule_token_ref and delta_rule_chunk_ref), in vectors over channels
// and over a head's values.
// One value head's inputs and outputs over n tokens: token t's q and k (dk
// values, q already scaled) at q + t * qk_stride, v (dv) at v + t * v_stride,
// its output (dv) at out + t * out_stride, its update gate
// beta[t * gate_stride] and log-decay g[t * gate_stride].
struct DeltaRuleRows {
  const float* q;
  const float* k;
  size_t qk_stride;
  const float* v;
  size_t v_stride;
  const float* beta;
  const float* g;
  size_t gate_stride;
  float* out;
  size_t out_stride;
};
void delta_net_conv(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                    float* window, const float* in, uint32_t n, float* out);
void delta_rule_token(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state);
void delta_rule_chunk(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                      float* scratch);

// y[i] += x[i].
void add(float* y, const float* x, size_t n);

// sum x[i] * y[i].
float dot(const float* x, const float* y, size_t n);

// y[i] += a * x[i].
void axpy(float* y, float a, const float* x, size_t n);

// Attention over many positions (ops_attention.cpp), rows of d values:
// out[i * out_stride + p] = scale * (q_i . k_p) for queries i < n_q and keys
// p < n_k, and out_i = sum over p < n_v of w[i * w_stride + p] * v_p (out_i
// overwritten) for weight rows i < n_w. Each result is summed in the same
// order whatever n_q, n_k, n_w or n_v.
void dot_rows(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride);
void weighted_rows(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v, size_t d,
                   float* out, size_t out_stride);
// The same over F16 rows (the KV cache itself), widened in registers: the same
// results as converting the rows with fp16_to_fp32 first, without writing the
// copy. Their lines are prefetched ahead, for a history read from DRAM.
void dot_rows(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride);
void weighted_rows(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride, size_t n_v,
                   size_t d, float* out, size_t out_stride);
// The same over rows of ggml blocks (a quantized KV cache: Q8_0 or Q4_0, d a
// multiple of 32, rows k_row_bytes / v_row_bytes apart), read in place
// (ops_attention_quant.cpp). dot_rows_quant rounds each query to Q8_0 blocks
// first, as llama.cpp's flash attention does, and sums integer block dots
// times both scales: the same bits as its twin on every instruction set.
// weighted_rows_quant dequantizes block by block in registers and ADDS to out
// (a ring's history comes in up to two runs of rows). The _ref twins are the
// scalar oracle: ggml's quantize_row_q8_0 and vec_dot_*_q8_0 for the scores,
// dequantize_row then plain sums in position order for the weighted rows.
enum class RowQuant { q8_0, q4_0 };
void dot_rows_quant(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes,
                    size_t n_k, size_t d, float scale, float* out, size_t out_stride);
void weighted_rows_quant(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                         size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride);
void dot_rows_quant_ref(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k,
                        size_t k_row_bytes, size_t n_k, size_t d, float scale, float* out, size_t out_stride);
void weighted_rows_quant_ref(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                             size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride);
// Whether the instruction set in use reads F16 rows in place faster than it
// converts them first (ops_attention.cpp says where and why).
bool f16_rows_in_place();

// y[i] *= a.
void scale(float* y, float a, size_t n);

// y[i] = cap * tanh(y[i] / cap): Gemma's soft-cap of attention scores and of
// the final logits.
void softcap(float* y, float cap, size_t n);

// Rotary position embedding of one head vector in place, with precomputed
// cos/sin for its position: cos_sin holds (cos, sin) for each of n_rot/2 pairs.
// normal: pairs (x[2i], x[2i+1]) — llama; neox: pairs (x[i], x[i + n_rot/2]) —
// qwen2, qwen3. Elements past n_rot are left as they are.
enum class RopeStyle { normal, neox };
void rope(float* x, size_t n_rot, const float* cos_sin, RopeStyle style);

// Index of the first NaN or Inf in x[0..n), or n when every value is finite.
size_t first_non_finite(const float* x, size_t n);

// fp16 <-> fp32 rows (KV cache).
void fp32_to_fp16(const float* x, uint16_t* y, size_t n);
void fp16_to_fp32(const uint16_t* x, float* y, size_t n);

}  // namespace engine::ops
