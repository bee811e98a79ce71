// Q4_K, Q5_K, Q6_K (super-blocks of 256 with quantized sub-block scales) and
// Q8_K, their activation format.
//
// Quantization reproduces ggml's quantize_row_{q4,q5,q6,q8}_K_ref bit for bit,
// which is what llama-quantize writes without an importance matrix:
// - Q4_K / Q5_K fit each 32-element sub-block as x ~ scale * q - min with a
//   weighted least-squares search over candidate step sizes (ggml's
//   make_qkx2_quants), quantize the 8 scales and 8 mins to 6 bits against the
//   block's largest ones, then requantize every element with the stored scales.
// - Q6_K fits each 16-element sub-block symmetrically (ggml's make_qx_quants
//   with weights x^2), quantizes the 16 scales to int8 against the largest
//   one, then requantizes with the stored scales.
// The *_weighted quantizers reproduce ggml's quantize_row_{q4,q5,q6}_K_impl,
// what llama-quantize writes with an importance matrix (see
// quantize_offset_super_block and the Q6_K quantize_block).
// Every float operation below is in ggml's order: the reference files were
// written by that code, and one flipped rounding changes a code.
//
// Dot products: per super-block the integer sums are exact (int32), with each
// sub-block's sum weighted by its integer scale; the Q4_K/Q5_K mins use the
// Q8_K bsums. The block then adds d * sum - dmin * sum_mins (floats) to a float
// accumulator, blocks in order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quant_fit.h"
#include "kernels/ref/quants.h"

namespace kernels::ref {
namespace {

constexpr size_t kSub = 32;      // Q4_K / Q5_K sub-block
constexpr size_t kSub6 = 16;     // Q6_K sub-block
constexpr size_t kChunk = 64;    // Q4_K / Q5_K: two sub-blocks share the qs bytes
constexpr size_t kChunk6 = 128;  // Q6_K: four sub-block pairs share ql/qh bytes

using detail::clamp;
using detail::FitError;
using detail::kGroupMaxEps;
using detail::nearest_int;
using detail::StepGrid;

// ---------------------------------------------------------------- Q4_K, Q5_K

constexpr StepGrid kQ4KGrid{-1.0f, 0.1f, 20};
constexpr StepGrid kQ5KGrid{-0.5f, 0.1f, 15};

// Per-element weights of the fit: the sub-block's RMS plus |x|, so large
// elements matter more without the small ones being ignored.
void fit_weights(const float* x, float* weights) {
  float sum_x2 = 0;
  for (size_t i = 0; i < kSub; ++i) sum_x2 += x[i] * x[i];
  const float rms = std::sqrt(sum_x2 / static_cast<float>(kSub));
  for (size_t i = 0; i < kSub; ++i) weights[i] = rms + std::fabs(x[i]);
}

// 6-bit code of a sub-block scale or min relative to the block's largest.
// The cast to uint8_t before the clamp is ggml's (it matters only for a
// negative input, which the fit does not produce).
uint8_t six_bit_code(float inverse_step, float value) {
  return std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inverse_step * value)));
}

