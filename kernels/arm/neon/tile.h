// The tile loop and small helpers shared by the ARM matmul tiers (neon,
// dotprod). Header-only on purpose: each tier's .cpp includes it and compiles
// it with that tier's -march flags. Everything here has internal linkage
// (anonymous namespace, or templates instantiated with a tier-local Tile), so
// the linker can never merge a dotprod-compiled copy into the neon tier, whose
// code must run on an Armv8.0 core.
//
// Tiles: run() walks W in groups of kTileN = 4 rows (output columns) and, for
// each group, X in groups of kTileM = 4 rows, then the last m % 4 rows one at a
// time (the decode path, M = 1, is the 1 x 4 tile). A Tile computes
// out[i] = (y[i, j0 .. j0 + 3]) for MR rows of X over the whole of K, so each
// weight block is loaded and unpacked once per 4 rows of X, and each activation
// block once per 4 rows of W. The W group stays in L1/L2 while the X rows
// stream past it: n-outer, m-inner, as parallel_matmul splits the work.
// run_tiles below reads W as GGUF rows (F16) or as repacked groups (the
// quantized types, packed.h).
//
// Tails: the last W group of n % 4 rows repeats row n - 1 in the missing
// slots (computed, never stored); rows of X past the last group of 4 go through
// the 1-row tile. Every output element is computed by the same instruction
// sequence on the same data whichever tile it lands in, so results do not
// depend on how a caller splits m and n.
#pragma once

#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"

namespace kernels::arm {
namespace {

inline constexpr size_t kTileM = 4;  // rows of X per prefill tile
inline constexpr size_t kTileN = 4;  // rows of W (output columns) per tile

// IEEE half bits -> float, one FCVT (exact).
inline float fp16_to_f32(uint16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, sizeof v);
  return static_cast<float>(v);
}

// The fp16 at byte offset `offset` of each of four rows, as floats.
inline float32x4_t load_fp16_x4(const uint8_t* const* rows, size_t offset) {
  uint16x4_t h = vld1_dup_u16(reinterpret_cast<const uint16_t*>(rows[0] + offset));
  h = vld1_lane_u16(reinterpret_cast<const uint16_t*>(rows[1] + offset), h, 1);
  h = vld1_lane_u16(reinterpret_cast<const uint16_t*>(rows[2] + offset), h, 2);
  h = vld1_lane_u16(reinterpret_cast<const uint16_t*>(rows[3] + offset), h, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

// [sum(a), sum(b), sum(c), sum(d)]: the per-column totals of four partial sums.
inline int32x4_t sum_lanes_x4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

inline void store_cols(float* dst, float32x4_t v, size_t cols) {
  if (cols == kTileN) {
    vst1q_f32(dst, v);
    return;
  }
  float tmp[kTileN];
  vst1q_f32(tmp, v);
  for (size_t c = 0; c < cols; ++c) dst[c] = tmp[c];
}

// Tile: a struct with
//   static size_t lhs_row_bytes(size_t k), rhs_row_bytes(size_t k);
//   static W group(const uint8_t* rhs, size_t j0, size_t n, size_t rhs_row);
//                       // the weights of columns j0 .. j0 + 3, of a type W:
//                       // GgufRows below, or a packed group (packed.h)
//   template <size_t MR> static void compute(size_t k, const uint8_t* const* x,
//                                            const W& w, float32x4_t* out);
// x: MR rows of packed activations, out[i] = y[i, 0..3].
//
// One loop for the tiles over GGUF rows (F16) and over packed groups: it was
// once two copies, since one template with the group's weights from a lambda
// made GCC 12 schedule the tiles differently (the neon Q6_K prefill tile ran
// 12% more instructions, dotprod 4%); with the weights from Tile::group, every
// kernel of both tiers ran the same instructions as with the two copies
// (kernel_insn under qemu).
template <class Tile>
void run_tiles(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
               size_t dst_stride) {
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  const size_t lhs_row = Tile::lhs_row_bytes(k);
  const size_t rhs_row = Tile::rhs_row_bytes(k);
  for (size_t j0 = 0; j0 < n; j0 += kTileN) {
    const size_t cols = std::min(kTileN, n - j0);
    const auto w = Tile::group(rhs, j0, n, rhs_row);
    size_t i0 = 0;
    for (; i0 + kTileM <= m; i0 += kTileM) {
      const uint8_t* x[kTileM];
      for (size_t r = 0; r < kTileM; ++r) x[r] = lhs + (i0 + r) * lhs_row;
      float32x4_t out[kTileM];
      Tile::template compute<kTileM>(k, x, w, out);
      for (size_t r = 0; r < kTileM; ++r) store_cols(dst + (i0 + r) * dst_stride + j0, out[r], cols);
    }
    for (; i0 < m; ++i0) {
      const uint8_t* x[1] = {lhs + i0 * lhs_row};
      float32x4_t out[1];
      Tile::template compute<1>(k, x, w, out);
      store_cols(dst + i0 * dst_stride + j0, out[0], cols);
    }
  }
}

// The 4 GGUF rows of a group of columns, row n - 1 repeated past the last.
struct GgufRows {
  const uint8_t* row[kTileN];
  static GgufRows group(const uint8_t* rhs, size_t j0, size_t n, size_t rhs_row) {
    GgufRows w;
    for (size_t c = 0; c < kTileN; ++c) w.row[c] = rhs + std::min(j0 + c, n - 1) * rhs_row;
    return w;
  }
};

}  // namespace
}  // namespace kernels::arm
