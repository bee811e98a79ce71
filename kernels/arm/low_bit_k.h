// Q2_K and Q3_K, the K-quants of 2 and 3 bits, on the ARM tiers that decode
// them with NEON (neon, dotprod, i8mm): the packed super-blocks of 4 rows,
// their packing in a tier's order and the decoding of their codes, scales and
// (Q2_K) mins. Header-only, internal linkage, Armv8.0 instructions only: each
// tier's files compile it with their flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/six_bit.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

// The scales of sub-blocks 4g .. 4g + 3 of the 4 rows: sc[t] by row (Q3_K, Q6_K).
struct Q6KQuarterScales {
  int32x4_t sc[4];
};
// From 16 int8 scales sc8[4t + c] (sub-block 4g + t of row c).
__attribute__((always_inline)) inline Q6KQuarterScales quarter_scales(int8x16_t sc8) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(sc8)), hi = vmovl_high_s8(sc8);
  return {{vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo), vmovl_s16(vget_low_s16(hi)), vmovl_high_s16(hi)}};
}

// Q3_K's packed super-block of a group (4 x 110 bytes): the 64 six-bit
// scales sc - 32 (6-bit two's complement sc ^ 32) bit-packed by pack_six_bit
// (packed.h) as u_g[4t + c] = sub-block 4g + t of row c; then per quarter g
// four 16-byte vectors of low code bits (bits 2t, 2t + 1 of a byte: sub-block
// 4g + t) and, for each, 8 bytes of inverted high bits (bit t of byte k: byte
// k of the vector, bit 4 + t: byte k + 8). Which element of which row a byte
// of vector v holds is the tier's order (Place: (row c, element i) -> (v, byte)).
struct Q3KPacked {
  uint16_t d[4];
  uint8_t scales[3][16];
  uint8_t low[4][4][16];
  uint8_t high[4][4][8];
};
static_assert(sizeof(Q3KPacked) == 4 * sizeof(ref::BlockQ3_K));

// Bits 0-1 of the code of element e of a GGUF Q2_K or Q3_K block (blocks.h).
inline unsigned two_bit_code(const uint8_t* qs, size_t e) { return (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3u; }

// The low two code bits of a super-block's 4 quarters in a tier's order: per
// quarter g four 16-byte vectors, bits 2t, 2t + 1 of a byte from sub-block
// 4g + t; Place (row c, element i of a sub-block) -> (vector, byte).
using TwoBitPlanes = uint8_t[4][4][16];
template <class Place>
inline void pack_two_bit_codes(const uint8_t* qs, size_t c, TwoBitPlanes& low) {
  for (size_t e = 0; e < ref::QK_K; ++e) {
    const auto [v, byte] = Place{}(c, e % 16);
    low[e / 64][v][byte] = static_cast<uint8_t>(low[e / 64][v][byte] | two_bit_code(qs, e) << (2 * (e % 64 / 16)));
  }
}

// The codes q - 4 of sub-block kT of a quarter, 16 at a time, from a vector of
// low bits and its 8 high-bit bytes loaded twice (hv = q3_k_high): the
// inverted high bit s (bit kT of byte k < 8, bit 4 + kT of byte k) makes q - 4
// = l - 4 s for the low bits l, so CMTST gives s as 0 or -1 (bits 2-7 of q - 4)
// and SRI puts l below them: 3 instructions (2 for kT = 3, whose low bits are
// already bits 6-7), and one LD1R for the high bits.
template <unsigned kT>
__attribute__((always_inline)) inline int8x16_t q3_k_codes(uint8x16_t low, uint8x16_t hv) {
  const uint8x16_t bit = vcombine_u8(vdup_n_u8(1u << kT), vdup_n_u8(16u << kT));
  const uint8x16_t lo2 = kT == 3 ? low : vshlq_n_u8(low, 6 - 2 * kT);  // bits 6-7
  return vreinterpretq_s8_u8(vsriq_n_u8(vtstq_u8(hv, bit), lo2, 6));
}
__attribute__((always_inline)) inline uint8x16_t q3_k_high(const uint8_t* high8) {
  return vreinterpretq_u8_u64(vld1q_dup_u64(reinterpret_cast<const uint64_t*>(high8)));
}

// The scales of a Q3KPacked as int8: sc[g][4t + c], sub-block 4g + t of row
// c, decoded once per super-block.
struct Q3KScales {
  int8_t sc[4][16];
};
__attribute__((always_inline)) inline Q3KScales decode_q3_k_scales(const Q3KPacked& p) {
  const uint8x16_t a = vld1q_u8(p.scales[0]), b = vld1q_u8(p.scales[1]), c = vld1q_u8(p.scales[2]);
  Q3KScales s;
  vst1q_s8(s.sc[0], vshrq_n_s8(vreinterpretq_s8_u8(a), 2));
  vst1q_s8(s.sc[1], vshrq_n_s8(vreinterpretq_s8_u8(b), 2));
  vst1q_s8(s.sc[2], vshrq_n_s8(vreinterpretq_s8_u8(c), 2));
  vst1q_s8(s.sc[3], vshrq_n_s8(vreinterpretq_s8_u8(six_bit_fourth_high(a, b, c)), 2));
  return s;
}

// Row c's part of a Q3KPacked (zeroed before), its codes in the tier's order
// Place (row c, element i of a sub-block) -> (vector, byte).
template <class Place>
inline void pack_q3_k_row(const ref::BlockQ3_K& b, size_t c, Q3KPacked& p) {
  p.d[c] = b.d;
  uint8_t u[4][4];  // u[g][t]: sub-block 4g + t, as 6-bit two's complement
  for (size_t j = 0; j < 16; ++j) u[j / 4][j % 4] = static_cast<uint8_t>(ref::q3_k_scale(b.scales, j) ^ 32);
  for (size_t t = 0; t < 4; ++t) {
    pack_six_bit(u[0][t], u[1][t], u[2][t], u[3][t], p.scales[0][4 * t + c], p.scales[1][4 * t + c],
                 p.scales[2][4 * t + c]);
  }
  pack_two_bit_codes<Place>(b.qs, c, p.low);
  for (size_t e = 0; e < ref::QK_K; ++e) {  // the third bit, inverted, in hmask (blocks.h)
    const size_t t = e % 64 / 16;
    const auto [v, byte] = Place{}(c, e % 16);
    const unsigned high = (b.hmask[e % 32] >> (e / 32)) & 1u;
    p.high[e / 64][v][byte % 8] = static_cast<uint8_t>(p.high[e / 64][v][byte % 8] | (1u - high) << (t + 4 * (byte / 8)));
  }
}

// Q2_K's packed super-block of a group (4 x 84 bytes): d and dmin of the 4
// rows; the scale bytes as in the file (the scale in the low nibble, the min
// in the high) ordered scales[g][4t + c] = sub-block 4g + t of row c; the
// codes 0..3 in Q3KPacked's low bits.
struct Q2KPacked {
  uint16_t d[4];
  uint16_t dmin[4];
  uint8_t scales[4][16];
  uint8_t low[4][4][16];
};
static_assert(sizeof(Q2KPacked) == 4 * sizeof(ref::BlockQ2_K));

// Row c's part of a Q2KPacked (zeroed before), its codes in the tier's Place.
template <class Place>
inline void pack_q2_k_row(const ref::BlockQ2_K& b, size_t c, Q2KPacked& p) {
  p.d[c] = b.d;
  p.dmin[c] = b.dmin;
  for (size_t j = 0; j < 16; ++j) p.scales[j / 4][4 * (j % 4) + c] = b.scales[j];
  pack_two_bit_codes<Place>(b.qs, c, p.low);
}

// The codes 0..3 of sub-block kT of a quarter, 16 at a time.
template <unsigned kT>
__attribute__((always_inline)) inline int8x16_t q2_k_codes(uint8x16_t low) {
  if constexpr (kT == 3) return vreinterpretq_s8_u8(vshrq_n_u8(low, 6));
  if constexpr (kT == 0) return vreinterpretq_s8_u8(vandq_u8(low, vdupq_n_u8(3)));
  return vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(low, 2 * kT), vdupq_n_u8(3)));
}

