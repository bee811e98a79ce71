// Picks the row operations' instruction set once (ops_isa.h).
#include <array>

#include "engine/ops.h"
#include "engine/ops_isa.h"
#include "kernels/cpu_features.h"

namespace engine::ops {

namespace baseline {
extern const IsaOps kIsaOps;
}
#if defined(ENGINE_OPS_X86_VARIANTS)
namespace x86_avx2 {
extern const IsaOps kIsaOps;
}
namespace x86_avx512 {
extern const IsaOps kIsaOps;
}
#endif

namespace {

struct Candidates {
  std::array<const IsaOps*, 3> list{};
  size_t n = 0;
};

Candidates runnable() {
  Candidates c;
#if defined(ENGINE_OPS_X86_VARIANTS)
  // The flags each variant is compiled with (engine/CMakeLists.txt), as the
  // kernels' detection sees them (cpuid, and xgetbv for the OS's support).
  using kernels::Feature;
  const kernels::CpuFeatures& cpu = kernels::host_cpu_features();
  const bool avx2 = cpu.has(Feature::avx2) && cpu.has(Feature::fma) && cpu.has(Feature::f16c);
  if (avx2 && cpu.has(Feature::avx512f) && cpu.has(Feature::avx512bw) && cpu.has(Feature::avx512dq) &&
      cpu.has(Feature::avx512vl) && cpu.has(Feature::avx512cd)) {
    c.list[c.n++] = &x86_avx512::kIsaOps;
  }
  if (avx2) c.list[c.n++] = &x86_avx2::kIsaOps;
#endif
  c.list[c.n++] = &baseline::kIsaOps;
  return c;
}

const Candidates& candidates() {
  static const Candidates c = runnable();
  return c;
}

}  // namespace

std::span<const IsaOps* const> isa_ops_variants() { return {candidates().list.data(), candidates().n}; }

const IsaOps& isa_ops() {
  static const IsaOps& chosen = *candidates().list[0];
  return chosen;
}

void dot_rows(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride) {
  isa_ops().dot_rows(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void weighted_rows(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v, size_t d,
                   float* out, size_t out_stride) {
  isa_ops().weighted_rows(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

void dot_rows(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride) {
  isa_ops().dot_rows_f16(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void weighted_rows(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride, size_t n_v,
                   size_t d, float* out, size_t out_stride) {
  isa_ops().weighted_rows_f16(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

bool f16_rows_in_place() { return isa_ops().f16_rows_in_place; }

void fp16_to_fp32(const uint16_t* x, float* y, size_t n) { isa_ops().fp16_to_fp32(x, y, n); }

void softmax(float* x, size_t n) { isa_ops().softmax(x, n); }

void silu_mul(float* gate, const float* up, size_t n) { isa_ops().silu_mul(gate, up, n); }

void gelu_mul(float* gate, const float* up, size_t n) { isa_ops().gelu_mul(gate, up, n); }

}  // namespace engine::ops
