// The SMMLA tile loops shared by the i8mm kernels whose activations are Q8_0
// pairs (Q4_0 and Q8_0 weights): one scale per block of 32 on each side.
//
// Layout, per block of 32 and tile of 4 rows: uint16 d[4], the rows' fp16
// scales (and m[4], their mins, for a format with a min), then per pair q of rows (0, 1) and (2, 3), 16 kChunks bytes: chunk
// c at 16c holds 8 bytes of codes of row 2q, then 8 of row 2q + 1. Missing
// rows of the last tile are zero. A weight format supplies `Rhs`:
//   arm::WeightType<...> as a base (arm/interleaved.h)
//   static constexpr size_t kChunks;                  // chunks of 8 code bytes
//   static void pack(const GgufBlock& blk, uint8_t* row0);
//                                                     // chunk c at row0 + 16c
//   static TileWeights load(const uint8_t* p);       // 2 pairs x 4 chunks of int8
//   static TileWeights load_next(const uint8_t*& p);  // load(p), p += kTileBlockBytes
// and, for a format with bytes after the chunks (Q5_0's fifth bits),
//   static constexpr size_t kExtraBytes;
//   static void pack_extra(const GgufBlock& blk, uint8_t* extra, size_t r);
// and the loops below do the rest. Per block, per pair of activation rows and
// pair of weight rows: 4 SMMLA (chunks 0..3) into a 2x2 integer tile, then
// acc += float(tile) * (d_w * d_a) with one FMA. The 8x4 and 2x4 forms and
// the single-row form (q8_0_row_tiles) perform the same float operations on
// every output, so a result never depends on how the caller split the rows.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/interleaved.h"

namespace kernels::i8mm {

inline constexpr size_t kQ8_0TileRows = 4;     // weight rows per tile (n_step)
inline constexpr size_t kQ8_0TileLhsRows = 8;  // activation rows per full tile (m_step)

// A format with a min (Q4_1, Q5_1: x = d * q + m) sets kMin: its tile blocks
// hold the 4 rows' fp16 mins after their scales, its load gives them as
// TileWeightsMin, and its activations are Q8_1 pairs; the loops add
// m_w * s_a per block.
template <class Rhs>
constexpr bool has_min() {
  return Rhs::kMin;  // arm::WeightType's false unless the format says otherwise
}

// Bytes before the chunks of a tile block: the scales (and the mins).
template <class Rhs>
inline constexpr size_t kTileHeaderBytes = has_min<Rhs>() ? 16 : 8;

// The activation pairs' block and where its codes start.
template <class Rhs>
inline constexpr size_t kLhsBlockBytes = has_min<Rhs>() ? kQ8_1PairBlockBytes : kQ8_0PairBlockBytes;
template <class Rhs>
inline constexpr size_t kLhsCodesOffset = has_min<Rhs>() ? kQ8_1PairCodesOffset : 16;

template <class Rhs>
constexpr size_t extra_bytes() {
  if constexpr (requires { Rhs::kExtraBytes; }) {
    return Rhs::kExtraBytes;
  } else {
    return 0;
  }
}

// One block of a 4-row tile.
template <class Rhs>
inline constexpr size_t kTileBlockBytes = kTileHeaderBytes<Rhs> + 32 * Rhs::kChunks + extra_bytes<Rhs>();

struct TileWeights {
  int8x16_t w[2][4];  // w[q][c]: weight rows 2q, 2q+1, elements 8c..8c+7 of the block
  float32x4_t d;      // the 4 rows' scales
};
struct TileWeightsMin : TileWeights {
  float32x4_t m;  // the 4 rows' mins
};

// load and load_next of a 4-bit format whose tile block is the scales and
// 64 bytes of nibble pairs (Q4_0, IQ4_NL): Rhs gives the codes of 16 low
// (kHigh false) or high nibbles, Rhs::nibbles<kHigh>(uint8x16_t).
// A format with a min (kMinT) sets kMin true itself.
template <class Rhs, bool kMinT = false>
struct NibbleLoads {
  static constexpr size_t kChunks = 2;
  static constexpr size_t kHeader = kMinT ? 16 : 8;
  using Weights = std::conditional_t<kMinT, TileWeightsMin, TileWeights>;

