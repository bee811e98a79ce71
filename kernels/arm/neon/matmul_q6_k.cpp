// matmul_f32_q8_k_q6_k_4x4_neon: Y = X * W^T with Q6_K weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: SSHR / SHL /
//   SLI to unpack the 6-bit codes, SMULL / SMLAL2 into int16 lanes, ADDP /
//   SADDLP, MLA by the sub-block scales, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight super-block unpacked once for 4 rows of X), decode and the
//   m % 4 rows run 1 x 4 tiles, in one run() (super_block_tile.h); any m and n,
//   k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q6_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c]               fp16 of the 4 rows
//   scales[g][4t + c]  int8 scale of sub-block 4g + t (16 elements) of row c
//   codes[4g+c][3][16] sub-blocks 4g .. 4g + 3 of row c (16 codes each) as the
//                      four vectors of pack_six_bit (packed.h), u = code ^ 0x20
// Unpacked with an arithmetic shift (SSHR #2 of u << 2), each vector holds the
// reference's codes -32..31 with no subtraction. Per 16-element sub-block and
// row of X, NeonSmallCodes gives the 4 columns' integer sums (8 products of
// |32 * 127| per int16 lane at most, exact), one MLA adds scale * sum; the
// float step is the reference's: acc += (d_w * d_x) * isum.
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/kernel_defs.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::neon {
namespace {

struct Q6_K : arm::SuperBlockType<gguf::GgmlType::Q6_K, ref::BlockQ6_K, arm::Q6KPacked>, arm::NoMins {
  static void pack(const uint8_t* const* blocks, Packed& p) {
    const ref::BlockQ6_K* blk[arm::kTileN];
    arm::pack_q6_k_header(blocks, blk, p);
    const uint8x16_t flip = vdupq_n_u8(0x20);
    for (size_t c = 0; c < arm::kTileN; ++c) {
      for (size_t g = 0; g < 4; ++g) {
        uint8x16_t u[4];
        for (size_t t = 0; t < 4; ++t) u[t] = veorq_u8(arm::q6_k_codes16(*blk[c], 4 * g + t), flip);
        uint8_t(*v)[16] = p.codes[4 * g + c];
        arm::pack_six_bit_x16(u[0], u[1], u[2], u[3], v[0], v[1], v[2]);
      }
    }
  }

  // Codes -32..31 of sub-block 4g + t of row c.
  __attribute__((always_inline)) static int8x16_t codes(const Packed& p, size_t g, size_t c, size_t t) {
    const uint8_t(*v)[16] = p.codes[4 * g + c];
    if (t < 3) return vshrq_n_s8(vreinterpretq_s8_u8(vld1q_u8(v[t])), 2);
    const uint8x16_t fourth = arm::six_bit_fourth_high(vld1q_u8(v[0]), vld1q_u8(v[1]), vld1q_u8(v[2]));
    return vshrq_n_s8(vreinterpretq_s8_u8(fourth), 2);
  }

  // Sub-blocks 4g .. 4g + 3.
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t g, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const arm::Q6KQuarterScales scales = arm::q6_k_quarter_scales(p, g);
#pragma GCC unroll 4
    for (size_t t = 0; t < 4; ++t) {
      int8x16_t w[arm::kTileN];
#pragma GCC unroll 4
      for (size_t c = 0; c < arm::kTileN; ++c) w[c] = codes(p, g, c, t);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int8x16_t a = vld1q_s8(xb[i]->qs + 16 * (4 * g + t));
        const int32x4_t sub =
            arm::NeonSmallCodes::sum4(arm::NeonSmallCodes::dot16(w[0], a), arm::NeonSmallCodes::dot16(w[1], a),
                                      arm::NeonSmallCodes::dot16(w[2], a), arm::NeonSmallCodes::dot16(w[3], a));
        isum[i] = vmlaq_s32(isum[i], sub, scales.sc[t]);
      }
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ6_K =
    arm::tile_kernel<arm::SuperBlockTile<Q6_K>>("matmul_f32_q8_k_q6_k_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
