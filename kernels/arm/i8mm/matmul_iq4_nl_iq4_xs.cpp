// matmul_f32_q8_0_iq4_nl_8x4_i8mm and matmul_f32_q8_k_iq4_xs_8x4_i8mm: IQ4_NL
// or IQ4_XS weights x Q8_0 or Q8_K activations with SMMLA, one decoding of 32
// codes for both.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// IQ4_NL, RHS (pack_rhs, at load): block_tiles.h's tiles of 4 weight rows
// (2 SMMLA pairs), per block of 32, 72 = 4 x 18 bytes (no growth), kChunks 2:
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  qs[pair q][half g][16] row 2q bytes 8g..8g+7, then row 2q+1 bytes
//                                 8g..8g+7 (GGUF qs: the low nibbles are
//                                 elements 8g.., the high ones 16+8g..)
// Q4_0's layout without its XOR; each nibble is looked up in the code book
// (arm/iq4_codes.h: AND or USHR, then TBL), the reference's int8 values.
// LHS: Q8_0 pairs (lhs_pairs.h). run: block_tiles.h, as Q4_0 and Q8_0.
//
// IQ4_XS, RHS: tiles of 4 weight rows, per super-block of 256, 544 = 4 x 136
// bytes (no growth):
//   uint16 d[4]                   fp16 scales of rows 0..3
//   uint8  scales[24]             the 32 sub-block scales ls - 32, 6 bits each
//                                 (arm/iq4_codes.h, pack_iq4_xs_scales)
//   uint8  qs[8][64]              sub-block j (GGUF qs[16j..]) as an IQ4_NL
//                                 block above
// LHS: Q8_K pairs (lhs_pairs.h). run: super_block_tiles.h. Per sub-block of
// 32: 4 SMMLA per 2x2 tile, then one integer MLA by the sub-block scales
// (sign-extended from the decoded bytes by TBL and SSHR); per super-block
// acc += float(S) * d_w * d_a. A single row (decode) runs the same integer
// sums per sub-block, its row-0 halves of the two weight pairs zipped, and
// the same float operations. Missing rows of the last tile are zero. m_step
// 8, n_step 4; a result does not depend on the split of the rows.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/block_tiles.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/i8mm/super_block_tiles.h"
#include "kernels/arm/iq4_codes.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

struct IQ4_NL : arm::WeightType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL>, NibbleLoads<IQ4_NL> {
  static void pack(const GgufBlock& blk, uint8_t* row0) {
    for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[i];
  }

  template <bool kHigh>
  __attribute__((always_inline)) static int8x16_t nibbles(uint8x16_t g) {
    return arm::iq4_codes<kHigh ? 1 : 0>(arm::iq4_table(), g);
  }
};

constexpr size_t kXsScalesOffset = 8;
constexpr size_t kXsQsOffset = 32;
constexpr size_t kXsBlockBytes = kXsQsOffset + 8 * 64;
static_assert(kXsBlockBytes == 4 * sizeof(ref::BlockIQ4_XS));

// TBL indices into the decoded scales {s0, s1} (byte 4j + r: sub-block j of
// row r) that put a scale in the top byte of each int32 lane (0xFF reads as
// zero), for SSHR #24 to sign-extend: pair[j][q] the pattern {row 2q, 2q + 1,
// 2q, 2q + 1} of a 2x2 tile.
struct XsScaleIndex {
  uint8_t pair[8][2][16];
};

constexpr XsScaleIndex make_xs_scale_index() {
  XsScaleIndex t{};
  for (int j = 0; j < 8; ++j) {
    for (int lane = 0; lane < 4; ++lane) {
      for (int i = 0; i < 4; ++i) {
        for (int q = 0; q < 2; ++q) t.pair[j][q][4 * lane + i] = i == 3 ? 4 * j + 2 * q + lane % 2 : 0xFF;
      }
    }
  }
  return t;
}
constexpr XsScaleIndex kXsScaleIndex = make_xs_scale_index();

__attribute__((always_inline)) inline int32x4_t scale_lanes(const int8x16x2_t& sc, const uint8_t* index) {
  return vshrq_n_s32(vreinterpretq_s32_s8(vqtbl2q_s8(sc, vld1q_u8(index))), 24);
}

