// K-quant pieces shared by the packed Q4_K and Q6_K layouts of the ARM tiers
// (arm/neon and arm/dotprod matmul_q4_k.cpp, matmul_q6_k.cpp, through
// super_block_tile.h). Header-only, internal linkage, Armv8.0 instructions
// only (see tile.h).
//
// The two tiers' packed super-blocks have the same fields; the codes differ in
// order only (each tier's file documents its layout).
//
// Q4_K scales in a packed group: the 6-bit scale sc and min m of sub-block s
// (0..7) of row c, unpacked from the GGUF 12-byte form and bit-packed with
// pack_six_bit (packed.h) as four vectors of bytes 4s' + c:
//   u0 = sc of sub-blocks 0-3, u1 = sc 4-7, u2 = m 0-3, u3 = m 4-7
// 48 bytes for 4 rows, as in the file.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

struct Q4KPacked {
  uint16_t d[kTileN];
  uint16_t dmin[kTileN];
  uint8_t scales[3][16];  // below
  uint8_t qs[4][128];     // the 4-bit codes, in the tier's order
};
static_assert(sizeof(Q4KPacked) == kTileN * sizeof(ref::BlockQ4_K));

struct Q6KPacked {
  uint16_t d[kTileN];
  int8_t scales[4][16];      // scales[g][4t + c]: sub-block 4g + t of row c
  uint8_t codes[16][3][16];  // pack_six_bit vectors (packed.h), in the tier's order
};
static_assert(sizeof(Q6KPacked) == kTileN * sizeof(ref::BlockQ6_K));

inline void pack_q4_k_scales(const ref::BlockQ4_K* const* blk, uint8_t (*out)[16]) {
  uint8_t u[4][16];
  for (size_t c = 0; c < kTileN; ++c) {
    for (size_t s = 0; s < ref::kKSubBlocks; ++s) {
      uint8_t sc, m;
      ref::unpack_k_scale_min(blk[c]->scales, s, sc, m);
      u[s / 4][4 * (s % 4) + c] = sc;
      u[2 + s / 4][4 * (s % 4) + c] = m;
    }
  }
  for (size_t i = 0; i < 16; ++i) pack_six_bit(u[0][i], u[1][i], u[2][i], u[3][i], out[0][i], out[1][i], out[2][i]);
}

// The scales of sub-blocks 2q and 2q + 1 of the 4 rows, as int32 lanes: bytes
// 8q.. of u0 | u1, which sit in the top six bits of the first two vectors.
struct SubBlockPairScales {
  int32x4_t even, odd;
};
inline SubBlockPairScales q4_k_pair_scales(const uint8_t (*scales)[16], size_t q) {
  const uint16x8_t sc16 = vmovl_u8(vshr_n_u8(vld1_u8(scales[0] + 8 * q), 2));
  return {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(sc16))), vreinterpretq_s32_u32(vmovl_high_u16(sc16))};
}

// The mins by sub-block: mins[h] holds sub-blocks 2h (lanes 0-3, by row) and
// 2h + 1 (lanes 4-7).
struct Q4KMins {
  int16x8_t pair[4];
};
inline Q4KMins q4_k_mins(const uint8_t (*scales)[16]) {
  const uint8x16_t a = vld1q_u8(scales[0]), b = vld1q_u8(scales[1]), c = vld1q_u8(scales[2]);
  const uint8x16_t lo = vshrq_n_u8(c, 2), hi = six_bit_fourth_low(a, b, c);
  return {{vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(lo))), vreinterpretq_s16_u16(vmovl_high_u8(lo)),
           vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(hi))), vreinterpretq_s16_u16(vmovl_high_u8(hi))}};
}

