// The sve tier's activation quantizers (layouts in lhs_rows.h), vector-length
// agnostic. Features: SVE. The codes and scales equal the ref quantizers' bit
// for bit:
// - Q8_0: d = amax / 127, codes = roundf(x * (1 / d)) (FRINTA rounds half away
//   from zero, as roundf), d stored as its fp16 rounding (FCVT, nearest even).
// - Q8_K: iscale = -127 / (the first element of largest magnitude), codes =
//   min(127, nearest_int(iscale * x)) (FRINTN rounds half to even, as the
//   ref's nearest_int for |v| < 2^22), d = 1 / iscale.
// No fused multiply-add: each product is rounded as in the ref.
#if !defined(__ARM_FEATURE_SVE)
#error "kernels/arm/sve must be compiled with -march=armv8.2-a+sve"
#endif

#include "kernels/arm/sve/lhs_rows.h"

#include <arm_sve.h>

#include <cmath>
#include <cstring>

namespace kernels::sve {
namespace {

constexpr size_t kQK = 32;
constexpr size_t kQKK = 256;

float abs_max(const float* x, size_t n) {
  svfloat32_t m = svdup_f32(0.0f);
  for (size_t i = 0; i < n; i += svcntw()) {
    const svbool_t pg = svwhilelt_b32(i, n);
    m = svmax_f32_m(pg, m, svabs_f32_x(pg, svld1_f32(pg, x + i)));
  }
  return svmaxv_f32(svptrue_b32(), m);
}

// One Q8_0 block: 32 codes to q; returns the fp16-rounded scale (and the
// unrounded one in *raw, when given: Q8_1's s).
float quantize_q8_0_block(const float* x, int8_t* q, float* raw = nullptr) {
  const float amax = abs_max(x, kQK);
  const float d = amax / 127;
  float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  // 1/d overflows only for amax < ~1e-36: the ref then writes code 0 everywhere.
  if (!(inverse <= 3.4e38f)) inverse = 0.0f;
  for (size_t i = 0; i < kQK; i += svcntw()) {
    const svbool_t pg = svwhilelt_b32(i, kQK);
    const svfloat32_t v = svmul_n_f32_x(pg, svld1_f32(pg, x + i), inverse);
    svst1b_s32(pg, q + i, svcvt_s32_f32_x(pg, svrinta_f32_x(pg, v)));
  }
  if (raw != nullptr) *raw = d;
  return static_cast<float>(static_cast<__fp16>(d));
}

// One Q8_K super-block: 256 codes to q, the 256 / kSum sums of kSum codes
// (32 or 16) to sums; returns d.
template <size_t kSum>
float quantize_q8_k_block(const float* x, int8_t* q, int16_t* sums) {
  constexpr size_t kSums = kQKK / kSum;
  const float amax = abs_max(x, kQKK);
  if (amax == 0.0f) {
    std::memset(q, 0, kQKK);
    for (size_t j = 0; j < kSums; ++j) sums[j] = 0;
    return 0.0f;
  }
  size_t first = 0;  // the ref takes the sign of the first element of magnitude amax
  while (std::fabs(x[first]) != amax) ++first;
  const float iscale = -127.f / x[first];
  for (size_t j = 0; j < kSums; ++j) {
    svint32_t sum = svdup_s32(0);
    for (size_t i = kSum * j; i < kSum * (j + 1); i += svcntw()) {
      const svbool_t pg = svwhilelt_b32(i, kSum * (j + 1));
      const svfloat32_t v = svrintn_f32_x(pg, svmul_n_f32_x(pg, svld1_f32(pg, x + i), iscale));
      const svint32_t c = svmin_n_s32_x(pg, svcvt_s32_f32_x(pg, v), 127);
      svst1b_s32(pg, q + i, c);
      sum = svadd_s32_m(pg, sum, c);
    }
    sums[j] = static_cast<int16_t>(svaddv_s32(svptrue_b32(), sum));
  }
  return 1 / iscale;
}

// Sums split into 7-bit halves at out: lo[n], then hi[n] (lhs_rows.h).
void put_sum_halves(const int16_t* sums, size_t n, uint8_t* out) {
  for (size_t j = 0; j < n; ++j) {
    out[j] = static_cast<uint8_t>(sums[j] & 127);
    out[n + j] = static_cast<uint8_t>(sums[j] >> 7);  // arithmetic: floor(sum / 128)
  }
}

}  // namespace

void pack_lhs_q8_0_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  const size_t nb = k / kQK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < nb; ++b, out += kQ8_0RowBlockBytes) {
      const float d = quantize_q8_0_block(lhs + i * lhs_stride + b * kQK, reinterpret_cast<int8_t*>(out)) * mult;
      std::memcpy(out + kQ8_0RowScaleOffset, &d, 4);
    }
  }
}

