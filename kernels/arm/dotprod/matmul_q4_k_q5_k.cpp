// matmul_f32_q8_k_q4_k_4x4_dotprod and matmul_f32_q8_k_q5_k_4x4_dotprod:
// Y = X * W^T with Q4_K or Q5_K weights (kernels/matmul.h), one decode struct
// for both.
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR to unpack nibbles
//   (Q5_K: CMTST of the fifth bits, then BSL / SRI), SDOT by element, MLA by
//   the sub-block scales, SMLAL by lane for the mins (and Q5_K's offset),
//   SCVTF, FMUL / FSUB / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Packed below:
//   same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k, the bytes of
//   ref::quantize_row_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4: prefill runs 4 x 4 tiles (each
//   weight super-block unpacked once for 4 rows of X), decode and the m % 4 rows
//   run 1 x 4 tiles, in one run() (arm/neon/super_block_tile.h); any m and
//   n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q4_k_1x1_ref / _q5_k_1x1_ref bit for bit.
//
// Layout, per super-block of 256 and group of 4 rows:
//   d[c], dmin[c]   fp16 of the 4 rows
//   scales[3][16]   the 6-bit scales and mins, unpacked from the GGUF 12-byte
//                   form and bit-packed (arm/neon/packed.h pack_six_bit) as four
//                   vectors u0 = sc of sub-blocks 0-3, u1 = sc 4-7, u2 = m 0-3,
//                   u3 = m 4-7, byte 4s + c = sub-block s of row c
//   qh[q][r][16]    Q5_K only: the inverted fifth bits of quarter q (sub-blocks
//                   2q, 2q + 1, arm/neon/k_quants.h): byte 4c + t of plane r,
//                   bit 2j' + h: element 4j + t (j = 4r + j') of sub-block
//                   2q + h of row c, the order of the codes' runs below
//   qs[p][16j+4c+t] the GGUF byte qs[32p + 4j + t] of row c: element 4j + t of
//                   sub-block 2p (low nibble) and of sub-block 2p + 1 (high)
// Q5_K's codes are decoded as q - 16 (SDOT would take 0..31 as well; the
// offset keeps one decoding and one layout rule for both tiers).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <array>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

// Where Q5_K's fifth bits go in the planes (k_quants.h): plane, byte, bit.
struct FifthBitPlace {
  std::array<size_t, 3> operator()(size_t c, size_t h, size_t l) const {
    return {l / 16, 4 * c + l % 4, 2 * (l / 4 % 4) + h};
  }
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
    const uint8_t* src[arm::kTileN] = {blk[0]->qs, blk[1]->qs, blk[2]->qs, blk[3]->qs};
    for (size_t q = 0; q < 4; ++q) {
      auto* runs = reinterpret_cast<uint8_t(*)[16]>(p.qs[q]);
      arm::interleave_4x4_runs(src, 32 * q, runs);
      arm::interleave_4x4_runs(src, 32 * q + 16, runs + 4);
    }
  }

  // Sub-blocks 2q (low nibbles) and 2q + 1 (high).
  template <size_t MR>
  __attribute__((always_inline)) static void quarter(const Packed& p, size_t q, const ref::BlockQ8_K* const* xb,
                                                     int32x4_t* isum) {
    const arm::SubBlockPairScales scales = arm::q4_k_pair_scales(p.scales, q);
    const typename Base::Planes planes = Base::planes(p, q);
#pragma GCC unroll 2
    for (size_t half = 0; half < 2; ++half) {
      // Loaded again for the high nibbles: keeping them would hold 8 more
      // registers through the 4-row tile.
      int8x16_t v[8];
#pragma GCC unroll 8
      for (size_t j = 0; j < 8; ++j) {
        const uint8x16_t raw = vld1q_u8(p.qs[q] + 16 * j);
        const auto bit = static_cast<unsigned>(2 * (j % 4) + half);
        v[j] = half == 0 ? Base::template codes<0>(raw, planes, j / 4, bit)
                         : Base::template codes<1>(raw, planes, j / 4, bit);
      }
      const size_t s = 2 * q + half;
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const int32x4_t sub = arm::sdot_runs32(v, vld1q_s8(xb[i]->qs + 32 * s), vld1q_s8(xb[i]->qs + 32 * s + 16));
        isum[i] = vmlaq_s32(isum[i], sub, half == 0 ? scales.even : scales.odd);
      }
    }
  }
};
using Q4_K = OffsetK<false>;
using Q5_K = OffsetK<true>;

}  // namespace

constinit const MatmulKernel kMatmulQ4_K =
    arm::tile_kernel<arm::SuperBlockTile<Q4_K>>("matmul_f32_q8_k_q4_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_K =
    arm::tile_kernel<arm::SuperBlockTile<Q5_K>>("matmul_f32_q8_k_q5_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
