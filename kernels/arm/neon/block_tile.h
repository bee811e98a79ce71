// The tile loop of the block types (one scale per block of 32 elements: Q4_0
// and Q8_0, Q5_0, IQ4_NL; with a min, Q4_1 and Q5_1) on the neon and
// dotprod tiers. Header-only with internal linkage, compiled in each tier's
// files with that tier's flags (tile.h).
//
// A type gives, for one tier, how a block decodes, as a struct B of
// force-inlined functions deriving from BlockType below (its GGUF block, and
// the power of two kFracBits by which its codes exceed the reference's):
//   static void pack(const uint8_t* const* blocks, Packed& p);
//                       // the codes of the 4 rows' GGUF blocks into p.qs (the
//                       // loop copies the scales, the first field of every
//                       // block type)
//   struct Codes;       // a block's codes, 4 columns
//   template <size_t MR> static Codes decode(const Packed& p);
//   static int32x4_t dot(const Codes& w, int8x16_t a0, int8x16_t a1);
//                       // the 4 columns' integer sums against activation
//                       // codes 0..15 (a0) and 16..31 (a1)
// and the loop does the rest: per block, decode once for the MR rows of X,
// then per row acc += (d_w * d_x) * float(dot) / 2^kFracBits (SCVTF with
// fraction bits: exact), no fused multiply-add, as the reference rounds. A
// type with a min (Q4_1, Q5_1: MinBlockType) adds m_w * s_x to that term
// first, as the reference does.
//
// Activations: Q8_0 rows of BlockQ8_0F (lhs_q8_0.h, pack_lhs_q8_0f); Q8_1
// rows in the same blocks for the types with a min (pack_lhs_q8_1f).
//
// Sharing the loop costs next to nothing: with pack, decode and dot
// force-inlined into one compute<MR> per type, the neon and dotprod Q4_0 and
// Q8_0 kernels ran within 0.13% of the instructions of their four
// hand-written loops (kernel_insn under qemu, decode 1 x 2048 x 2048 and
// prefill 35 x 256 x 2048: dotprod Q4_0 decode +0.10%, Q8_0 prefill +0.13%,
// neon Q4_0 decode +0.03%, from GCC 12's register allocation around the
// loops; the inner loops are the same instructions). That cost is per tile
// call (2 instructions a 1 x 4 tile, about 6 a 4 x 4 one), so it weighs more
// at small K: per token of the insn_guard models (K = 256, 768), dotprod
// Q4_0 decode +0.40% and Q8_0 prefill +0.65%, neon Q4_0 decode +0.14%.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/ggml_types.h"
#include "kernels/arm/neon/lhs_q8_0.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/arm/neon/tile.h"
#include "kernels/ref/blocks.h"

namespace kernels::arm {
namespace {

// The 4 rows' fp16 scales of a packed block as floats.
__attribute__((always_inline)) inline float32x4_t load_scales_x4(const uint16_t* d) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(d)));
}

// A packed block of a 4-row group: the rows' fp16 scales side by side, so
// that one load gives the 4, then their codes (kCodeBytes a row) in the
// tier's order.
template <size_t kCodeBytes>
struct PackedBlock {
  uint16_t d[kTileN];
  uint8_t qs[kTileN * kCodeBytes];
};

template <gguf::GgmlType kT, class GgufBlock, int kFrac = 0,
          class PackedT = PackedBlock<sizeof(GgufBlock) - sizeof(uint16_t)>>
struct BlockType {
  static constexpr gguf::GgmlType kType = kT;
  static constexpr size_t kBlockBytes = sizeof(GgufBlock);
  static constexpr int kFracBits = kFrac;
  static constexpr bool kMin = false;
  static constexpr int kCodeOffset = 0;
  using Packed = PackedT;
};

// The packed block of a type with a min (Q4_1, Q5_1: x = d * q + m): the
// rows' fp16 scales, then their fp16 mins, then their codes.
template <size_t kCodeBytes>
struct PackedMinBlock {
  uint16_t d[kTileN];
  uint16_t m[kTileN];
  uint8_t qs[kTileN * kCodeBytes];
};

// A type with a min, dotted with Q8_1 activations (the reference's
// d_w d_x isum + m_w s_x). Codes decoded kCodeOffset below the reference's
// (Q5_1: q - 16, as Q5_0's) get kCodeOffset * (the sum of the activation
// codes) added back to the integer sum.
template <gguf::GgmlType kT, class GgufBlock, int kCodeOffsetT = 0>
struct MinBlockType : BlockType<kT, GgufBlock, 0, PackedMinBlock<sizeof(GgufBlock) - 2 * sizeof(uint16_t)>> {
  static constexpr bool kMin = true;
  static constexpr int kCodeOffset = kCodeOffsetT;
};

// isum / 2^kFracBits as floats, exactly.
template <int kFracBits>
__attribute__((always_inline)) inline float32x4_t to_float(int32x4_t isum) {
  if constexpr (kFracBits == 0) return vcvtq_f32_s32(isum);
  return vcvtq_n_f32_s32(isum, kFracBits);
}