// sum_s m[s][c] * (bsums[2s] + bsums[2s + 1]) for the 4 rows c.
inline int32x4_t q4_k_mins_dot(const Q4KMins& mins, const ref::BlockQ8_K& xb) {
  const int16x8_t sub = vpaddq_s16(vld1q_s16(xb.bsums), vld1q_s16(xb.bsums + 8));  // sums of 32 codes
  int32x4_t s = vmull_laneq_s16(vget_low_s16(mins.pair[0]), sub, 0);
  s = vmlal_high_laneq_s16(s, mins.pair[0], sub, 1);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[1]), sub, 2);
  s = vmlal_high_laneq_s16(s, mins.pair[1], sub, 3);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[2]), sub, 4);
  s = vmlal_high_laneq_s16(s, mins.pair[2], sub, 5);
  s = vmlal_laneq_s16(s, vget_low_s16(mins.pair[3]), sub, 6);
  return vmlal_high_laneq_s16(s, mins.pair[3], sub, 7);
}

// The 6-bit codes 0..63 of the 16 elements 16s .. 16s + 15 of a GGUF Q6_K
// block (blocks.h): in its 128-element chunk s / 8, element group r = s % 8
// takes the low (r < 4) or high nibble of ql[16 (r % 4)..] and two bits of
// qh[16 (r % 2)..] at bit 2 (r / 2).
inline uint8x16_t q6_k_codes16(const ref::BlockQ6_K& b, size_t s) {
  const size_t r = s % 8;
  const uint8x16_t l = vld1q_u8(b.ql + 64 * (s / 8) + 16 * (r % 4));
  const uint8x16_t h = vld1q_u8(b.qh + 32 * (s / 8) + 16 * (r % 2));
  const uint8x16_t six = vdupq_n_u8(0x3F);
  switch (r / 2) {
    case 0:
      return vandq_u8(vsliq_n_u8(l, h, 4), six);  // qh bits 0-1 over the low nibble
    case 1:
      return vandq_u8(vsliq_n_u8(l, vshrq_n_u8(h, 2), 4), six);  // bits 2-3
    case 2:
      return vandq_u8(vsriq_n_u8(h, l, 4), six);  // bits 4-5 over the high nibble
    default:
      return vsriq_n_u8(vshrq_n_u8(h, 2), l, 4);  // bits 6-7
  }
}

// The fields of a Q4KPacked but its codes, from the 4 rows' super-blocks.
inline void pack_q4_k_header(const uint8_t* const* blocks, const ref::BlockQ4_K** blk, Q4KPacked& p) {
  for (size_t c = 0; c < kTileN; ++c) {
    blk[c] = reinterpret_cast<const ref::BlockQ4_K*>(blocks[c]);
    p.d[c] = blk[c]->d;
    p.dmin[c] = blk[c]->dmin;
  }
  pack_q4_k_scales(blk, p.scales);
}

// The fields of a Q6KPacked but its codes.
inline void pack_q6_k_header(const uint8_t* const* blocks, const ref::BlockQ6_K** blk, Q6KPacked& p) {
  for (size_t c = 0; c < kTileN; ++c) {
    blk[c] = reinterpret_cast<const ref::BlockQ6_K*>(blocks[c]);
    p.d[c] = blk[c]->d;
    for (size_t s = 0; s < ref::QK_K / 16; ++s) p.scales[s / 4][4 * (s % 4) + c] = blk[c]->scales[s];
  }
}

// The scales of sub-blocks 4g .. 4g + 3 of the 4 rows: sc[t] by row.
struct Q6KQuarterScales {
  int32x4_t sc[4];
};
__attribute__((always_inline)) inline Q6KQuarterScales q6_k_quarter_scales(const Q6KPacked& p, size_t g) {
  const int8x16_t sc8 = vld1q_s8(p.scales[g]);
  const int16x8_t lo = vmovl_s8(vget_low_s8(sc8)), hi = vmovl_high_s8(sc8);
  return {{vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)), vmovl_high_s16(hi)}};
}

// How super_block_tile.h takes the mins of Q4KPacked (Q4_K, and Q5_K's
// identical scales), and that Q6_K has none.
struct Q4KMinsDecode {
  static constexpr bool kMins = true;
  __attribute__((always_inline)) static Q4KMins mins(const Q4KPacked& p) { return q4_k_mins(p.scales); }
  __attribute__((always_inline)) static int32x4_t mins_dot(const Q4KMins& m, const ref::BlockQ8_K& xb) {
    return q4_k_mins_dot(m, xb);
  }
};
struct NoMins {
  static constexpr bool kMins = false;
};

}  // namespace
}  // namespace kernels::arm
