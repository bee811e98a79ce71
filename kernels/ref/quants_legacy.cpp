// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1: blocks of 32 with one fp16 scale (and
// an fp16 offset for the _1 types).
//
// Quantization reproduces ggml's quantize_row_*_ref bit for bit, including its
// three different rounding rules: the 4/5-bit types add 8.5 / 16.5 / 0.5 and
// truncate, Q8_0 / Q8_1 round half away from zero (roundf).
//
// Dot products pair Q4_0, Q5_0 and Q8_0 weights with Q8_0 activations and Q4_1,
// Q5_1 with Q8_1, as ggml's CPU backend does. Per block the integer sum is
// exact; the block then adds (d_w * d_a) * sum (+ m_w * s_a for the _1 types) to
// a float accumulator, blocks in order.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quant_fit.h"
#include "kernels/ref/quants.h"

// The rounding must be exactly that of ggml's reference C, which is built
// without fused multiply-add; GCC contracts a*b+c even in ISO C++ mode when the
// target has FMA (every aarch64), so forbid it for this file.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace kernels::ref {
namespace {

constexpr size_t kHalf = QK / 2;  // qs[j] holds elements j and j + kHalf

// The block's element of largest magnitude, with its sign (the first one on
// ties): the symmetric types map it exactly onto the most negative code.
float signed_abs_max(const float* x) {
  float abs_max = 0.0f;
  float value = 0.0f;
  for (size_t j = 0; j < QK; ++j) {
    if (abs_max < std::fabs(x[j])) {
      abs_max = std::fabs(x[j]);
      value = x[j];
    }
  }
  return value;
}

struct Range {
  float min = FLT_MAX;
  float max = -FLT_MAX;
};

Range range_of(const float* x) {
  Range r;
  for (size_t j = 0; j < QK; ++j) {
    if (x[j] < r.min) r.min = x[j];
    if (x[j] > r.max) r.max = x[j];
  }
  return r;
}

float abs_max_of(const float* x) {
  float abs_max = 0.0f;
  for (size_t j = 0; j < QK; ++j) abs_max = std::max(abs_max, std::fabs(x[j]));
  return abs_max;
}

float inverse_or_zero(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// ggml's truncating rounding: `shifted` already includes the +0.5 and is >= 0.
// Non-finite values arise only when |max| < ~1e-37, where the 1/d overflows;
// ggml's float-to-int cast is then undefined, and the fp16 scale is 0 anyway,
// so any code dequantizes to 0: we write code 0.
int truncate_code(float shifted, int max_code) {
  if (!std::isfinite(shifted)) return 0;
  return std::min(max_code, static_cast<int>(shifted));
}

// roundf (half away from zero) to an int8 code; |scaled| <= 127 (+ rounding)
// for finite input. Non-finite: see truncate_code.
int8_t round_code(float scaled) {
  if (!std::isfinite(scaled)) return 0;
  return static_cast<int8_t>(std::round(scaled));
}

void pack_nibbles(const int* codes, uint8_t* qs) {
  for (size_t j = 0; j < kHalf; ++j) qs[j] = static_cast<uint8_t>((codes[j] & 0xF) | ((codes[j + kHalf] & 0xF) << 4));
}

// Bit 4 of code j goes to bit j of the little-endian word qh.
void pack_fifth_bits(const int* codes, uint8_t* qh) {
  uint32_t bits = 0;
  for (size_t j = 0; j < QK; ++j) bits |= uint32_t((codes[j] >> 4) & 1) << j;
  for (size_t byte = 0; byte < 4; ++byte) qh[byte] = static_cast<uint8_t>(bits >> (8 * byte));
}

void quantize_block(const float* x, BlockQ4_0& out) {
  const float d = signed_abs_max(x) / -8;
  const float inverse = inverse_or_zero(d);
  out.d = fp32_to_fp16(d);
  int codes[QK];
  for (size_t j = 0; j < QK; ++j) codes[j] = truncate_code(x[j] * inverse + 8.5f, 15);
  pack_nibbles(codes, out.qs);
}

void quantize_block(const float* x, BlockQ4_1& out) {
  const Range r = range_of(x);
  const float d = (r.max - r.min) / 15;
  const float inverse = inverse_or_zero(d);
  out.d = fp32_to_fp16(d);
  out.m = fp32_to_fp16(r.min);
  int codes[QK];
  for (size_t j = 0; j < QK; ++j) codes[j] = truncate_code((x[j] - r.min) * inverse + 0.5f, 15);
  pack_nibbles(codes, out.qs);
}

void quantize_block(const float* x, BlockQ5_0& out) {
  const float d = signed_abs_max(x) / -16;
  const float inverse = inverse_or_zero(d);
  out.d = fp32_to_fp16(d);
  int codes[QK];
  for (size_t j = 0; j < QK; ++j) codes[j] = truncate_code(x[j] * inverse + 16.5f, 31);
  pack_nibbles(codes, out.qs);
  pack_fifth_bits(codes, out.qh);
}

void quantize_block(const float* x, BlockQ5_1& out) {
  const Range r = range_of(x);
  const float d = (r.max - r.min) / 31;
  const float inverse = inverse_or_zero(d);
  out.d = fp32_to_fp16(d);
  out.m = fp32_to_fp16(r.min);
  int codes[QK];
  // ggml does not clamp here: the largest value lands on 31.5 at most, and the
  // bit packing keeps the low 5 bits of whatever comes out.
  for (size_t j = 0; j < QK; ++j) codes[j] = truncate_code((x[j] - r.min) * inverse + 0.5f, 255);
  pack_nibbles(codes, out.qs);
  pack_fifth_bits(codes, out.qh);
}

// ---------------------------------------------------- under an importance matrix
//
// ggml's quantize_row_q{4,5}_{0,1}_impl, what llama-quantize writes with an
// importance matrix: element weights qw * sqrt(sigma2 + x^2), sigma2 the mean
// square of the whole row; the _0 types fit symmetrically (make_qx_quants),
// the _1 types with an offset (make_qkx3_quants), both by weighted least
// squares, and store the fitted scale (and offset) in fp16 as they are.

template <int kMax>  // 8: Q4_0, 16: Q5_0
void fit_symmetric_block(const float* x, const float* weights, float& d, int* codes) {
  int8_t levels[QK];
  d = detail::fit_symmetric_codes(x, weights, QK, kMax, levels);
  for (size_t j = 0; j < QK; ++j) codes[j] = levels[j];
}

template <int kMax>  // 15: Q4_1, 31: Q5_1
void fit_offset_block(const float* x, const float* weights, float& d, float& m, int* codes) {
  uint8_t levels[QK];
  float negated_min;
  d = detail::fit_offset_codes(x, weights, QK, kMax, detail::kWeightedGrid, detail::FitError::squared, levels,
                               negated_min);
  m = -negated_min;
  for (size_t j = 0; j < QK; ++j) codes[j] = levels[j];
}

template <typename Block>
void quantize_block(const float* x, const float* weights, Block& out) {
  constexpr bool kOffset = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>;
  constexpr bool kFiveBits = std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>;
  float d;
  int codes[QK];
  if constexpr (kOffset) {
    float m;
    fit_offset_block<kFiveBits ? 31 : 15>(x, weights, d, m, codes);
    out.m = fp32_to_fp16(m);
  } else {
    fit_symmetric_block<kFiveBits ? 16 : 8>(x, weights, d, codes);
  }
  out.d = fp32_to_fp16(d);
  pack_nibbles(codes, out.qs);
  if constexpr (kFiveBits) pack_fifth_bits(codes, out.qh);
}

template <typename Block>
void quantize_row_weighted(const float* x, void* dst, size_t k, const float* qw) {
  float sum_x2 = 0;
  for (size_t j = 0; j < k; ++j) sum_x2 += x[j] * x[j];
  const float sigma2 = sum_x2 / static_cast<float>(k);
  auto* blocks = static_cast<Block*>(dst);
  for (size_t b = 0; b < k / QK; ++b) {
    const float* xb = x + b * QK;
    float weights[QK];
    for (size_t j = 0; j < QK; ++j) weights[j] = qw[b * QK + j] * std::sqrt(sigma2 + xb[j] * xb[j]);
    quantize_block(xb, weights, blocks[b]);
  }
}

// ------------------------------------------------------------------- Q8_0, Q8_1

// Q8_0 and Q8_1 share the codes; returns d (before fp16 rounding).
float quantize_q8_codes(const float* x, int8_t* qs) {
  const float d = abs_max_of(x) / 127;
  const float inverse = inverse_or_zero(d);
  for (size_t j = 0; j < QK; ++j) qs[j] = round_code(x[j] * inverse);
  return d;
}

void quantize_block(const float* x, BlockQ8_0& out) { out.d = fp32_to_fp16(quantize_q8_codes(x, out.qs)); }

void quantize_block(const float* x, BlockQ8_1& out) {
  const float d = quantize_q8_codes(x, out.qs);
  int sum = 0;
  for (size_t j = 0; j < QK; ++j) sum += out.qs[j];
  out.d = fp32_to_fp16(d);
  out.s = fp32_to_fp16(static_cast<float>(sum) * d);
}

uint32_t fifth_bits(const uint8_t* qh) {
  return uint32_t{qh[0]} | (uint32_t{qh[1]} << 8) | (uint32_t{qh[2]} << 16) | (uint32_t{qh[3]} << 24);
}

void unpack_nibbles(const uint8_t* qs, int offset, int8_t* codes) {
  for (size_t j = 0; j < kHalf; ++j) {
    codes[j] = static_cast<int8_t>((qs[j] & 0xF) - offset);
    codes[j + kHalf] = static_cast<int8_t>((qs[j] >> 4) - offset);
  }
}

void unpack_nibbles_with_fifth_bit(const uint8_t* qs, const uint8_t* qh, int offset, int8_t* codes) {
  const uint32_t high = fifth_bits(qh);
  for (size_t j = 0; j < kHalf; ++j) {
    const int lo = (qs[j] & 0xF) | (int((high >> j) & 1) << 4);
    const int hi = (qs[j] >> 4) | (int((high >> (j + kHalf)) & 1) << 4);
    codes[j] = static_cast<int8_t>(lo - offset);
    codes[j + kHalf] = static_cast<int8_t>(hi - offset);
  }
}

// The 32 integer codes of a block, with the symmetric types' offset removed:
// Q4_0 -8..7, Q5_0 -16..15, Q4_1 0..15, Q5_1 0..31, Q8_0 -127..127.
void unpack(const BlockQ4_0& b, int8_t* codes) { unpack_nibbles(b.qs, 8, codes); }
void unpack(const BlockQ4_1& b, int8_t* codes) { unpack_nibbles(b.qs, 0, codes); }
void unpack(const BlockQ5_0& b, int8_t* codes) { unpack_nibbles_with_fifth_bit(b.qs, b.qh, 16, codes); }
void unpack(const BlockQ5_1& b, int8_t* codes) { unpack_nibbles_with_fifth_bit(b.qs, b.qh, 0, codes); }
void unpack(const BlockQ8_0& b, int8_t* codes) { std::memcpy(codes, b.qs, QK); }
void unpack(const BlockQ8_1& b, int8_t* codes) { std::memcpy(codes, b.qs, QK); }

// The _1 types add an fp16 offset m to every element.
template <typename Block>
constexpr bool kHasOffset = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>;

template <typename Block>
void quantize_row(const float* x, void* dst, size_t k) {
  auto* blocks = static_cast<Block*>(dst);
  for (size_t b = 0; b < k / QK; ++b) quantize_block(x + b * QK, blocks[b]);
}

template <typename Block>
void dequantize_row(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const Block*>(src);
  for (size_t b = 0; b < k / QK; ++b) {
    int8_t codes[QK];
    unpack(blocks[b], codes);
    const float d = fp16_to_fp32(blocks[b].d);
    float* out = y + b * QK;
    if constexpr (kHasOffset<Block>) {
      const float m = fp16_to_fp32(blocks[b].m);
      for (size_t j = 0; j < QK; ++j) out[j] = static_cast<float>(codes[j]) * d + m;
    } else {
      for (size_t j = 0; j < QK; ++j) out[j] = static_cast<float>(codes[j]) * d;
    }
  }
}

int32_t integer_dot(const int8_t* w, const int8_t* a) {
  int32_t sum = 0;
  for (size_t j = 0; j < QK; ++j) sum += int32_t{w[j]} * int32_t{a[j]};
  return sum;
}

// Symmetric weights with Q8_0 activations.
template <typename Block>
float dot_with_q8_0(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const Block*>(w);
  const auto* activations = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (size_t b = 0; b < k / QK; ++b) {
    int8_t codes[QK];
    unpack(weights[b], codes);
    const float scale = fp16_to_fp32(weights[b].d) * fp16_to_fp32(activations[b].d);
    sum += scale * static_cast<float>(integer_dot(codes, activations[b].qs));
  }
  return sum;
}

// Offset weights (x = d*q + m) with Q8_1 activations: sum_j (d q_j + m) a_j =
// d d_a sum_j q_j c_j + m s_a, with s_a = d_a sum_j c_j stored in the block.
template <typename Block>
float dot_with_q8_1(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const Block*>(w);
  const auto* activations = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (size_t b = 0; b < k / QK; ++b) {
    int8_t codes[QK];
    unpack(weights[b], codes);
    const float scale = fp16_to_fp32(weights[b].d) * fp16_to_fp32(activations[b].d);
    const float offset_term = fp16_to_fp32(weights[b].m) * fp16_to_fp32(activations[b].s);
    sum += scale * static_cast<float>(integer_dot(codes, activations[b].qs)) + offset_term;
  }
  return sum;
}

}  // namespace

void quantize_row_q4_0(const float* x, void* dst, size_t k) { quantize_row<BlockQ4_0>(x, dst, k); }
void quantize_row_q4_1(const float* x, void* dst, size_t k) { quantize_row<BlockQ4_1>(x, dst, k); }
void quantize_row_q5_0(const float* x, void* dst, size_t k) { quantize_row<BlockQ5_0>(x, dst, k); }
void quantize_row_q5_1(const float* x, void* dst, size_t k) { quantize_row<BlockQ5_1>(x, dst, k); }
void quantize_row_q8_0(const float* x, void* dst, size_t k) { quantize_row<BlockQ8_0>(x, dst, k); }
void quantize_row_q8_1(const float* x, void* dst, size_t k) { quantize_row<BlockQ8_1>(x, dst, k); }

void quantize_row_q4_0_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row_weighted<BlockQ4_0>(x, dst, k, qw);
}
void quantize_row_q4_1_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row_weighted<BlockQ4_1>(x, dst, k, qw);
}
void quantize_row_q5_0_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row_weighted<BlockQ5_0>(x, dst, k, qw);
}
void quantize_row_q5_1_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row_weighted<BlockQ5_1>(x, dst, k, qw);
}

