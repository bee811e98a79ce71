// Float weights (F16, BF16, F32) x F32 activations, one MR x 4 tile, on Armv8.0
// Advanced SIMD: the weights are brought to f32 (FCVTL for F16, a shift left
// by 16 for BF16, F32 as they are) and FMLA accumulates in f32 (no fp16 or
// bf16 arithmetic: neither FEAT_FP16 nor FEAT_BF16 is needed).
// One tile for all three: FloatTile<Weights> takes the weight-row loader
// (F16Weights, BF16Weights, F32Weights below) and keeps the loop and the order of the sums;
// with the loader inlined, the F16 kernels run the instructions they ran
// before the loader was split out (kernel_insn under qemu, docs/kernels.md).
//
// Each output element has one float32x4 accumulator: lane l sums w[t] * x[t]
// for t = l (mod 4) in increasing t with fused multiply-adds; the four lanes
// are then added pairwise ((l0 + l1) + (l2 + l3)) and the k % 4 tail added in
// order. That sequence is the same in the 1-row and the 4-row tile, so an
// element's value never depends on the tile it falls in. It differs from the
// reference (which sums in double) by float rounding only.
#pragma once

#include <arm_neon.h>

#include <bit>
#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/arm/neon/tile.h"

namespace kernels::arm {
namespace {

// IEEE half weights: 8 with one LD1 and FCVTL / FCVTL2, 4 with LD1 + FCVTL.
struct F16Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::F16;
  using Elem = uint16_t;
  static void load8(const Elem* p, float32x4_t& lo, float32x4_t& hi) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    lo = vcvt_f32_f16(vget_low_f16(h));
    hi = vcvt_high_f32_f16(h);
  }
  static float32x4_t load4(const Elem* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static float scalar(Elem e) { return fp16_to_f32(e); }
};

// bfloat16 weights: the top half of an f32, so widening is exact and is a
// shift: 8 with one LD1 and SHLL / SHLL2 by 16, 4 with LD1 + SHLL.
struct BF16Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::BF16;
  using Elem = uint16_t;
  static void load8(const Elem* p, float32x4_t& lo, float32x4_t& hi) {
    const uint16x8_t h = vld1q_u16(p);
    lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
    hi = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
  }
  static float32x4_t load4(const Elem* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
  static float scalar(Elem e) { return std::bit_cast<float>(uint32_t{e} << 16); }
};

// F32 weights, loaded as they are.
struct F32Weights {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::F32;
  using Elem = float;
  static void load8(const Elem* p, float32x4_t& lo, float32x4_t& hi) {
    lo = vld1q_f32(p);
    hi = vld1q_f32(p + 4);
  }
  static float32x4_t load4(const Elem* p) { return vld1q_f32(p); }
  static float scalar(Elem e) { return e; }
};

template <class Weights>
struct FloatTile : GgufRows {
  using Elem = typename Weights::Elem;
  static constexpr gguf::GgmlType kRhsType = Weights::kType;
  static constexpr gguf::GgmlType kLhsType = gguf::GgmlType::F32;
  static constexpr auto pack_lhs = neon::pack_lhs_f32;
  static size_t lhs_row_bytes(size_t k) { return k * sizeof(float); }
  static size_t rhs_row_bytes(size_t k) { return k * sizeof(Elem); }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const GgufRows& w, float32x4_t* out) {
    const float* xf[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) xf[i] = reinterpret_cast<const float*>(x[i]);
    const Elem* wh[kTileN];
#pragma GCC unroll 4
    for (size_t c = 0; c < kTileN; ++c) wh[c] = reinterpret_cast<const Elem*>(w.row[c]);

    float32x4_t acc[MR][kTileN];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) acc[i][c] = vdupq_n_f32(0.0f);
    }
    size_t t = 0;
    for (; t + 8 <= k; t += 8) {
      float32x4_t w0[kTileN], w1[kTileN];
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) Weights::load8(wh[c] + t, w0[c], w1[c]);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const float32x4_t x0 = vld1q_f32(xf[i] + t);
        const float32x4_t x1 = vld1q_f32(xf[i] + t + 4);
#pragma GCC unroll 4
        for (size_t c = 0; c < kTileN; ++c) acc[i][c] = vfmaq_f32(vfmaq_f32(acc[i][c], w0[c], x0), w1[c], x1);
      }
    }
    if (t + 4 <= k) {
      float32x4_t w0[kTileN];
#pragma GCC unroll 4
      for (size_t c = 0; c < kTileN; ++c) w0[c] = Weights::load4(wh[c] + t);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const float32x4_t x0 = vld1q_f32(xf[i] + t);
#pragma GCC unroll 4
        for (size_t c = 0; c < kTileN; ++c) acc[i][c] = vfmaq_f32(acc[i][c], w0[c], x0);
      }
      t += 4;
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) {
      out[i] = vpaddq_f32(vpaddq_f32(acc[i][0], acc[i][1]), vpaddq_f32(acc[i][2], acc[i][3]));
    }
    if (t < k) {  // k % 4 elements, in order
      for (size_t i = 0; i < MR; ++i) {
        float y[kTileN];
        vst1q_f32(y, out[i]);
        for (size_t c = 0; c < kTileN; ++c) {
          for (size_t u = t; u < k; ++u) y[c] += Weights::scalar(wh[c][u]) * xf[i][u];
        }
        out[i] = vld1q_f32(y);
      }
    }
  }
};

using F16Tile = FloatTile<F16Weights>;
using BF16Tile = FloatTile<BF16Weights>;
using F32Tile = FloatTile<F32Weights>;

}  // namespace
}  // namespace kernels::arm