void pack_lhs_q8_1_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  const size_t nb = k / kQK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < nb; ++b, out += kQ8_1RowBlockBytes) {
      float raw;
      auto* q = reinterpret_cast<int8_t*>(out);
      const float d = quantize_q8_0_block(lhs + i * lhs_stride + b * kQK, q, &raw) * mult;
      int sum = 0;
      for (size_t j = 0; j < kQK; ++j) sum += q[j];
      const float s = static_cast<float>(static_cast<__fp16>(static_cast<float>(sum) * raw));
      std::memcpy(out + kQ8_0RowScaleOffset, &d, 4);
      std::memcpy(out + kQ8_0RowScaleOffset + 4, &s, 4);
    }
  }
}

namespace {

// Q8_K rows with the sums of kSum codes (32: Q8_K rows, 16: Q8_K16 rows).
template <size_t kSum, size_t kBlockBytes, size_t kBsumOffset, size_t kScaleOffset>
void pack_q8_k_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  const size_t nb = k / kQKK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t i = 0; i < m; ++i) {
    for (size_t b = 0; b < nb; ++b, out += kBlockBytes) {
      int16_t sums[kQKK / kSum];
      const float d =
          quantize_q8_k_block<kSum>(lhs + i * lhs_stride + b * kQKK, reinterpret_cast<int8_t*>(out), sums) * mult;
      std::memcpy(out + kScaleOffset, &d, 4);
      put_sum_halves(sums, kQKK / kSum, out + kBsumOffset);
    }
  }
}

}  // namespace

void pack_lhs_q8_k_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  pack_q8_k_rows<32, kQ8_KRowBlockBytes, kQ8_KBsumOffset, kQ8_KRowScaleOffset>(m, k, lhs, lhs_stride, lhs_packed, mult);
}

void pack_lhs_q8_k16_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  pack_q8_k_rows<16, kQ8_K16RowBlockBytes, kQ8_K16BsumOffset, kQ8_K16RowScaleOffset>(m, k, lhs, lhs_stride, lhs_packed,
                                                                                     mult);
}

void pack_lhs_q8_0_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult) {
  const size_t nb = k / kQK;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p = 0; p < (m + 1) / 2; ++p) {
    const float* x0 = lhs + 2 * p * lhs_stride;
    const float* x1 = 2 * p + 1 < m ? x0 + lhs_stride : nullptr;
    for (size_t b = 0; b < nb; ++b, out += kQ8_0PairBlockBytes) {
      int8_t q0[kQK], q1[kQK] = {};
      const float d0 = quantize_q8_0_block(x0 + b * kQK, q0) * mult;
      const float d1 = x1 != nullptr ? quantize_q8_0_block(x1 + b * kQK, q1) * mult : 0.0f;
      const float scale[4] = {d0, d0, d1, d1};
      std::memcpy(out, scale, sizeof scale);
      for (size_t c = 0; c < 4; ++c) {
        std::memcpy(out + 16 + 16 * c, q0 + 8 * c, 8);
        std::memcpy(out + 16 + 16 * c + 8, q1 + 8 * c, 8);
      }
    }
  }
}

}  // namespace kernels::sve
