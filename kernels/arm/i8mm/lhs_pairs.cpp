// The i8mm tier's activation quantizers (layouts in lhs_pairs.h).
//
// Features: Advanced SIMD only (compiled with the tier's flags). The codes and
// scales equal the ref quantizers' bit for bit:
// - Q8_0: d = amax / 127, codes = roundf(x * (1 / d)) (FCVTAS rounds half away
//   from zero, as roundf), d stored as its fp16 rounding (FCVT, nearest even).
// - Q8_K: iscale = -127 / (the first element of largest magnitude), codes =
//   min(127, nearest_int(iscale * x)) (FCVTNS rounds half to even, as the ref's
//   nearest_int for |v| < 2^22), d = 1 / iscale.
// No fused multiply-add anywhere: each product is rounded as in the ref.
#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "kernels/arm/i8mm must be compiled with -march=armv8.2-a+dotprod+i8mm"
#endif

#include "kernels/arm/i8mm/lhs_pairs.h"

#include <cmath>
#include <cstring>

namespace kernels::i8mm {
namespace {

constexpr size_t kQK = 32;
constexpr size_t kQKK = 256;

// 4 floats rounded with `cvt` to int32, narrowed to 4 int8 codes in `out`.
int8x8_t narrow8(int32x4_t a, int32x4_t b) { return vmovn_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b))); }

// One Q8_0 block of row x: 32 codes to q, returns the fp16-rounded scale;
// *raw the scale before its rounding.
float quantize_q8_0_block(const float* x, int8_t* q, float* raw) {
  float32x4_t v[8];
  for (int i = 0; i < 8; ++i) v[i] = vld1q_f32(x + 4 * i);
  float32x4_t amax4 = vabsq_f32(v[0]);
  for (int i = 1; i < 8; ++i) amax4 = vmaxq_f32(amax4, vabsq_f32(v[i]));
  const float amax = vmaxvq_f32(amax4);
  const float d = amax / 127;
  *raw = d;
  float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  // 1/d overflows only for amax < ~1e-36: the ref then writes code 0 everywhere.
  if (!(inverse <= 3.4e38f)) inverse = 0.0f;
  for (int i = 0; i < 4; ++i) {
    const int32x4_t a = vcvtaq_s32_f32(vmulq_n_f32(v[2 * i], inverse));
    const int32x4_t b = vcvtaq_s32_f32(vmulq_n_f32(v[2 * i + 1], inverse));
    vst1_s8(q + 8 * i, narrow8(a, b));
  }
  return vgetq_lane_f32(vcvt_f32_f16(vcvt_f16_f32(vdupq_n_f32(d))), 0);
}

// One Q8_K super-block: 256 codes to q, the 8 sums of 32 codes to sums;
// returns d.
float quantize_q8_k_block(const float* x, int8_t* q, int32_t* sums) {
  float32x4_t amax4 = vdupq_n_f32(0.0f);
  for (size_t i = 0; i < kQKK; i += 4) amax4 = vmaxq_f32(amax4, vabsq_f32(vld1q_f32(x + i)));
  const float amax = vmaxvq_f32(amax4);
  if (amax == 0.0f) {
    std::memset(q, 0, kQKK);
    for (int j = 0; j < 8; ++j) sums[j] = 0;
    return 0.0f;
  }
  // The ref takes the sign of the first element whose magnitude is amax.
  float max = amax;
  for (size_t i = 0; i < kQKK; i += 4) {
    const uint32x4_t hit = vceqq_f32(vabsq_f32(vld1q_f32(x + i)), vdupq_n_f32(amax));
    if (vmaxvq_u32(hit) != 0) {
      size_t lane = 0;
      while (std::fabs(x[i + lane]) != amax) ++lane;
      max = x[i + lane];
      break;
    }
  }
  const float iscale = -127.f / max;
  const int32x4_t top = vdupq_n_s32(127);
  for (size_t j = 0; j < 8; ++j) {
    int16x8_t sum16 = vdupq_n_s16(0);
    for (size_t i = 0; i < 32; i += 8) {
      const float* p = x + 32 * j + i;
      const int32x4_t a = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(p), iscale)), top);
      const int32x4_t b = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(p + 4), iscale)), top);
      const int16x8_t c16 = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
      sum16 = vaddq_s16(sum16, c16);
      vst1_s8(q + 32 * j + i, vmovn_s16(c16));
    }
    sums[j] = vaddlvq_s16(sum16);
  }
  return 1 / iscale;
}

}  // namespace

