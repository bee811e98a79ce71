// The tile loop of the super-block types (K-quants: 256 elements with sub-block
// scales: Q4_K, Q5_K and Q6_K; Q3_K, Q2_K and IQ4_XS fit the same loop) on the
// neon and dotprod tiers. Header-only with internal linkage, compiled in each
// tier's files with that tier's flags (tile.h).
//
// A type gives, for one tier, how a super-block decodes, as a struct S of
// force-inlined functions deriving from SuperBlockType below (its GGUF block,
// packed block, the power of two kFracBits by which its codes exceed the
// reference's, and whether the 1-row tile unrolls the quarters) and from a
// mins policy (k_quants.h: Q4KMinsDecode, Q5KMinsDecode or NoMins):
//   static void pack(const uint8_t* const* blocks, Packed& p);
//                       // the 4 rows' GGUF super-blocks
//   template <size_t MR> static void quarter(const Packed& p, size_t g,
//       const ref::BlockQ8_K* const* xb, int32x4_t* isum);
//                       // elements 64g .. 64g + 63: isum[i] += sub-block
//                       // scale x integer dot, for each row i
// A type that decodes once per super-block what its quarters share (IQ4_XS:
// its 6-bit scales) names it S::Shared, made by S::shared(p) and passed to
// quarter after p.
// The loop does the rest: per super-block, the quarters for the MR rows of
// X, then per row acc += (d_w * d_x) * float(isum) [- (dmin_w * d_x) *
// float(mins . bsums)], as the reference rounds (no fused multiply-add). A
// mins policy with kMins has mins(p), decoded once per super-block, and
// mins_dot(mins, xb): sum_s m_s * (sum of the codes of sub-block s), by
// column; Packed then has dmin[4]. Codes decoded 2^kCodeOffsetBits below the
// reference's (Q5_K, k_quants.h) get that times sum_s sc_s * (the same sums)
// added back to the integer sum, sc_s from offset_scales(p).
//
// The quarters stay a loop in the 4-row tile: unrolled, GCC hoists the weight
// loads of the whole super-block and spills them (+40% instructions in the
// dotprod Q4_K tile, and no gain in decode; counted with kernel_insn).
// Sharing the loop costs nothing: with the quarter force-inlined into one
// compute<MR> per type, the neon and dotprod Q4_K and Q6_K kernels ran the
// same instructions as their four hand-written loops (kernel_insn under qemu).
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"
#include "kernels/arm/neon/block_tile.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

template <gguf::GgmlType kT, class GgufBlock, class PackedT, int kFrac = 0, bool kUnroll = false>
struct SuperBlockType {
  static constexpr gguf::GgmlType kType = kT;
  static constexpr size_t kBlockBytes = sizeof(GgufBlock);
  static constexpr int kFracBits = kFrac;
  static constexpr bool kUnrollDecode = kUnroll;
  using Packed = PackedT;
};

template <class S>
struct SuperBlockTile : GroupRows<ref::QK_K, S::kBlockBytes, ref::BlockQ8_K> {
  using Packed = typename S::Packed;
  static constexpr gguf::GgmlType kRhsType = S::kType;
  static constexpr gguf::GgmlType kLhsType = gguf::GgmlType::Q8_K;
  static constexpr auto pack_lhs = neon::pack_lhs_q8_k;

  static void pack_block(const uint8_t* const* blocks, Packed& p) { S::pack(blocks, p); }

  template <size_t MR, class Quarter>
  __attribute__((always_inline)) static void quarters(Quarter quarter) {
    if constexpr (MR == 1 && S::kUnrollDecode) {
#pragma GCC unroll 4
      for (size_t g = 0; g < 4; ++g) quarter(g);
    } else {
#pragma GCC unroll 1
      for (size_t g = 0; g < 4; ++g) quarter(g);
    }
  }

  // The decode row by kLoop (InOrderRow, block_tile.h), given the group's
  // super-blocks, the row's and their count (one or more): the sum of their
  // terms.
  template <float32x4_t (*kLoop)(const Packed* w, const ref::BlockQ8_K* x, size_t count, float32x4_t acc)>
  __attribute__((always_inline)) static float32x4_t row(size_t k, const uint8_t* const* x, const uint8_t* group) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    if (k < ref::QK_K) return zero;
    return kLoop(reinterpret_cast<const Packed*>(group), reinterpret_cast<const ref::BlockQ8_K*>(x[0]), k / ref::QK_K,
                 zero);
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    const auto* w = reinterpret_cast<const Packed*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK_K; ++b) {
      const Packed& p = w[b];
      const ref::BlockQ8_K* xb[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) xb[i] = reinterpret_cast<const ref::BlockQ8_K*>(x[i]) + b;
      int32x4_t isum[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) isum[i] = vdupq_n_s32(0);

      if constexpr (requires { typename S::Shared; }) {
        const typename S::Shared shared = S::shared(p);
        quarters<MR>([&](size_t g) __attribute__((always_inline)) { S::template quarter<MR>(p, shared, g, xb, isum); });
      } else {
        quarters<MR>([&](size_t g) __attribute__((always_inline)) { S::template quarter<MR>(p, g, xb, isum); });
      }

      if constexpr (S::kMins) {
        // After the quarters, so that the mins' registers are free during them.
        if constexpr (S::kCodeOffsetBits != 0) {
          const auto sc = S::offset_scales(p);
#pragma GCC unroll 4
          for (size_t i = 0; i < MR; ++i) {
            isum[i] = vaddq_s32(isum[i], vshlq_n_s32(S::mins_dot(sc, *xb[i]), S::kCodeOffsetBits));
          }
        }
        const auto mins = S::mins(p);
        const float32x4_t dw = load_scales_x4(p.d);
        const float32x4_t dminw = load_scales_x4(p.dmin);
#pragma GCC unroll 4
        for (size_t i = 0; i < MR; ++i) {
          const float32x4_t min_term =
              vmulq_f32(vmulq_n_f32(dminw, xb[i]->d), vcvtq_f32_s32(S::mins_dot(mins, *xb[i])));
          const float32x4_t d = vmulq_n_f32(dw, xb[i]->d);
          acc[i] = vaddq_f32(acc[i], vsubq_f32(vmulq_f32(d, to_float<S::kFracBits>(isum[i])), min_term));
        }
      } else {
        const float32x4_t dw = load_scales_x4(p.d);
#pragma GCC unroll 4
        for (size_t i = 0; i < MR; ++i) {
          acc[i] = vaddq_f32(acc[i], vmulq_f32(vmulq_n_f32(dw, xb[i]->d), to_float<S::kFracBits>(isum[i])));
        }
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

}  // namespace
}  // namespace kernels::arm