template <class B>
struct BlockTile : GroupRows<ref::QK, B::kBlockBytes, neon::BlockQ8_0F> {
  using Packed = typename B::Packed;
  static constexpr gguf::GgmlType kRhsType = B::kType;
  static constexpr gguf::GgmlType kLhsType = B::kMin ? gguf::GgmlType::Q8_1 : gguf::GgmlType::Q8_0;
  static constexpr auto pack_lhs = B::kMin ? neon::pack_lhs_q8_1f : neon::pack_lhs_q8_0f;

  static void pack_block(const uint8_t* const* blocks, Packed& p) {
    for (size_t c = 0; c < kTileN; ++c) std::memcpy(&p.d[c], blocks[c], sizeof p.d[c]);
    if constexpr (B::kMin) {
      for (size_t c = 0; c < kTileN; ++c) std::memcpy(&p.m[c], blocks[c] + 2, sizeof p.m[c]);
    }
    B::pack(blocks, p);
  }

  // A block's term of the sum: (d_w * d_x) * isum, plus the min's share.
  __attribute__((always_inline)) static float32x4_t term(const Packed& p, const neon::BlockQ8_0F& xb,
                                                         int32x4_t isum) {
    if constexpr (B::kCodeOffset != 0) isum = vaddq_s32(isum, vdupq_n_s32(B::kCodeOffset * xb.sum));
    const float32x4_t scale = vmulq_n_f32(load_scales_x4(p.d), xb.d);
    float32x4_t t = vmulq_f32(scale, to_float<B::kFracBits>(isum));
    if constexpr (B::kMin) t = vaddq_f32(t, vmulq_n_f32(load_scales_x4(p.m), xb.s));
    return t;
  }

  __attribute__((always_inline)) static int32x4_t dot(const typename B::Codes& codes, const neon::BlockQ8_0F& xb) {
    return B::dot(codes, vld1q_s8(xb.qs), vld1q_s8(xb.qs + 16));
  }

  // acc plus the terms of `count` pairs of blocks from w and x, in order.
  // Decode takes two blocks an iteration: half the loop's own instructions,
  // and the two blocks' work is independent (Neoverse V2's model: Q4_0
  // dotprod 5.86 cycles a block instead of 5.97; Q8_0 dotprod 8% fewer
  // instructions).
  __attribute__((always_inline)) static float32x4_t pairs(const Packed* w, const neon::BlockQ8_0F* x, size_t count,
                                                          float32x4_t acc) {
    for (const Packed* end = w + 2 * count; w != end; w += 2, x += 2) {
      const int32x4_t i0 = dot(B::template decode<1>(w[0]), x[0]);
      const int32x4_t i1 = dot(B::template decode<1>(w[1]), x[1]);
      acc = vaddq_f32(acc, term(w[0], x[0], i0));
      acc = vaddq_f32(acc, term(w[1], x[1], i1));
    }
    return acc;
  }

  // The decode row (MR = 1) of a group: its pairs of blocks by kPairs (pairs
  // above, or a loop scheduled for in-order cores: InOrderRow), then a lone
  // last block.
  template <float32x4_t (*kPairs)(const Packed*, const neon::BlockQ8_0F*, size_t, float32x4_t)>
  __attribute__((always_inline)) static float32x4_t row(size_t k, const uint8_t* const* x, const uint8_t* group) {
    const auto* w = reinterpret_cast<const Packed*>(group);
    const auto* xr = reinterpret_cast<const neon::BlockQ8_0F*>(x[0]);
    const size_t blocks = k / ref::QK;
    float32x4_t acc = vdupq_n_f32(0.0f);
    if (blocks >= 2) acc = kPairs(w, xr, blocks / 2, acc);
    if (blocks % 2 != 0) {
      const size_t b = blocks - 1;
      acc = vaddq_f32(acc, term(w[b], xr[b], dot(B::template decode<1>(w[b]), xr[b])));
    }
    return acc;
  }

  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    if constexpr (MR == 1) {
      out[0] = row<pairs>(k, x, group);
      return;
    }
    const auto* w = reinterpret_cast<const Packed*>(group);
    float32x4_t acc[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);

    for (size_t b = 0; b < k / ref::QK; ++b) {
      const typename B::Codes codes = B::template decode<MR>(w[b]);
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; ++i) {
        const neon::BlockQ8_0F& xb = reinterpret_cast<const neon::BlockQ8_0F*>(x[i])[b];
        acc[i] = vaddq_f32(acc[i], term(w[b], xb, dot(codes, xb)));
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) out[i] = acc[i];
  }
};

// A tile (BlockTile, SuperBlockTile) whose decode row runs kLoop, a loop
// scheduled for the in-order cores (MatmulKernel::run_in_order) that adds the
// blocks' terms as the tile's own row does, in the reference's order: the
// tile's row<kLoop> says what kLoop is given. The prefill tiles are the tile's.
template <class Tile, auto kLoop>
struct InOrderRow : Tile {
  template <size_t MR>
  static void compute(size_t k, const uint8_t* const* x, const uint8_t* group, float32x4_t* out) {
    if constexpr (MR == 1) {
      out[0] = Tile::template row<kLoop>(k, x, group);
    } else {
      Tile::template compute<MR>(k, x, group, out);
    }
  }
};

}  // namespace
}  // namespace kernels::arm