namespace {

// Q8_0 pairs, or (kQ8_1) Q8_1 pairs with their s patterns.
template <bool kQ8_1>
void pack_block_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  constexpr size_t kBlockBytes = kQ8_1 ? kQ8_1PairBlockBytes : kQ8_0PairBlockBytes;
  constexpr size_t kCodes = kQ8_1 ? kQ8_1PairCodesOffset : 16;
  const size_t nb = k / kQK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p = 0; p < pairs_of(m); ++p) {
    const float* x0 = lhs + 2 * p * lhs_stride;
    const float* x1 = 2 * p + 1 < m ? x0 + lhs_stride : nullptr;
    for (size_t b = 0; b < nb; ++b, out += kBlockBytes) {
      int8_t q0[kQK], q1[kQK];
      float raw0 = 0.0f, raw1 = 0.0f;
      const float d0 = quantize_q8_0_block(x0 + b * kQK, q0, &raw0);
      float d1 = 0.0f;
      if (x1 != nullptr) {
        d1 = quantize_q8_0_block(x1 + b * kQK, q1, &raw1);
      } else {
        std::memset(q1, 0, sizeof q1);
      }
      const float scale[4] = {d0 * mult, d0 * mult, d1 * mult, d1 * mult};
      std::memcpy(out, scale, sizeof scale);
      if constexpr (kQ8_1) {
        int32_t sum0 = 0, sum1 = 0;
        for (size_t i = 0; i < kQK; ++i) {
          sum0 += q0[i];
          sum1 += q1[i];
        }
        // fp16(sum * d) as the ref's Q8_1 (FCVT rounds to nearest even).
        const float32x4_t sd = {static_cast<float>(sum0) * raw0, static_cast<float>(sum1) * raw1, 0.0f, 0.0f};
        const float32x4_t s = vcvt_f32_f16(vcvt_f16_f32(sd));
        const float spat[4] = {vgetq_lane_f32(s, 0), vgetq_lane_f32(s, 0), vgetq_lane_f32(s, 1), vgetq_lane_f32(s, 1)};
        std::memcpy(out + 16, spat, sizeof spat);
      }
      for (size_t c = 0; c < 4; ++c) {
        std::memcpy(out + kCodes + 16 * c, q0 + 8 * c, 8);
        std::memcpy(out + kCodes + 16 * c + 8, q1 + 8 * c, 8);
      }
    }
  }
}

}  // namespace

void pack_lhs_q8_0_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  pack_block_pairs<false>(m, k, lhs, lhs_stride, lhs_packed, mult);
}

void pack_lhs_q8_1_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  pack_block_pairs<true>(m, k, lhs, lhs_stride, lhs_packed, mult);
}

void pack_lhs_q8_k_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  const size_t nb = k / kQKK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p = 0; p < pairs_of(m); ++p) {
    const float* x0 = lhs + 2 * p * lhs_stride;
    const float* x1 = 2 * p + 1 < m ? x0 + lhs_stride : nullptr;
    for (size_t b = 0; b < nb; ++b, out += kQ8_KPairBlockBytes) {
      int8_t q[2][kQKK];
      int32_t sums[2][8];
      float d[2] = {quantize_q8_k_block(x0 + b * kQKK, q[0], sums[0]), 0.0f};
      if (x1 != nullptr) {
        d[1] = quantize_q8_k_block(x1 + b * kQKK, q[1], sums[1]);
      } else {
        std::memset(q[1], 0, kQKK);
        for (int j = 0; j < 8; ++j) sums[1][j] = 0;
      }
      const float scale[4] = {d[0] * mult, d[0] * mult, d[1] * mult, d[1] * mult};
      std::memcpy(out, scale, sizeof scale);
      auto* lo = reinterpret_cast<int8_t*>(out + kQ8_KBsumOffset);
      for (int r = 0; r < 2; ++r) {
        for (int j = 0; j < 8; ++j) {
          lo[8 * r + j] = static_cast<int8_t>(sums[r][j] & 127);
          lo[16 + 8 * r + j] = static_cast<int8_t>(sums[r][j] >> 7);  // arithmetic: floor(sum / 128)
        }
      }
      uint8_t* qs = out + kQ8_KQsOffset;
      for (size_t t = 0; t < kQKK / 8; ++t) {
        std::memcpy(qs + 16 * t, q[0] + 8 * t, 8);
        std::memcpy(qs + 16 * t + 8, q[1] + 8 * t, 8);
      }
      auto* lo16 = reinterpret_cast<int8_t*>(out + kQ8_KBsum16Offset);
      for (int r = 0; r < 2; ++r) {
        for (int s = 0; s < 16; ++s) {
          const int32_t sum = vaddlvq_s8(vld1q_s8(q[r] + 16 * s));
          lo16[16 * (s / 8) + 8 * r + s % 8] = static_cast<int8_t>(sum & 127);
          lo16[32 + 16 * (s / 8) + 8 * r + s % 8] = static_cast<int8_t>(sum >> 7);
        }
      }
    }
  }
}

}  // namespace kernels::i8mm
