// The row operations that dominate attention and the activations
// (ops_attention.cpp, ops_activation.cpp) compiled for several instruction
// sets, and the choice among them: the best one this CPU runs, picked once
// (ops_dispatch.cpp). ops::dot_rows, weighted_rows (F32 and F16 rows),
// fp16_to_fp32, softmax, silu_mul, gelu_mul, shortconv_rows and the DeltaNet's
// delta_net_conv, delta_rule_token and delta_rule_chunk call the chosen one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/ops/ops.h"
#include "kernels/cpu_features.h"
#include "kernels/tier.h"

namespace engine::ops {

struct IsaOps {
  const char* isa;  // "baseline", "x86_avx2", "x86_avx512"
  void (*dot_rows)(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
                   float scale, float* out, size_t out_stride);
  void (*weighted_rows)(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v,
                        size_t d, float* out, size_t out_stride);
  void (*dot_rows_f16)(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k,
                       size_t d, float scale, float* out, size_t out_stride);
  void (*weighted_rows_f16)(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride,
                            size_t n_v, size_t d, float* out, size_t out_stride);
  void (*dot_rows_quant)(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k,
                         size_t k_row_bytes, size_t n_k, size_t d, float scale, float* out, size_t out_stride);
  void (*weighted_rows_quant)(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                              size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride);
  // Whether a decode token's attention should read the F16 cache through the
  // _f16 products (ops.h: f16_rows_in_place) rather than a converted copy.
  bool f16_rows_in_place;
  void (*fp16_to_fp32)(const uint16_t* x, float* y, size_t n);
  void (*softmax)(float* x, size_t n);
  void (*silu_mul)(float* out, const float* gate, const float* up, size_t n);
  void (*gelu_mul)(float* out, const float* gate, const float* up, size_t n);
  // LFM2's gated short convolution (ops_conv.cpp; ops.h: shortconv_rows).
  void (*shortconv_rows)(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                         float* bcx, uint32_t n, float* y);
  // Qwen3.5's gated DeltaNet (ops_delta_net.cpp; ops.h).
  void (*delta_net_conv)(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                         float* window, const float* in, uint32_t n, float* out);
  void (*delta_rule_token)(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state);
  void (*delta_rule_chunk)(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                           float* scratch);
};

// The recurrent layers' operations (the two convolutions and the delta rule),
// which the variants compiled for a fixed SVE length (aarch64_sve256,
// aarch64_sve512) have of their own: beside them they run the baseline's NEON
// operations (ops_dispatch.cpp says why).
struct RecurrentOps {
  decltype(IsaOps::shortconv_rows) shortconv_rows;
  decltype(IsaOps::delta_net_conv) delta_net_conv;
  decltype(IsaOps::delta_rule_token) delta_rule_token;
  decltype(IsaOps::delta_rule_chunk) delta_rule_chunk;
};

// Every variant compiled in that this CPU can run, best first (tests run each).
std::span<const IsaOps* const> isa_ops_variants();
// The choice for a CPU and a tier cap, made as the matmul kernels' is
// (kernels/choose.h): the best variant it runs that the cap allows.
const IsaOps& choose_isa_ops(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap);
// That choice for the log, in the matmul kernels' format: "x86_avx512 [hwy]",
// "baseline [ref]; rejected: x86_avx512 (above ENGINE_MAX_TIER=ref) ...".
std::string describe_isa_ops_choice(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap);
// The one in use: chosen once, for this CPU and ENGINE_MAX_TIER.
const IsaOps& isa_ops();

// fp16 -> fp32 without any instruction beyond the baseline (ops.cpp); the
// variants use it for what their vector loop leaves.
void fp16_to_fp32_portable(const uint16_t* x, float* y, size_t n);

}  // namespace engine::ops

// Inside the files compiled per instruction set: that set's functions.
#if defined(ENGINE_OPS_ISA)
namespace engine::ops::ENGINE_OPS_ISA {
void dot_rows(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride);
void weighted_rows(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v, size_t d,
                   float* out, size_t out_stride);
void dot_rows_f16(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k,
                  size_t d, float scale, float* out, size_t out_stride);
void weighted_rows_f16(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride, size_t n_v,
                       size_t d, float* out, size_t out_stride);
void dot_rows_quant(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes,
                    size_t n_k, size_t d, float scale, float* out, size_t out_stride);
void weighted_rows_quant(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                         size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride);
void fp16_to_fp32(const uint16_t* x, float* y, size_t n);
extern const bool kF16RowsInPlace;
void softmax(float* x, size_t n);
void silu_mul(float* out, const float* gate, const float* up, size_t n);
void gelu_mul(float* out, const float* gate, const float* up, size_t n);
void shortconv_rows(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                    float* bcx, uint32_t n, float* y);
void delta_net_conv(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                    float* window, const float* in, uint32_t n, float* out);
void delta_rule_token(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state);
void delta_rule_chunk(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                      float* scratch);
}  // namespace engine::ops::ENGINE_OPS_ISA
#endif
