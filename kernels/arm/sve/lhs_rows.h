// Activation formats of the sve tier: rows quantized to 8 bits with the ref's
// Q8_0 and Q8_K codes and scales, bit for bit, one row after another (the
// weights carry the interleaving: 16 rows per group, see each kernel).
//
// Q8_0 rows, per block of 32 (kQ8_0RowBlockBytes = 36 bytes):
//   int8  qs[32]
//   float d * mult   (d = the fp16-rounded Q8_0 scale)
// Q8_1 rows (Q4_1, Q5_1), per block of 32 (kQ8_1RowBlockBytes = 40 bytes):
//   int8  qs[32], float d * mult as Q8_0 rows, then
//   float s          the ref's s (fp16 of the codes' sum times the unrounded
//                    d), widened
// Q8_K rows, per super-block of 256 (kQ8_KRowBlockBytes = 276 bytes):
//   int8  qs[256]
//   int8  bsum_lo[8], bsum_hi[8]: the sums of the codes of each 32-element
//                    sub-block, sum = 128 * hi + lo, lo in 0..127, hi in
//                    -32..31, so that SDOT can multiply them by 6-bit mins
//   float d * mult
// Q8_K16 rows (Q2_K, whose 16 mins are per 16 elements), per super-block
// (kQ8_K16RowBlockBytes = 292 bytes):
//   int8  qs[256]
//   int8  bsum_lo[16], bsum_hi[16]: the sums of each 16-element sub-block in
//                    7-bit halves as above (hi in -16..15)
//   float d * mult
// (codes first: the kernels load them at immediate offsets, multiples of 16).
// Q8_0 pairs (the svmmla kernels): exactly the i8mm tier's layout, see
// kernels/arm/i8mm/lhs_pairs.h, built here with SVE code.
// `mult` folds a power of two of the weight decoding into the scale (exact).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/arm/interleaved.h"

namespace kernels::sve {

inline constexpr size_t kQ8_0RowBlockBytes = 32 + 4;
inline constexpr size_t kQ8_0RowScaleOffset = 32;
inline constexpr size_t kQ8_1RowBlockBytes = 32 + 4 + 4;
inline constexpr size_t kQ8_KRowBlockBytes = 256 + 4 + 16;
inline constexpr size_t kQ8_KBsumOffset = 256;
inline constexpr size_t kQ8_KRowScaleOffset = 272;
inline constexpr size_t kQ8_K16RowBlockBytes = 256 + 32 + 4;
inline constexpr size_t kQ8_K16BsumOffset = 256;
inline constexpr size_t kQ8_K16RowScaleOffset = 288;
inline constexpr size_t kQ8_0PairBlockBytes = 16 + 64;

void pack_lhs_q8_0_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_1_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_k_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_k16_rows(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_0_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);

// The formats for arm::interleaved_kernel.
using Q8_0Rows = arm::LhsFormat<gguf::GgmlType::Q8_0, 32, kQ8_0RowBlockBytes, 1, pack_lhs_q8_0_rows>;
using Q8_1Rows = arm::LhsFormat<gguf::GgmlType::Q8_1, 32, kQ8_1RowBlockBytes, 1, pack_lhs_q8_1_rows>;
using Q8_KRows = arm::LhsFormat<gguf::GgmlType::Q8_K, 256, kQ8_KRowBlockBytes, 1, pack_lhs_q8_k_rows>;
using Q8_K16Rows = arm::LhsFormat<gguf::GgmlType::Q8_K, 256, kQ8_K16RowBlockBytes, 1, pack_lhs_q8_k16_rows>;
using Q8_0Pairs = arm::LhsFormat<gguf::GgmlType::Q8_0, 32, kQ8_0PairBlockBytes, 2, pack_lhs_q8_0_pairs>;

}  // namespace kernels::sve
