// matmul_f32_q8_0_q8_0_4x4_dotprod: Y = X * W^T with Q8_0 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: SDOT by element, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q8_0x4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, arm/neon/lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight block loaded once for 4 rows of X), decode and the m % 4 rows run
//   1 x 4 tiles, in one run(); any m and n, k a multiple of 32.
// - result: equal to matmul_f32_q8_0_q8_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, then
// qs[j][4c + t] = code 4j + t of row c (arm/neon/packed.h).
#if !defined(__ARM_FEATURE_DOTPROD)
#error "arm/dotprod needs SDOT: compile with -march=armv8.2-a+dotprod"
#endif
#if defined(__ARM_FEATURE_MATMUL_INT8) || defined(__ARM_FEATURE_SVE)
#error "arm/dotprod must not assume i8mm or SVE: compile it with exactly -march=armv8.2-a+dotprod"
#endif

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernels.h"
#include "kernels/arm/neon/lhs_q8_0.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"

namespace kernels::dotprod {
namespace {

constexpr uint64_t kFeatures = arm::feature_bit(Feature::asimd) | arm::feature_bit(Feature::dotprod);

using arm::kTileN;
using ref::BlockQ8_0;

struct BlockQ8_0x4 {
  uint16_t d[kTileN];
  int8_t qs[8][16];
};
static_assert(sizeof(BlockQ8_0x4) == kTileN * sizeof(BlockQ8_0));

struct Q8_0Packed {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK * sizeof(neon::BlockQ8_0F); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK * sizeof(BlockQ8_0); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ8_0x4*>(out);
    for (size_t b = 0; b < k / ref::QK; ++b) {
      const BlockQ8_0* blk[kTileN];
      for (size_t c = 0; c < kTileN; ++c) blk[c] = reinterpret_cast<const BlockQ8_0*>(rows[c]) + b;
      BlockQ8_0x4& p = packed[b];
      for (size_t c = 0; c < kTileN; ++c) p.d[c] = blk[c]->d;
      const uint8_t* src[kTileN];
      for (size_t c = 0; c < kTileN; ++c) src[c] = reinterpret_cast<const uint8_t*>(blk[c]->qs);
      auto* qs = reinterpret_cast<uint8_t(*)[16]>(p.qs);
      arm::interleave_4x4_runs(src, 0, qs);
      arm::interleave_4x4_runs(src, 16, qs + 4);
    }
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const BlockQ8_0x4*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK; ++b) {
      const BlockQ8_0x4& p = w[b];
      const int8x16x4_t q03 = arm::load_x4<MR>(p.qs[0]), q47 = arm::load_x4<MR>(p.qs[4]);
      const int8x16_t q[8] = {q03.val[0], q03.val[1], q03.val[2], q03.val[3],
                              q47.val[0], q47.val[1], q47.val[2], q47.val[3]};
      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const auto* xb = reinterpret_cast<const neon::BlockQ8_0F*>(x[i]) + b;
        const int8x16_t a0 = vld1q_s8(xb->qs);
        const int8x16_t a1 = vld1q_s8(xb->qs + 16);
        int32x4_t isum = vdotq_laneq_s32(vdupq_n_s32(0), q[0], a0, 0);
        isum = vdotq_laneq_s32(isum, q[1], a0, 1);
        isum = vdotq_laneq_s32(isum, q[2], a0, 2);
        isum = vdotq_laneq_s32(isum, q[3], a0, 3);
        isum = vdotq_laneq_s32(isum, q[4], a1, 0);
        isum = vdotq_laneq_s32(isum, q[5], a1, 1);
        isum = vdotq_laneq_s32(isum, q[6], a1, 2);
        isum = vdotq_laneq_s32(isum, q[7], a1, 3);
        const float32x4_t scale = vmulq_n_f32(dw, xb->d);
        acc[i] = vaddq_f32(acc[i], vmulq_f32(scale, vcvtq_f32_s32(isum)));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q8_0_kernel() {
  return arm::packed_kernel<Q8_0Packed>("matmul_f32_q8_0_q8_0_4x4_dotprod", Tier::dotprod, kFeatures,
                                        gguf::GgmlType::Q8_0, gguf::GgmlType::Q8_0, neon::pack_lhs_q8_0f);
}

}  // namespace kernels::dotprod
