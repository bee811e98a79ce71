// IQ4_NL (blocks of 32, dot format Q8_0) and IQ4_XS (super-blocks of 256 with
// 6-bit sub-block scales, dot format Q8_K): 4-bit codes into the non-linear
// code book kIQ4Values (blocks.h).
//
// Quantization reproduces what llama-quantize writes without an importance
// matrix: ggml's quantize_iq4_nl / quantize_iq4_xs with no quant_weights, i.e.
// quantize_row_iq4_nl_impl with weights x^2 and 7 extra tries either side of
// the starting step (not quantize_row_iq4_nl_ref, which tries none). The
// *_weighted quantizers are the same function with quant_weights, what
// llama-quantize writes with an importance matrix (block_weights). Per
// 32-element block: start from the step that maps the largest |x| onto the
// code book's -127, pick the nearest code of each element, fit the scale by
// weighted least squares, and keep the best of the 15 steps (itry - 127) / max.
// IQ4_NL stores that scale in fp16 and requantizes with it; IQ4_XS quantizes the
// 8 scales to 6 bits against the largest (d = -max_scale / 32) and requantizes
// each sub-block with its stored scale. Float operations are in ggml's order.
//
// Dot products: per block (IQ4_NL) or sub-block (IQ4_XS) the integer sum of
// kIQ4Values[code] * a is exact (int32); IQ4_NL adds (d_w * d_a) * sum per
// block, IQ4_XS sums (ls - 32) * sub-sum exactly over the super-block and adds
// (d_w * d_a) * sum, to a float accumulator, blocks in order.
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

constexpr size_t kBlock = 32;
constexpr int kTries = 7;  // llama-quantize's ntry

