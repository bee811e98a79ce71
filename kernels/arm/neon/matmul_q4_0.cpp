// matmul_f32_q8_0_q4_0_4x4_neon: Y = X * W^T with Q4_0 weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: SHL / SSHR
//   to unpack nibbles, SMULL / SMLAL(2) into int16 lanes, ADDP / SADDLP,
//   SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q4_0x4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_0 rows in 48-byte blocks with a float scale (pack_lhs =
//   neon::pack_lhs_q8_0f, lhs_q8_0.h: the codes and scale of
//   ref::quantize_row_q8_0).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight block unpacked once for 4 rows of X), decode and the m % 4
//   rows run 1 x 4 tiles, in one run(); any m and n, k a multiple of 32.
// - result: equal to matmul_f32_q8_0_q4_0_1x1_ref bit for bit.
//
// Layout, per block of 32 and group of 4 rows: d[c] (fp16) of the 4 rows, so
// one load gives the 4 scales, then qs[c] = the GGUF qs of row c XOR 0x88: each
// nibble q becomes the 4-bit two's complement of q - 8, so SHL #4 + SSHR #4
// (low) and SSHR #4 (high) give the codes -8..7 with no subtraction.
//
// Per block and row of X, the 4 columns' integer sums come from SMULL/SMLAL
// into int16 lanes (4 products each) and one ADDP tree (NeonSmallCodes), then
// are scaled exactly as the reference does: scale = d_w * d_x, sum += scale *
// isum, no fused multiply-add.
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "arm/neon needs AArch64 Advanced SIMD: compile with -march=armv8-a"
#endif
#if defined(__ARM_FEATURE_QRDMX) || defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_SVE)
#error "arm/neon must run on Armv8.0 cores: compile it with exactly -march=armv8-a"
#endif

#include <arm_neon.h>

#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/kernels.h"
#include "kernels/arm/neon/lhs_q8_0.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"

namespace kernels::neon {
namespace {

using arm::kTileN;
using arm::NeonSmallCodes;
using ref::BlockQ4_0;
using ref::BlockQ8_0;

struct BlockQ4_0x4 {
  uint16_t d[kTileN];
  uint8_t qs[kTileN][16];
};
static_assert(sizeof(BlockQ4_0x4) == kTileN * sizeof(BlockQ4_0));

struct Q4_0Packed {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK * sizeof(BlockQ8_0F); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK * sizeof(BlockQ4_0); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ4_0x4*>(out);
    for (size_t b = 0; b < k / ref::QK; ++b) {
      for (size_t c = 0; c < kTileN; ++c) {
        const BlockQ4_0& blk = reinterpret_cast<const BlockQ4_0*>(rows[c])[b];
        packed[b].d[c] = blk.d;
        vst1q_u8(packed[b].qs[c], veorq_u8(vld1q_u8(blk.qs), vdupq_n_u8(0x88)));
      }
    }
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const BlockQ4_0x4*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK; ++b) {
      const BlockQ4_0x4& p = w[b];
      int8x16_t lo[kTileN], hi[kTileN];  // codes -8..7 of elements 0..15 and 16..31, by column
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) {
        const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(p.qs[c]));
        lo[c] = vshrq_n_s8(vshlq_n_s8(v, 4), 4);
        hi[c] = vshrq_n_s8(v, 4);
      }
      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const BlockQ8_0F& xb = reinterpret_cast<const BlockQ8_0F*>(x[i])[b];
        const int8x16_t a0 = vld1q_s8(xb.qs);
        const int8x16_t a1 = vld1q_s8(xb.qs + 16);
        const int32x4_t isum = NeonSmallCodes::sum4(
            NeonSmallCodes::dot32(lo[0], a0, hi[0], a1), NeonSmallCodes::dot32(lo[1], a0, hi[1], a1),
            NeonSmallCodes::dot32(lo[2], a0, hi[2], a1), NeonSmallCodes::dot32(lo[3], a0, hi[3], a1));
        const float32x4_t scale = vmulq_n_f32(dw, xb.d);
        acc[i] = vaddq_f32(acc[i], vmulq_f32(scale, vcvtq_f32_s32(isum)));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q4_0_kernel() {
  return arm::packed_kernel<Q4_0Packed>("matmul_f32_q8_0_q4_0_4x4_neon", Tier::neon, arm::feature_bit(Feature::asimd),
                                        gguf::GgmlType::Q4_0, gguf::GgmlType::Q8_0, pack_lhs_q8_0f);
}

}  // namespace kernels::neon