struct IQ4_XS : arm::WeightType<gguf::GgmlType::IQ4_XS, ref::BlockIQ4_XS>, k_quant::NoMinsAdd {
  static constexpr size_t kPackedBlockBytes = kXsBlockBytes;
  static constexpr size_t kRowTileStart = 0;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    arm::pack_iq4_xs_scales(blk, r, out + kXsScalesOffset);
    for (size_t j = 0; j < 8; ++j) {
      uint8_t* row0 = out + kXsQsOffset + 64 * j + 32 * (r / 2) + 8 * (r % 2);
      for (size_t i = 0; i < 16; ++i) row0[16 * (i / 8) + i % 8] = blk.qs[16 * j + i];
    }
  }

  // Sub-block j's codes of both weight pairs, as an IQ4_NL block's.
  __attribute__((always_inline)) static TileWeights codes(const uint8_t* w, size_t j) {
    return IQ4_NL::decode(vdupq_n_f32(0.0f), vld1q_u8_x4(w + kXsQsOffset + 64 * j));
  }

  template <int P>
  __attribute__((always_inline)) static void sums(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                  int32x4_t (&sum)[P][2]) {
    const int8x16x2_t sc = arm::decode_iq4_xs_scale_vectors(w + kXsScalesOffset);
#pragma GCC unroll 1
    for (size_t j = 0; j < 8; ++j) {
      const TileWeights t = codes(w, j);
      const int32x4_t pattern[2] = {scale_lanes(sc, kXsScaleIndex.pair[j][0]),
                                    scale_lanes(sc, kXsScaleIndex.pair[j][1])};
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        const int8x16x4_t x =
            vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + p * pair_bytes + kQ8_KQsOffset + 64 * j));
#pragma GCC unroll 2
        for (int q = 0; q < 2; ++q) sum[p][q] = vmlaq_s32(sum[p][q], smmla_chain4(x, t.w[q]), pattern[q]);
      }
    }
  }

  // acc + the super-block (the row's at a, the tile's at w); a advances to
  // the row's next block.
  __attribute__((always_inline)) static float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w,
                                                              size_t a_stride) {
    const int8x16x2_t sc = arm::decode_iq4_xs_scale_vectors(w + kXsScalesOffset);
    int32x4_t scale[8];  // sub-block j of rows 0..3: 12 widenings for the 8, where TBL took 3 each
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int16x8_t lo = vmovl_s8(vget_low_s8(sc.val[h])), hi = vmovl_high_s8(sc.val[h]);
      scale[4 * h] = vmovl_s16(vget_low_s16(lo));
      scale[4 * h + 1] = vmovl_high_s16(lo);
      scale[4 * h + 2] = vmovl_s16(vget_low_s16(hi));
      scale[4 * h + 3] = vmovl_high_s16(hi);
    }
    int32x4_t sum = vdupq_n_s32(0);
#pragma GCC unroll 8
    for (size_t j = 0; j < 8; ++j) {
      const TileWeights t = codes(w, j);
      const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + kQ8_KQsOffset + 64 * j));
      int32x4_t c0 = smmla_from_zero(x.val[0], t.w[0][0]);
      int32x4_t c1 = smmla_from_zero(x.val[0], t.w[1][0]);
#pragma GCC unroll 3
      for (int g = 1; g < 4; ++g) {
        c0 = vmmlaq_s32(c0, x.val[g], t.w[0][g]);
        c1 = vmmlaq_s32(c1, x.val[g], t.w[1][g]);
      }
      sum = vmlaq_s32(sum, tile_row0(c0, c1), scale[j]);
    }
    const float32x4_t a0 = ld1r_f32_post(a, a_stride);
    return vfmaq_f32(acc, vcvtq_f32_s32(sum), vmulq_f32(load_f16x4(w), a0));
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::interleaved_kernel<BlockTiles<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_8x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulIQ4_XS = arm::interleaved_kernel<SuperBlockTiles<IQ4_XS>>(
    "matmul_f32_q8_k_iq4_xs_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