  // Chunks 0, 1 are the low nibbles of halves 0, 1 (elements 8g..), chunks
  // 2, 3 their high nibbles (16 + 8g..).
  __attribute__((always_inline)) static TileWeights decode(float32x4_t d, uint8x16x4_t nib) {
    TileWeights r;
    r.d = d;
    for (int q = 0; q < 2; ++q) {
      const uint8x16_t g0 = nib.val[2 * q], g1 = nib.val[2 * q + 1];
      r.w[q][0] = Rhs::template nibbles<false>(g0);
      r.w[q][1] = Rhs::template nibbles<false>(g1);
      r.w[q][2] = Rhs::template nibbles<true>(g0);
      r.w[q][3] = Rhs::template nibbles<true>(g1);
    }
    return r;
  }

  static Weights load(const uint8_t* p) {
    Weights r;
    static_cast<TileWeights&>(r) = decode(load_f16x4(p), vld1q_u8_x4(p + kHeader));
    if constexpr (kMinT) r.m = load_f16x4(p + 8);
    return r;
  }

  // load(p) with post-indexed loads (p += kHeader + 64).
  static Weights load_next(const uint8_t*& p) {
    const float32x4_t d = load_f16x4_post(p);
    Weights r;
    if constexpr (kMinT) r.m = load_f16x4_post(p);
    const uint8x16x4_t nib = vld1q_u8_x4(p);
    p += 64;
    static_cast<TileWeights&>(r) = decode(d, nib);
    return r;
  }
};

// P pairs of activation rows (P = 4: 8 rows, P = 1: 2 rows) x 4 weight rows.
template <class Rhs, int P>
void q8_0_tile(size_t nb, const uint8_t* lhs, size_t pair_bytes, const uint8_t* rhs, float* y, size_t ldy, size_t rows,
               size_t cols) {
  float32x4_t acc[P][2];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < nb; ++b) {
    const auto w = Rhs::load(rhs + b * kTileBlockBytes<Rhs>);
    const float32x4_t wpat[2] = {pair_pattern_lo(w.d), pair_pattern_hi(w.d)};
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const uint8_t* a = lhs + p * pair_bytes + b * kLhsBlockBytes<Rhs>;
      const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(a));
      const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + kLhsCodesOffset<Rhs>));
