// Shared by the sve tier's SMMLA kernels (FEAT_SVE + FEAT_I8MM): weights in
// groups of kGroupRows = 16 rows = 8 pairs, each 128-bit segment of a vector
// holding 8 codes of one pair of rows (2x8 int8), so that SVE SMMLA computes
// one 2x2 tile per segment: VL/128 weight pairs against one pair of activation
// rows (LD1RQ replicates the activation pair in every segment).
//
// Layout, per block of 32 and group: uint16 d[16] (the rows' fp16 scales),
// then the codes in kChunks planes of 128 bytes, pair p at 16 p: row 2p's 8
// bytes of the chunk, then row 2p + 1's. Missing rows of the last group are
// zero. A weight format supplies `Rhs`:
//   arm::WeightType<...> as a base (arm/interleaved.h)
//   static constexpr size_t kChunks;            // 128-byte planes of codes
//   static void pack(const GgufBlock& blk, uint8_t* row0);
//                       // the row's codes: chunk c at row0 + 128 c, 8 bytes
//   static void load(pg8, p, w0, w1, w2, w3);   // chunks 0..3 of the pairs at p
// where p points at the pairs of the pass within the block (pair offset 16 p0
// bytes into each 128-byte chunk plane), and the loops below do the rest.
// Activations: Q8_0 pairs (lhs_rows.h). Per block, per pair of activation rows
// and weight pair: 4 SMMLA into a 2x2 integer tile, one convert and one FMA
// with d_w * d_a, as in the NEON i8mm tier. The 8-row and 2-row forms do the
// same float operations on every output.
#pragma once

#include <arm_sve.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/arm/interleaved.h"
#include "kernels/arm/sve/groups.h"
#include "kernels/arm/sve/lhs_rows.h"

