// The loop nest the integer kernels share (matmul_blocks.cpp, matmul_super_blocks.cpp),
// per Highway target (toggling include guard, like dot-inl.h).
#if defined(ENGINE_KERNELS_HWY_GROUPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ENGINE_KERNELS_HWY_GROUPS_INL_H_
#undef ENGINE_KERNELS_HWY_GROUPS_INL_H_
#else
#define ENGINE_KERNELS_HWY_GROUPS_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/hwy/dot-inl.h"
#include "kernels/hwy/layout.h"
#include "kernels/ref/blocks.h"

#include "kernels/hwy/vnni_target.h"
HWY_BEFORE_NAMESPACE();
namespace kernels::hwy_tier::HWY_NAMESPACE {

constexpr size_t kChunkM = 64;        // activation rows per pass over the weights
constexpr size_t kBlockBytes = 8192;  // prefill: weight bytes per pass over the rows

// What a tile computes: blocks b0..b1 of a group for kM activation rows. The
// float accumulators (one vector per row and per lane vector) start at zero
// when b0 == 0, else from `partial`, and end in dst when b1 == nb, else back
// in `partial`: splitting K leaves every output's float sequence unchanged.
struct TileIO {
  size_t b0, b1, nb;     // blocks of this pass, blocks of a row
  float* partial;        // kM rows of kRows floats
  float* dst;            // kM rows, dst_stride apart, n_valid columns
  size_t dst_stride;
  size_t n_valid;
};

HWY_INLINE VF LoadAccumulator(const TileIO& io, size_t r, size_t v) {
  const DF df;
  if (io.b0 == 0) return hn::Zero(df);
  return hn::LoadU(df, io.partial + r * kRows + v * hn::Lanes(df));
}

HWY_INLINE void StoreAccumulator(const TileIO& io, size_t r, size_t v, VF acc) {
  const DF df;
  const size_t col = v * hn::Lanes(df);
  if (io.b1 == io.nb) {
    if (col >= io.n_valid) return;  // zero rows past n (the last group)
    StoreFirst(acc, io.n_valid - col, io.dst + r * io.dst_stride + col);
  } else {
    hn::StoreU(acc, df, io.partial + r * kRows + col);
  }
}

// Lane vectors of int32 / float per group (16 rows): 1 on AVX-512, 2 on
// AVX2, 4 on SSE4 and NEON.
constexpr size_t kGroupVectors = kRows / hn::MaxLanes(DF());

// At most this many activation rows: the blocks in the outer loop, every lane
// vector of the group inside (BlocksOuter); more rows: one lane vector at a
// time over all blocks (VectorsOuter).
constexpr size_t kBlocksOuterMaxM = 2;

// Blocks b0..b1 of a group for kM activation rows: Family::Block<kM>(lhs, nb,
// b, chunk, v, acc) adds block b's terms of lane vector v to the kM float
// accumulators acc.
// Decode and small M (BlocksOuter): each block's lane vectors one after the
// other, so a chunk is used up while it is in L1 and the weights stream from
// memory without a pause. Lane vector by lane vector over the whole group (the
// order prefill keeps: its pass is in L1 already, and kM rows times the group's
// vectors of accumulators would not fit the registers), a narrower target
// streamed only the first 32 (AVX2) bytes of each 64-byte line from DRAM and
// read the rest back from L2 in a second pass with no DRAM traffic behind it.
// One AVX2 core (AMD EPYC), decode 1 x 4096 x 4096 with the weights cold
// (matmul_bench, best of 3 alternating runs, weight GB/s; a plain read 17.5):
// Q4_0 12.0 -> 15.5, Q4_K 11.3 -> 14.7, Q6_K 8.7 -> 12.4, Q8_0 12.2 -> 14.4.
template <class Family, size_t kM>
HWY_INLINE void GroupTile(const typename Family::Lhs* lhs, const uint8_t* group, const TileIO& io) {
  if constexpr (kM <= kBlocksOuterMaxM) {
    VF acc[kGroupVectors][kM];
    for (size_t v = 0; v < kGroupVectors; ++v) {
      for (size_t r = 0; r < kM; ++r) acc[v][r] = LoadAccumulator(io, r, v);
    }
    for (size_t b = io.b0; b < io.b1; ++b) {
      const uint8_t* chunk = group + b * Family::kChunk;
      // Rows past n in the last group are zero: computing them is harmless.
      for (size_t v = 0; v < kGroupVectors; ++v) Family::template Block<kM>(lhs, io.nb, b, chunk, v, acc[v]);
    }
    for (size_t v = 0; v < kGroupVectors; ++v) {
      for (size_t r = 0; r < kM; ++r) StoreAccumulator(io, r, v, acc[v][r]);
    }
  } else {
    const size_t l32 = hn::Lanes(DF());
    for (size_t v = 0; v * l32 < io.n_valid; ++v) {
      VF acc[kM];
      for (size_t r = 0; r < kM; ++r) acc[r] = LoadAccumulator(io, r, v);
      for (size_t b = io.b0; b < io.b1; ++b) {
        Family::template Block<kM>(lhs, io.nb, b, group + b * Family::kChunk, v, acc);
      }
      for (size_t r = 0; r < kM; ++r) StoreAccumulator(io, r, v, acc[r]);
    }
  }
}

// The rows left at the end of a pass, fewer than a tile: GroupTile<rows>, one
// instantiation per possible remainder (1 .. kM).
template <class Family, size_t kM>
HWY_INLINE void TailTile(size_t rows, const typename Family::Lhs* lhs, const uint8_t* group, const TileIO& io) {
  if constexpr (kM > 0) {
    if (rows == kM) {
      GroupTile<Family, kM>(lhs, group, io);
    } else {
      TailTile<Family, kM - 1>(rows, lhs, group, io);
    }
  }
}

// Y = X W^T for a family: Family::Lhs (activation block), Family::kChunk
// (weight bytes per block of a group), Family::kTileM (activation rows per
// pass over a group) and Family::Block<kM> (see GroupTile).
// Decode (m == 1) streams each group once, whole K per pass. Prefill takes
// kChunkM rows at a time; for each group, K in passes of about kBlockBytes of
// weights, and within a pass the rows kTileM at a time, so the pass's weights
// and activations stay in L1 while each weight block serves kTileM rows.
template <class Family>
HWY_INLINE void RunGroups(size_t m, size_t n, size_t nb, const typename Family::Lhs* lhs, const uint8_t* rhs,
                          float* dst, size_t dst_stride) {
  const size_t group_bytes = nb * Family::kChunk;
  const size_t pass = m == 1 ? nb : HWY_MAX(size_t{1}, kBlockBytes / Family::kChunk);
  HWY_ALIGN float partial[kChunkM * kRows];
  for (size_t m0 = 0; m0 < m; m0 += kChunkM) {
    const size_t m1 = HWY_MIN(m, m0 + kChunkM);
    for (size_t g = 0; g * kRows < n; ++g) {
      const uint8_t* group = rhs + g * group_bytes;
      for (size_t b0 = 0; b0 < nb; b0 += pass) {
        TileIO io{b0, HWY_MIN(nb, b0 + pass), nb, nullptr, nullptr, dst_stride, HWY_MIN(kRows, n - g * kRows)};
        size_t i = m0;
        for (; i + Family::kTileM <= m1; i += Family::kTileM) {
          io.partial = partial + (i - m0) * kRows;
          io.dst = dst + i * dst_stride + g * kRows;
          GroupTile<Family, Family::kTileM>(lhs + i * nb, group, io);
        }
        io.partial = partial + (i - m0) * kRows;
        io.dst = dst + i * dst_stride + g * kRows;
        TailTile<Family, Family::kTileM - 1>(m1 - i, lhs + i * nb, group, io);
      }
    }
  }
}

// RunGroups for the K types (super-blocks of 256, Q8_K activations), with
// MatmulKernel::run's arguments.
template <class Family>
HWY_INLINE void RunSuperBlocks(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst,
                               size_t dst_stride) {
  RunGroups<Family>(m, n, k / ref::QK_K, static_cast<const LhsQ8K*>(lhs), static_cast<const uint8_t*>(rhs), dst,
                    dst_stride);
}

}  // namespace kernels::hwy_tier::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // ENGINE_KERNELS_HWY_GROUPS_INL_H_
