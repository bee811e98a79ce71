// matmul_f32_q8_k_q3_k_8x4_i8mm: Q3_K weights x Q8_K activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of 4 weight rows, per super-block of 256,
// arm::Q3KPacked (arm/q3_k.h, 440 = 4 x 110 bytes, no growth) with
// the SMMLA operands' order: vector 2q + k of quarter g holds, at bytes
// 0..7, elements 8k..8k+7 of row 2q of each of the quarter's sub-blocks, at
// 8..15 those of row 2q + 1. The codes q - 4 decode as on neon (SHL, SHL, SRI,
// SSHR #5), the 64 scales once per super-block.
//
// LHS (pack_lhs): Q8_K pairs (lhs_pairs.h). run: super_block_tiles.h. Per
// 16-element sub-block: 2 SMMLA per 2x2 tile, then one MLA by the scales
// {row 2q, 2q + 1} of the pair; per super-block acc += float(S) * d_w * d_a. A
// single row (decode) zips the row-0 halves of the two weight pairs' chains
// and multiplies by the 4 rows' scales, with the same float operations.
// Missing rows of the last tile are zero. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <utility>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/i8mm/super_block_tiles.h"
#include "kernels/arm/q3_k.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

// (row c, element i) -> (vector 2q + k, byte): the SMMLA operand of pair q, chunk k.
struct PairPlace {
  std::pair<size_t, size_t> operator()(size_t c, size_t i) const { return {2 * (c / 2) + i / 8, 8 * (c % 2) + i % 8}; }
};

// The codes of sub-block 4g + kT: w[2q + k], pair q's chunk k.
template <unsigned kT>
__attribute__((always_inline)) inline void q3_k_operands(const arm::Q3KPacked& p, size_t g, int8x16_t w[4]) {
#pragma GCC unroll 4
  for (size_t v = 0; v < 4; ++v) w[v] = arm::q3_k_codes<kT>(vld1q_u8(p.low[g][v]), arm::q3_k_high(p.high[g][v]));
}

struct Q3_K : arm::WeightType<gguf::GgmlType::Q3_K, ref::BlockQ3_K>, k_quant::NoMinsAdd {
  static constexpr size_t kPackedBlockBytes = sizeof(arm::Q3KPacked);
  static constexpr size_t kRowTileStart = 0;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    arm::pack_q3_k_row<PairPlace>(blk, r, *reinterpret_cast<arm::Q3KPacked*>(out));
  }

  template <unsigned kT, int P>
  __attribute__((always_inline)) static void sub_block(const arm::Q3KPacked& p, size_t g,
                                                       const arm::Q6KQuarterScales& sc, const uint8_t* a,
                                                       size_t pair_bytes, int32x4_t (&sum)[P][2]) {
    int8x16_t w[4];
    q3_k_operands<kT>(p, g, w);
    const int32x4_t pattern[2] = {pair_pattern_lo(sc.sc[kT]), pair_pattern_hi(sc.sc[kT])};
#pragma GCC unroll 4
    for (int i = 0; i < P; ++i) {
      const int8x16x2_t x =
          vld1q_s8_x2(reinterpret_cast<const int8_t*>(a + i * pair_bytes + kQ8_KQsOffset + 32 * (4 * g + kT)));
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        const int32x4_t t = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), x.val[0], w[2 * q]), x.val[1], w[2 * q + 1]);
        sum[i][q] = vmlaq_s32(sum[i][q], t, pattern[q]);
      }
    }
  }

  template <int P>
  __attribute__((always_inline)) static void sums(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                  int32x4_t (&sum)[P][2]) {
    const auto& p = *reinterpret_cast<const arm::Q3KPacked*>(w);
    const arm::Q3KScales scales = arm::decode_q3_k_scales(p);
#pragma GCC unroll 1
    for (size_t g = 0; g < 4; ++g) {
      const arm::Q6KQuarterScales sc = arm::quarter_scales(vld1q_s8(scales.sc[g]));
      sub_block<0, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<1, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<2, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<3, P>(p, g, sc, a, pair_bytes, sum);
    }
  }

  template <unsigned kT>
  __attribute__((always_inline)) static void row_sub_block(const arm::Q3KPacked& p, size_t g, int32x4_t scale,
                                                           const uint8_t* a, int32x4_t& sum) {
    int8x16_t w[4];
    q3_k_operands<kT>(p, g, w);
    const int8x16x2_t x = vld1q_s8_x2(reinterpret_cast<const int8_t*>(a + kQ8_KQsOffset + 32 * (4 * g + kT)));
    const int32x4_t c0 = vmmlaq_s32(smmla_from_zero(x.val[0], w[0]), x.val[1], w[1]);
    const int32x4_t c1 = vmmlaq_s32(smmla_from_zero(x.val[0], w[2]), x.val[1], w[3]);
    sum = vmlaq_s32(sum, tile_row0(c0, c1), scale);
  }

  // acc + the super-block (the row's at a, the tile's at w); a advances to
  // the row's next block.
  __attribute__((always_inline)) static float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w,
                                                              size_t a_stride) {
    const auto& p = *reinterpret_cast<const arm::Q3KPacked*>(w);
    const arm::Q3KScales scales = arm::decode_q3_k_scales(p);
    int32x4_t sum = vdupq_n_s32(0);
#pragma GCC unroll 1
    for (size_t g = 0; g < 4; ++g) {
      const arm::Q6KQuarterScales sc = arm::quarter_scales(vld1q_s8(scales.sc[g]));
      row_sub_block<0>(p, g, sc.sc[0], a, sum);
      row_sub_block<1>(p, g, sc.sc[1], a, sum);
      row_sub_block<2>(p, g, sc.sc[2], a, sum);
      row_sub_block<3>(p, g, sc.sc[3], a, sum);
    }
    const float32x4_t a0 = ld1r_f32_post(a, a_stride);
    return vfmaq_f32(acc, vcvtq_f32_s32(sum), vmulq_f32(load_f16x4(w), a0));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ3_K =
    arm::interleaved_kernel<SuperBlockTiles<Q3_K>>("matmul_f32_q8_k_q3_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
