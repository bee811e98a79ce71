// What the i8mm tier's K-quant kernels share (matmul_q4_k_q5_k.cpp,
// matmul_q6_k.cpp): the tile shape, the packed sizes, and run()'s loop
// nest. Each kernel gives its tiles as a type K:
//   K::kPackedBlockBytes     one super-block of a tile of kNr weight rows (packed)
//   K::kRowTileStart   where row_tile's weight pointer starts in a tile
//   K::tile<P>(nb, lhs, pair_bytes, rhs, y, ldy, rows, cols)
//                      P pairs of activation rows (P = 4: 8 rows; P = 1: 2)
//                      x one tile; rows (<= 2P) and cols (<= kNr) valid
//   K::row_tile(a, a_end, w)
//                      one activation row x one tile: the kNr outputs; w
//                      advanced to the next tile (tiles are contiguous)
// and InOrderSuperBlockTiles a row_tile of that form for the in-order cores.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/interleaved.h"

namespace kernels::i8mm {
namespace k_quant {

inline constexpr size_t kMr = 8;  // activation rows per tile (the m_step)
inline constexpr size_t kNr = 4;  // weight rows per tile (the n_step): 2 SMMLA pairs
inline constexpr size_t kBlock = 256;

// One activation row against `rows` weight rows (the tiles from rhs on), by
// Row::row_tile (K's, or on in-order cores a loop scheduled for them).
template <class K, class Row = K>
__attribute__((noinline)) void row_tiles(size_t nb, const uint8_t* lhs, const uint8_t* rhs, float* y, size_t rows) {
  if (nb == 0) {
    for (size_t j = 0; j < rows; ++j) y[j] = 0.0f;
    return;
  }
  const uint8_t* lhs_end = lhs + nb * kQ8_KPairBlockBytes;
  const uint8_t* w = rhs + K::kRowTileStart;
  size_t n0 = 0;
  for (; n0 + kNr <= rows; n0 += kNr) vst1q_f32(y + n0, Row::row_tile(lhs, lhs_end, w));
  if (n0 < rows) store_cols(y + n0, Row::row_tile(lhs, lhs_end, w), rows - n0);
}

// The row pairs of `m` rows (8 at a time, then 2) against `rows` weight rows
// (tiles from rhs on), tile by tile. Kept out of run() (noinline), like
// row_tiles: run()'s other loops then do not change GCC's code around the
// 8-row tile calls (M=64 is not above its count before the single-row form).
template <class K>
__attribute__((noinline)) void pairs(size_t m, size_t nb, const uint8_t* lhs, const uint8_t* rhs, float* y, size_t ldy,
                                     size_t rows) {
  const size_t pair_bytes = nb * kQ8_KPairBlockBytes;
  for (size_t n0 = 0; n0 < rows; n0 += kNr, rhs += nb * K::kPackedBlockBytes, y += kNr) {
    const size_t cols = rows - n0 < kNr ? rows - n0 : kNr;
    size_t m0 = 0;
    for (; m0 + kMr <= m; m0 += kMr) {
      K::template tile<4>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, rhs, y + m0 * ldy, ldy, kMr, cols);
    }
    for (; m0 + 2 <= m; m0 += 2) {
      K::template tile<1>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, rhs, y + m0 * ldy, ldy, 2, cols);
    }
  }
}

// Weight tiles outside (each streamed once from memory), activation rows
// inside, 8 at a time, then pairs; an odd last row runs after each group of
// kRowTiles tiles, while the group's weights are still in cache (groups are
// the whole of n when there is no such row, or no other). The row by
// Row::row_tile (row_tiles).
inline constexpr size_t kRowTiles = 8;

template <class K, class Row = K>
void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  const size_t nb = k / kBlock;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  const uint8_t* last_row = lhs + m / 2 * nb * kQ8_KPairBlockBytes;
  const size_t group_rows = m == 1 || m % 2 == 0 ? n : kRowTiles * kNr;
  for (size_t g0 = 0; g0 < n; g0 += group_rows) {
    const uint8_t* w = rhs + g0 / kNr * nb * K::kPackedBlockBytes;
    const size_t rows = n - g0 < group_rows ? n - g0 : group_rows;
    if (m >= 2) pairs<K>(m, nb, lhs, w, dst + g0, dst_stride, rows);
    if (m % 2 != 0) row_tiles<K, Row>(nb, last_row, w, dst + (m - 1) * dst_stride + g0, rows);
  }
}