namespace kernels::sve {
namespace {  // internal linkage, as groups.h

inline constexpr size_t kMmlaPairs = kGroupRows / 2;
inline constexpr int kMmlaLhsPairs = 4;  // activation pairs per pass (m_step 8)

// One block of a 16-row group.
template <class Rhs>
inline constexpr size_t kMmlaBlockBytes = 2 * kGroupRows + 128 * Rhs::kChunks;

// Weight pairs per pass: one per 128-bit segment, at most the group's 8.
inline size_t mmla_pairs_per_pass() { return svcntb() / 16 < kMmlaPairs ? svcntb() / 16 : kMmlaPairs; }

// R pairs of activation rows at x (pair stride x_pair_bytes) against weight
// pairs p0 .. of the group at w.
template <class Rhs, int R>
void mmla_pass(size_t nb, const uint8_t* x, size_t x_pair_bytes, const uint8_t* w, size_t p0, svuint32_t pattern,
               float* y, size_t ldy, size_t rows, size_t cols) {
  const svbool_t pg8 = svwhilelt_b8(static_cast<uint64_t>(16 * p0), static_cast<uint64_t>(16 * kMmlaPairs));
  const svbool_t pg32 = svwhilelt_b32(static_cast<uint64_t>(4 * p0), static_cast<uint64_t>(4 * kMmlaPairs));
  const svbool_t all8 = svptrue_b8(), all32 = svptrue_b32();
  [[maybe_unused]] svfloat32_t acc0 = svdup_f32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* blk = w + b * kMmlaBlockBytes<Rhs>;
    svint8_t w0, w1, w2, w3;
    Rhs::load(pg8, blk + 2 * kGroupRows + 16 * p0, w0, w1, w2, w3);
    // {d_2p, d_2p+1, d_2p, d_2p+1} in the segment of pair p.
    const svbool_t pg_rows = svwhilelt_b32(static_cast<uint64_t>(2 * p0), static_cast<uint64_t>(kGroupRows));
    const svfloat32_t dw = svtbl_f32(load_f16_rows(pg_rows, blk, 2 * p0), pattern);
#define PAIR(i)                                                                                           \
  {                                                                                                       \
    const int8_t* xi = reinterpret_cast<const int8_t*>(x + x_pair_bytes * (i) + b * kQ8_0PairBlockBytes); \
    const svfloat32_t da = svld1rq_f32(all32, reinterpret_cast<const float*>(xi));                        \
    svint32_t t = svmmla_s32(svdup_s32(0), svld1rq_s8(all8, xi + 16), w0);                                \
    t = svmmla_s32(t, svld1rq_s8(all8, xi + 32), w1);                                                     \
    t = svmmla_s32(t, svld1rq_s8(all8, xi + 48), w2);                                                     \
    t = svmmla_s32(t, svld1rq_s8(all8, xi + 64), w3);                                                     \
    acc##i = svmla_f32_x(pg32, acc##i, svcvt_f32_s32_x(pg32, t), svmul_f32_x(pg32, dw, da));              \
  }
    SVE_ROWS(R, PAIR)
#undef PAIR
  }
  // Row 0 of a pair: the low 64-bit half of each segment; row 1: the high.
  const size_t valid = cols - 2 * p0 < 2 * mmla_pairs_per_pass() ? cols - 2 * p0 : 2 * mmla_pairs_per_pass();
  const svbool_t st = svwhilelt_b32(static_cast<uint64_t>(0), static_cast<uint64_t>(valid));
#define PAIR_STORE(i)                                                                                       \
  {                                                                                                         \
    const svuint64_t v = svreinterpret_u64_f32(acc##i);                                                     \
    if (2 * (i) < rows) svst1_f32(st, y + 2 * ldy * (i) + 2 * p0, svreinterpret_f32_u64(svuzp1_u64(v, v))); \
    if (2 * (i) + 1 < rows) {                                                                               \
      svst1_f32(st, y + (2 * (i) + 1) * ldy + 2 * p0, svreinterpret_f32_u64(svuzp2_u64(v, v)));             \
    }                                                                                                       \
  }
  SVE_ROWS(R, PAIR_STORE)
#undef PAIR_STORE
}

template <class Rhs>
void mmla_run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride) {
  const size_t nb = k / 32;
  const size_t x_pair_bytes = nb * kQ8_0PairBlockBytes;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  // Lane L of a segment takes the scale of group row 2 (L / 4) + L % 2.
  const svuint32_t lane = svindex_u32(0, 1);
  const svuint32_t pattern =
      svorr_u32_x(svptrue_b32(), svlsl_n_u32_x(svptrue_b32(), svlsr_n_u32_x(svptrue_b32(), lane, 2), 1),
                  svand_n_u32_x(svptrue_b32(), lane, 1));
  const size_t step = mmla_pairs_per_pass();
  for (size_t n0 = 0; n0 < n; n0 += kGroupRows) {
    const uint8_t* w = rhs + n0 / kGroupRows * nb * kMmlaBlockBytes<Rhs>;
    const size_t cols = n - n0 < kGroupRows ? n - n0 : kGroupRows;
    for (size_t p0 = 0; 2 * p0 < cols; p0 += step) {
      size_t m0 = 0;
      for (; m0 + 2 * kMmlaLhsPairs <= m; m0 += 2 * kMmlaLhsPairs) {
        mmla_pass<Rhs, kMmlaLhsPairs>(nb, lhs + m0 / 2 * x_pair_bytes, x_pair_bytes, w, p0, pattern,
                                      dst + m0 * dst_stride + n0, dst_stride, 2 * kMmlaLhsPairs, cols);
      }
      for (; m0 < m; m0 += 2) {
        mmla_pass<Rhs, 1>(nb, lhs + m0 / 2 * x_pair_bytes, x_pair_bytes, w, p0, pattern, dst + m0 * dst_stride + n0,
                          dst_stride, m - m0 < 2 ? 1 : 2, cols);
      }
    }
  }
}

// The kernel of Rhs, for arm::interleaved_kernel.
template <class Rhs>
struct MmlaGroups : arm::KernelShape<Rhs, Q8_0Pairs, 32, kGroupRows, 2 * kMmlaLhsPairs, kMmlaBlockBytes<Rhs>> {
  static void pack(const typename Rhs::GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    Rhs::pack(blk, out + 2 * kGroupRows + 16 * (r / 2) + 8 * (r % 2));
  }

  static constexpr auto run = mmla_run<Rhs>;
};

}  // namespace
}  // namespace kernels::sve