// The scales of quarter g (sub-blocks 4g .. 4g + 3) by row.
__attribute__((always_inline)) inline Q6KQuarterScales q2_k_quarter_scales(const Q2KPacked& p, size_t g) {
  return quarter_scales(vreinterpretq_s8_u8(vandq_u8(vld1q_u8(p.scales[g]), vdupq_n_u8(0x0F))));
}

// Two sub-blocks' values of the 4 rows: lanes 0-3 sub-block 2h by row, lanes
// 4-7 sub-block 2h + 1.
struct SubBlockPair {
  int16x8_t v;
};
// acc + pair * (lane kL of sums, lane kL + 1): the pair's two sub-blocks
// weighted by their sums, by row.
template <int kL>
__attribute__((always_inline)) inline int32x4_t pair_dot(int32x4_t acc, SubBlockPair pair, int16x8_t sums) {
  return vmlal_high_laneq_s16(vmlal_laneq_s16(acc, vget_low_s16(pair.v), sums, kL), pair.v, sums, kL + 1);
}

// Q2_K's mins by sub-block pair, and sum_s m_s * bsums_s by row (the mins
// term of a super-block against a Q8_K row).
struct Q2KMins {
  SubBlockPair pair[8];
};
__attribute__((always_inline)) inline Q2KMins q2_k_mins(const Q2KPacked& p) {
  Q2KMins m;
#pragma GCC unroll 4
  for (size_t g = 0; g < 4; ++g) {
    const uint8x16_t raw = vshrq_n_u8(vld1q_u8(p.scales[g]), 4);
    m.pair[2 * g] = {vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(raw)))};
    m.pair[2 * g + 1] = {vreinterpretq_s16_u16(vmovl_high_u8(raw))};
  }
  return m;
}
__attribute__((always_inline)) inline int32x4_t q2_k_mins_dot(const Q2KMins& m, const ref::BlockQ8_K& xb) {
  const int16x8_t lo = vld1q_s16(xb.bsums), hi = vld1q_s16(xb.bsums + 8);
  int32x4_t s = pair_dot<0>(vdupq_n_s32(0), m.pair[0], lo);
  s = pair_dot<2>(s, m.pair[1], lo);
  s = pair_dot<4>(s, m.pair[2], lo);
  s = pair_dot<6>(s, m.pair[3], lo);
  s = pair_dot<0>(s, m.pair[4], hi);
  s = pair_dot<2>(s, m.pair[5], hi);
  s = pair_dot<4>(s, m.pair[6], hi);
  return pair_dot<6>(s, m.pair[7], hi);
}

}  // namespace
}  // namespace kernels::arm
