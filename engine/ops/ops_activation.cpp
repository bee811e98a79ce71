// softmax, SwiGLU and GeGLU (ops.h), compiled once per instruction set like
// ops_attention.cpp (ops_isa.h): on x86-64 the baseline is SSE2, 4 lanes,
// while AVX-512 has 16; at a KV depth of 1024 the softmax was 3.9% of a
// TinyLlama decode on this machine (perf), SwiGLU 1.9%.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"

namespace engine::ops::ENGINE_OPS_ISA {

void softmax(float* x, size_t n) {
  if (n == 0) return;
  // The maximum in vectors (std::fmax per value was a library call each, 2.4%
  // of a decode at KV depth 1024 on x86).
  Batch vm(x[0]);
  for (size_t i = 0; i + kLanes <= n; i += kLanes) vm = xsimd::max(vm, Batch::load_unaligned(x + i));
  alignas(64) float lanes[kLanes];
  vm.store_aligned(lanes);
  float max = x[0];
  for (size_t j = 0; j < kLanes; ++j) max = max < lanes[j] ? lanes[j] : max;
  for (size_t i = n / kLanes * kLanes; i < n; ++i) max = max < x[i] ? x[i] : max;
  const Batch vmax(max);
  float sum = 0.0f;
  Batch acc(0.0f);
  for_each_vector(n, [&](size_t i, size_t count) {
    const Batch e = exp_approx(load_part(x + i, count) - vmax);
    store_part(e, x + i, count);
    if (count == kLanes) {
      acc += e;
    } else {
      for (size_t j = 0; j < count; ++j) sum += x[i + j];
    }
  });
  const float inv = 1.0f / (xsimd::hadd(acc) + sum);
  const Batch vinv(inv);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) (Batch::load_unaligned(x + i) * vinv).store_unaligned(x + i);
  for (; i < n; ++i) x[i] *= inv;
}

void silu_mul(float* out, const float* gate, const float* up, size_t n) {
  const Batch one(1.0f);
  for_each_vector(n, [&](size_t i, size_t count) {
    const Batch g = load_part(gate + i, count);
    store_part(g / (one + exp_approx(-g)) * load_part(up + i, count), out + i, count);
  });
}

// tanh(y) = 1 - 2 / (exp(2y) + 1): exp_approx overflows to +inf for large y
// (tanh 1) and underflows to 0 for very negative y (tanh -1), never NaN.
void gelu_mul(float* out, const float* gate, const float* up, size_t n) {
  const Batch one(1.0f), two(2.0f), half(0.5f), c0(0.7978845608028654f), c1(0.044715f);
  for_each_vector(n, [&](size_t i, size_t count) {
    const Batch g = load_part(gate + i, count);
    const Batch y = c0 * (g + c1 * g * g * g);
    const Batch t = one - two / (exp_approx(two * y) + one);
    store_part(half * g * (one + t) * load_part(up + i, count), out + i, count);
  });
}

#define ENGINE_OPS_STRINGIFY2(x) #x
#define ENGINE_OPS_STRINGIFY(x) ENGINE_OPS_STRINGIFY2(x)
extern const IsaOps kIsaOps{ENGINE_OPS_STRINGIFY(ENGINE_OPS_ISA), dot_rows, weighted_rows, dot_rows_f16,
                            weighted_rows_f16, dot_rows_quant, weighted_rows_quant, kF16RowsInPlace, fp16_to_fp32, softmax, silu_mul, gelu_mul,
                            shortconv_rows, delta_net_conv, delta_rule_token, delta_rule_chunk};

}  // namespace engine::ops::ENGINE_OPS_ISA