// Index of the code-book value nearest to v (ggml's best_index_int8: the lower
// one on ties).
uint8_t nearest_code(float v) {
  if (v <= kIQ4Values[0]) return 0;
  if (v >= kIQ4Values[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < kIQ4Values[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return static_cast<uint8_t>(v - kIQ4Values[hi - 1] < kIQ4Values[hi] - v ? hi - 1 : hi);
}

// The weights of one 32-element block's fit: x^2, or under an importance
// matrix qw * sqrt(sigma2 + x^2) with sigma2 twice the mean square of the
// (super-)block.
void block_weights(const float* x, const float* qw, float sigma2, float* weights) {
  for (size_t j = 0; j < kBlock; ++j) {
    weights[j] = qw != nullptr ? qw[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
  }
}

float twice_mean_square(const float* x, size_t n) {
  float sigma2 = 0;
  for (size_t j = 0; j < n; ++j) sigma2 += x[j] * x[j];
  sigma2 *= 2.f / static_cast<float>(n);
  return sigma2;
}

// sum w*q*x and sum w*q*q (q the value of x's nearest code at the inverse step
// `iscale`).
void fit_sums(const float* x, const float* weights, float iscale, float& sum_qx, float& sum_q2) {
  sum_qx = 0;
  sum_q2 = 0;
  for (size_t j = 0; j < kBlock; ++j) {
    const float q = kIQ4Values[nearest_code(iscale * x[j])];
    const float w = weights[j];
    sum_qx += w * q * x[j];
    sum_q2 += w * q * q;
  }
}

// The least-squares scale of one 32-element block, 0 for an all-zero block.
float fit_block_scale(const float* x, const float* weights) {
  float abs_max = 0, max = 0;
  for (size_t j = 0; j < kBlock; ++j) {
    if (std::fabs(x[j]) > abs_max) {
      abs_max = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (abs_max < detail::kGroupMaxEps) return 0;
  float sum_qx, sum_q2;
  fit_sums(x, weights, 1 / (-max / kIQ4Values[0]), sum_qx, sum_q2);
  float d = sum_q2 > 0 ? sum_qx / sum_q2 : 0.f;
  float best = d * sum_qx;
  for (int t = -kTries; t <= kTries; ++t) {
    fit_sums(x, weights, static_cast<float>(t + kIQ4Values[0]) / max, sum_qx, sum_q2);
    if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
      d = sum_qx / sum_q2;
      best = d * sum_qx;
    }
  }
  return d;
}

// Codes of 32 elements at inverse step `iscale`, packed as in Q4_0.
void pack_codes(const float* x, float iscale, uint8_t* qs) {
  for (size_t j = 0; j < kBlock / 2; ++j) {
    qs[j] = static_cast<uint8_t>(nearest_code(iscale * x[j]) | (nearest_code(iscale * x[j + kBlock / 2]) << 4));
  }
}

int32_t block_sum(const uint8_t* qs, const int8_t* a) {
  int32_t sum = 0;
  for (size_t j = 0; j < kBlock / 2; ++j) {
    sum += int32_t{kIQ4Values[qs[j] & 0xF]} * int32_t{a[j]} + int32_t{kIQ4Values[qs[j] >> 4]} * int32_t{a[j + kBlock / 2]};
  }
  return sum;
}

void dequantize_codes(const uint8_t* qs, float d, float* y) {
  for (size_t j = 0; j < kBlock / 2; ++j) {
    y[j] = d * static_cast<float>(kIQ4Values[qs[j] & 0xF]);
    y[j + kBlock / 2] = d * static_cast<float>(kIQ4Values[qs[j] >> 4]);
  }
}

// ------------------------------------------------------------------ IQ4_NL

void quantize_block(const float* x, const float* qw, BlockIQ4_NL& out) {
  float weights[kBlock];
  block_weights(x, qw, qw != nullptr ? twice_mean_square(x, kBlock) : 0.f, weights);
  const float scale = fit_block_scale(x, weights);
  out.d = fp32_to_fp16(scale);
  pack_codes(x, scale != 0 ? 1 / scale : 0.f, out.qs);
}

// ------------------------------------------------------------------ IQ4_XS

void quantize_block(const float* x, const float* qw, BlockIQ4_XS& out) {
  constexpr size_t kSubBlocks = QK_K / kBlock;
  const float sigma2 = qw != nullptr ? twice_mean_square(x, QK_K) : 0.f;
  float scales[kSubBlocks];
  float max_scale = 0, abs_max_scale = 0;
  for (size_t j = 0; j < kSubBlocks; ++j) {
    float weights[kBlock];
    block_weights(x + kBlock * j, qw != nullptr ? qw + kBlock * j : nullptr, sigma2, weights);
    scales[j] = fit_block_scale(x + kBlock * j, weights);
    if (std::fabs(scales[j]) > abs_max_scale) {
      abs_max_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  // The largest scale maps onto -32. For an all-zero super-block d is -0.0,
  // stored as fp16 0x8000, as ggml writes it.
  const float d = -max_scale / 32;
  out.d = fp32_to_fp16(d);
  const float id = d != 0 ? 1 / d : 0.f;
  out.scales_h = 0;
  std::memset(out.scales_l, 0, sizeof out.scales_l);
  for (size_t j = 0; j < kSubBlocks; ++j) {
    const int l = clamp(nearest_int(id * scales[j]), -32, 31);
    const float dl = d * static_cast<float>(l);
    pack_codes(x + kBlock * j, dl != 0 ? 1 / dl : 0.f, out.qs + kBlock / 2 * j);
    const int stored = l + 32;
    out.scales_l[j / 2] |= static_cast<uint8_t>((stored & 0xF) << (4 * (j % 2)));
    out.scales_h = static_cast<uint16_t>(out.scales_h | ((stored >> 4) << (2 * j)));
  }
}

// qw: the row's importance weights or nullptr.
template <size_t kSize, typename Block>
void quantize_row(const float* x, void* dst, size_t k, const float* qw) {
  auto* blocks = static_cast<Block*>(dst);
  for (size_t b = 0; b < k / kSize; ++b) {
    quantize_block(x + b * kSize, qw != nullptr ? qw + b * kSize : nullptr, blocks[b]);
  }
}

}  // namespace

void quantize_row_iq4_nl(const float* x, void* dst, size_t k) { quantize_row<kBlock, BlockIQ4_NL>(x, dst, k, nullptr); }
void quantize_row_iq4_xs(const float* x, void* dst, size_t k) { quantize_row<QK_K, BlockIQ4_XS>(x, dst, k, nullptr); }
void quantize_row_iq4_nl_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row<kBlock, BlockIQ4_NL>(x, dst, k, qw);
}
void quantize_row_iq4_xs_weighted(const float* x, void* dst, size_t k, const float* qw) {
  quantize_row<QK_K, BlockIQ4_XS>(x, dst, k, qw);
}

void dequantize_row_iq4_nl(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockIQ4_NL*>(src);
  for (size_t b = 0; b < k / kBlock; ++b) dequantize_codes(blocks[b].qs, fp16_to_fp32(blocks[b].d), y + b * kBlock);
}

void dequantize_row_iq4_xs(const void* src, float* y, size_t k) {
  const auto* blocks = static_cast<const BlockIQ4_XS*>(src);
  for (size_t b = 0; b < k / QK_K; ++b) {
    const float d = fp16_to_fp32(blocks[b].d);
    for (size_t j = 0; j < QK_K / kBlock; ++j) {
      const float dl = d * static_cast<float>(static_cast<int>(iq4_xs_scale(blocks[b], j)) - 32);
      dequantize_codes(blocks[b].qs + kBlock / 2 * j, dl, y + b * QK_K + kBlock * j);
    }
  }
}

float vec_dot_iq4_nl_q8_0(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const BlockIQ4_NL*>(w);
  const auto* activations = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (size_t b = 0; b < k / kBlock; ++b) {
    const float d = fp16_to_fp32(weights[b].d) * fp16_to_fp32(activations[b].d);
    sum += d * static_cast<float>(block_sum(weights[b].qs, activations[b].qs));
  }
  return sum;
}

float vec_dot_iq4_xs_q8_k(size_t k, const void* w, const void* a) {
  const auto* weights = static_cast<const BlockIQ4_XS*>(w);
  const auto* activations = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (size_t b = 0; b < k / QK_K; ++b) {
    int32_t block = 0;  // sum_j (ls_j - 32) * sum_{i in j} value_i * a_i
    for (size_t j = 0; j < QK_K / kBlock; ++j) {
      const int32_t ls = int32_t{iq4_xs_scale(weights[b], j)} - 32;
      block += ls * block_sum(weights[b].qs + kBlock / 2 * j, activations[b].qs + kBlock * j);
    }
    sum += (fp16_to_fp32(weights[b].d) * activations[b].d) * static_cast<float>(block);
  }
  return sum;
}

}  // namespace kernels::ref
