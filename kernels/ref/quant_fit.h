// Building blocks the K-quant reference quantizers share (quants_k.cpp for
// Q4_K / Q5_K, quants_k_low.cpp for Q2_K / Q3_K): ggml's rounding rule and its
// asymmetric least-squares fit. Internal to kernels/ref.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kernels::ref::detail {

// Round to nearest, ties to even, for |v| < 2^22 (ggml's nearest_int; finite
// rows stay far inside that range, and outside it the result is garbage but
// defined, as in ggml, and clamped by every caller). Adding 1.5 * 2^23 moves v
// into the binade where floats are spaced 1 apart, so the addition itself
// rounds (in the default mode, to even); the integer is then read from the
// mantissa. Unlike std::lrint this is never a libm call, which matters: the
// Q4_K search calls it ~6000 times per super-block.
inline int nearest_int(float v) {
  const float shifted = v + 12582912.0f;
  uint32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

inline int clamp(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

// Below this a group counts as all zeros (ggml's GROUP_MAX_EPS).
inline constexpr float kGroupMaxEps = 1e-15f;

// The candidate step sizes tried by the asymmetric fit: nmax + rmin + rdelta*i
// steps across the sub-block's range, for i = 0..steps.
struct StepGrid {
  float rmin;
  float rdelta;
  int steps;
};

// How a candidate's codes are scored: weighted squared error (Q4_K, Q5_K) or
// weighted absolute error (Q2_K).
enum class FitError { squared, absolute };

// Fits x ~ scale * code + min (min <= 0, codes 0..nmax) for one sub-block of n
// elements (ggml's make_qkx2_quants). Returns the scale and stores -min in
// `negated_min`. Each candidate step size gets the closed-form weighted
// least-squares scale and min for its codes; the best one wins, and a win also
// moves the origin used by the following candidates, as in ggml.
float fit_offset_codes(const float* x, const float* weights, size_t n, int nmax, StepGrid grid, FitError error,
                       uint8_t* codes, float& negated_min);

}  // namespace kernels::ref::detail
