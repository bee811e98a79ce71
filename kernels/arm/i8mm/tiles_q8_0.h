// The SMMLA tile loops shared by the i8mm kernels whose activations are Q8_0
// pairs (Q4_0 and Q8_0 weights): one scale per block of 32 on each side.
//
// A weight format supplies `Rhs`:
//   static constexpr size_t kTileBlockBytes;     // one block of a 4-row tile
//   static TileWeights load(const uint8_t* p);  // 2 pairs x 4 chunks of int8
// and the loops below do the rest. Per block, per pair of activation rows and
// pair of weight rows: 4 SMMLA (chunks 0..3) into a 2x2 integer tile, then
// acc += float(tile) * (d_w * d_a) with one FMA. The 8x4, 2x4 and 1x4 forms
// perform the same float operations on every output, so a result never
// depends on how the caller split the rows.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/i8mm/lhs_pairs.h"

namespace kernels::i8mm {

inline constexpr size_t kQ8_0TileRows = 4;     // weight rows per tile (n_step)
inline constexpr size_t kQ8_0TileLhsRows = 8;  // activation rows per full tile (m_step)

struct TileWeights {
  int8x16_t w[2][4];  // w[q][c]: weight rows 2q, 2q+1, elements 8c..8c+7 of the block
  float32x4_t d;      // the 4 rows' scales
};

// One pair of activation rows against one weight pair: a 2x2 tile of integer sums.
inline int32x4_t q8_0_tile_sum(const int8x16x4_t& x, const int8x16_t* w) {
  int32x4_t s = vmmlaq_s32(vdupq_n_s32(0), x.val[0], w[0]);
  s = vmmlaq_s32(s, x.val[1], w[1]);
  s = vmmlaq_s32(s, x.val[2], w[2]);
  return vmmlaq_s32(s, x.val[3], w[3]);
}

// P pairs of activation rows (P = 4: 8 rows, P = 1: 2 rows) x 4 weight rows.
template <class Rhs, int P>
void q8_0_tile(size_t nb, const uint8_t* lhs, size_t pair_bytes, const uint8_t* rhs, float* y, size_t ldy, size_t rows,
               size_t cols) {
  float32x4_t acc[P][2];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < nb; ++b) {
    const TileWeights w = Rhs::load(rhs + b * Rhs::kTileBlockBytes);
    const float32x4_t wpat[2] = {pair_pattern_lo(w.d), pair_pattern_hi(w.d)};
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const uint8_t* a = lhs + p * pair_bytes + b * kQ8_0PairBlockBytes;
      const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(a));
      const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + 16));
#pragma GCC unroll 8
      for (int q = 0; q < 2; ++q) {
        acc[p][q] = vfmaq_f32(acc[p][q], vcvtq_f32_s32(q8_0_tile_sum(x, w.w[q])), vmulq_f32(wpat[q], apat));
      }
    }
  }
#pragma GCC unroll 8
  for (size_t p = 0; p < P; ++p) {
    if (2 * p < rows) store_cols(y + 2 * p * ldy, tile_row0(acc[p][0], acc[p][1]), cols);
    if (2 * p + 1 < rows) store_cols(y + (2 * p + 1) * ldy, tile_row1(acc[p][0], acc[p][1]), cols);
  }
}

// One activation row (decode): the row-0 halves of the two tiles are joined
// before the float work, which is then per output the same convert and FMA
// with the same product d_w * d_a.
template <class Rhs>
void q8_0_tile_1x4(size_t nb, const uint8_t* lhs, const uint8_t* rhs, float* y, size_t cols) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  // Two blocks per iteration: the loop overhead is 4 of ~31 instructions.
#pragma GCC unroll 2
  for (size_t b = 0; b < nb; ++b) {
    const TileWeights w = Rhs::load(rhs + b * Rhs::kTileBlockBytes);
    const uint8_t* a = lhs + b * kQ8_0PairBlockBytes;
    const float a0 = *reinterpret_cast<const float*>(a);
    const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + 16));
    const int32x4_t s = tile_row0(q8_0_tile_sum(x, w.w[0]), q8_0_tile_sum(x, w.w[1]));
    acc = vfmaq_f32(acc, vcvtq_f32_s32(s), vmulq_n_f32(w.d, a0));
  }
  store_cols(y, acc, cols);
}

// The run() of a kernel: weight tiles outside (each streamed once from memory),
// activation rows inside, 8 at a time, then pairs, then a last single row.
template <class Rhs>
void q8_0_run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride) {
  const size_t nb = k / 32;
  const size_t pair_bytes = nb * kQ8_0PairBlockBytes;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += kQ8_0TileRows) {
    const uint8_t* w = rhs + n0 / kQ8_0TileRows * nb * Rhs::kTileBlockBytes;
    const size_t cols = n - n0 < kQ8_0TileRows ? n - n0 : kQ8_0TileRows;
    float* y = dst + n0;
    size_t m0 = 0;
    for (; m0 + 8 <= m; m0 += 8)
      q8_0_tile<Rhs, 4>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, w, y + m0 * dst_stride, dst_stride, 8, cols);
    for (; m0 + 2 <= m; m0 += 2)
      q8_0_tile<Rhs, 1>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, w, y + m0 * dst_stride, dst_stride, 2, cols);
    if (m0 < m) q8_0_tile_1x4<Rhs>(nb, lhs + m0 / 2 * pair_bytes, w, y + m0 * dst_stride, cols);
  }
}

inline size_t q8_0_lhs_packed_size(size_t m, size_t k) { return pairs_of(m) * (k / 32) * kQ8_0PairBlockBytes; }
inline size_t q8_0_lhs_packed_offset(size_t m_idx, size_t k) { return m_idx / 2 * (k / 32) * kQ8_0PairBlockBytes; }

}  // namespace kernels::i8mm
