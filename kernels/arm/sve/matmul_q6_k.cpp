// matmul_f32_q8_k_q6_k_4x16_sve: Q6_K weights x Q8_K activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per
// super-block of 256, kPackedBlockBytes = 3360 = 16 x 210 bytes (no growth):
//   uint16 d[16]                fp16 scales of rows 0..15
//   int8   scales[16][16]       sub-block s (16 elements), row r
//   uint8  bits[2][8][3][16][4] chunk c, quad i, plane e, row r: 4 bytes
// For l < 4 the codes q_e of elements 128c + 32e + 4i + l (e = 0..3) are
// re-packed 4 per 3 bytes: plane e < 3 holds (q_e ^ 32) << 2 | two bits of
// q_3 ^ 32 (bits 5-4 in plane 0, 3-2 in plane 1, 1-0 in plane 2), so that
// int8 4 * (q_e - 32) is one AND for e < 3 and 7 shifts/masks for e = 3 (SVE1
// has no SRI). The 1/4 goes into the activation scale. Missing rows are zero.
//
// LHS (pack_lhs): Q8_K rows (lhs_rows.h), scale multiplied by 1/4.
//
// run (super_block_groups.h): per pass of a group (VL/32 rows), kMr = 4
// activation rows at a time. Per sub-block of 16: 4 quads decoded once for the rows, then per row
// 4 SDOT (indexed) and one MLA by the rows' sub-block scales; per super-block
// and row acc += float(S) * d_w * d_a. m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/super_block_groups.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

constexpr size_t kNr = kGroupRows;
constexpr size_t kBlock = 256;
constexpr size_t kScalesOffset = 2 * kNr;
constexpr size_t kBitsOffset = kScalesOffset + 16 * kNr;
constexpr size_t kPackedBlockBytes = kBitsOffset + 2 * 8 * 3 * 4 * kNr;

// Offset of plane e of quad i of chunk c in a packed super-block.
constexpr size_t plane_offset(size_t c, size_t i, size_t e) { return kBitsOffset + 4 * kNr * (24 * c + 3 * i + e); }

// Codes 4 * (q_e - 32) of one quad (planes at p, rows of the pass).
template <int kE>
inline svint8_t codes(svbool_t pg8, const uint8_t* p) {
  const svbool_t all = svptrue_b8();
  if constexpr (kE < 3) return svreinterpret_s8_u8(svand_n_u8_x(all, svld1_u8(pg8, p + 4 * kNr * kE), 0xFC));
  const svuint8_t r0 = svld1_u8(pg8, p), r1 = svld1_u8(pg8, p + 4 * kNr), r2 = svld1_u8(pg8, p + 8 * kNr);
  const svuint8_t t = svorr_u8_x(all, svlsl_n_u8_x(all, r0, 6), svlsr_n_u8_x(all, svlsl_n_u8_x(all, r1, 6), 2));
  return svreinterpret_s8_u8(svorr_u8_x(all, t, svlsr_n_u8_x(all, svlsl_n_u8_x(all, r2, 6), 4)));
}

struct Q6_K : arm::WeightType<gguf::GgmlType::Q6_K, ref::BlockQ6_K, 0.25f> {
  static constexpr bool kMins = false;
  static constexpr size_t kPackedBlockBytes = sve::kPackedBlockBytes;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    for (size_t s = 0; s < 16; ++s) out[kScalesOffset + kNr * s + r] = static_cast<uint8_t>(blk.scales[s]);
    for (size_t c = 0; c < 2; ++c) {
      for (size_t i = 0; i < 8; ++i) {
        for (size_t l = 0; l < 4; ++l) {
          arm::pack_q6_k_quad(blk, 128 * c + 4 * i + l, 32, out + plane_offset(c, i, 0) + 4 * r + l, 4 * kNr);
        }
      }
    }
  }

  // Sub-block 8c + 2e + ih: quads i = 4 ih .. 4 ih + 3 of plane e. bits: quad
  // 4 ih's planes; x: the rows' codes at 128c + 16 ih.
  template <int R, int kE>
  static void sub_block(svbool_t pg8, svbool_t pg32, const uint8_t* bits, const uint8_t* x, size_t x_row_bytes,
                        svint32_t scale, svint32_t& sum0, svint32_t& sum1, svint32_t& sum2, svint32_t& sum3) {
    const svint8_t c0 = codes<kE>(pg8, bits), c1 = codes<kE>(pg8, bits + 12 * kNr);
    const svint8_t c2 = codes<kE>(pg8, bits + 24 * kNr), c3 = codes<kE>(pg8, bits + 36 * kNr);
#define ROW(i)                                                                                                \
  {                                                                                                           \
    const svint8_t xq = ld1rq_lo8<32 * kE>(x + x_row_bytes * (i));                                            \
    const svint32_t t =                                                                                       \
        sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), c0, xq), c1, xq), c2, xq), c3, xq); \
    sum##i = svmla_s32_x(pg32, sum##i, t, scale);                                                             \
  }
    SVE_ROWS(R, ROW)
#undef ROW
  }

  template <int R>
  __attribute__((always_inline)) static void sums(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* xb,
                                                  size_t x_row_bytes, size_t r0, svint32_t& sum0, svint32_t& sum1,
                                                  svint32_t& sum2, svint32_t& sum3) {
#pragma GCC unroll 1
    for (size_t ci = 0; ci < 4; ++ci) {
      const size_t c = ci / 2, ih = ci % 2;
      const uint8_t* bits = blk + plane_offset(c, 4 * ih, 0) + 4 * r0;
      const uint8_t* xc = xb + 128 * c + 16 * ih;
      const int8_t* sc = reinterpret_cast<const int8_t*>(blk + kScalesOffset + kNr * (8 * c + ih) + r0);
      sub_block<R, 0>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc), sum0, sum1, sum2, sum3);
      sub_block<R, 1>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 2 * kNr), sum0, sum1, sum2, sum3);
      sub_block<R, 2>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 4 * kNr), sum0, sum1, sum2, sum3);
      sub_block<R, 3>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 6 * kNr), sum0, sum1, sum2, sum3);
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ6_K =
    arm::interleaved_kernel<SuperBlockGroups<Q6_K>>("matmul_f32_q8_k_q6_k_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
