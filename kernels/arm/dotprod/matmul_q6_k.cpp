// matmul_f32_q8_k_q6_k_4x4_dotprod: Y = X * W^T with Q6_K weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / SHL / SLI to unpack the 6-bit
//   codes, SDOT by element, MLA by the sub-block scales, SCVTF (fixed point),
//   FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run() (arm/neon/super_block_tile.h); any m and
//   n, k a multiple of 256.
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
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

// Codes 4x the reference's (kFracBits 2); the 1-row tile unrolls the quarters.
struct Q6_K : arm::SuperBlockType<gguf::GgmlType::Q6_K, ref::BlockQ6_K, arm::Q6KPacked, 2, true>, arm::NoMins {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const ref::BlockQ6_K* blk[arm::kTileN];
    arm::pack_q6_k_header(blocks, blk, p);
    const uint8x16_t flip = vdupq_n_u8(0x20);
    for (size_t s = 0; s < 16; ++s) {
      uint8x16_t u[4];  // u[j]: elements 4j..4j+3 of the sub-block, 4 rows side by side
      arm::transpose_4x4_runs(
          veorq_u8(arm::q6_k_codes16(*blk[0], s), flip), veorq_u8(arm::q6_k_codes16(*blk[1], s), flip),
          veorq_u8(arm::q6_k_codes16(*blk[2], s), flip), veorq_u8(arm::q6_k_codes16(*blk[3], s), flip), u);
      arm::pack_six_bit_x16(u[0], u[1], u[2], u[3], p.codes[s][0], p.codes[s][1], p.codes[s][2]);
    }
  }

  // Sub-blocks 4g .. 4g + 3.
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t g, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const uint8x16_t top_six = vdupq_n_u8(0xFC);
    const arm::Q6KQuarterScales scales = arm::q6_k_quarter_scales(p, g);
#pragma GCC unroll 4
    for (size_t t = 0; t < 4; ++t) {
      const size_t s = 4 * g + t;
      const uint8x16x3_t abc = vld1q_u8_x3(p.codes[s][0]);
      const int8x16_t v[4] = {vreinterpretq_s8_u8(vandq_u8(abc.val[0], top_six)),
                              vreinterpretq_s8_u8(vandq_u8(abc.val[1], top_six)),
                              vreinterpretq_s8_u8(vandq_u8(abc.val[2], top_six)),
                              vreinterpretq_s8_u8(arm::six_bit_fourth_high(abc.val[0], abc.val[1], abc.val[2]))};
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub = arm::sdot_runs16(vdupq_n_s32(0), v, vld1q_s8(xb[i]->qs + 16 * s));
        isum[i] = vmlaq_s32(isum[i], sub, scales.sc[t]);
      }
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ6_K =
    arm::tile_kernel<arm::SuperBlockTile<Q6_K>>("matmul_f32_q8_k_q6_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
