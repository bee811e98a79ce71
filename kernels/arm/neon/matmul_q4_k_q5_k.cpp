// matmul_f32_q8_k_q4_k_4x4_neon and matmul_f32_q8_k_q5_k_4x4_neon: Y = X * W^T
// with Q4_K or Q5_K weights (kernels/matmul.h), one decode struct for both.
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so they
//   run on any 64-bit ARM core (Cortex-A53 and up). Instructions: AND / USHR
//   to unpack nibbles (Q5_K: CMTST of the fifth bits, then BSL / SRI), SMULL /
//   SMLAL(2) into int16 lanes, ADDP / SADDLP, MLA by the sub-block scales,
//   SMLAL by lane for the mins (and Q5_K's offset), SCVTF, FMUL / FSUB / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight super-block unpacked once for 4 rows of X), decode and the
//   m % 4 rows run 1 x 4 tiles, in one run() (super_block_tile.h); any m and n,
//   k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q4_k_1x1_ref / _q5_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c], dmin[c]   fp16 of the 4 rows
//   scales[3][16]   the 6-bit scales and mins, 4 rows side by side (k_quants.h)
//   qh[q][r][16]    Q5_K only: the inverted fifth bits of quarter q (sub-blocks
//                   2q, 2q + 1), byte i of plane r: element 16r + i of sub-block
//                   2q + h of row c in bit 2c + h
//   qs[c][128]      the GGUF qs of row c: byte 32p + l holds element l of
//                   sub-block 2p (low nibble) and of sub-block 2p + 1 (high)
// Per 32-element sub-block and row of X, NeonSmallCodes gives the 4 columns'
// integer sums (codes 0..15, or Q5_K's q - 16 in -16..15, times +-127: 16
// products per int16 lane at most, exact), one MLA adds scale * sum; the mins
// term is 8 SMLAL by lane (Q5_K's offset, 16 sum_s sc_s * bsum_s, 8 more).
// The float step is the reference's: d = d_w * d_x, dmin = dmin_w * d_x,
// acc += d * isum - dmin * isum_mins (no fused multiply-add).
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <array>
#include <cstring>

#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/kernel_defs.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::neon {
namespace {

// Where Q5_K's fifth bits go in the planes (k_quants.h): plane, byte, bit.
struct FifthBitPlace {
  std::array<size_t, 3> operator()(size_t c, size_t h, size_t l) const { return {l / 16, l % 16, 2 * c + h}; }
};

// The codes of Q4_K (kQ5 false), nibbles 0..15, and of Q5_K, q - 16 with
// the fifth bits of the qh planes (k_quants.h).
template <bool kQ5>
struct OffsetK : arm::OffsetKType<kQ5, FifthBitPlace> {
  using Base = arm::OffsetKType<kQ5, FifthBitPlace>;
  using typename Base::Block;
  using typename Base::Packed;

  static void pack(const uint8_t* const* blocks, Packed& p) {
    const Block* blk[arm::kTileN];
    Base::pack_fields(blocks, blk, p);
    for (size_t c = 0; c < arm::kTileN; ++c) std::memcpy(p.qs[c], blk[c]->qs, sizeof p.qs[c]);
  }

  // Sub-blocks 2q (low nibbles) and 2q + 1 (high).
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t q, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const arm::SubBlockPairScales scales = arm::q4_k_pair_scales(p.scales, q);
    const typename Base::Planes planes = Base::planes(p, q);
#pragma GCC unroll 2
    for (size_t half = 0; half < 2; ++half) {
      arm::ColumnCodes w;  // elements 0..15 and 16..31 of the sub-block, by column
#pragma GCC unroll 4
      for (size_t c = 0; c < arm::kTileN; ++c) {
        const uint8x16_t b0 = vld1q_u8(p.qs[c] + 32 * q), b1 = vld1q_u8(p.qs[c] + 32 * q + 16);
        const auto bit = static_cast<unsigned>(2 * c + half);
        w.lo[c] = half == 0 ? Base::template codes<0>(b0, planes, 0, bit) : Base::template codes<1>(b0, planes, 0, bit);
        w.hi[c] = half == 0 ? Base::template codes<0>(b1, planes, 1, bit) : Base::template codes<1>(b1, planes, 1, bit);
      }
      const size_t s = 2 * q + half;
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub =
            arm::dot_columns<arm::NeonSmallCodes>(w, vld1q_s8(xb[i]->qs + 32 * s), vld1q_s8(xb[i]->qs + 32 * s + 16));
        isum[i] = vmlaq_s32(isum[i], sub, half == 0 ? scales.even : scales.odd);
      }
    }
  }
};
using Q4_K = OffsetK<false>;
using Q5_K = OffsetK<true>;

}  // namespace

constinit const MatmulKernel kMatmulQ4_K =
    arm::tile_kernel<arm::SuperBlockTile<Q4_K>>("matmul_f32_q8_k_q4_k_4x4_neon", Tier::neon, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_K =
    arm::tile_kernel<arm::SuperBlockTile<Q5_K>>("matmul_f32_q8_k_q5_k_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