// acc += float(S) * (d_w * d_a) for a type with no mins (Q6_K, IQ4_XS): S
// the tile's integer sums, d_w the fp16 scales at w, d_a the pairs'.
template <int P>
__attribute__((always_inline)) inline void add_scaled(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                      const int32x4_t (&sum)[P][2], float (&acc)[P][2][4]) {
  const float32x4_t d4 = load_f16x4(w);
  const float32x4_t dpat[2] = {pair_pattern_lo(d4), pair_pattern_hi(d4)};
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(a + p * pair_bytes));
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) {
      vst1q_f32(acc[p][q], vfmaq_f32(vld1q_f32(acc[p][q]), vcvtq_f32_s32(sum[p][q]), vmulq_f32(dpat[q], apat)));
    }
  }
}

// The add of a type with no mins (Q6_K, IQ4_XS), for SuperBlockTiles.
struct NoMinsAdd {
  template <int P>
  __attribute__((always_inline)) static void add(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                 const int32x4_t (&sum)[P][2], float (&acc)[P][2][4]) {
    add_scaled<P>(w, a, pair_bytes, sum, acc);
  }
};

}  // namespace k_quant

// The kernel of type S, for arm::interleaved_kernel and k_quant::run.
template <class S>
struct SuperBlockTiles
    : arm::KernelShape<S, Q8_KPairs, k_quant::kBlock, k_quant::kNr, k_quant::kMr, S::kPackedBlockBytes> {
  static constexpr size_t kRowTileStart = S::kRowTileStart;

  static void pack(const typename S::GgufBlock& blk, uint8_t* out, size_t r) { S::pack(blk, out, r); }

  // P pairs of activation rows (P = 4: 8 rows; P = 1: 2 rows) x one tile;
  // rows (<= 2P) and cols (<= kNr) valid. The float accumulators live in
  // memory: they change once per super-block, and keeping them out of the
  // registers leaves the sub-block loop unspilled.
  template <int P>
  static void tile(size_t nb, const uint8_t* lhs, size_t pair_bytes, const uint8_t* rhs, float* y, size_t ldy,
                   size_t rows, size_t cols) {
    float acc[P][2][4] = {};
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* w = rhs + b * S::kPackedBlockBytes;
      const uint8_t* a = lhs + b * kQ8_KPairBlockBytes;
      int32x4_t sum[P][2];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) sum[p][0] = sum[p][1] = vdupq_n_s32(0);
      S::template sums<P>(w, a, pair_bytes, sum);
      S::template add<P>(w, a, pair_bytes, sum, acc);
    }
#pragma GCC unroll 4
    for (size_t p = 0; p < P; ++p) {
      const float32x4_t t0 = vld1q_f32(acc[p][0]), t1 = vld1q_f32(acc[p][1]);
      if (2 * p < rows) store_cols(y + 2 * p * ldy, tile_row0(t0, t1), cols);
      if (2 * p + 1 < rows) store_cols(y + (2 * p + 1) * ldy, tile_row1(t0, t1), cols);
    }
  }

  // One activation row x one tile: the kNr outputs. w = the tile's first
  // super-block + kRowTileStart, and then the next tile's (tiles are
  // contiguous); nb >= 1.
  __attribute__((always_inline)) static float32x4_t row_tile(const uint8_t* a, const uint8_t* a_end,
                                                             const uint8_t*& w) {
    float32x4_t acc = vdupq_n_f32(0.0f);
    const size_t a_stride = kQ8_KPairBlockBytes;
    do {
      acc = S::row_block(acc, a, w, a_stride);
      w += S::kPackedBlockBytes;
    } while (a != a_end);
    return acc;
  }

  static constexpr auto run = k_quant::run<SuperBlockTiles>;
};

// SuperBlockTiles whose decode row on in-order cores runs kLoop
// (MatmulKernel::run_in_order): a loop scheduled for those cores over the
// row's super-blocks [a, a_end) (one or more) against one tile, from w
// (advanced to the next tile), with row_tile's results bit for bit.
template <class S, float32x4_t (*kLoop)(const uint8_t*& w, const uint8_t* a, const uint8_t* a_end)>
struct InOrderSuperBlockTiles : SuperBlockTiles<S> {
  struct Row {
    static float32x4_t row_tile(const uint8_t* a, const uint8_t* a_end, const uint8_t*& w) {
      return kLoop(w, a, a_end);
    }
  };
  static constexpr auto run_in_order = k_quant::run<SuperBlockTiles<S>, Row>;
};

}  // namespace kernels::i8mm
