// matmul_f32_f32_f16_4x4_i8mm: F16 weights x F32 activations, FP32 FMA.
//
// Features: Advanced SIMD only (FCVTL widens fp16 to fp32 in base Armv8). It
// sits in the i8mm tier so that the tier covers F16 with its own flags: i8mm
// has no fp16 arithmetic (BFMMLA is bf16, a different format, and FP16 FMLA
// would round the products and sums to 11 bits). Converting each weight to
// fp32 and accumulating in fp32 keeps the error to float accumulation.
//
// RHS: the GGUF rows as they are (pack_rhs = nullptr): converting costs one
// FCVTL per 4 weights either way, and the rows stay in the file's pages.
// LHS: F32 rows, copied.
//
// run: tiles of kMr = 4 activation rows x kNr = 4 weight rows; each output has
// one float32x4 accumulator over k (lane l sums k = l mod 4, 8 k per step),
// reduced at the end, then the k % 8 tail in scalar. A single activation row
// (decode) takes a 1x4 loop doing the same float operations per output.
// m_step 4, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/interleaved.h"
#include "kernels/ref/fp16.h"

namespace kernels::i8mm {
namespace {

constexpr size_t kMr = 4;
constexpr size_t kNr = 4;
constexpr size_t kStep = 8;  // k per inner step: one 16-byte load of fp16 weights

inline float32x4_t lo_f32(float16x8_t h) { return vcvt_f32_f16(vget_low_f16(h)); }
inline float32x4_t hi_f32(float16x8_t h) { return vcvt_high_f32_f16(h); }
inline float16x8_t load_f16x8(const uint16_t* p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

// The scalar tail of one output, after the vector part.
inline float finish(float32x4_t acc, const float* x, const uint16_t* w, size_t k0, size_t k) {
  float sum = vaddvq_f32(acc);
  for (size_t i = k0; i < k; ++i) sum += x[i] * ref::fp16_to_fp32(w[i]);
  return sum;
}

// Rows: pointers to the tile's activation rows and weight rows; missing ones
// repeat a valid row and are not stored.
void tile_4x4(size_t k, const float* const* x, const uint16_t* const* w, float* y, size_t ldy, size_t rows,
              size_t cols) {
  float32x4_t acc[kMr][kNr];
  for (auto& row : acc) {
    for (auto& a : row) a = vdupq_n_f32(0.0f);
  }
  const size_t kv = k / kStep * kStep;
  for (size_t i = 0; i < kv; i += kStep) {
    float32x4_t wl[kNr], wh[kNr];
    for (size_t j = 0; j < kNr; ++j) {
      const float16x8_t h = load_f16x8(w[j] + i);
      wl[j] = lo_f32(h);
      wh[j] = hi_f32(h);
    }
    for (size_t r = 0; r < kMr; ++r) {
      const float32x4_t xl = vld1q_f32(x[r] + i), xh = vld1q_f32(x[r] + i + 4);
      for (size_t j = 0; j < kNr; ++j) acc[r][j] = vfmaq_f32(vfmaq_f32(acc[r][j], xl, wl[j]), xh, wh[j]);
    }
  }
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < cols; ++j) y[r * ldy + j] = finish(acc[r][j], x[r], w[j], kv, k);
  }
}

void tile_1x4(size_t k, const float* x, const uint16_t* const* w, float* y, size_t cols) {
  float32x4_t acc[kNr];
  for (auto& a : acc) a = vdupq_n_f32(0.0f);
  const size_t kv = k / kStep * kStep;
  for (size_t i = 0; i < kv; i += kStep) {
    const float32x4_t xl = vld1q_f32(x + i), xh = vld1q_f32(x + i + 4);
    for (size_t j = 0; j < kNr; ++j) {
      const float16x8_t h = load_f16x8(w[j] + i);
      acc[j] = vfmaq_f32(vfmaq_f32(acc[j], xl, lo_f32(h)), xh, hi_f32(h));
    }
  }
  for (size_t j = 0; j < cols; ++j) y[j] = finish(acc[j], x, w[j], kv, k);
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  const auto* lhs = static_cast<const float*>(lhs_packed);
  const auto* rhs = static_cast<const uint16_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += kNr) {
    const size_t cols = n - n0 < kNr ? n - n0 : kNr;
    const uint16_t* w[kNr];
    for (size_t j = 0; j < kNr; ++j) w[j] = rhs + (n0 + (j < cols ? j : 0)) * k;
    size_t m0 = 0;
    for (; m0 + 1 < m; m0 += kMr) {
      const size_t rows = m - m0 < kMr ? m - m0 : kMr;
      const float* x[kMr];
      for (size_t r = 0; r < kMr; ++r) x[r] = lhs + (m0 + (r < rows ? r : 0)) * k;
      tile_4x4(k, x, w, dst + m0 * dst_stride + n0, dst_stride, rows, cols);
    }
    if (m0 < m) tile_1x4(k, lhs + m0 * k, w, dst + m0 * dst_stride + n0, cols);
  }
}

}  // namespace

constinit const MatmulKernel kMatmulF16 =
    arm::interleaved_kernel<arm::F16Rows<kNr, kMr, run>>("matmul_f32_f32_f16_4x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
