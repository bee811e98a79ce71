// fp16 <-> fp32 conversions: exhaustive over the 65536 halves, and fp32 -> fp16
// on every rounding boundary, against an independent formula and, where the
// CPU has one, the hardware converter (F16C on x86, fcvt on aarch64).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ref/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace {

using kernels::ref::bf16_to_fp32;
using kernels::ref::fp16_to_fp32;
using kernels::ref::fp32_to_bf16;
using kernels::ref::fp32_to_fp16;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool is_nan_half(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

// ---- the hardware converters, when present

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("f16c"))) uint16_t hardware_to_half(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float hardware_to_float(uint16_t h) { return _cvtsh_ss(h); }
// CPUID.1:ECX.F16C[29], and the OS saving AVX state (VEX-encoded instructions
// need it): OSXSAVE[27] and XCR0 bits 1-2. (Clang 14 has no
// __builtin_cpu_supports("f16c").)
bool hardware_available() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  if ((ecx & (1u << 29)) == 0 || (ecx & (1u << 27)) == 0) return false;
  uint32_t xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 6u) == 6u;
}
const char* const kHardwareName = "F16C";
#elif defined(__aarch64__)
uint16_t hardware_to_half(float f) {
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t u;
  std::memcpy(&u, &h, sizeof u);
  return u;
}
float hardware_to_float(uint16_t h) {
  __fp16 f;
  std::memcpy(&f, &h, sizeof f);
  return static_cast<float>(f);
}
bool hardware_available() { return true; }
const char* const kHardwareName = "aarch64 fcvt";
#else
uint16_t hardware_to_half(float) { return 0; }
float hardware_to_float(uint16_t) { return 0; }
bool hardware_available() { return false; }
const char* const kHardwareName = "none";
#endif

// ---- an independent definition of the conversions, in double arithmetic

// The value of a finite half: sign * significand * 2^(exponent - 25).
double half_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// The half nearest to a finite f (ties to even), as a double; +-inf on overflow.
double nearest_half_value(float f) {
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), f);
  // Spacing of the halves around a: 2^-24 below 2^-14, else 2^(e - 10).
  const int e = a < 0x1p-14 ? -14 : std::ilogb(a);
  const double spacing = std::ldexp(1.0, e - 10);
  const double steps = std::nearbyint(a / spacing);  // the default mode: ties to even
  return std::copysign(steps * spacing, f);
}

// Every float on a rounding boundary of the halves: each half, the midpoints to
// its neighbours and the floats just either side of those, both signs, plus
// around the overflow threshold, fp32 subnormals, zeros and infinities.
std::vector<float> boundary_floats() {
  std::vector<float> out;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double v = half_value(static_cast<uint16_t>(h));
    const double next = half_value(static_cast<uint16_t>(h + 1));  // 0x7c00 gives 65536 (the overflow step)
    const auto mid = static_cast<float>((v + next) / 2);            // exact in float
    for (float f : {static_cast<float>(v), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      out.push_back(f);
      out.push_back(-f);
    }
  }
  for (float f : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(), 1e-40f,
                  0x1p-25f, std::nextafter(0x1p-25f, 0.0f), std::nextafter(0x1p-25f, 1.0f)}) {
    out.push_back(f);
    out.push_back(-f);
  }
  return out;
}

TEST(RefFp16, EveryHalfConvertsToItsExactValue) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = fp16_to_fp32(h);
    if ((h & 0x7c00) != 0x7c00) {
      ASSERT_EQ(static_cast<double>(f), half_value(h)) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
    } else if (!is_nan_half(h)) {
      ASSERT_TRUE(std::isinf(f) && std::signbit(f) == ((h & 0x8000) != 0)) << std::hex << h;
    } else {
      // NaN: sign and payload kept (payload in the top mantissa bits), quiet bit set.
      const uint32_t want = (uint32_t{h & 0x8000u} << 16) | 0x7fc00000u | (uint32_t{h & 0x3ffu} << 13);
      ASSERT_EQ(bits(f), want) << std::hex << h;
    }
  }
}

TEST(RefFp16, EveryHalfRoundTrips) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    // A signalling NaN comes back quiet (bit 9 set); every other half exactly.
    const uint16_t want = is_nan_half(h) ? static_cast<uint16_t>(h | 0x200) : h;
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(h)), want) << std::hex << h;
  }
}

TEST(RefFp16, RoundsToNearestEvenOnEveryBoundary) {
  for (float f : boundary_floats()) {
    const uint16_t h = fp32_to_fp16(f);
    const double want = nearest_half_value(f);
    if (std::isinf(want)) {
      ASSERT_EQ(h, f < 0 ? 0xfc00 : 0x7c00) << f;
    } else {
      ASSERT_EQ(half_value(h), want) << std::hexfloat << f;
      ASSERT_EQ((h & 0x8000) != 0, std::signbit(f)) << std::hexfloat << f;  // -0 stays -0
    }
  }
}

TEST(RefFp16, KnownValues) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);       // tie between 65504 and 2^16: to even, overflow
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);       // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);       // tie between 0 and 2^-24: to even (0)
  EXPECT_EQ(fp32_to_fp16(0x1.8p-24f), 0x0002);     // tie between 1 and 2 subnormal steps: to 2
  EXPECT_EQ(fp32_to_fp16(0x1.ffcp-15f), 0x0400);   // rounds up into the smallest normal
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);  // tie at 1: to even (down)
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x3p-11f), 0x3c02);  // tie at 1 + 2^-10: to even (up)
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(from_bits(0x7f800001u)), 0x7e00);  // signalling NaN, payload below bit 13: quiet
  EXPECT_EQ(fp32_to_fp16(from_bits(0xffc02000u)), 0xfe01);  // sign and top payload bits kept
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_fp32(0x03ff), 0x1.ff8p-15f);
}

TEST(RefFp16, MatchesHardwareConverter) {
  if (!hardware_available()) GTEST_SKIP() << "no hardware fp16 converter on this CPU";
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    ASSERT_EQ(bits(fp16_to_fp32(h)), bits(hardware_to_float(h))) << kHardwareName << " half " << std::hex << h;
  }
  std::vector<float> inputs = boundary_floats();
  std::mt19937 rng(1234);
  for (int i = 0; i < (1 << 18); ++i) inputs.push_back(from_bits(rng()));  // NaN payloads included
  for (float f : inputs) {
    ASSERT_EQ(fp32_to_fp16(f), hardware_to_half(f)) << kHardwareName << " float bits " << std::hex << bits(f);
  }
}

TEST(RefBf16, RoundsToNearestEvenAndQuietsNaN) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie: to even (down)
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie: to even (up)
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7f800001u)), 0x7fc0);  // signalling NaN comes out quiet
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const bool nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
    ASSERT_EQ(fp32_to_bf16(bf16_to_fp32(h)), nan ? (h | 0x40) : h) << std::hex << h;
  }
}

}  // namespace