void pack_k_scales(const uint8_t* sc, const uint8_t* m, uint8_t* scales) {
  for (size_t j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    scales[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// Stores the header of a Q4_K or Q5_K block (6-bit sub-block scales sc and
// mins m, super-block d and dmin), then requantizes every element against the
// scales as stored. A sub-block whose stored scale is zero keeps the codes of
// its fit (they multiply zero anyway).
template <typename Block>
void store_offset_header(const float* x, int nmax, const uint8_t* sc, const uint8_t* m, float d_block,
                         float dmin_block, uint8_t* codes, Block& out) {
  pack_k_scales(sc, m, out.scales);
  out.d = fp32_to_fp16(d_block);
  out.dmin = fp32_to_fp16(dmin_block);
  const float d_all = fp16_to_fp32(out.d);
  const float dmin_all = fp16_to_fp32(out.dmin);
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    const float d = d_all * sc[j];
    if (d == 0) continue;
    const float dm = dmin_all * m[j];
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) {
      codes[i] = static_cast<uint8_t>(clamp(nearest_int((x[i] + dm) / d), 0, nmax));
    }
  }
}

// Quantizes one super-block to codes 0..nmax and fills the header of a Q4_K or
// Q5_K block (d, dmin, scales): ggml's quantize_row_q{4,5}_K_ref.
template <typename Block>
void quantize_offset_super_block(const float* x, int nmax, StepGrid grid, uint8_t* codes, Block& out) {
  float scales[kKSubBlocks];
  float mins[kKSubBlocks];
  float max_scale = 0;
  float max_min = 0;
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    float weights[kSub];
    fit_weights(x + kSub * j, weights);
    scales[j] = detail::fit_offset_codes(x + kSub * j, weights, kSub, nmax, grid, FitError::squared, codes + kSub * j,
                                         mins[j]);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inverse_scale_step = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inverse_min_step = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t sc[kKSubBlocks];
  uint8_t m[kKSubBlocks];
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    sc[j] = six_bit_code(inverse_scale_step, scales[j]);
    m[j] = six_bit_code(inverse_min_step, mins[j]);
  }
  store_offset_header(x, nmax, sc, m, max_scale / 63.f, max_min / 63.f, codes, out);
}

// The same under an importance matrix qw (ggml's quantize_row_q{4,5}_K_impl):
// element weights qw * sqrt(sigma2 + x^2) with sigma2 twice the super-block's
// mean square, the make_qkx3 grid, and the 8 scales and 8 mins fitted to 6 bits
// by least squares weighted by each sub-block's total weight.
template <typename Block>
void quantize_offset_super_block(const float* x, const float* qw, int nmax, uint8_t* codes, Block& out) {
  float sum_x2 = 0;
  for (size_t i = 0; i < QK_K; ++i) sum_x2 += x[i] * x[i];
  const float sigma2 = 2 * sum_x2 / static_cast<float>(QK_K);
  float scales[kKSubBlocks];
  float mins[kKSubBlocks];
  float sub_weights[kKSubBlocks];
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    float weights[kSub];
    float sum_w = 0;
    for (size_t i = 0; i < kSub; ++i) {
      const float xi = x[kSub * j + i];
      weights[i] = qw[kSub * j + i] * std::sqrt(sigma2 + xi * xi);
    }
    for (size_t i = 0; i < kSub; ++i) sum_w += weights[i];
    sub_weights[j] = sum_w;
    scales[j] = detail::fit_offset_codes(x + kSub * j, weights, kSub, nmax, detail::kWeightedGrid, FitError::squared,
                                         codes + kSub * j, mins[j]);
  }
  uint8_t sc[kKSubBlocks];
  uint8_t m[kKSubBlocks];
  const float d_block = detail::fit_positive_codes(scales, sub_weights, kKSubBlocks, 63, sc);
  const float dmin_block = detail::fit_positive_codes(mins, sub_weights, kKSubBlocks, 63, m);
  store_offset_header(x, nmax, sc, m, d_block, dmin_block, codes, out);
}

void pack_codes(const uint8_t* codes, BlockQ4_K& out) {
  for (size_t c = 0; c < QK_K / kChunk; ++c) {
    const uint8_t* chunk = codes + kChunk * c;
    for (size_t l = 0; l < kSub; ++l) out.qs[kSub * c + l] = static_cast<uint8_t>(chunk[l] | (chunk[l + kSub] << 4));
  }
}

