// IEEE half and bfloat16 conversions, scalar, matching ggml bit for bit:
// fp32 -> fp16 rounds to nearest even (what F16C's vcvtps2ph and ARM's fcvt do),
// fp32 -> bf16 rounds to nearest even and keeps NaNs quiet.
#pragma once

#include <cstdint>
#include <cstring>

namespace kernels::ref {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);

inline float bf16_to_fp32(uint16_t h) {
  const uint32_t u = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t fp32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64);  // quiet NaN
  return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace kernels::ref
