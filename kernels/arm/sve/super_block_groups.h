// The SDOT pass of the super-block types (K-quants: Q4_K and Q6_K; Q5_K, Q3_K,
// Q2_K and IQ4_XS fit it too) on the sve tier, over groups.h's 16-row
// groups, for run_groups.
//
// A type gives, as a struct S of force-inlined functions:
//   arm::WeightType<...> as a base (arm/interleaved.h)
//   static constexpr size_t kPackedBlockBytes;  // one super-block of a group
//   static void pack(const GgufBlock& blk, uint8_t* out, size_t r);
//                       // row r into the group's packed super-block at out
//   template <int R> static void sums(svbool_t pg8, svbool_t pg32,
//       const uint8_t* blk, const uint8_t* xb, size_t x_row_bytes, size_t r0,
//       svint32_t& sum0, ..., svint32_t& sum3);
//                       // the R rows' integer sums S over the super-block:
//                       // sub-block scale x SDOT, one lane per weight row
//   static constexpr bool kMins;  // a dmin and mins (Q4_K): then
//   static constexpr size_t kDminOffset;
//   static void mins(svbool_t pg32, const uint8_t* blk, size_t r0,
//                    svint8_t& m03, svint8_t& m47);
//                       // the rows' mins of sub-blocks 0-3 and 4-7, 4 a lane
//   static constexpr bool kMins16;  // optional: 16 mins per 16 elements
//                       // (Q2_K): activations in Q8_K16 rows, and mins()
//                       // gives 4 vectors (sub-blocks 0-3 .. 12-15), M then
//                       // 8 SDOT on the rows' 16-element sums
// and the pass does the rest: per super-block and row, acc += (float(S) *
// d_w [- float(M) * dmin_w]) * d_a, M = sum_j m_j * bsum_j with 4 SDOT on
// the row's split block sums (lhs_rows.h). The 4-row and 1-row forms do the
// same float operations per output. m_step 4, n_step 16.
#pragma once

#include <arm_sve.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/arm/interleaved.h"
#include "kernels/arm/sve/groups.h"
#include "kernels/arm/sve/lhs_rows.h"

namespace kernels::sve {
namespace {  // internal linkage, as groups.h

// M = sum_j m_j * bsum_j of one activation row (its bsums at bs) for each
// weight row: the sums' 7-bit halves against the mins, 4 a lane.
__attribute__((always_inline)) inline svint32_t mins_dot(svbool_t pg32, svint8_t m03, svint8_t m47, svint8_t bs) {
  const svint32_t lo = sdot_lane<1>(sdot_lane<0>(svdup_s32(0), m03, bs), m47, bs);
  const svint32_t hi = sdot_lane<3>(sdot_lane<2>(svdup_s32(0), m03, bs), m47, bs);
  return svadd_s32_x(pg32, lo, svlsl_n_s32_x(pg32, hi, 7));
}

// The same for 16 mins against 16 sums (Q2_K, kMins16).
__attribute__((always_inline)) inline svint32_t mins16_dot(svbool_t pg32, svint8_t m0, svint8_t m1, svint8_t m2,
                                                           svint8_t m3, svint8_t lo, svint8_t hi) {
  const svint32_t l =
      sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), m0, lo), m1, lo), m2, lo), m3, lo);
  const svint32_t h =
      sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), m0, hi), m1, hi), m2, hi), m3, hi);
  return svadd_s32_x(pg32, l, svlsl_n_s32_x(pg32, h, 7));
}

template <class S>
constexpr bool mins16() {
  if constexpr (requires { S::kMins16; }) {
    return S::kMins16;
  } else {
    return false;
  }
}

