// The attention row operations (ops_attention.cpp) compiled for several
// instruction sets, and the choice among them: the best one this CPU runs,
// picked once (ops_dispatch.cpp). ops::dot_rows, weighted_rows and
// fp16_to_fp32 call the chosen one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace engine::ops {

struct AttentionOps {
  const char* isa;  // "baseline", "x86_v3", "x86_v4"
  void (*dot_rows)(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
                   float scale, float* out, size_t out_stride);
  void (*weighted_rows)(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v,
                        size_t d, float* out, size_t out_stride);
  void (*fp16_to_fp32)(const uint16_t* x, float* y, size_t n);
};

// Every variant compiled in that this CPU can run, best first (tests run each).
std::span<const AttentionOps* const> attention_ops_variants();
// The one in use: the first of attention_ops_variants().
const AttentionOps& attention_ops();

// fp16 -> fp32 without any instruction beyond the baseline (ops.cpp); the
// variants use it for what their vector loop leaves.
void fp16_to_fp32_portable(const uint16_t* x, float* y, size_t n);

}  // namespace engine::ops
