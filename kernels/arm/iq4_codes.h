// The codes of IQ4_NL and IQ4_XS on the ARM tiers that decode them with NEON
// (neon, dotprod, i8mm): a 4-bit index into the non-linear code book
// ref::kIQ4Values, looked up with one TBL per 16 codes. The values are the
// reference's int8 codes (-127..113), so the integer sums are its own. And
// IQ4_XS's 6-bit sub-block scales in the neon and dotprod tiers' packed
// groups. Header-only, internal linkage, Armv8.0 instructions only: each
// tier's files compile it with their flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

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

// IQ4_XS's scales ls - 32 (-32..31) of the 4 rows of a group, as the quarters
// of the super-block take them: v[8q + 4h + c] (= v[4j + c]) is sub-block
// j = 2q + h of row c.
struct IQ4XSScales {
  int8_t v[32];
};

// The 32 scales of a group or tile of 4 rows bit-packed in 24 bytes, each as
// 6-bit two's complement s = ls ^ 32 (= ls - 32), in IQ4XSScales' order
// (s[4j + r]: sub-block j of row r), s0 the first 16 and s1 the last 16:
//   a[i] = s0[i] << 2 | (s1[i] & 3)                 16 bytes
//   b[i] = (s1[i] >> 2) | (s1[i + 8] >> 2) << 4     8 bytes
// Row r's bits of them, ORed into out (zeroed before: a missing row's scales
// stay 0).
inline void pack_iq4_xs_scales(const ref::BlockIQ4_XS& blk, size_t r, uint8_t* out) {
  for (size_t j = 0; j < 8; ++j) {
    const size_t i = 4 * j + r;
    const unsigned s = ref::iq4_xs_scale(blk, j) ^ 32u;
    if (i < 16) {
      out[i] = static_cast<uint8_t>(out[i] | s << 2);
    } else {
      out[i - 16] = static_cast<uint8_t>(out[i - 16] | (s & 3));
      out[16 + (i - 16) % 8] = static_cast<uint8_t>(out[16 + (i - 16) % 8] | (s >> 2) << (4 * ((i - 16) / 8)));
    }
  }
}

// The scales s0, s1 as int8 from their 24 bytes: s0 with one SSHR; s1 << 2
// rebuilt with SHL and SLI from a's low bits and b's nibbles, then one SSHR
// (7 instructions and 2 loads for the 32).
__attribute__((always_inline)) inline int8x16x2_t decode_iq4_xs_scale_vectors(const uint8_t* packed) {
  const int8x16_t a = vld1q_s8(reinterpret_cast<const int8_t*>(packed));
  const uint8x8_t b = vld1_u8(packed + 16);
  const uint8x16_t high = vcombine_u8(vand_u8(b, vdup_n_u8(0x0F)), vshr_n_u8(b, 4));
  const uint8x16_t s1 = vsliq_n_u8(vreinterpretq_u8_s8(vshlq_n_s8(a, 2)), high, 4);
  return {vshrq_n_s8(a, 2), vshrq_n_s8(vreinterpretq_s8_u8(s1), 2)};
}

// The same, in memory for the quarters, once per super-block.
__attribute__((always_inline)) inline IQ4XSScales decode_iq4_xs_scales(const uint8_t* packed) {
  const int8x16x2_t v = decode_iq4_xs_scale_vectors(packed);
  IQ4XSScales r;
  vst1q_s8(r.v, v.val[0]);
  vst1q_s8(r.v + 16, v.val[1]);
  return r;
}

// The scales of sub-blocks 2q (even) and 2q + 1 (odd) of the 4 rows, as int32
// lanes by row.
struct IQ4XSPairScales {
  int32x4_t even, odd;
};
__attribute__((always_inline)) inline IQ4XSPairScales iq4_xs_pair_scales(const IQ4XSScales& s, size_t q) {
  const int16x8_t sc = vmovl_s8(vld1_s8(s.v + 8 * q));
  return {vmovl_s16(vget_low_s16(sc)), vmovl_high_s16(sc)};
}

}  // namespace
}  // namespace kernels::arm
