// Activation quantizers of the ARM tiers: see quantize.h. Tier neon
// (-march=armv8-a): every instruction here is Armv8.0 Advanced SIMD, so the
// dotprod tier's kernels use these functions too. arm_kernels_test checks the
// bytes against kernels/ref on random rows, rounding ties, zero, tiny, NaN and
// outlier blocks.
#include "kernels/arm/neon/isa_check.h"

#include "kernels/arm/neon/quantize.h"

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arm/neon/lhs_q8_0.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::neon {
namespace {

using ref::BlockQ8_0;
using ref::BlockQ8_K;

uint16_t to_fp16_bits(float f) {
  const __fp16 h = static_cast<__fp16>(f);  // FCVT: round to nearest even, as ref::fp32_to_fp16
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

// 16 int32 codes (within int8 range) -> int8x16.
int8x16_t narrow16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  return vmovn_high_s16(vmovn_s16(vmovn_high_s32(vmovn_s32(a), b)), vmovn_high_s32(vmovn_s32(c), d));
}

// Returns the float scale before its fp16 rounding (Q8_1's s is computed from it).
float quantize_block(const float* x, BlockQ8_0& out) {
  float32x4_t v[8];
  for (size_t j = 0; j < 8; ++j) v[j] = vld1q_f32(x + 4 * j);
  // MAXNM skips NaNs, as the reference's std::max(abs_max, |x|) does.
  float32x4_t m = vabsq_f32(v[0]);
  for (size_t j = 1; j < 8; ++j) m = vmaxnmq_f32(m, vabsq_f32(v[j]));
  const float d = vmaxnmvq_f32(m) / 127;
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = to_fp16_bits(d);
  if (!std::isfinite(inverse)) {  // |max| < ~4e-37: the reference writes code 0 everywhere
    std::memset(out.qs, 0, sizeof out.qs);
    return d;
  }
  int32x4_t q[8];
  for (size_t j = 0; j < 8; ++j) q[j] = vcvtaq_s32_f32(vmulq_n_f32(v[j], inverse));  // roundf
  vst1q_s8(out.qs, narrow16(q[0], q[1], q[2], q[3]));
  vst1q_s8(out.qs + 16, narrow16(q[4], q[5], q[6], q[7]));
  return d;
}

// The element of largest magnitude with its sign, the first one on ties
// (+a and -a both present); 0 when there is none (all zeros or NaNs).
float signed_abs_max(const float* x, size_t count) {
  float32x4_t hi = vld1q_f32(x), lo = hi;
  for (size_t i = 4; i < count; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    hi = vmaxnmq_f32(hi, v);
    lo = vminnmq_f32(lo, v);
  }
  const float max = vmaxnmvq_f32(hi), min = vminnmvq_f32(lo);
  const float abs_max = std::fmax(max, -min);
  if (!(abs_max > 0.0f)) return 0.0f;
  if (max != abs_max) return min;
  if (-min != abs_max) return max;
  for (size_t i = 0;; ++i) {
    if (std::fabs(x[i]) == abs_max) return x[i];
  }
}

void quantize_block(const float* x, BlockQ8_K& out) {
  const float max = signed_abs_max(x, ref::QK_K);
  if (max == 0.0f) {
    std::memset(&out, 0, sizeof out);
    return;
  }
  const float iscale = -127.f / max;
  if (!std::isfinite(iscale)) {  // |max| < ~4e-37: the reference's codes all come out 0, and d = 1 / inf
    std::memset(&out, 0, sizeof out);
    return;
  }
  const int32x4_t limit = vdupq_n_s32(127);
  for (size_t g = 0; g < ref::QK_K / 16; ++g) {
    int32x4_t q[4];
    for (size_t j = 0; j < 4; ++j) {
      // FCVTNS rounds half to even, as the reference's nearest_int.
      q[j] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + 16 * g + 4 * j), iscale)), limit);
    }
    const int8x16_t codes = narrow16(q[0], q[1], q[2], q[3]);
    vst1q_s8(out.qs + 16 * g, codes);
    out.bsums[g] = vaddlvq_s8(codes);
  }
  out.d = 1 / iscale;
}

template <typename Block, size_t kBlock>
void pack_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<Block*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    const float* row = lhs + i * lhs_stride;
    for (size_t b = 0; b < k / kBlock; ++b) quantize_block(row + b * kBlock, *out++);
  }
}

}  // namespace

void quantize_row_q8_0(const float* x, void* dst, size_t k) { pack_rows<BlockQ8_0, ref::QK>(1, k, x, k, dst); }
void quantize_row_q8_k(const float* x, void* dst, size_t k) { pack_rows<BlockQ8_K, ref::QK_K>(1, k, x, k, dst); }

void pack_lhs_q8_k(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_rows<BlockQ8_K, ref::QK_K>(m, k, lhs, lhs_stride, lhs_packed);
}

namespace {

// Q8_0 rows as BlockQ8_0F (kQ8_1: with Q8_1's s and the codes' sum).
template <bool kQ8_1>
void pack_rows_f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<BlockQ8_0F*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < k / ref::QK; ++b, ++out) {
      BlockQ8_0 q;
      const float d = quantize_block(lhs + i * lhs_stride + b * ref::QK, q);
      std::memset(out, 0, sizeof *out);
      std::memcpy(out->qs, q.qs, sizeof out->qs);
      out->d = arm::fp16_to_f32(q.d);
      if constexpr (kQ8_1) {
        out->sum = vaddlvq_s16(vpaddlq_s8(vld1q_s8(q.qs))) + vaddlvq_s16(vpaddlq_s8(vld1q_s8(q.qs + 16)));
        out->s = arm::fp16_to_f32(to_fp16_bits(static_cast<float>(out->sum) * d));  // as ref: fp16(sum * d)
      }
    }
  }
}

}  // namespace

void pack_lhs_q8_0f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_rows_f<false>(m, k, lhs, lhs_stride, lhs_packed);
}

void pack_lhs_q8_1f(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_rows_f<true>(m, k, lhs, lhs_stride, lhs_packed);
}

void pack_lhs_f32(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<float*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) std::memcpy(out + i * k, lhs + i * lhs_stride, k * sizeof(float));
}

}  // namespace kernels::neon