template <class S>
struct SuperBlockGroups : arm::KernelShape<S, std::conditional_t<mins16<S>(), Q8_K16Rows, Q8_KRows>, 256, kGroupRows, 4,
                                           S::kPackedBlockBytes> {
  static constexpr bool kMins16 = mins16<S>();
  static constexpr size_t kRowBlockBytes = kMins16 ? kQ8_K16RowBlockBytes : kQ8_KRowBlockBytes;
  static_assert(kQ8_KBsumOffset == kQ8_K16BsumOffset);

  static void pack(const typename S::GgufBlock& blk, uint8_t* out, size_t r) { S::pack(blk, out, r); }

  // One pass (weight rows r0 .. of the group at w) for R activation rows at x.
  template <int R>
  static void pass(size_t nb, const uint8_t* x, size_t x_row_bytes, const uint8_t* w, size_t r0, float* y, size_t ldy,
                   size_t cols) {
    const svbool_t pg32 = rows_b32(r0, kGroupRows), pg8 = rows_b8(r0, kGroupRows);
    [[maybe_unused]] svfloat32_t acc0 = svdup_f32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* blk = w + b * S::kPackedBlockBytes;
      const uint8_t* xb = x + b * kRowBlockBytes;
      [[maybe_unused]] svint32_t sum0 = svdup_s32(0), sum1 = sum0, sum2 = sum0, sum3 = sum0;
      S::template sums<R>(pg8, pg32, blk, xb, x_row_bytes, r0, sum0, sum1, sum2, sum3);
      if constexpr (S::kMins) {
        [[maybe_unused]] svint8_t m03, m47, m8b, mcf;  // Q2_K: 0-3, 4-7, 8-11, 12-15
        if constexpr (kMins16) {
          S::mins(pg32, blk, r0, m03, m47, m8b, mcf);
        } else {
          S::mins(pg32, blk, r0, m03, m47);
        }
        const svfloat32_t dw = load_f16_rows(pg32, blk, r0), dmw = load_f16_rows(pg32, blk + S::kDminOffset, r0);
#define ROW(i)                                                                                                     \
  {                                                                                                                \
    const uint8_t* xi = xb + x_row_bytes * (i) + kQ8_KBsumOffset;                                                  \
    svint32_t mins;                                                                                                \
    svfloat32_t da;                                                                                                \
    if constexpr (kMins16) {                                                                                       \
      const svint8_t lo = ld1rq_lo8<0>(xi), hi = ld1rq_lo8<16>(xi);                                                \
      da = ld1rqw_lo8<32>(xi);                                                                                     \
      mins = mins16_dot(pg32, m03, m47, m8b, mcf, lo, hi);                                                         \
    } else {                                                                                                       \
      const svint8_t bs = ld1rq_lo8<0>(xi);                                                                        \
      da = ld1rqw_lo8<16>(xi);                                                                                     \
      mins = mins_dot(pg32, m03, m47, bs);                                                                         \
    }                                                                                                              \
    const svfloat32_t v =                                                                                          \
        svmls_f32_x(pg32, svmul_f32_x(pg32, svcvt_f32_s32_x(pg32, sum##i), dw), svcvt_f32_s32_x(pg32, mins), dmw); \
    acc##i = svmla_lane_f32(acc##i, v, da, 0);                                                                     \
  }
        SVE_ROWS(R, ROW)
#undef ROW
      } else {
        const svfloat32_t dw = load_f16_rows(pg32, blk, r0);
#define ROW(i)                                                                                    \
  {                                                                                               \
    const svfloat32_t da = ld1rqw_lo8<0>(xb + x_row_bytes * (i) + kQ8_KRowScaleOffset);           \
    acc##i = svmla_lane_f32(acc##i, svmul_f32_x(pg32, svcvt_f32_s32_x(pg32, sum##i), dw), da, 0); \
  }
        SVE_ROWS(R, ROW)
#undef ROW
      }
    }
    const svbool_t st = rows_b32(r0, cols);
#define ROW_STORE(i) svst1_f32(st, y + ldy * (i) + r0, acc##i);
    SVE_ROWS(R, ROW_STORE)
#undef ROW_STORE
  }

  static constexpr auto run = run_groups<SuperBlockGroups>;
};

}  // namespace
}  // namespace kernels::sve
