// The SDOT pass of the block types (one scale per block of 32: Q4_0 and Q8_0;
// Q4_1, Q5_0, Q5_1 and IQ4_NL fit it too) on the sve tier, over groups.h's
// 16-row groups, for run_groups.
//
// Layout, per block of 32 and group of kGroupRows = 16 rows:
//   uint16 d[16]            fp16 scales of rows 0..15
//   uint8  qs[kQuads][16][4] quad i, row r: the row's code bytes 4i..4i+3
// Missing rows of the last group are zero.
//
// A type gives, as a struct B of force-inlined functions:
//   arm::WeightType<...> as a base (arm/interleaved.h)
//   static constexpr size_t kQuads;        // 4-byte quads of codes a row
//   static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r);
//                       // the codes of row r: quad i at quad0 + 64 i + 4 r
//   static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, ...,
//                      svint8_t& w7);
//                       // the pass's quads: w0..w3 hold elements 4i..4i+3
//                       // (i = 0..3) of each row, w4..w7 elements 16+4i..
// A type with a min (x = d q + m: Q4_1, Q5_1) sets kMin in its WeightType:
// its groups hold uint16 m[16] after d, its activations are Q8_1 rows, and
// the pass adds m_w * s_a per block and row.
// and the pass does the rest: per block, the quads decoded once for the rows,
// then per row 8 SDOT (indexed) into one int32 lane per weight row, one
// convert and one FMA with d_w * d_a. Leftover rows run the same code one at
// a time, with the same float operations per output. m_step 4, n_step 16.
#pragma once

#include <arm_sve.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/arm/interleaved.h"
#include "kernels/arm/sve/groups.h"
#include "kernels/arm/sve/lhs_rows.h"

namespace kernels::sve {
namespace {  // internal linkage, as groups.h

// The row's n quads of bytes at src (4 bytes each) into the group's quads at
// quad0 (quad i at quad0 + 64 i + 4 r), for the types' pack().
inline void pack_quads(const uint8_t* src, size_t n, uint8_t* quad0, size_t r) {
  for (size_t i = 0; i < n; ++i) std::memcpy(quad0 + 4 * kGroupRows * i + 4 * r, src + 4 * i, 4);
}

// The pass's 4 quads at qs, for the types' decode().
__attribute__((always_inline)) inline void load_quads(svbool_t pg8, const uint8_t* qs, svuint8_t& u0, svuint8_t& u1,
                                                      svuint8_t& u2, svuint8_t& u3) {
  u0 = svld1_u8(pg8, qs), u1 = svld1_u8(pg8, qs + 4 * kGroupRows);
  u2 = svld1_u8(pg8, qs + 8 * kGroupRows), u3 = svld1_u8(pg8, qs + 12 * kGroupRows);
}

// The 8 SDOT of a block and row. The order changes GCC 12's register
// allocation: with the halves interleaved (w0 xlo, w4 xhi, w1 xlo, ...) the
// Q4_0 4-row pass ran 7.6% more instructions, with them in order the 1-row
// pass 5.4% more (MOVPRFX copies; kernel_insn under qemu, max and a64fx).
template <int R>
__attribute__((always_inline)) inline svint32_t dot8(svint8_t w0, svint8_t w1, svint8_t w2, svint8_t w3, svint8_t w4,
                                                     svint8_t w5, svint8_t w6, svint8_t w7, svint8_t xlo,
                                                     svint8_t xhi) {
  if constexpr (R == 1) {
    svint32_t sum = sdot_lane<0>(sdot_lane<0>(svdup_s32(0), w0, xlo), w4, xhi);
    sum = sdot_lane<1>(sdot_lane<1>(sum, w1, xlo), w5, xhi);
    sum = sdot_lane<2>(sdot_lane<2>(sum, w2, xlo), w6, xhi);
    return sdot_lane<3>(sdot_lane<3>(sum, w3, xlo), w7, xhi);
  }
  svint32_t sum =
      sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), w0, xlo), w1, xlo), w2, xlo), w3, xlo);
  return sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(sum, w4, xhi), w5, xhi), w6, xhi), w7, xhi);
}

template <class B>
struct BlockGroups : arm::KernelShape<B, std::conditional_t<B::kMin, Q8_1Rows, Q8_0Rows>, 32, kGroupRows, 4,
                                      (B::kMin ? 4 : 2) * kGroupRows + 4 * B::kQuads * kGroupRows> {
  static constexpr size_t kMinOffset = 2 * kGroupRows;
  static constexpr size_t kQsOffset = (B::kMin ? 4 : 2) * kGroupRows;
  static constexpr size_t kRowBlockBytes = B::kMin ? kQ8_1RowBlockBytes : kQ8_0RowBlockBytes;

  static void pack(const typename B::GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    if constexpr (B::kMin) std::memcpy(out + kMinOffset + 2 * r, &blk.m, 2);
    B::pack(blk, out + kQsOffset, r);
  }

  // One pass (weight rows r0 .. of the group at w) for R activation rows at x.
  template <int R>
  static void pass(size_t nb, const uint8_t* x, size_t x_row_bytes, const uint8_t* w, size_t r0, float* y, size_t ldy,
                   size_t cols) {
    const svbool_t pg32 = rows_b32(r0, kGroupRows), pg8 = rows_b8(r0, kGroupRows);
    [[maybe_unused]] svfloat32_t acc0 = svdup_f32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* blk = w + b * BlockGroups::kPackedBlockBytes;
      const uint8_t* xb = x + b * kRowBlockBytes;
      const svfloat32_t dw = load_f16_rows(pg32, blk, r0);
      [[maybe_unused]] svfloat32_t mw;
      if constexpr (B::kMin) mw = load_f16_rows(pg32, blk + kMinOffset, r0);
      svint8_t w0, w1, w2, w3, w4, w5, w6, w7;
      B::decode(pg8, blk + kQsOffset + 4 * r0, w0, w1, w2, w3, w4, w5, w6, w7);
      // Then one row at a time, so that its 2 activation registers fit in
      // z0-z7, the only registers indexed SDOT can read them from.
#define ROW(i)                                                                                 \
  {                                                                                            \
    const uint8_t* xi = xb + x_row_bytes * (i);                                                \
    const svfloat32_t da = ld1rqw_lo8<32>(xi);                                                 \
    const svint8_t xlo = ld1rq_lo8<0>(xi);                                                     \
    const svint8_t xhi = ld1rq_lo8<16>(xi);                                                    \
    const svint32_t sum = dot8<R>(w0, w1, w2, w3, w4, w5, w6, w7, xlo, xhi);                   \
    acc##i = svmla_f32_x(pg32, acc##i, svcvt_f32_s32_x(pg32, sum), svmul_lane_f32(dw, da, 0)); \
    if constexpr (B::kMin) acc##i = svmla_lane_f32(acc##i, mw, da, 1);                         \
  }
      SVE_ROWS(R, ROW)
#undef ROW
    }
    const svbool_t st = rows_b32(r0, cols);
#define ROW_STORE(i) svst1_f32(st, y + ldy * (i) + r0, acc##i);
    SVE_ROWS(R, ROW_STORE)
#undef ROW_STORE
  }

  static constexpr auto run = run_groups<BlockGroups>;
};

}  // namespace
}  // namespace kernels::sve