#pragma GCC unroll 8
      for (int q = 0; q < 2; ++q) {
        acc[p][q] = vfmaq_f32(acc[p][q], vcvtq_f32_s32(smmla_chain4(x, w.w[q])), vmulq_f32(wpat[q], apat));
        if constexpr (has_min<Rhs>()) {  // + m_w * s_a: the s pattern follows the d pattern
          const float32x4_t spat = vld1q_f32(reinterpret_cast<const float*>(a + 16));
          acc[p][q] = vfmaq_f32(acc[p][q], q == 0 ? pair_pattern_lo(w.m) : pair_pattern_hi(w.m), spat);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (size_t p = 0; p < P; ++p) {
    if (2 * p < rows) store_cols(y + 2 * p * ldy, tile_row0(acc[p][0], acc[p][1]), cols);
    if (2 * p + 1 < rows) store_cols(y + (2 * p + 1) * ldy, tile_row1(acc[p][0], acc[p][1]), cols);
  }
}

// One activation row (decode, and the odd last row of a batch) against G
// tiles of 4 weight rows, each weight block streamed once per call.
//
// SMMLA does 2x2 dot products of 8 codes; with one activation row, half of
// them are wasted whatever the operands. The 2x4 form (q8_0_tile<Rhs, 1>)
// spends per block and tile 2 register clears and a ZIP1 to put the useful
// halves of two chains together. Here the row's codes are loaded twice, as
// lo[c] = [x_c | 0] and hi[c] = [0 | x_c] (LDR D, then EXT): lo against the
// weight pair (0, 1) feeds lanes 0-1 of a chain, hi against the pair (2, 3)
// lanes 2-3, so one chain holds the 4 outputs. The zero halves also keep out
// the other row of the pair (the zero row, or a row this call does not
// compute). The row's 8 loads and EXTs are shared by G = 8 tiles.
//
// Per output the float work is that of q8_0_tile: acc = fma(acc, float(S_b),
// d_w * d_a), block by block, so a row's result does not depend on the batch
// it came in. Per block and tile (objdump, Q4_0): 8 SMMLA, 8 to unpack the
// nibbles, 7 more, and 1/8 of the row's 13. Instructions per weight at M=1
// (kernel_insn, n=2816, k=1024, qemu -cpu max): Q4_0 0.2447 -> 0.194, Q8_0
// 0.1973 -> 0.139; the dotprod tier's Q4_0 takes 0.272.
struct RowCodes {
  int8x16_t lo[4], hi[4];  // [x_c | 0] and [0 | x_c], codes 8c..8c+7 of the row
  float32x4_t scale;       // lane 0: the row's d_a
};
struct RowCodesMin : RowCodes {
  float32x4_t s;  // lane 0: the row's s_a
};

template <class Rhs>
inline std::conditional_t<has_min<Rhs>(), RowCodesMin, RowCodes> load_row_codes(const uint8_t* a) {
  std::conditional_t<has_min<Rhs>(), RowCodesMin, RowCodes> x;
  x.scale = vld1q_f32(reinterpret_cast<const float*>(a));
  if constexpr (has_min<Rhs>()) x.s = vld1q_f32(reinterpret_cast<const float*>(a + 16));
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    x.lo[c] = vcombine_s8(vld1_s8(reinterpret_cast<const int8_t*>(a + kLhsCodesOffset<Rhs> + 16 * c)), vdup_n_s8(0));
    x.hi[c] = vextq_s8(x.lo[c], x.lo[c], 8);
  }
  return x;
}

// G tiles as nested members rather than arrays: GCC 12 keeps each tile's
// pointer and accumulator in a register then, where arrays cost a MOV per
// tile and block (objdump).
template <class Rhs, int G>
struct RowTiles {
  float32x4_t acc = vdupq_n_f32(0.0f);
  const uint8_t* w;  // the tile's next block
  RowTiles<Rhs, G - 1> rest;

  RowTiles(const uint8_t* rhs, size_t tile_bytes) : w(rhs), rest(rhs + tile_bytes, tile_bytes) {}

  template <class Codes>
  inline __attribute__((always_inline)) void block(const Codes& x) {
    const auto t = Rhs::load_next(w);
    int32x4_t s = smmla_from_zero(x.lo[0], t.w[0][0]);
    s = vmmlaq_s32(s, x.lo[1], t.w[0][1]);
    s = vmmlaq_s32(s, x.lo[2], t.w[0][2]);
    s = vmmlaq_s32(s, x.lo[3], t.w[0][3]);
    s = vmmlaq_s32(s, x.hi[0], t.w[1][0]);
    s = vmmlaq_s32(s, x.hi[1], t.w[1][1]);
    s = vmmlaq_s32(s, x.hi[2], t.w[1][2]);
    s = vmmlaq_s32(s, x.hi[3], t.w[1][3]);
    acc = vfmaq_f32(acc, vcvtq_f32_s32(s), vmulq_laneq_f32(t.d, x.scale, 0));
    if constexpr (has_min<Rhs>()) acc = vfmaq_laneq_f32(acc, t.m, x.s, 0);
    rest.block(x);
  }

  // 4 outputs per tile; `cols` (1..4) for the last one.
  inline __attribute__((always_inline)) void store(float* y, size_t cols) {
    if constexpr (G == 1) {
      store_cols(y, acc, cols);
    } else {
      vst1q_f32(y, acc);
      rest.store(y + 4, cols);
    }
  }
};

