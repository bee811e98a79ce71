// Q3_K on the ARM tiers that decode it with NEON (neon, dotprod, i8mm): the
// packed super-block of 4 rows, its packing in a tier's order and the
// decoding of its codes and scales. Header-only, internal linkage, Armv8.0
// instructions only: each tier's files compile it with their flags.
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

// The code q - 4 (-4..3) of element e of a GGUF Q3_K block as low 2 bits and
// the high bit: the low bits as Q2_K's (blocks.h), the high bit in hmask.
inline void q3_k_code(const ref::BlockQ3_K& b, size_t e, unsigned& low2, unsigned& high) {
  low2 = (b.qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3u;
  high = (b.hmask[e % 32] >> (e / 32)) & 1u;
}

// The codes q - 4 of sub-block kT of a quarter, 16 at a time, from a vector of
// low bits and its 8 high-bit bytes widened (hv: byte k's low nibble for
// bytes k < 8, the high nibble for k + 8): the inverted high bit is the sign
// of the 3-bit two's complement of q - 4, so SHL, SHL, SRI and SSHR #5 give it.
template <unsigned kT>
__attribute__((always_inline)) inline int8x16_t q3_k_codes(uint8x16_t low, uint8x16_t hv) {
  const uint8x16_t lo2 = kT == 3 ? low : vshlq_n_u8(low, 6 - 2 * kT);  // bits 6-7
  const uint8x16_t sign = vshlq_n_u8(hv, 7 - kT);                      // bit 7
  return vshrq_n_s8(vreinterpretq_s8_u8(vsriq_n_u8(sign, lo2, 1)), 5);
}
__attribute__((always_inline)) inline uint8x16_t q3_k_high(const uint8_t* high8) {
  const uint8x8_t h = vld1_u8(high8);
  return vcombine_u8(h, vshr_n_u8(h, 4));
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
  for (size_t e = 0; e < ref::QK_K; ++e) {
    const size_t g = e / 64, t = e % 64 / 16, i = e % 16;
    const auto [v, byte] = Place{}(c, i);
    unsigned low2, high;
    q3_k_code(b, e, low2, high);
    p.low[g][v][byte] = static_cast<uint8_t>(p.low[g][v][byte] | low2 << (2 * t));
    p.high[g][v][byte % 8] = static_cast<uint8_t>(p.high[g][v][byte % 8] | (1u - high) << (t + 4 * (byte / 8)));
  }
}

}  // namespace
}  // namespace kernels::arm
