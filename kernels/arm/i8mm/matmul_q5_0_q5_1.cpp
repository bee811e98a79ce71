// matmul_f32_q8_0_q5_0_8x4_i8mm and matmul_f32_q8_1_q5_1_8x4_i8mm: Q5_0 or Q5_1
// weights x Q8_0 or Q8_1 activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows (2 SMMLA
// pairs), per block of 32, 88 = 4 x 22 bytes (no growth), kChunks = 2:
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7 (GGUF qs: the low nibbles are
//                                 elements 8g.., the high ones 16+8g..)
//   uint8  plane[16]              the inverted fifth bits: byte i, bit
//                                 4q + 2g + h for element 16h + 8g + i % 8 of
//                                 row 2q + i / 8 (the qs byte at the same i)
// The codes decode as the reference's q - 16 with one CMTST and one BSL or SRI
// per 16 (arm/fifth_bits.h). Missing rows of the last tile are zero.
//
// Q5_1: the same, with the rows' fp16 mins m[4] after d[4] (96 = 4 x 24
// bytes), its codes decoded as q (0..31, CMTST, BIC, BSL or SRI), and m_w s_a
// added per block by the loops.
//
// LHS (pack_lhs): Q8_0 pairs, Q5_1: Q8_1 pairs (lhs_pairs.h). run:
// block_tiles.h, as Q4_0 and Q8_0: m_step 8, n_step 4; a result does not
// depend on the split of the rows.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <type_traits>

#include "kernels/arm/fifth_bits.h"
#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

// Q5_0 and (kQ5_1) Q5_1: the same layout after the scales (and Q5_1's mins);
// Q5_0's codes decode as q - 16, Q5_1's as q, its offset being the min.
template <bool kQ5_1>
struct FifthBit : arm::WeightType<kQ5_1 ? gguf::GgmlType::Q5_1 : gguf::GgmlType::Q5_0,
                                  std::conditional_t<kQ5_1, ref::BlockQ5_1, ref::BlockQ5_0>> {
  using GgufBlock = std::conditional_t<kQ5_1, ref::BlockQ5_1, ref::BlockQ5_0>;
  using Weights = std::conditional_t<kQ5_1, TileWeightsMin, TileWeights>;
  static constexpr size_t kChunks = 2;
  static constexpr size_t kExtraBytes = 16;
  static constexpr bool kMin = kQ5_1;
  static constexpr size_t kHeader = kQ5_1 ? 16 : 8;

  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[i];
  }

  // Row r's bits of the plane (zeroed before: interleaved.h pack_tiles).
  static void pack_extra(const GgufBlock& blk, uint8_t* plane, size_t r) {
    for (size_t e = 0; e < 32; ++e) {
      const unsigned inverted = (~static_cast<unsigned>(blk.qh[e / 8]) >> (e % 8)) & 1u;
      const size_t i = 8 * (r % 2) + e % 8, bit = 4 * (r / 2) + 2 * (e % 16 / 8) + e / 16;
      plane[i] = static_cast<uint8_t>(plane[i] | inverted << bit);
    }
  }

  template <size_t kHalf>
  __attribute__((always_inline)) static int8x16_t codes(uint8x16_t raw, uint8x16_t plane, unsigned bit) {
    if constexpr (kQ5_1) return arm::fifth_bit_codes_q<kHalf>(raw, plane, bit);
    return arm::fifth_bit_codes<kHalf>(raw, plane, bit);
  }

  __attribute__((always_inline)) static void decode(Weights& r, uint8x16x4_t nib, uint8x16_t plane) {
#pragma GCC unroll 2
    for (unsigned q = 0; q < 2; ++q) {
      const uint8x16_t g0 = nib.val[2 * q], g1 = nib.val[2 * q + 1];
      r.w[q][0] = codes<0>(g0, plane, 4 * q);
      r.w[q][1] = codes<0>(g1, plane, 4 * q + 2);
      r.w[q][2] = codes<1>(g0, plane, 4 * q + 1);
      r.w[q][3] = codes<1>(g1, plane, 4 * q + 3);
    }
  }

  static Weights load(const uint8_t* p) {
    Weights r;
    r.d = load_f16x4(p);
    if constexpr (kQ5_1) r.m = load_f16x4(p + 8);
    decode(r, vld1q_u8_x4(p + kHeader), vld1q_u8(p + kHeader + 64));
    return r;
  }

  // load(p) with post-indexed loads (p += kHeader + 80).
  static Weights load_next(const uint8_t*& p) {
    Weights r;
    r.d = load_f16x4_post(p);
    if constexpr (kQ5_1) r.m = load_f16x4_post(p);
    const uint8x16x4_t nib = vld1q_u8_x4(p);
    const uint8x16_t plane = vld1q_u8(p + 64);
    p += 80;
    decode(r, nib, plane);
    return r;
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ5_0 = arm::interleaved_kernel<BlockTiles<FifthBit<false>>>(
    "matmul_f32_q8_0_q5_0_8x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_1 = arm::interleaved_kernel<BlockTiles<FifthBit<true>>>(
    "matmul_f32_q8_1_q5_1_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