template <class Rhs>
struct RowTiles<Rhs, 0> {
  RowTiles(const uint8_t*, size_t) {}
  template <class Codes>
  void block(const Codes&) {}
};

// G consecutive tiles (tile t at rhs + t * tile_bytes) against one row.
template <class Rhs, int G>
__attribute__((noinline)) void q8_0_row_tiles(size_t nb, const uint8_t* lhs, const uint8_t* rhs, size_t tile_bytes,
                                              float* y, size_t cols) {
  RowTiles<Rhs, G> tiles(rhs, tile_bytes);
  // The row advances by pointer, not by index: with lhs + b * 80, GCC 12 gave
  // the tile pointers a shared index and 2 MOVs per tile and block.
  for (size_t b = 0; b < nb; ++b, lhs += kLhsBlockBytes<Rhs>) tiles.block(load_row_codes<Rhs>(lhs));
  tiles.store(y, cols);
}

inline constexpr size_t kQ8_0RowTiles = 8;  // tiles per single-row pass

// One row against `rows` weight rows (tiles from rhs on), in runs of 8, 4, 2
// and 1 tiles. This and q8_0_pairs stay out of q8_0_run (noinline): inlined,
// they changed GCC's code around the 8-row tile calls, and M=64 took up to
// 0.1% more instructions than before the single-row form.
template <class Rhs>
__attribute__((noinline)) void q8_0_row(size_t nb, const uint8_t* lhs, const uint8_t* rhs, size_t tile_bytes, float* y,
                                        size_t rows) {
  for (size_t n0 = 0; n0 < rows;) {
    const size_t left = (rows - n0 + kQ8_0TileRows - 1) / kQ8_0TileRows;
    const size_t g = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    const size_t end = n0 + g * kQ8_0TileRows;
    const size_t cols = (rows < end ? rows : end) - (end - kQ8_0TileRows);
    const uint8_t* w = rhs + n0 / kQ8_0TileRows * tile_bytes;
    if (g == 8) q8_0_row_tiles<Rhs, 8>(nb, lhs, w, tile_bytes, y + n0, cols);
    if (g == 4) q8_0_row_tiles<Rhs, 4>(nb, lhs, w, tile_bytes, y + n0, cols);
    if (g == 2) q8_0_row_tiles<Rhs, 2>(nb, lhs, w, tile_bytes, y + n0, cols);
    if (g == 1) q8_0_row_tiles<Rhs, 1>(nb, lhs, w, tile_bytes, y + n0, cols);
    n0 = end;
  }
}

// The row pairs of `m` rows (8 at a time, then 2) against `rows` weight rows
// (tiles from rhs on), tile by tile.
template <class Rhs>
__attribute__((noinline)) void q8_0_pairs(size_t m, size_t nb, const uint8_t* lhs, const uint8_t* rhs,
                                          size_t tile_bytes, float* y, size_t ldy, size_t rows) {
  const size_t pair_bytes = nb * kLhsBlockBytes<Rhs>;
  for (size_t n0 = 0; n0 < rows; n0 += kQ8_0TileRows, rhs += tile_bytes, y += kQ8_0TileRows) {
    const size_t cols = rows - n0 < kQ8_0TileRows ? rows - n0 : kQ8_0TileRows;
    size_t m0 = 0;
    for (; m0 + 8 <= m; m0 += 8)
      q8_0_tile<Rhs, 4>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, rhs, y + m0 * ldy, ldy, 8, cols);
    for (; m0 + 2 <= m; m0 += 2)
      q8_0_tile<Rhs, 1>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, rhs, y + m0 * ldy, ldy, 2, cols);
  }
}

