// Building blocks the reference quantizers share (quants_k.cpp for Q4_K /
// Q5_K / Q6_K, quants_k_low.cpp for Q2_K / Q3_K, quants_legacy.cpp,
// quants_iq.cpp): ggml's rounding rule, its fits (quant_fit.cpp), and the loops
// over a row's blocks. Internal to kernels/ref.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

// No FMA contraction in any file that includes this (see quants_legacy.cpp):
// with it, an aarch64 GCC build wrote 665 of the 11008 Q4_K blocks of
// llama-d256-Q4_K_M differently from llama.cpp (ref_bitexact_test). CMake also
// passes -ffp-contract=off; the pragma keeps it so in any build.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

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

// The most elements one fit takes (a 32-element block).
inline constexpr size_t kMaxFitElements = 32;

// The step grid of ggml's make_qkx3_quants, the asymmetric fit under an
// importance matrix (Q2_K, Q4_K, Q5_K, Q4_1, Q5_1).
inline constexpr StepGrid kWeightedGrid{-0.9f, 0.05f, 36};

// Fits x ~ scale * code + min (min <= 0, codes 0..nmax) for one sub-block of
// n <= kMaxFitElements elements (ggml's make_qkx2_quants, and make_qkx3_quants
// with weights and FitError::squared). Returns the scale and stores -min in
// `negated_min`. Each candidate step size gets the closed-form weighted
// least-squares scale and min for its codes; the best one wins, and a win also
// moves the origin used by the following candidates, as in ggml.
float fit_offset_codes(const float* x, const float* weights, size_t n, int nmax, StepGrid grid, FitError error,
                       uint8_t* codes, float& negated_min);

// Fits x ~ scale * (code - nmax), codes 0..2*nmax-1, for n <= kMaxFitElements
// elements (ggml's make_qx_quants with rmse_type 1): starts from the step that
// maps the largest |x| onto -nmax, then tries 18 nearby steps, keeping the one
// with the best weighted least-squares fit. weights nullptr: x^2. Returns the
// (signed) scale.
float fit_symmetric_codes(const float* x, const float* weights, size_t n, int nmax, int8_t* codes);

// Fits non-negative values x ~ scale * code, codes 0..nmax, for n <=
// kMaxFitElements values under weights (ggml's make_qp_quants): the sub-block
// scales and mins of Q2_K, Q4_K and Q5_K under an importance matrix. Returns
// the scale.
float fit_positive_codes(const float* x, const float* weights, size_t n, int nmax, uint8_t* codes);

// The row loops: k / kBlock blocks, one call per block; dots add the blocks'
// float results in order.
template <size_t kBlock, typename Block>
void quantize_blocks(const float* x, Block* out, size_t k, void (*one)(const float*, Block&)) {
  for (size_t b = 0; b < k / kBlock; ++b) one(x + b * kBlock, out[b]);
}

template <size_t kBlock, typename Block>
void dequantize_blocks(const Block* in, float* y, size_t k, void (*one)(const Block&, float*)) {
  for (size_t b = 0; b < k / kBlock; ++b) one(in[b], y + b * kBlock);
}

template <size_t kBlock, typename Block, typename Activation>
float dot_blocks(size_t k, const Block* w, const Activation* a, float (*one)(const Block&, const Activation&)) {
  float sum = 0.0f;
  for (size_t b = 0; b < k / kBlock; ++b) sum += one(w[b], a[b]);
  return sum;
}

}  // namespace kernels::ref::detail
