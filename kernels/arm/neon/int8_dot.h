// Int8 dot-product building blocks of the neon tier (Armv8.0 Advanced SIMD:
// SMULL/SMLAL, ADDP, SADDLP), per column of a 4-column tile:
//
//   Partial dot16(w, a)           one 16-element slice: a partial sum in lanes
//   Partial dot32(w0, a0, w1, a1) two slices (w0.a0 + w1.a1)
//   int32x4_t sum4(p0, p1, p2, p3) [sum of p0's lanes, ..., sum of p3's lanes]
//
// Integer sums are exact: each policy states the largest |w * a| it allows.
#pragma once

#include <arm_neon.h>

#include "kernels/arm/neon/tile.h"

namespace kernels::arm {
namespace {

// For small weight codes: partials in int16 lanes. dot32 puts 4 products in a
// lane, sum4 adds 4 lanes of each of 4 partials pairwise and widens at the end,
// so a lane holds at most 16 products: exact while |w * a| <= 2047 (dot32) or
// 4095 (dot16, 2 products per lane). Q4_0 (8 * 127), Q4_K (15 * 127) and Q6_K
// (32 * 127, dot16) stay inside; activations are 8-bit codes within +-127.
struct NeonSmallCodes {
  using Partial = int16x8_t;
  static Partial dot16(int8x16_t w, int8x16_t a) {
    return vmlal_high_s8(vmull_s8(vget_low_s8(w), vget_low_s8(a)), w, a);
  }
  static Partial dot32(int8x16_t w0, int8x16_t a0, int8x16_t w1, int8x16_t a1) {
    int16x8_t t = vmull_s8(vget_low_s8(w0), vget_low_s8(a0));
    t = vmlal_high_s8(t, w0, a0);
    t = vmlal_s8(t, vget_low_s8(w1), vget_low_s8(a1));
    return vmlal_high_s8(t, w1, a1);
  }
  static int32x4_t sum4(Partial p0, Partial p1, Partial p2, Partial p3) {
    return vpaddlq_s16(vpaddq_s16(vpaddq_s16(p0, p1), vpaddq_s16(p2, p3)));
  }
};

// For full 8-bit weights (Q8_0, |w| <= 128): two products per int16 lane
// (<= 2 * 128 * 127 = 32512), then widened into int32 lanes.
struct NeonWideCodes {
  using Partial = int32x4_t;
  static Partial dot32(int8x16_t w0, int8x16_t a0, int8x16_t w1, int8x16_t a1) {
    const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(a0)), w0, a0);
    const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(w1), vget_low_s8(a1)), w1, a1);
    return vpadalq_s16(vpaddlq_s16(p0), p1);
  }
  static int32x4_t sum4(Partial p0, Partial p1, Partial p2, Partial p3) { return sum_lanes_x4(p0, p1, p2, p3); }
};

// A block of 32 codes of the 4 columns of a tile: elements 0..15 (lo) and
// 16..31 (hi) of each column.
struct ColumnCodes {
  int8x16_t lo[kTileN], hi[kTileN];
};

// The 4 columns' integer sums against activation codes 0..15 (a0) and 16..31
// (a1), by one of the policies above.
template <class Policy>
__attribute__((always_inline)) inline int32x4_t dot_columns(const ColumnCodes& w, int8x16_t a0, int8x16_t a1) {
  return Policy::sum4(Policy::dot32(w.lo[0], a0, w.hi[0], a1), Policy::dot32(w.lo[1], a0, w.hi[1], a1),
                      Policy::dot32(w.lo[2], a0, w.hi[2], a1), Policy::dot32(w.lo[3], a0, w.hi[3], a1));
}

// The Codes and dot of a block type (block_tile.h) whose codes are
// ColumnCodes, summed by Policy.
template <class Policy>
struct ColumnDot {
  using Codes = ColumnCodes;
  __attribute__((always_inline)) static int32x4_t dot(const Codes& w, int8x16_t a0, int8x16_t a1) {
    return dot_columns<Policy>(w, a0, a1);
  }
};

}  // namespace
}  // namespace kernels::arm
