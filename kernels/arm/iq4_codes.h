// The codes of IQ4_NL and IQ4_XS on the ARM tiers that decode them with NEON
// (neon, dotprod, i8mm): a 4-bit index into the non-linear code book
// ref::kIQ4Values, looked up with one TBL per 16 codes. The values are the
// reference's int8 codes (-127..113), so the integer sums are its own.
// Header-only, internal linkage, Armv8.0 instructions only: each tier's files
// compile it with their flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>

#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

// The 16 code-book values, the TBL table (GCC hoists the load out of the loops).
__attribute__((always_inline)) inline int8x16_t iq4_table() { return vld1q_s8(ref::kIQ4Values); }

// The values of 16 codes from their nibbles: the low ones of raw for kHalf 0,
// the high ones for 1. Two instructions: AND or USHR, then TBL.
template <size_t kHalf>
__attribute__((always_inline)) inline int8x16_t iq4_codes(int8x16_t table, uint8x16_t raw) {
  const uint8x16_t index = kHalf == 0 ? vandq_u8(raw, vdupq_n_u8(0x0F)) : vshrq_n_u8(raw, 4);
  return vqtbl1q_s8(table, index);
}

}  // namespace
}  // namespace kernels::arm
