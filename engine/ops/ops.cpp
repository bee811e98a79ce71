#include "engine/ops/ops.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "engine/ops/ops_isa.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quants.h"

namespace engine::ops {
namespace {

using Batch = xsimd::batch<float>;
constexpr size_t kLanes = Batch::size;

}  // namespace

float dot(const float* x, const float* y, size_t n) {
  Batch acc(0.0f);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    acc = xsimd::fma(Batch::load_unaligned(x + i), Batch::load_unaligned(y + i), acc);
  }
  float sum = xsimd::hadd(acc);
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

void rmsnorm(float* out, const float* x, const float* weight, size_t n, float eps) {
  // Sum of squares in double: n can be 8192 and the result feeds every layer.
  // Eight partial sums, which the compiler turns into vectors of doubles; one
  // sequential sum was 7 instructions per value under qemu (0.12 M of a 9.9 M
  // prefill token, dim 1024 x 8 layers).
  double part[8] = {};
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (size_t l = 0; l < 8; ++l) part[l] += static_cast<double>(x[j + l]) * x[j + l];
  }
  for (; j < n; ++j) part[0] += static_cast<double>(x[j]) * x[j];
  const double ss = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const auto inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  const Batch vinv(inv);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    (Batch::load_unaligned(x + i) * vinv * Batch::load_unaligned(weight + i)).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = x[i] * inv * weight[i];
}

size_t first_non_finite(const float* x, size_t n) {
  // An all-ones exponent is Inf or NaN. OR-ing one flag per value has no early
  // exit, so it vectorizes (a loop of std::isfinite with a break does not);
  // the slow scan for the index runs only when something was found.
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  if (any == 0) return n;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return i;
  }
  return n;
}

void add(float* y, const float* x, size_t n) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    (Batch::load_unaligned(y + i) + Batch::load_unaligned(x + i)).store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] += x[i];
}

void axpy(float* y, float a, const float* x, size_t n) {
  const Batch va(a);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    xsimd::fma(va, Batch::load_unaligned(x + i), Batch::load_unaligned(y + i)).store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] += a * x[i];
}

void scale(float* y, float a, size_t n) {
  const Batch va(a);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) (Batch::load_unaligned(y + i) * va).store_unaligned(y + i);
  for (; i < n; ++i) y[i] *= a;
}

void softcap(float* y, float cap, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = cap * std::tanh(y[i] / cap);
}

void rope(float* x, size_t n_rot, const float* cos_sin, RopeStyle style) {
  const size_t half = n_rot / 2;
  for (size_t i = 0; i < half; ++i) {
    const float c = cos_sin[2 * i];
    const float s = cos_sin[2 * i + 1];
    const size_t a = style == RopeStyle::normal ? 2 * i : i;
    const size_t b = style == RopeStyle::normal ? 2 * i + 1 : i + half;
    const float x0 = x[a];
    const float x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
}

// Every token stores its keys and values through this; the scalar reference
// per element was 0.09 M instructions of a 9.9 M prefill token under qemu (dim
// 1024 x 8 layers). ARM has the conversion; elsewhere (x86-64's baseline has
// none) it is branch-free like fp16_to_fp32 below, so it vectorizes. Both are
// bit-identical to kernels::ref::fp32_to_fp16 on every float with any of the
// rounding-relevant low bits (tests/engine/ops_test.cpp).
void fp32_to_fp16(const float* x, uint16_t* y, size_t n) {
#if defined(__aarch64__)
  // ARMv8's own conversion (FCVTN once vectorized): round to nearest even,
  // NaNs quieted with their top payload bits, as the reference does.
  for (size_t i = 0; i < n; ++i) y[i] = std::bit_cast<uint16_t>(static_cast<__fp16>(x[i]));
#else
  constexpr uint32_t kRebias = uint32_t{127 - 15} << 23;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(x[i]);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t mag = u & 0x7fffffffu;
    const uint32_t is_nan = 0u - static_cast<uint32_t>(mag > 0x7f800000u);
    const uint32_t is_inf = (0u - static_cast<uint32_t>(mag >= 0x477ff000u)) & ~is_nan;  // rounds past 65504
    const uint32_t is_normal = (0u - static_cast<uint32_t>(mag >= 0x38800000u)) & ~(is_nan | is_inf);
    // NaN: quiet, the top 10 payload bits kept.
    const uint32_t nan = 0x7e00u | ((mag >> 13) & 0x3ffu);
    // Normal: round the mantissa to 10 bits, ties to even (a carry bumps the exponent).
    const uint32_t normal = (mag + 0xfffu + ((mag >> 13) & 1u) - kRebias) >> 13;
    // Subnormal (and zero): |x| + 0.5 rounds |x| to a multiple of 2^-24, ties
    // to even, in the float addition itself; the bits above 0.5's are the count.
    const uint32_t small = std::bit_cast<uint32_t>(std::bit_cast<float>(mag) + 0.5f) - 0x3f000000u;
    const uint32_t bits = (nan & is_nan) | (0x7c00u & is_inf) | (normal & is_normal) |
                          (small & ~(is_nan | is_inf | is_normal));
    y[i] = static_cast<uint16_t>(bits | sign);
  }
#endif
}

