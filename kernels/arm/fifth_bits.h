// The 5-bit codes of Q5_0 and Q5_K on the ARM tiers that decode them with
// NEON (neon, dotprod, i8mm), as q - 16 (-16..15): the low 4 bits from their
// nibbles, the fifth from a plane of inverted fifth bits that each tier's
// packed layout keeps in its own order (q - 16 is Q5_0's own code, and for
// Q5_K arm/neon/k_quants.h says why). Header-only, internal linkage, Armv8.0
// instructions only: each tier's files compile it with their flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

namespace kernels::arm {
namespace {

// The codes q - 16 of 16 elements from their nibbles (the low ones of raw for
// kHalf 0, the high ones for 1) and their inverted fifth bits (bit `bit` of
// each byte of plane): where that bit is set (q < 16) the top four bits are
// ones. Two instructions: CMTST, then BSL or SRI.
template <size_t kHalf>
__attribute__((always_inline)) inline int8x16_t fifth_bit_codes(uint8x16_t raw, uint8x16_t plane, unsigned bit) {
  const uint8x16_t below16 = vtstq_u8(plane, vdupq_n_u8(static_cast<uint8_t>(1u << bit)));
  if constexpr (kHalf == 0) return vreinterpretq_s8_u8(vbslq_u8(vdupq_n_u8(0x0F), raw, below16));
  return vreinterpretq_s8_u8(vsriq_n_u8(below16, raw, 4));
}

// The codes q (0..31) themselves, from the same nibbles and plane (Q5_1 on
// the i8mm tier, where SMMLA takes them as they are): the fifth bit where the
// inverted one is clear. Three instructions: CMTST, BIC, then BSL or SRI.
template <size_t kHalf>
__attribute__((always_inline)) inline int8x16_t fifth_bit_codes_q(uint8x16_t raw, uint8x16_t plane, unsigned bit) {
  const uint8x16_t below16 = vtstq_u8(plane, vdupq_n_u8(static_cast<uint8_t>(1u << bit)));
  const uint8x16_t fifth = vbicq_u8(vdupq_n_u8(0x10), below16);
  if constexpr (kHalf == 0) return vreinterpretq_s8_u8(vbslq_u8(vdupq_n_u8(0x0F), raw, fifth));
  return vreinterpretq_s8_u8(vsriq_n_u8(fifth, raw, 4));
}

// One plane of the inverted fifth bits of the 4 rows' Q5_0 blocks of a group
// (qh[c]: row c's 4 qh bytes, bit e % 8 of byte e / 8 for element e): byte i,
// bit b holds that of element e of row c, where (i, b) = place(c, e).
template <class Place>
inline void pack_fifth_bit_plane(const uint8_t* const* qh, uint8_t* plane, Place place) {
  for (size_t i = 0; i < 16; ++i) plane[i] = 0;
  for (size_t c = 0; c < 4; ++c) {
    for (size_t e = 0; e < 32; ++e) {
      const auto [i, b] = place(c, e);
      const unsigned inverted = (~static_cast<unsigned>(qh[c][e / 8]) >> (e % 8)) & 1u;
      plane[i] = static_cast<uint8_t>(plane[i] | inverted << b);
    }
  }
}

}  // namespace
}  // namespace kernels::arm