void pack_codes(const uint8_t* codes, BlockQ5_K& out) {
  std::memset(out.qh, 0, sizeof out.qh);
  for (size_t c = 0; c < QK_K / kChunk; ++c) {
    const uint8_t* chunk = codes + kChunk * c;
    for (size_t l = 0; l < kSub; ++l) {
      out.qs[kSub * c + l] = static_cast<uint8_t>((chunk[l] & 0xF) | ((chunk[l + kSub] & 0xF) << 4));
      out.qh[l] |= static_cast<uint8_t>(((chunk[l] >> 4) << (2 * c)) | ((chunk[l + kSub] >> 4) << (2 * c + 1)));
    }
  }
}

template <typename Block>
constexpr int kOffsetMax = std::is_same_v<Block, BlockQ4_K> ? 15 : 31;

template <typename Block>
void quantize_offset_block(const float* x, const float* qw, Block& out) {
  uint8_t codes[QK_K];
  if (qw != nullptr) {
    quantize_offset_super_block(x, qw, kOffsetMax<Block>, codes, out);
  } else {
    quantize_offset_super_block(x, kOffsetMax<Block>, std::is_same_v<Block, BlockQ4_K> ? kQ4KGrid : kQ5KGrid, codes,
                                out);
  }
  pack_codes(codes, out);
}

// Codes 0..15 (Q4_K) or 0..31 (Q5_K) of a super-block, in element order.
void unpack_codes(const BlockQ4_K& b, uint8_t* codes) {
  for (size_t c = 0; c < QK_K / kChunk; ++c) {
    for (size_t l = 0; l < kSub; ++l) {
      codes[kChunk * c + l] = b.qs[kSub * c + l] & 0xF;
      codes[kChunk * c + kSub + l] = b.qs[kSub * c + l] >> 4;
    }
  }
}

void unpack_codes(const BlockQ5_K& b, uint8_t* codes) {
  for (size_t c = 0; c < QK_K / kChunk; ++c) {
    for (size_t l = 0; l < kSub; ++l) {
      const uint8_t high = b.qh[l];
      codes[kChunk * c + l] = static_cast<uint8_t>((b.qs[kSub * c + l] & 0xF) | (((high >> (2 * c)) & 1) << 4));
      codes[kChunk * c + kSub + l] = static_cast<uint8_t>((b.qs[kSub * c + l] >> 4) | (((high >> (2 * c + 1)) & 1) << 4));
    }
  }
}

template <typename Block>
void dequantize_offset_block(const Block& b, float* y) {
  uint8_t codes[QK_K];
  unpack_codes(b, codes);
  const float d_all = fp16_to_fp32(b.d);
  const float dmin_all = fp16_to_fp32(b.dmin);
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    uint8_t sc, m;
    unpack_k_scale_min(b.scales, j, sc, m);
    const float d = d_all * sc;
    const float dm = dmin_all * m;
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) y[i] = d * codes[i] - dm;
  }
}

template <typename Block>
float dot_offset_block(const Block& w, const BlockQ8_K& a) {
  uint8_t codes[QK_K];
  unpack_codes(w, codes);
  int32_t sum = 0;       // sum_j sc_j * sum_{i in j} code_i * a_i
  int32_t sum_mins = 0;  // sum_j m_j * sum_{i in j} a_i
  for (size_t j = 0; j < kKSubBlocks; ++j) {
    uint8_t sc, m;
    unpack_k_scale_min(w.scales, j, sc, m);
    int32_t sub = 0;
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) sub += int32_t{codes[i]} * int32_t{a.qs[i]};
    sum += int32_t{sc} * sub;
    sum_mins += int32_t{m} * (int32_t{a.bsums[2 * j]} + int32_t{a.bsums[2 * j + 1]});
  }
  const float d = fp16_to_fp32(w.d) * a.d;
  const float dmin = fp16_to_fp32(w.dmin) * a.d;
  return d * static_cast<float>(sum) - dmin * static_cast<float>(sum_mins);
}

// ---------------------------------------------------------------------- Q6_K

