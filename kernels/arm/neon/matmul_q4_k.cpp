// matmul_f32_q8_k_q4_k_4x4_neon: Y = X * W^T with Q4_K weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: AND / USHR
//   to unpack nibbles, SMULL / SMLAL(2) into int16 lanes, ADDP / SADDLP, MLA by
//   the sub-block scales, SMLAL by lane for the mins, SCVTF, FMUL / FSUB / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q4_Kx4 below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight super-block unpacked once for 4 rows of X), decode and the
//   m % 4 rows run 1 x 4 tiles, in one run(); any m and n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q4_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c], dmin[c]   fp16 of the 4 rows
//   scales[3][16]   the 6-bit scales and mins, 4 rows side by side (k_quants.h)
//   qs[c][128]      the GGUF qs of row c: byte 32p + l holds element l of
//                   sub-block 2p (low nibble) and of sub-block 2p + 1 (high)
// Per 32-element sub-block and row of X, NeonSmallCodes gives the 4 columns'
// integer sums (codes 0..15 times +-127: 16 products per int16 lane at most,
// exact), one MLA adds scale * sum; the mins term is 8 SMLAL by lane. The
// float step is the reference's: d = d_w * d_x, dmin = dmin_w * d_x,
// acc += d * isum - dmin * isum_mins (no fused multiply-add).
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "arm/neon needs AArch64 Advanced SIMD: compile with -march=armv8-a"
#endif
#if defined(__ARM_FEATURE_QRDMX) || defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_SVE)
#error "arm/neon must run on Armv8.0 cores: compile it with exactly -march=armv8-a"
#endif

#include <arm_neon.h>

#include <cstring>

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
using ref::BlockQ4_K;
using ref::BlockQ8_K;

struct BlockQ4_Kx4 {
  uint16_t d[kTileN];
  uint16_t dmin[kTileN];
  uint8_t scales[3][16];
  uint8_t qs[kTileN][ref::QK_K / 2];
};
static_assert(sizeof(BlockQ4_Kx4) == kTileN * sizeof(BlockQ4_K));

struct Q4_KPacked {
  static size_t lhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ8_K); }
  static size_t rhs_row_bytes(size_t k) { return k / ref::QK_K * sizeof(BlockQ4_K); }

  static void pack_group(size_t k, const uint8_t* const* rows, uint8_t* out) {
    auto* packed = reinterpret_cast<BlockQ4_Kx4*>(out);
    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ4_K* blk[kTileN];
      for (size_t c = 0; c < kTileN; ++c) blk[c] = reinterpret_cast<const BlockQ4_K*>(rows[c]) + b;
      BlockQ4_Kx4& p = packed[b];
      for (size_t c = 0; c < kTileN; ++c) {
        p.d[c] = blk[c]->d;
        p.dmin[c] = blk[c]->dmin;
        std::memcpy(p.qs[c], blk[c]->qs, sizeof p.qs[c]);
      }
      arm::pack_q4_k_scales(blk, p.scales);
    }
  }

  // Sub-blocks 2q (low nibbles) and 2q + 1 (high): isum[i] += scale * (integer
  // dot) for each row i.
  template <size_t MR>
  __attribute__((always_inline)) static void sub_block_pair(const BlockQ4_Kx4& p, size_t q, const BlockQ8_K* const* xb,
                                                            int32x4_t* isum) {
    const uint8x16_t low_nibble = vdupq_n_u8(0x0F);
    const arm::SubBlockPairScales scales = arm::q4_k_pair_scales(p.scales, q);
#pragma GCC unroll 2
    for (size_t half = 0; half < 2; ++half) {
      int8x16_t w0[kTileN], w1[kTileN];  // elements 0..15 and 16..31 of the sub-block, by column
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) {
        const uint8x16_t b0 = vld1q_u8(p.qs[c] + 32 * q), b1 = vld1q_u8(p.qs[c] + 32 * q + 16);
        w0[c] = vreinterpretq_s8_u8(half == 0 ? vandq_u8(b0, low_nibble) : vshrq_n_u8(b0, 4));
        w1[c] = vreinterpretq_s8_u8(half == 0 ? vandq_u8(b1, low_nibble) : vshrq_n_u8(b1, 4));
      }
      const size_t s = 2 * q + half;
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int8x16_t a0 = vld1q_s8(xb[i]->qs + 32 * s);
        const int8x16_t a1 = vld1q_s8(xb[i]->qs + 32 * s + 16);
        const int32x4_t sub = NeonSmallCodes::sum4(
            NeonSmallCodes::dot32(w0[0], a0, w1[0], a1), NeonSmallCodes::dot32(w0[1], a0, w1[1], a1),
            NeonSmallCodes::dot32(w0[2], a0, w1[2], a1), NeonSmallCodes::dot32(w0[3], a0, w1[3], a1));
        isum[i] = vmlaq_s32(isum[i], sub, half == 0 ? scales.even : scales.odd);
      }
    }
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const BlockQ4_Kx4*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const BlockQ4_Kx4& p = w[b];
      const BlockQ8_K* xb[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) xb[i] = reinterpret_cast<const BlockQ8_K*>(x[i]) + b;
      int32x4_t isum[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) isum[i] = vdupq_n_s32(0);
      // A loop, not unrolled: unrolled, GCC hoists the weight loads of the
      // whole super-block and spills them (counted with kernel_insn).
#pragma GCC unroll 1
      for (size_t q = 0; q < 4; ++q) sub_block_pair<MR>(p, q, xb, isum);

      const arm::Q4KMins mins = arm::q4_k_mins(p.scales);
      const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.d)));
      const float32x4_t dminw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p.dmin)));
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const float32x4_t min_term =
            vmulq_f32(vmulq_n_f32(dminw, xb[i]->d), vcvtq_f32_s32(arm::q4_k_mins_dot(mins, *xb[i])));
        const float32x4_t d = vmulq_n_f32(dw, xb[i]->d);
        acc[i] = vaddq_f32(acc[i], vsubq_f32(vmulq_f32(d, vcvtq_f32_s32(isum[i])), min_term));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace

MatmulKernel matmul_q4_k_kernel() {
  return arm::packed_kernel<Q4_KPacked>("matmul_f32_q8_k_q4_k_4x4_neon", Tier::neon, arm::feature_bit(Feature::asimd),
                                        gguf::GgmlType::Q4_K, gguf::GgmlType::Q8_K, pack_lhs_q8_k);
}

}  // namespace kernels::neon