// q8_0_row for the in-order cores (MatmulKernel::run_in_order): tile by tile,
// the pairs of blocks by kPairs, a loop scheduled for those cores given the
// tile's blocks, the row's and the count of pairs; a lone last block as
// q8_0_row_tiles does. The same float operations on every output: the
// results of q8_0_row bit for bit.
template <class Rhs, float32x4_t (*kPairs)(const uint8_t* w, const uint8_t* x, size_t pairs, float32x4_t acc)>
void q8_0_row_in_order(size_t nb, const uint8_t* lhs, const uint8_t* rhs, size_t tile_bytes, float* y, size_t rows) {
  for (size_t n0 = 0; n0 < rows; n0 += kQ8_0TileRows) {
    const uint8_t* w = rhs + n0 / kQ8_0TileRows * tile_bytes;
    RowTiles<Rhs, 1> tile(w + nb / 2 * 2 * kTileBlockBytes<Rhs>, tile_bytes);
    if (nb >= 2) tile.acc = kPairs(w, lhs, nb / 2, tile.acc);
    if (nb % 2 != 0) tile.block(load_row_codes<Rhs>(lhs + (nb - 1) * kLhsBlockBytes<Rhs>));
    store_cols(y + n0, tile.acc, rows - n0 < kQ8_0TileRows ? rows - n0 : kQ8_0TileRows);
  }
}

// The run() of a kernel: weight tiles outside (each streamed once from memory),
// activation rows inside, 8 at a time, then pairs. An odd last row runs after
// each group of kQ8_0RowTiles tiles, on the whole group at once, while the
// group's weights are still in cache, by kRow (q8_0_row, or q8_0_row_in_order
// in run_in_order).
template <class Rhs, auto kRow = q8_0_row<Rhs>>
void q8_0_run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride) {
  const size_t nb = k / 32;
  const size_t tile_bytes = nb * kTileBlockBytes<Rhs>;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  const uint8_t* last_row = lhs + m / 2 * nb * kLhsBlockBytes<Rhs>;
  // One group when there is no odd last row, or no other row.
  const size_t group_rows = m == 1 || m % 2 == 0 ? n : kQ8_0RowTiles * kQ8_0TileRows;
  for (size_t g0 = 0; g0 < n; g0 += group_rows) {
    const uint8_t* w = rhs + g0 / kQ8_0TileRows * tile_bytes;
    const size_t rows = n - g0 < group_rows ? n - g0 : group_rows;
    if (m >= 2) q8_0_pairs<Rhs>(m, nb, lhs, w, tile_bytes, dst + g0, dst_stride, rows);
    if (m % 2 != 0) kRow(nb, last_row, w, tile_bytes, dst + (m - 1) * dst_stride + g0, rows);
  }
}

// The kernel of Rhs, for arm::interleaved_kernel.
template <class Rhs>
struct BlockTiles : arm::KernelShape<Rhs, std::conditional_t<has_min<Rhs>(), Q8_1Pairs, Q8_0Pairs>, 32, kQ8_0TileRows,
                                     kQ8_0TileLhsRows, kTileBlockBytes<Rhs>> {
  static void pack(const typename Rhs::GgufBlock& blk, uint8_t* out, size_t r) {
    constexpr size_t kHeader = kTileHeaderBytes<Rhs>;
    std::memcpy(out + 2 * r, &blk.d, 2);
    if constexpr (has_min<Rhs>()) std::memcpy(out + 8 + 2 * r, &blk.m, 2);
    Rhs::pack(blk, out + kHeader + 16 * Rhs::kChunks * (r / 2) + 8 * (r % 2));
    if constexpr (extra_bytes<Rhs>() != 0) Rhs::pack_extra(blk, out + kHeader + 32 * Rhs::kChunks, r);
  }

  static constexpr auto run = q8_0_run<Rhs>;
};

// BlockTiles whose decode row on in-order cores runs kPairs (q8_0_row_in_order).
template <class Rhs, float32x4_t (*kPairs)(const uint8_t*, const uint8_t*, size_t, float32x4_t)>
struct InOrderBlockTiles : BlockTiles<Rhs> {
  static constexpr auto run_in_order = q8_0_run<Rhs, q8_0_row_in_order<Rhs, kPairs>>;
};

}  // namespace kernels::i8mm
