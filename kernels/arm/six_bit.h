// Four 6-bit values per byte position in three bytes, for the packed K-quant
// scales and codes of the ARM tiers (neon/packed.h, low_bit_k.h). Header-only,
// internal linkage, Armv8.0 instructions only: each tier's files compile it
// with their flags.
#pragma once

#include <arm_neon.h>

#include <cstdint>

namespace kernels::arm {
namespace {

// Four 6-bit values per byte position packed into three bytes (48 bytes for
// four vectors of 16), so that unpacking costs one AND or USHR per vector and
// three instructions for the fourth:
//   a = u0 << 2 | (u3 & 3),  b = u1 << 2 | (u3 >> 2 & 3),  c = u2 << 2 | (u3 >> 4 & 3)
inline void pack_six_bit(uint8_t u0, uint8_t u1, uint8_t u2, uint8_t u3, uint8_t& a, uint8_t& b, uint8_t& c) {
  a = static_cast<uint8_t>((u0 << 2) | (u3 & 3));
  b = static_cast<uint8_t>((u1 << 2) | ((u3 >> 2) & 3));
  c = static_cast<uint8_t>((u2 << 2) | ((u3 >> 4) & 3));
}

// u3 << 2 (the top six bits) from the three packed vectors.
inline uint8x16_t six_bit_fourth_high(uint8x16_t a, uint8x16_t b, uint8x16_t c) {
  return vsliq_n_u8(vsliq_n_u8(vshlq_n_u8(a, 2), b, 4), c, 6);
}

// u3 (the low six bits) from the three packed vectors.
inline uint8x16_t six_bit_fourth_low(uint8x16_t a, uint8x16_t b, uint8x16_t c) {
  return vandq_u8(vsliq_n_u8(vsliq_n_u8(a, b, 2), c, 4), vdupq_n_u8(0x3F));
}

}  // namespace
}  // namespace kernels::arm
