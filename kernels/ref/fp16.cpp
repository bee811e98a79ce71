// IEEE binary16 <-> binary32 by bit manipulation, giving what the hardware
// converters give (x86 F16C vcvtph2ps/vcvtps2ph, ARM fcvt with FPCR.DN = 0, the
// Linux default): round to nearest even, subnormal halves kept, overflow to
// infinity, NaNs quieted with their top payload bits kept.
//
// ggml's portable fallback differs only on NaN inputs (it returns the default
// NaN 0x7e00 with the sign), which never occur in model files.
#include "kernels/ref/fp16.h"

namespace kernels::ref {
namespace {

constexpr uint32_t kF32SignBit = 0x80000000u;
constexpr uint32_t kF32ExpMask = 0x7f800000u;
constexpr uint32_t kF32QuietBit = 0x00400000u;
constexpr uint16_t kF16ExpMask = 0x7c00;
constexpr uint16_t kF16QuietBit = 0x0200;
// fp32 exponent bias 127 minus fp16 bias 15, in exponent-field position.
constexpr uint32_t kRebias = uint32_t{127 - 15} << 23;
// |f| >= 65520 (the midpoint between the largest half, 65504, and 2^16) rounds
// to infinity: the tie goes to the even neighbour, which is 2^16.
constexpr uint32_t kF16OverflowBits = 0x477ff000u;
// |f| >= 2^-14: normal halves.
constexpr uint32_t kF16MinNormalBits = 0x38800000u;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Shifts `value` right by `shift` (1..31) rounding to nearest, ties to even.
uint32_t shift_right_round_even(uint32_t value, uint32_t shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((uint32_t{1} << shift) - 1);
  const uint32_t half = uint32_t{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;

  if (exponent == 0x1f) {  // infinity or NaN (a signalling NaN comes out quiet)
    const uint32_t quiet = mantissa != 0 ? kF32QuietBit : 0;
    return float_of(sign | kF32ExpMask | quiet | (mantissa << 13));
  }
  if (exponent != 0) return float_of(sign | ((exponent << 23) + kRebias) | (mantissa << 13));
  if (mantissa == 0) return float_of(sign);

  // Subnormal half: mantissa * 2^-24. Normalize so the leading 1 sits in bit 10
  // (the implicit bit); each shift lowers the exponent by one from that of 2^-14.
  uint32_t exponent32 = 127 - 14;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --exponent32;
  }
  return float_of(sign | (exponent32 << 23) | ((mantissa & 0x3ffu) << 13));
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t u = bits_of(f);
  const auto sign = static_cast<uint16_t>((u & kF32SignBit) >> 16);
  const uint32_t magnitude = u & ~kF32SignBit;

  if (magnitude > kF32ExpMask) {  // NaN: keep the top 10 payload bits, set quiet
    return static_cast<uint16_t>(sign | kF16ExpMask | kF16QuietBit | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= kF16OverflowBits) return static_cast<uint16_t>(sign | kF16ExpMask);

  if (magnitude >= kF16MinNormalBits) {
    // Round the 23-bit mantissa to 10 bits, ties to even. A carry out of the
    // mantissa correctly bumps the exponent (below the overflow bound above,
    // it cannot reach the infinity encoding).
    const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1);
    return static_cast<uint16_t>(sign | ((rounded - kRebias) >> 13));
  }

  // Subnormal half: the result is |f| / 2^-24 rounded to an integer. With the
  // implicit bit restored, |f| = significand * 2^(exponent - 150), so the
  // integer is significand >> (126 - exponent). A carry to 0x400 yields the
  // smallest normal half, which is the right encoding.
  const uint32_t exponent = magnitude >> 23;
  const uint32_t shift = 126 - exponent;  // >= 14 here
  if (shift > 24) return sign;            // below 2^-25: rounds to zero
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | shift_right_round_even(significand, shift));
}

}  // namespace kernels::ref