// Branch-free, so the compiler vectorizes it for the baseline (SSE2, NEON): the
// attention of every token converts the whole F16 KV history of each head, and
// the scalar kernels::ref::fp16_to_fp32 per element made that most of a prefill
// token's instructions (21 M of 33 M at 96 tokens under qemu, dim 1024 x 8
// layers). Bit-identical to the reference, every one of the 65536 halves
// (tests/engine/ops_test.cpp).
void fp16_to_fp32_portable(const uint16_t* x, float* y, size_t n) {
#if defined(__aarch64__)
  // ARMv8's own conversion (FCVTL once vectorized), exact like the reference:
  // 2 instructions per 4 values against 12 for the bit operations below.
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(std::bit_cast<__fp16>(x[i]));
#else
  constexpr uint32_t kRebias = uint32_t{127 - 15} << 23;  // exponent bias difference, in place
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = x[i];
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;  // exponent and mantissa
    // All-ones masks rather than branches or ?: (which GCC 12 does not vectorize).
    const uint32_t is_special = 0u - static_cast<uint32_t>(em >= 0x7c00u);
    const uint32_t is_normal = (0u - static_cast<uint32_t>(em >= 0x0400u)) & ~is_special;
    const uint32_t is_nan = 0u - static_cast<uint32_t>(em > 0x7c00u);
    const uint32_t normal = (em << 13) + kRebias;
    // Infinity, or NaN made quiet with its payload kept.
    const uint32_t special = (em << 13) | 0x7f800000u | (is_nan & 0x00400000u);
    // Zero and subnormals: mantissa x 2^-24, exact in fp32.
    const uint32_t small = std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
    const uint32_t bits = (special & is_special) | (normal & is_normal) | (small & ~(is_special | is_normal));
    y[i] = std::bit_cast<float>(bits | sign);
  }
#endif
}

// The scalar twins of the quantized-row products: each row dequantized as
// the reference does, then sums in position order (the oracle of the tests).
namespace {
void dequantize_rows(RowQuant t, const uint8_t* row, float* y, size_t d) {
  if (t == RowQuant::q8_0) {
    kernels::ref::dequantize_row_q8_0(row, y, d);
  } else {
    kernels::ref::dequantize_row_q4_0(row, y, d);
  }
}
}  // namespace

void dot_rows_quant_ref(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k,
                        size_t k_row_bytes, size_t n_k, size_t d, float scale, float* out, size_t out_stride) {
  // Each query rounded to Q8_0 blocks, as llama.cpp's flash attention does,
  // then ggml's block dots (kernels/ref: integer sums times both scales).
  std::vector<kernels::ref::BlockQ8_0> qq(n_q * (d / kernels::ref::QK));
  for (size_t i = 0; i < n_q; ++i) {
    kernels::ref::quantize_row_q8_0(q + i * q_stride, &qq[i * (d / kernels::ref::QK)], d);
  }
  const auto dot = t == RowQuant::q8_0 ? kernels::ref::vec_dot_q8_0_q8_0 : kernels::ref::vec_dot_q4_0_q8_0;
  for (size_t p = 0; p < n_k; ++p) {
    for (size_t i = 0; i < n_q; ++i) {
      out[i * out_stride + p] = dot(d, k + p * k_row_bytes, &qq[i * (d / kernels::ref::QK)]) * scale;
    }
  }
}

void weighted_rows_quant_ref(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                             size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride) {
  std::vector<float> row(d);
  for (size_t p = 0; p < n_v; ++p) {
    dequantize_rows(t, v + p * v_row_bytes, row.data(), d);
    for (size_t i = 0; i < n_w; ++i) {
      for (size_t c = 0; c < d; ++c) out[i * out_stride + c] += w[i * w_stride + p] * row[c];
    }
  }
}

}  // namespace engine::ops
