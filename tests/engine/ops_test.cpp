// The forward pass's row operations against their scalar definitions.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "engine/ops.h"
#include "kernels/ref/fp16.h"

namespace {

TEST(Ops, Fp16RowConversionIsTheReferenceBitForBitOnEveryHalf) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> out(halves.size());
  engine::ops::fp16_to_fp32(halves.data(), out.data(), halves.size());
  size_t mismatches = 0;
  for (uint32_t i = 0; i < halves.size(); ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(kernels::ref::fp16_to_fp32(halves[i]));
    const uint32_t got = std::bit_cast<uint32_t>(out[i]);
    if (want != got && ++mismatches <= 5) ADD_FAILURE() << std::hex << "half 0x" << i << ": 0x" << got << ", want 0x" << want;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(Ops, Fp16RowConversionHandlesEveryLengthAndOffset) {
  // Vector bodies and scalar tails: lengths 0..40 from unaligned starts.
  std::vector<uint16_t> halves(64);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(0x3c00 + 37 * i);
  for (size_t start = 0; start < 3; ++start) {
    for (size_t n = 0; n <= 40; ++n) {
      std::vector<float> out(n + 1, -7.0f);
      engine::ops::fp16_to_fp32(halves.data() + start, out.data(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], kernels::ref::fp16_to_fp32(halves[start + i]));
      EXPECT_EQ(out[n], -7.0f) << "wrote past the end, n = " << n;
    }
  }
}

}  // namespace