void dequantize_row_q4_0(const void* src, float* y, size_t k) { dequantize_row<BlockQ4_0>(src, y, k); }
void dequantize_row_q4_1(const void* src, float* y, size_t k) { dequantize_row<BlockQ4_1>(src, y, k); }
void dequantize_row_q5_0(const void* src, float* y, size_t k) { dequantize_row<BlockQ5_0>(src, y, k); }
void dequantize_row_q5_1(const void* src, float* y, size_t k) { dequantize_row<BlockQ5_1>(src, y, k); }
void dequantize_row_q8_0(const void* src, float* y, size_t k) { dequantize_row<BlockQ8_0>(src, y, k); }
void dequantize_row_q8_1(const void* src, float* y, size_t k) { dequantize_row<BlockQ8_1>(src, y, k); }

float vec_dot_q4_0_q8_0(size_t k, const void* w, const void* a) { return dot_with_q8_0<BlockQ4_0>(k, w, a); }
float vec_dot_q5_0_q8_0(size_t k, const void* w, const void* a) { return dot_with_q8_0<BlockQ5_0>(k, w, a); }
float vec_dot_q8_0_q8_0(size_t k, const void* w, const void* a) { return dot_with_q8_0<BlockQ8_0>(k, w, a); }
float vec_dot_q4_1_q8_1(size_t k, const void* w, const void* a) { return dot_with_q8_1<BlockQ4_1>(k, w, a); }
float vec_dot_q5_1_q8_1(size_t k, const void* w, const void* a) { return dot_with_q8_1<BlockQ5_1>(k, w, a); }

}  // namespace kernels::ref
