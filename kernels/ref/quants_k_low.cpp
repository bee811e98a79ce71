// Q2_K and Q3_K: super-blocks of 256 with 16 sub-blocks of 16, dot format Q8_K.
//
// Quantization reproduces ggml's quantize_row_q2_K_ref / q3_K_ref bit for bit
// (what llama-quantize writes without an importance matrix):
// - Q2_K fits each sub-block as x ~ scale * q - min, q in 0..3, with the
//   asymmetric search Q4_K uses (weights |x|, absolute error), quantizes the 16
//   scales and 16 mins to 4 bits against the largest ones, then requantizes
//   every element with the stored values.
// - Q3_K fits each sub-block symmetrically, q in -4..3 (ggml's make_q3_quants:
//   start from the step mapping the largest |x| onto -4, then up to 5 passes of
//   moving single codes while the x^2-weighted fit improves), quantizes the
//   16 scales to 6 bits against the largest, then requantizes.
// The *_weighted quantizers reproduce quantize_row_q2_K_impl / q3_K_impl, what
// llama-quantize writes with an importance matrix.
// Float operations are in ggml's order; one flipped rounding changes a code.
//
// Dot products: per super-block the integer sums are exact (int32), each
// sub-block's sum weighted by its integer scale; the Q2_K mins use the Q8_K
// bsums (one per 16 elements, one per sub-block). The block then adds
// d * sum - dmin * sum_mins (Q2_K) or d * sum (Q3_K) to a float accumulator.
#include <cmath>
#include <cstring>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quant_fit.h"
#include "kernels/ref/quants.h"

