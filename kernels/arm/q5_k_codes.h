// Q5_K's codes on the ARM tiers that decode them with NEON (neon, dotprod,
// i8mm): q - 16 (-16..15) from the low 4 bits and the inverted fifth bit that
// each tier's packed layout keeps (arm/neon/k_quants.h says why q - 16).
// Header-only, internal linkage, Armv8.0 instructions only: each tier's files
// compile it with their flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>

namespace kernels::arm {
namespace {

// Q5_K's codes q - 16 of 16 elements from their nibbles (the low ones of raw
// for sub-block 2q, kHalf 0, the high ones for 2q + 1) and their inverted
// fifth bits (bit `bit` of plane): where that bit is set (q < 16) the top four
// bits are ones. Two instructions: CMTST, then BSL or SRI.
template <size_t kHalf>
__attribute__((always_inline)) inline int8x16_t q5_k_codes(uint8x16_t raw, uint8x16_t plane, unsigned bit) {
  const uint8x16_t below16 = vtstq_u8(plane, vdupq_n_u8(static_cast<uint8_t>(1u << bit)));
  if constexpr (kHalf == 0) return vreinterpretq_s8_u8(vbslq_u8(vdupq_n_u8(0x0F), raw, below16));
  return vreinterpretq_s8_u8(vsriq_n_u8(below16, raw, 4));
}

}  // namespace
}  // namespace kernels::arm
