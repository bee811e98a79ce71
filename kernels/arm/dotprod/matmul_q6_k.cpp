// matmul_f32_q8_k_q6_k_4x4_dotprod: Y = X * W^T with Q6_K weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / SHL / SLI to unpack the 6-bit
//   codes, SDOT by element, MLA by the sub-block scales, SCVTF (fixed point),
//   FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q6_Kx4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run(); any m and n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q6_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c]              fp16 of the 4 rows
//   scales[g][4s+c]   int8 scale of sub-block 4g + s (16 elements) of row c
//   codes[s][3][16]   sub-block s: its four vectors j = 0..3 (byte 4c + t =
//                     element 16s + 4j + t of row c) bit-packed by
//                     pack_six_bit (arm/neon/packed.h) as u = code ^ 0x20.
// Unpacked, each vector holds u << 2 in int8: the XOR makes that 4 * (code - 32)
// (the reference's -32..31, times 4) with no subtraction; SDOT then sums 4x the
// reference's integers, and SCVTF #2 divides by 4 exactly.
#if !defined(__ARM_FEATURE_DOTPROD)
#error "arm/dotprod needs SDOT: compile with -march=armv8.2-a+dotprod"
#endif
#if defined(__ARM_FEATURE_MATMUL_INT8) || defined(__ARM_FEATURE_SVE)
#error "arm/dotprod must not assume i8mm or SVE: compile it with exactly -march=armv8.2-a+dotprod"
#endif

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernels.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"

namespace kernels::dotprod {
namespace {

constexpr uint64_t kFeatures = arm::feature_bit(Feature::asimd) | arm::feature_bit(Feature::dotprod);

using arm::kTileN;
using ref::BlockQ6_K;
using ref::BlockQ8_K;

constexpr size_t kSubBlocks = ref::QK_K / 16;

struct BlockQ6_Kx4 {
  uint16_t d[kTileN];
  int8_t scales[4][16];
  uint8_t codes[kSubBlocks][3][16];
};
static_assert(sizeof(BlockQ6_Kx4) == kTileN * sizeof(BlockQ6_K));

struct Q6_KPacked {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ8_K); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ6_K); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ6_Kx4*>(out);
    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ6_K* blk[kTileN];
      for (size_t c = 0; c < kTileN; ++c) blk[c] = reinterpret_cast<const BlockQ6_K*>(rows[c]) + b;
      BlockQ6_Kx4& p = packed[b];
      for (size_t c = 0; c < kTileN; ++c) {
        p.d[c] = blk[c]->d;
        for (size_t s = 0; s < kSubBlocks; ++s) p.scales[s / 4][4 * (s % 4) + c] = blk[c]->scales[s];
      }
      const uint8x16_t flip = vdupq_n_u8(0x20);
      for (size_t s = 0; s < kSubBlocks; ++s) {
        uint8x16_t u[4];  // u[j]: elements 4j..4j+3 of the sub-block, 4 rows side by side
        arm::transpose_4x4_runs(veorq_u8(arm::q6_k_codes16(*blk[0], s), flip),
                                veorq_u8(arm::q6_k_codes16(*blk[1], s), flip),
                                veorq_u8(arm::q6_k_codes16(*blk[2], s), flip),
                                veorq_u8(arm::q6_k_codes16(*blk[3], s), flip), u);
        arm::pack_six_bit_x16(u[0], u[1], u[2], u[3], p.codes[s][0], p.codes[s][1], p.codes[s][2]);
      }
    }
  }

  // Sub-blocks 4g .. 4g + 3: isum[i] += scale * (integer dot) for each row i.
  template <size_t MR>
  __attribute__((always_inline)) static void sub_blocks(const BlockQ6_Kx4& p, size_t g, const BlockQ8_K* const* xb,
                                                        int32x4_t* isum) {
    const uint8x16_t top_six = vdupq_n_u8(0xFC);
    const int8x16_t sc8 = vld1q_s8(p.scales[g]);
    const int16x8_t lo = vmovl_s8(vget_low_s8(sc8)), hi = vmovl_high_s8(sc8);
    const int32x4_t sc[4] = {vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)),
                             vmovl_high_s16(hi)};
#pragma GCC unroll 4
    for (size_t t = 0; t < 4; ++t) {
      const size_t s = 4 * g + t;
      const uint8x16x3_t abc = vld1q_u8_x3(p.codes[s][0]);
      const int8x16_t v0 = vreinterpretq_s8_u8(vandq_u8(abc.val[0], top_six));
      const int8x16_t v1 = vreinterpretq_s8_u8(vandq_u8(abc.val[1], top_six));
      const int8x16_t v2 = vreinterpretq_s8_u8(vandq_u8(abc.val[2], top_six));
      const int8x16_t v3 = vreinterpretq_s8_u8(arm::six_bit_fourth_high(abc.val[0], abc.val[1], abc.val[2]));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int8x16_t a = vld1q_s8(xb[i]->qs + 16 * s);
        int32x4_t sub = vdotq_laneq_s32(vdupq_n_s32(0), v0, a, 0);
        sub = vdotq_laneq_s32(sub, v1, a, 1);
        sub = vdotq_laneq_s32(sub, v2, a, 2);
        sub = vdotq_laneq_s32(sub, v3, a, 3);
        isum[i] = vmlaq_s32(isum[i], sub, sc[t]);
      }
    }
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const BlockQ6_Kx4*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ6_Kx4& p = w[b];
      const BlockQ8_K* xb[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) xb[i] = reinterpret_cast<const BlockQ8_K*>(x[i]) + b;
      int32x4_t isum[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) isum[i] = vdupq_n_s32(0);

      // Decode unrolls the 4 groups of 4 sub-blocks; the 4-row tile keeps them
      // a loop: unrolled, GCC hoists the weight loads of the whole super-block
      // and spills them (counted with kernel_insn).
      if constexpr (MR == 1) {
#pragma GCC unroll 4
        for (size_t g = 0; g < 4; ++g) sub_blocks<MR>(p, g, xb, isum);
      } else {
#pragma GCC unroll 1
        for (size_t g = 0; g < 4; ++g) sub_blocks<MR>(p, g, xb, isum);
      }
      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        acc[i] = vaddq_f32(acc[i], vmulq_f32(vmulq_n_f32(dw, xb[i]->d), vcvtq_n_f32_s32(isum[i], 2)));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q6_k_kernel() {
  return arm::packed_kernel<Q6_KPacked>("matmul_f32_q8_k_q6_k_4x4_dotprod", Tier::dotprod, kFeatures,
                                        gguf::GgmlType::Q6_K, gguf::GgmlType::Q8_K, neon::pack_lhs_q8_k);
}

}  // namespace kernels::dotprod
