// matmul_f32_q8_k_q6_k_4x4_neon: Y = X * W^T with Q6_K weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: SSHR / SHL /
//   SLI to unpack the 6-bit codes, SMULL / SMLAL2 into int16 lanes, ADDP /
//   SADDLP, MLA by the sub-block scales, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q6_Kx4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight super-block unpacked once for 4 rows of X), decode and the
//   m % 4 rows run 1 x 4 tiles, in one run(); any m and n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q6_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c]               fp16 of the 4 rows
//   scales[g][4t + c]  int8 scale of sub-block 4g + t (16 elements) of row c
//   codes[g][c][3][16] sub-blocks 4g .. 4g + 3 of row c (16 codes each) as the
//                      four vectors of pack_six_bit (packed.h), u = code ^ 0x20
// Unpacked with an arithmetic shift (SSHR #2 of u << 2), each vector holds the
// reference's codes -32..31 with no subtraction. Per 16-element sub-block and
// row of X, NeonSmallCodes gives the 4 columns' integer sums (8 products of
// |32 * 127| per int16 lane at most, exact), one MLA adds scale * sum; the
// float step is the reference's: acc += (d_w * d_x) * isum.
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "arm/neon needs AArch64 Advanced SIMD: compile with -march=armv8-a"
#endif
#if defined(__ARM_FEATURE_QRDMX) || defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_SVE)
#error "arm/neon must run on Armv8.0 cores: compile it with exactly -march=armv8-a"
#endif

#include <arm_neon.h>

#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/kernels.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"

namespace kernels::neon {
namespace {

using arm::kTileN;
using arm::NeonSmallCodes;
using ref::BlockQ6_K;
using ref::BlockQ8_K;

constexpr size_t kSubBlocks = ref::QK_K / 16;

struct BlockQ6_Kx4 {
  uint16_t d[kTileN];
  int8_t scales[4][16];
  uint8_t codes[4][kTileN][3][16];
};
static_assert(sizeof(BlockQ6_Kx4) == kTileN * sizeof(BlockQ6_K));

struct Q6_KPacked {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ8_K); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ6_K); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ6_Kx4*>(out);
    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      BlockQ6_Kx4& p = packed[b];
      for (size_t c = 0; c < kTileN; ++c) {
        const BlockQ6_K& blk = reinterpret_cast<const BlockQ6_K*>(rows[c])[b];
        p.d[c] = blk.d;
        for (size_t s = 0; s < kSubBlocks; ++s) p.scales[s / 4][4 * (s % 4) + c] = blk.scales[s];
        const uint8x16_t flip = vdupq_n_u8(0x20);
        for (size_t g = 0; g < 4; ++g) {
          uint8x16_t u[4];
          for (size_t t = 0; t < 4; ++t) u[t] = veorq_u8(arm::q6_k_codes16(blk, 4 * g + t), flip);
          arm::pack_six_bit_x16(u[0], u[1], u[2], u[3], p.codes[g][c][0], p.codes[g][c][1], p.codes[g][c][2]);
        }
      }
    }
  }

  // Codes -32..31 of sub-block 4g + t of row c.
  static int8x16_t codes(const BlockQ6_Kx4& p, size_t g, size_t c, size_t t) {
    const uint8_t(*v)[16] = p.codes[g][c];
    if (t < 3) return vshrq_n_s8(vreinterpretq_s8_u8(vld1q_u8(v[t])), 2);
    const uint8x16_t fourth = arm::six_bit_fourth_high(vld1q_u8(v[0]), vld1q_u8(v[1]), vld1q_u8(v[2]));
    return vshrq_n_s8(vreinterpretq_s8_u8(fourth), 2);
  }

  // Sub-blocks 4g .. 4g + 3: isum[i] += scale * (integer dot) for each row i.
  template <size_t MR>
  __attribute__((always_inline)) static void sub_blocks(const BlockQ6_Kx4& p, size_t g, const BlockQ8_K* const* xb,
                                                        int32x4_t* isum) {
    const int8x16_t sc8 = vld1q_s8(p.scales[g]);
    const int16x8_t lo = vmovl_s8(vget_low_s8(sc8)), hi = vmovl_high_s8(sc8);
    const int32x4_t sc[4] = {vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)),
                             vmovl_high_s16(hi)};
#pragma GCC unroll 4
    for (size_t t = 0; t < 4; ++t) {
      int8x16_t w[kTileN];
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) w[c] = codes(p, g, c, t);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int8x16_t a = vld1q_s8(xb[i]->qs + 16 * (4 * g + t));
        const int32x4_t sub = NeonSmallCodes::sum4(NeonSmallCodes::dot16(w[0], a), NeonSmallCodes::dot16(w[1], a),
                                                   NeonSmallCodes::dot16(w[2], a), NeonSmallCodes::dot16(w[3], a));
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
      // A loop, not unrolled: unrolled, GCC hoists the weight loads of the
      // whole super-block and spills them (and decode gains nothing; counted
      // with kernel_insn).
#pragma GCC unroll 1
      for (size_t g = 0; g < 4; ++g) sub_blocks<MR>(p, g, xb, isum);

      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        acc[i] = vaddq_f32(acc[i], vmulq_f32(vmulq_n_f32(dw, xb[i]->d), vcvtq_f32_s32(isum[i])));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q6_k_kernel() {
  return arm::packed_kernel<Q6_KPacked>("matmul_f32_q8_k_q6_k_4x4_neon", Tier::neon, arm::feature_bit(Feature::asimd),
                                        gguf::GgmlType::Q6_K, gguf::GgmlType::Q8_K, pack_lhs_q8_k);
}

}  // namespace kernels::neon