// ggml's quantize_row_q6_K_ref (qw nullptr: weights x^2) and, under an
// importance matrix, quantize_row_q6_K_impl (the sub-block fits weighted by qw
// itself).
void quantize_block(const float* x, const float* qw, BlockQ6_K& out) {
  int8_t codes[QK_K];  // 0..63
  float scales[QK_K / kSub6];
  float max_scale = 0;
  float max_abs_scale = 0;
  for (size_t j = 0; j < QK_K / kSub6; ++j) {
    scales[j] = detail::fit_symmetric_codes(x + kSub6 * j, qw != nullptr ? qw + kSub6 * j : nullptr, kSub6, 32,
                                            codes + kSub6 * j);
    if (std::fabs(scales[j]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(&out, 0, sizeof out);
    return;
  }

  // The largest scale maps onto -128; d carries its sign.
  const float iscale = -128.f / max_scale;
  out.d = fp32_to_fp16(1 / iscale);
  for (size_t j = 0; j < QK_K / kSub6; ++j) {
    out.scales[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[j])));
  }

  const float d_all = fp16_to_fp32(out.d);
  for (size_t j = 0; j < QK_K / kSub6; ++j) {
    const float d = d_all * out.scales[j];
    if (d == 0) continue;  // keeps the fit's codes, as in ggml
    for (size_t i = kSub6 * j; i < kSub6 * (j + 1); ++i) {
      codes[i] = static_cast<int8_t>(clamp(nearest_int(x[i] / d), -32, 31) + 32);
    }
  }

  for (size_t c = 0; c < QK_K / kChunk6; ++c) {
    const int8_t* chunk = codes + kChunk6 * c;
    uint8_t* ql = out.ql + 64 * c;
    uint8_t* qh = out.qh + 32 * c;
    for (size_t l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((chunk[l] & 0xF) | ((chunk[l + 64] & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((chunk[l + 32] & 0xF) | ((chunk[l + 96] & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((chunk[l] >> 4) | ((chunk[l + 32] >> 4) << 2) | ((chunk[l + 64] >> 4) << 4) |
                                   ((chunk[l + 96] >> 4) << 6));
    }
  }
}

// Codes -32..31 of a Q6_K super-block, in element order.
void unpack_codes(const BlockQ6_K& b, int8_t* codes) {
  for (size_t c = 0; c < QK_K / kChunk6; ++c) {
    int8_t* chunk = codes + kChunk6 * c;
    const uint8_t* ql = b.ql + 64 * c;
    const uint8_t* qh = b.qh + 32 * c;
    for (size_t l = 0; l < 32; ++l) {
      chunk[l] = static_cast<int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
      chunk[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
      chunk[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      chunk[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
}

void dequantize_block(const BlockQ6_K& b, float* y) {
  int8_t codes[QK_K];
  unpack_codes(b, codes);
  const float d = fp16_to_fp32(b.d);
  for (size_t i = 0; i < QK_K; ++i) y[i] = d * b.scales[i / kSub6] * codes[i];
}

float dot_block(const BlockQ6_K& w, const BlockQ8_K& a) {
  int8_t codes[QK_K];
  unpack_codes(w, codes);
  int32_t sum = 0;  // sum_j scale_j * sum_{i in j} code_i * a_i
  for (size_t j = 0; j < QK_K / kSub6; ++j) {
    int32_t sub = 0;
    for (size_t i = kSub6 * j; i < kSub6 * (j + 1); ++i) sub += int32_t{codes[i]} * int32_t{a.qs[i]};
    sum += int32_t{w.scales[j]} * sub;
  }
  return (fp16_to_fp32(w.d) * a.d) * static_cast<float>(sum);
}

// ---------------------------------------------------------------------- Q8_K

void quantize_block(const float* x, BlockQ8_K& out) {
  float max = 0;
  float abs_max = 0;
  for (size_t i = 0; i < QK_K; ++i) {
    if (std::fabs(x[i]) > abs_max) {
      abs_max = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (abs_max == 0) {  // ggml leaves bsums unset here; zero is what they sum to
    std::memset(&out, 0, sizeof out);
    return;
  }
  // -127 (not -128) keeps every code within -127..127.
  const float iscale = -127.f / max;
  for (size_t i = 0; i < QK_K; ++i) out.qs[i] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[i])));
  for (size_t g = 0; g < QK_K / 16; ++g) {
    int sum = 0;
    for (size_t i = 16 * g; i < 16 * (g + 1); ++i) sum += out.qs[i];
    out.bsums[g] = static_cast<int16_t>(sum);
  }
  out.d = 1 / iscale;
}

// ------------------------------------------------------------------ rows

// qw: the row's importance weights (k of them) or nullptr.
template <typename Block>
void quantize_row(const float* x, void* dst, size_t k, const float* qw) {
  auto* blocks = static_cast<Block*>(dst);
  for (size_t b = 0; b < k / QK_K; ++b) {
    const float* block_qw = qw != nullptr ? qw + b * QK_K : nullptr;
    if constexpr (std::is_same_v<Block, BlockQ6_K>) {
      quantize_block(x + b * QK_K, block_qw, blocks[b]);
    } else {
      quantize_offset_block(x + b * QK_K, block_qw, blocks[b]);
    }
  }
}

template <typename Block>
float dot_row(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const Block*>(w);
  const auto* activations = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (size_t b = 0; b < k / QK_K; ++b) {
    if constexpr (std::is_same_v<Block, BlockQ6_K>) {
      sum += dot_block(weights[b], activations[b]);
    } else {
      sum += dot_offset_block(weights[b], activations[b]);
    }
  }
  return sum;
}

}  // namespace

void quantize_row_q4_k(const float* x, void* dst, size_t k) { quantize_row<BlockQ4_K>(x, dst, k, nullptr); }
void quantize_row_q5_k(const float* x, void* dst, size_t k) { quantize_row<BlockQ5_K>(x, dst, k, nullptr); }
void quantize_row_q6_k(const float* x, void* dst, size_t k) { quantize_row<BlockQ6_K>(x, dst, k, nullptr); }
void quantize_row_q8_k(const float* x, void* dst, size_t k) {
  auto* blocks = static_cast<BlockQ8_K*>(dst);
  for (size_t b = 0; b < k / QK_K; ++b) quantize_block(x + b * QK_K, blocks[b]);
}
void quantize_row_q4_k_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row<BlockQ4_K>(x, dst, k, qw);
}
void quantize_row_q5_k_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row<BlockQ5_K>(x, dst, k, qw);
}
void quantize_row_q6_k_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row<BlockQ6_K>(x, dst, k, qw);
}

void dequantize_row_q4_k(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockQ4_K*>(src);
  for (size_t b = 0; b < k / QK_K; ++b) dequantize_offset_block(blocks[b], y + b * QK_K);
}

void dequantize_row_q5_k(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockQ5_K*>(src);
  for (size_t b = 0; b < k / QK_K; ++b) dequantize_offset_block(blocks[b], y + b * QK_K);
}

void dequantize_row_q6_k(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockQ6_K*>(src);
  for (size_t b = 0; b < k / QK_K; ++b) dequantize_block(blocks[b], y + b * QK_K);
}

void dequantize_row_q8_k(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockQ8_K*>(src);
  for (size_t b = 0; b < k / QK_K; ++b) {
    for (size_t i = 0; i < QK_K; ++i) y[b * QK_K + i] = blocks[b].d * blocks[b].qs[i];
  }
}

float vec_dot_q4_k_q8_k(size_t k, const void* w, const void* a) { return dot_row<BlockQ4_K>(k, w, a); }
float vec_dot_q5_k_q8_k(size_t k, const void* w, const void* a) { return dot_row<BlockQ5_K>(k, w, a); }
float vec_dot_q6_k_q8_k(size_t k, const void* w, const void* a) { return dot_row<BlockQ6_K>(k, w, a); }

}  // namespace kernels::ref
