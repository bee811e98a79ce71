// matmul_f32_q8_0_iq4_nl_4x16_sve and matmul_f32_q8_k_iq4_xs_4x16_sve: IQ4_NL
// weights x Q8_0 activations and IQ4_XS x Q8_K, with SVE SDOT. The 4-bit
// indices of both decode with AND or LSR and one TBL into the code book
// ref::kIQ4Values (held in every 128-bit segment; indices stay below 16, so
// the lookup reads the first), giving the reference's int8 codes.
//
// Features: SVE (SDOT indexed and TBL are in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// IQ4_NL (block_groups.h): 4 quads a row, its qs bytes as they are,
// kPackedBlockBytes = 288 = 16 x 18 bytes (no growth). LHS: Q8_0 rows.
//
// IQ4_XS (super_block_groups.h): groups of kGroupRows = 16 rows, per
// super-block of 256, kPackedBlockBytes = 2176 = 16 x 136 bytes (no growth):
//   uint16 d[16]               fp16 scales of rows 0..15
//   uint8  scales_l[16][4]     row r: its scales_l (a 32-bit lane)
//   uint16 scales_h[16]        row r: its scales_h
//   uint8  qs[8][4][16][4]     sub-block j, quad i, row r: the row's qs bytes
//                              16j+4i..16j+4i+3 (low nibbles: elements
//                              32j+4i.., high: 32j+16+4i..)
// The scales ls_j - 32 of a pass's rows unpack in its lanes, 7 instructions a
// sub-block (the low nibble of scales_l, 2 bits of scales_h, each shifted on
// for the next sub-block).
// LHS: Q8_K rows (lhs_rows.h).
//
// run: per block or sub-block of 32, 4 quad loads, 8 AND/LSR and 8 TBL shared
// by the rows, then per row 8 SDOT (indexed); IQ4_XS adds one MLA by the
// rows' sub-block scales, and per super-block acc += float(S) * d_w * d_a.
// m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/super_block_groups.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

constexpr size_t kNr = kGroupRows;

// The code-book values of the 32 elements of 4 quads at qs (low nibbles in
// w0..w3, high in w4..w7).
__attribute__((always_inline)) inline void iq4_decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                      svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                      svint8_t& w6, svint8_t& w7) {
  const svbool_t all = svptrue_b8();
  const svint8_t table = svld1rq_s8(all, ref::kIQ4Values);
  svuint8_t u0, u1, u2, u3;
  load_quads(pg8, qs, u0, u1, u2, u3);
  w0 = svtbl_s8(table, svand_n_u8_x(all, u0, 0x0F)), w1 = svtbl_s8(table, svand_n_u8_x(all, u1, 0x0F));
  w2 = svtbl_s8(table, svand_n_u8_x(all, u2, 0x0F)), w3 = svtbl_s8(table, svand_n_u8_x(all, u3, 0x0F));
  w4 = svtbl_s8(table, svlsr_n_u8_x(all, u0, 4)), w5 = svtbl_s8(table, svlsr_n_u8_x(all, u1, 4));
  w6 = svtbl_s8(table, svlsr_n_u8_x(all, u2, 4)), w7 = svtbl_s8(table, svlsr_n_u8_x(all, u3, 4));
}

struct IQ4_NL : arm::WeightType<gguf::GgmlType::IQ4_NL, ref::BlockIQ4_NL> {
  static constexpr size_t kQuads = 4;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) { pack_quads(blk.qs, 4, quad0, r); }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    iq4_decode(pg8, qs, w0, w1, w2, w3, w4, w5, w6, w7);
  }
};

struct IQ4_XS : arm::WeightType<gguf::GgmlType::IQ4_XS, ref::BlockIQ4_XS> {
  static constexpr bool kMins = false;
  static constexpr size_t kScalesLOffset = 2 * kNr;
  static constexpr size_t kScalesHOffset = kScalesLOffset + 4 * kNr;
  static constexpr size_t kQsOffset = kScalesHOffset + 2 * kNr;
  static constexpr size_t kPackedBlockBytes = kQsOffset + 8 * 16 * kNr;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    std::memcpy(out + kScalesLOffset + 4 * r, blk.scales_l, 4);
    std::memcpy(out + kScalesHOffset + 2 * r, &blk.scales_h, 2);
    for (size_t j = 0; j < 8; ++j) pack_quads(blk.qs + 16 * j, 4, out + kQsOffset + 16 * kNr * j, r);
  }

  template <int R>
  __attribute__((always_inline)) static void sums(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* xb,
                                                  size_t x_row_bytes, size_t r0, svint32_t& sum0, svint32_t& sum1,
                                                  svint32_t& sum2, svint32_t& sum3) {
    svuint32_t lo = svld1_u32(pg32, reinterpret_cast<const uint32_t*>(blk + kScalesLOffset) + r0);
    svuint32_t hi = svld1uh_u32(pg32, reinterpret_cast<const uint16_t*>(blk + kScalesHOffset) + r0);
#pragma GCC unroll 1
    for (size_t j = 0; j < 8; ++j) {
      svint8_t w0, w1, w2, w3, w4, w5, w6, w7;
      iq4_decode(pg8, blk + kQsOffset + 16 * kNr * j + 4 * r0, w0, w1, w2, w3, w4, w5, w6, w7);
      const svuint32_t ls =
          svorr_u32_x(pg32, svand_n_u32_x(pg32, lo, 0x0F), svlsl_n_u32_x(pg32, svand_n_u32_x(pg32, hi, 3), 4));
      const svint32_t scale = svsub_n_s32_x(pg32, svreinterpret_s32_u32(ls), 32);
      lo = svlsr_n_u32_x(pg32, lo, 4), hi = svlsr_n_u32_x(pg32, hi, 2);
      const uint8_t* xj = xb + 32 * j;
#define ROW(i)                                                                                    \
  {                                                                                               \
    const uint8_t* xi = xj + x_row_bytes * (i);                                                   \
    const svint8_t xlo = ld1rq_lo8<0>(xi), xhi = ld1rq_lo8<16>(xi);                               \
    sum##i = svmla_s32_x(pg32, sum##i, dot8<R>(w0, w1, w2, w3, w4, w5, w6, w7, xlo, xhi), scale); \
  }
      SVE_ROWS(R, ROW)
#undef ROW
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulIQ4_NL =
    arm::interleaved_kernel<BlockGroups<IQ4_NL>>("matmul_f32_q8_0_iq4_nl_4x16_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulIQ4_XS =
    arm::interleaved_kernel<SuperBlockGroups<IQ4_XS>>("matmul_f32_q8_k_iq4_xs_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