namespace kernels::ref {
namespace {

using detail::clamp;
using detail::nearest_int;

constexpr size_t kSub = 16;
constexpr size_t kSubBlocks = QK_K / kSub;
constexpr size_t kChunk = 128;  // four 32-element quarters share 32 qs bytes

// Packs 2-bit codes (0..3) into the Q2_K / Q3_K qs layout (blocks.h).
void pack_two_bit(const uint8_t* codes, uint8_t* qs) {
  for (size_t c = 0; c < QK_K / kChunk; ++c) {
    const uint8_t* chunk = codes + kChunk * c;
    for (size_t l = 0; l < 32; ++l) {
      qs[32 * c + l] =
          static_cast<uint8_t>(chunk[l] | (chunk[l + 32] << 2) | (chunk[l + 64] << 4) | (chunk[l + 96] << 6));
    }
  }
}

uint8_t two_bit_code(const uint8_t* qs, size_t e) {
  return (qs[32 * (e / kChunk) + e % 32] >> (2 * (e % kChunk / 32))) & 3;
}

// ---------------------------------------------------------------------- Q2_K

constexpr detail::StepGrid kQ2KGrid{-0.5f, 0.1f, 15};
constexpr float kQ2KLevels = 15.f;  // 4-bit scales and mins

// The element weights of one sub-block under an importance matrix,
// qw * sqrt(sigma2 + x^2) (ggml's *_impl quantizers), for each sub-block in
// turn: fit(j, weights) runs with them, and sub_weights[j] gets their sum.
template <typename Fit>
void sub_weight_fits(const float* x, const float* qw, float sigma2, float* sub_weights, Fit&& fit) {
  for (size_t j = 0; j < kSubBlocks; ++j) {
    float weights[kSub];
    for (size_t i = 0; i < kSub; ++i) {
      const float xi = x[kSub * j + i];
      weights[i] = qw[kSub * j + i] * std::sqrt(sigma2 + xi * xi);
    }
    float sum = 0;
    for (size_t i = 0; i < kSub; ++i) sum += weights[i];
    sub_weights[j] = sum;
    fit(j, weights);
  }
}

// Requantizes against the stored scales and packs; a sub-block whose stored
// scale is zero keeps the codes of its fit, as in ggml.
void requantize_and_pack(const float* x, uint8_t* codes, BlockQ2_K& out) {
  for (size_t j = 0; j < kSubBlocks; ++j) {
    const float d = fp16_to_fp32(out.d) * static_cast<float>(out.scales[j] & 0xF);
    if (d == 0) continue;
    const float dm = fp16_to_fp32(out.dmin) * static_cast<float>(out.scales[j] >> 4);
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) {
      codes[i] = static_cast<uint8_t>(clamp(nearest_int((x[i] + dm) / d), 0, 3));
    }
  }
  pack_two_bit(codes, out.qs);
}

void quantize_block(const float* x, BlockQ2_K& out) {
  uint8_t codes[QK_K];
  float scales[kSubBlocks];
  float mins[kSubBlocks];
  float max_scale = 0;
  float max_min = 0;
  for (size_t j = 0; j < kSubBlocks; ++j) {
    float weights[kSub];
    for (size_t i = 0; i < kSub; ++i) weights[i] = std::fabs(x[kSub * j + i]);
    scales[j] = detail::fit_offset_codes(x + kSub * j, weights, kSub, 3, kQ2KGrid, detail::FitError::absolute,
                                         codes + kSub * j, mins[j]);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  std::memset(out.scales, 0, sizeof out.scales);
  out.d = fp32_to_fp16(0.f);
  out.dmin = fp32_to_fp16(0.f);
  if (max_scale > 0) {
    const float iscale = kQ2KLevels / max_scale;
    for (size_t j = 0; j < kSubBlocks; ++j) out.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
    out.d = fp32_to_fp16(max_scale / kQ2KLevels);
  }
  if (max_min > 0) {
    const float iscale = kQ2KLevels / max_min;
    for (size_t j = 0; j < kSubBlocks; ++j) out.scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
    out.dmin = fp32_to_fp16(max_min / kQ2KLevels);
  }

  requantize_and_pack(x, codes, out);
}

// Under an importance matrix qw (ggml's quantize_row_q2_K_impl): element
// weights qw * sqrt(sigma2 + x^2) with sigma2 the super-block's mean square,
// the make_qkx3 grid with squared error, and the 16 scales and 16 mins fitted
// to 4 bits by least squares weighted by each sub-block's total weight.
void quantize_block(const float* x, const float* qw, BlockQ2_K& out) {
  uint8_t codes[QK_K];
  float sum_x2 = 0;
  for (size_t i = 0; i < QK_K; ++i) sum_x2 += x[i] * x[i];
  const float sigma2 = sum_x2 / static_cast<float>(QK_K);
  float scales[kSubBlocks];
  float mins[kSubBlocks];
  float sub_weights[kSubBlocks];
  sub_weight_fits(x, qw, sigma2, sub_weights, [&](size_t j, const float* weights) {
    scales[j] = detail::fit_offset_codes(x + kSub * j, weights, kSub, 3, detail::kWeightedGrid,
                                         detail::FitError::squared, codes + kSub * j, mins[j]);
  });
  uint8_t ls[kSubBlocks];
  uint8_t lm[kSubBlocks];
  out.d = fp32_to_fp16(detail::fit_positive_codes(scales, sub_weights, kSubBlocks, 15, ls));
  out.dmin = fp32_to_fp16(detail::fit_positive_codes(mins, sub_weights, kSubBlocks, 15, lm));
  for (size_t j = 0; j < kSubBlocks; ++j) out.scales[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
  requantize_and_pack(x, codes, out);
}

void dequantize_block(const BlockQ2_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  for (size_t e = 0; e < QK_K; ++e) {
    const uint8_t sc = b.scales[e / kSub];
    const float dl = d * static_cast<float>(sc & 0xF);
    const float ml = dmin * static_cast<float>(sc >> 4);
    y[e] = dl * static_cast<float>(two_bit_code(b.qs, e)) - ml;
  }
}

float dot_block(const BlockQ2_K& w, const BlockQ8_K& a) {
  int32_t sum = 0;       // sum_j sc_j * sum_{i in j} code_i * a_i
  int32_t sum_mins = 0;  // sum_j m_j * sum_{i in j} a_i
  for (size_t j = 0; j < kSubBlocks; ++j) {
    int32_t sub = 0;
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) sub += int32_t{two_bit_code(w.qs, i)} * int32_t{a.qs[i]};
    sum += int32_t{w.scales[j] & 0xF} * sub;
    sum_mins += int32_t{w.scales[j] >> 4} * int32_t{a.bsums[j]};
  }
  const float d = fp16_to_fp32(w.d) * a.d;
  const float dmin = fp16_to_fp32(w.dmin) * a.d;
  return d * static_cast<float>(sum) - dmin * static_cast<float>(sum_mins);
}

// ---------------------------------------------------------------------- Q3_K

constexpr int kQ3Max = 4;  // codes -4..3

// Symmetric fit of one 16-element sub-block (ggml's make_q3_quants with
// do_rmse): codes 0..7 (code - 4 multiplies the scale), returns the scale.
float fit_q3_codes(const float* x, uint8_t* codes) {
  float max = 0;
  float abs_max = 0;
  for (size_t i = 0; i < kSub; ++i) {
    if (std::fabs(x[i]) > abs_max) {
      abs_max = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (abs_max < detail::kGroupMaxEps) {
    std::memset(codes, 0, kSub);
    return 0.f;
  }
  const float iscale = static_cast<float>(-kQ3Max) / max;
  int level[kSub];  // -4..3
  float sum_lx = 0;
  float sum_l2 = 0;
  for (size_t i = 0; i < kSub; ++i) {
    level[i] = clamp(nearest_int(iscale * x[i]), -kQ3Max, kQ3Max - 1);
    const float w = x[i] * x[i];
    sum_lx += w * x[i] * static_cast<float>(level[i]);
    sum_l2 += w * static_cast<float>(level[i]) * static_cast<float>(level[i]);
  }
  // Move one code at a time to the value best for the fit of the others, kept
  // when the fit's explained energy sum_lx^2 / sum_l2 grows.
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (size_t i = 0; i < kSub; ++i) {
      const float w = x[i] * x[i];
      float slx = sum_lx - w * x[i] * static_cast<float>(level[i]);
      if (!(slx > 0)) continue;
      float sl2 = sum_l2 - w * static_cast<float>(level[i]) * static_cast<float>(level[i]);
      const int candidate = clamp(nearest_int(x[i] * sl2 / slx), -kQ3Max, kQ3Max - 1);
      if (candidate == level[i]) continue;
      slx += w * x[i] * static_cast<float>(candidate);
      sl2 += w * static_cast<float>(candidate) * static_cast<float>(candidate);
      if (sl2 > 0 && slx * slx * sum_l2 > sum_lx * sum_lx * sl2) {
        level[i] = candidate;
        sum_lx = slx;
        sum_l2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (size_t i = 0; i < kSub; ++i) codes[i] = static_cast<uint8_t>(level[i] + kQ3Max);
  return sum_l2 > 0.0f ? sum_lx / sum_l2 : 0.0f;
}

// Requantizes against the stored scales (a sub-block whose stored scale is
// zero keeps the codes of its fit, as in ggml), then stores the high bits in
// hmask and the low two in qs.
void requantize_and_pack(const float* x, uint8_t* codes, BlockQ3_K& out) {
  for (size_t j = 0; j < kSubBlocks; ++j) {
    const float d = fp16_to_fp32(out.d) * static_cast<float>(static_cast<int>(q3_k_scale(out.scales, j)) - 32);
    if (d == 0) continue;
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) {
      codes[i] = static_cast<uint8_t>(clamp(nearest_int(x[i] / d), -kQ3Max, kQ3Max - 1) + kQ3Max);
    }
  }
  std::memset(out.hmask, 0, sizeof out.hmask);
  for (size_t e = 0; e < QK_K; ++e) {
    if (codes[e] > 3) {
      out.hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
      codes[e] = static_cast<uint8_t>(codes[e] - 4);
    }
  }
  pack_two_bit(codes, out.qs);
}

void quantize_block(const float* x, BlockQ3_K& out) {
  uint8_t codes[QK_K];  // 0..7
  float scales[kSubBlocks];
  float max_scale = 0;
  float abs_max_scale = 0;
  for (size_t j = 0; j < kSubBlocks; ++j) {
    scales[j] = fit_q3_codes(x + kSub * j, codes + kSub * j);
    if (std::fabs(scales[j]) > abs_max_scale) {
      abs_max_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }

  std::memset(out.scales, 0, sizeof out.scales);
  out.d = fp32_to_fp16(0.f);
  if (max_scale != 0) {
    // The largest scale maps onto -32; d carries its sign.
    const float iscale = -32.f / max_scale;
    for (size_t j = 0; j < kSubBlocks; ++j) {
      const int l = clamp(static_cast<int8_t>(nearest_int(iscale * scales[j])), -32, 31) + 32;
      if (j < 8) {
        out.scales[j] = static_cast<uint8_t>(l & 0xF);
      } else {
        out.scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
      }
      out.scales[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
    }
    out.d = fp32_to_fp16(1 / iscale);
  }

  requantize_and_pack(x, codes, out);
}

// Under an importance matrix qw (ggml's quantize_row_q3_K_impl): each
// sub-block fitted symmetrically with weights qw * sqrt(sigma2 + x^2), sigma2
// twice the super-block's mean square, then the 16 scales fitted the same way
// to 6 bits, weighted by each sub-block's total weight.
void quantize_block(const float* x, const float* qw, BlockQ3_K& out) {
  float sum_x2 = 0;
  for (size_t i = 0; i < QK_K; ++i) sum_x2 += x[i] * x[i];
  const float sigma2 = 2 * sum_x2 / static_cast<float>(QK_K);
  int8_t levels[QK_K];  // 0..7
  float scales[kSubBlocks];
  float sub_weights[kSubBlocks];
  sub_weight_fits(x, qw, sigma2, sub_weights, [&](size_t j, const float* weights) {
    scales[j] = detail::fit_symmetric_codes(x + kSub * j, weights, kSub, kQ3Max, levels + kSub * j);
  });
  int8_t stored[kSubBlocks];  // 0..63, the scale plus 32
  const float d_block = detail::fit_symmetric_codes(scales, sub_weights, kSubBlocks, 32, stored);
  std::memset(out.scales, 0, sizeof out.scales);
  for (size_t j = 0; j < kSubBlocks; ++j) {
    const int l = stored[j];
    if (j < 8) {
      out.scales[j] = static_cast<uint8_t>(l & 0xF);
    } else {
      out.scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
    }
    out.scales[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
  }
  out.d = fp32_to_fp16(d_block);
  uint8_t codes[QK_K];
  for (size_t i = 0; i < QK_K; ++i) codes[i] = static_cast<uint8_t>(levels[i]);
  requantize_and_pack(x, codes, out);
}

// Code of element e minus 4 (-4..3).
int q3_value(const BlockQ3_K& b, size_t e) {
  const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
  return static_cast<int>(two_bit_code(b.qs, e)) + 4 * high - 4;
}

void dequantize_block(const BlockQ3_K& b, float* y) {
  const float d = fp16_to_fp32(b.d);
  for (size_t e = 0; e < QK_K; ++e) {
    const float dl = d * static_cast<float>(static_cast<int>(q3_k_scale(b.scales, e / kSub)) - 32);
    y[e] = dl * static_cast<float>(q3_value(b, e));
  }
}

float dot_block(const BlockQ3_K& w, const BlockQ8_K& a) {
  int32_t sum = 0;  // sum_j (sc_j - 32) * sum_{i in j} (code_i - 4) * a_i
  for (size_t j = 0; j < kSubBlocks; ++j) {
    int32_t sub = 0;
    for (size_t i = kSub * j; i < kSub * (j + 1); ++i) sub += q3_value(w, i) * int32_t{a.qs[i]};
    sum += (int32_t{q3_k_scale(w.scales, j)} - 32) * sub;
  }
  return (fp16_to_fp32(w.d) * a.d) * static_cast<float>(sum);
}

}  // namespace

void quantize_row_q2_k(const float* x, void* dst, size_t k) {
  detail::quantize_blocks<QK_K>(x, static_cast<BlockQ2_K*>(dst), k, quantize_block);
}
void quantize_row_q3_k(const float* x, void* dst, size_t k) {
  detail::quantize_blocks<QK_K>(x, static_cast<BlockQ3_K*>(dst), k, quantize_block);
}
void quantize_row_q2_k_weighted(const float* x, void* dst, size_t k, const float* qw) {
  auto* blocks = static_cast<BlockQ2_K*>(dst);
  for (size_t b = 0; b < k / QK_K; ++b) quantize_block(x + b * QK_K, qw + b * QK_K, blocks[b]);
}
void quantize_row_q3_k_weighted(const float* x, void* dst, size_t k, const float* qw) {
  auto* blocks = static_cast<BlockQ3_K*>(dst);
  for (size_t b = 0; b < k / QK_K; ++b) quantize_block(x + b * QK_K, qw + b * QK_K, blocks[b]);
}
void dequantize_row_q2_k(const void* src, float* y, size_t k) {
  detail::dequantize_blocks<QK_K>(static_cast<const BlockQ2_K*>(src), y, k, dequantize_block);
}
void dequantize_row_q3_k(const void* src, float* y, size_t k) {
  detail::dequantize_blocks<QK_K>(static_cast<const BlockQ3_K*>(src), y, k, dequantize_block);
}
float vec_dot_q2_k_q8_k(size_t k, const void* w, const void* a) {
  return detail::dot_blocks<QK_K>(k, static_cast<const BlockQ2_K*>(w), static_cast<const BlockQ8_K*>(a), dot_block);
}
float vec_dot_q3_k_q8_k(size_t k, const void* w, const void* a) {
  return detail::dot_blocks<QK_K>(k, static_cast<const BlockQ3_K*>(w), static_cast<const BlockQ8_K*>(a), dot_block);
}

}  // namespace kernels::ref
