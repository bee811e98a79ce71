// Byte layouts shared by the hwy tier's packers and kernels. Plain C++: no
// Highway here, so the table and the scalar packers compile without it.
//
// Weights (pack_rhs): rows are taken kRows at a time ("a group"); within a
// group the blocks of the kRows rows are interleaved so that one 64-byte load
// holds 4 consecutive weight codes of each of the 16 rows: the int32 lane r of
// a dot-product accumulator is then row r (vpdpbusd adds 4 byte products per
// lane), and a group's results are 16 floats stored without any horizontal
// sum. A group is the blocks of K in order, each block a "chunk":
//
//   Q4_0  288 B: qs [j 4][r 16][4] (bytes 4j..4j+3 of each row's qs: codes
//                4j..4j+3 in the low nibbles, 16+4j.. in the high), d [r] f16
//   Q4_1  320 B: as Q4_0, then m [r] f16
//   Q5_0  352 B: as Q4_0 with qh [r][4] between qs and d (the fifth bits,
//                byte t: code 4j+t at bit j, code 16+4j+t at bit 4+j)
//   Q5_1  384 B: as Q5_0, then m [r] f16
//   Q8_0  544 B: qs [j 8][r 16][4] as u8 = code + 128, d [r] f16
//   IQ4_NL 288 B: as Q4_0 (the nibbles index the code book)
//   Q4_K 2368 B: qs [c 4][j 8][r 16][4] (bytes 32c+4j.. of each row's qs),
//                sc [s 8][r 16] u8, m [q 2][r 16][4] u8 (m 4q..4q+3),
//                d [r] f16, dmin [r] f16    (+64 B, 2.8%, for unpacked scales)
//   Q5_K 2880 B: as Q4_K with qh [j 8][r 16][4] (bytes 4j.. of each row's
//                qh) after qs                (+64 B, 2.3%)
//   Q2_K 1344 B, Q3_K 1824 B: see matmul_sub16.cpp
//   Q6_K 3360 B: 3 planes [t 3][c 2][j 8][r 16][4]: the byte of element
//                e = 128c + 32t + 4j + i holds its 6-bit code in bits 0-5
//                and bits 2t, 2t+1 of the code of e + 96 - 32t (quarter 3,
//                spread over the planes) in bits 6-7;
//                sc [s 16][r 16] i8, d [r] f16
//
//   F32, F16, BF16: the whole group as [k][r 16] elements: one load at k is
//                the k-th weight of each of the 16 rows (matmul_float.cpp)
//
// Rows past n in the last group are zero (scale 0): they compute 0 and are
// never stored. Codes stay unsigned (vpdpbusd is unsigned x signed); the
// offsets (-8, -16, -128, -32) are applied through the activations' sums.
//
// Activations (pack_lhs) carry the Q8_0 / Q8_K codes and scales of the
// reference quantizers, bit for bit, plus the sums the kernels need:
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/matmul.h"

namespace kernels::hwy_tier {

inline constexpr size_t kRows = 16;  // weight rows per group (n_step)

// One block of 32 activations in the Q8_0 / Q8_1 format: x ~ d * qs.
struct LhsQ8_0 {
  int8_t qs[32];
  float d;             // the fp16 scale of the reference block, widened
  int32_t offset_sum;  // -offset * sum of qs, the offset of the weight codes
                       // of the kernel that packed it (Q4_0 8, Q5_0 16, Q8_0
                       // 128; 0 for Q4_1 / Q5_1): the int32 sum's start
  float s;             // Q8_1's fp16 d * sum of qs (before d's rounding), widened
};
static_assert(sizeof(LhsQ8_0) == 44);

// One super-block of 256 activations in the Q8_K format: x ~ d * qs.
struct LhsQ8K {
  int8_t qs[256];
  float d;
  int32_t offset16[16];  // -32 * sum of qs[16i .. 16i+15]: pays for Q6_K's code offset
  // Sum of qs[32j .. 32j+31] = 128 * pair_hi[j] + pair_lo[j], pair_lo in
  // 0..127: both fit a signed byte, so the Q4_K mins term is two vpdpbusd.
  int8_t pair_lo[8];
  int8_t pair_hi[8];
  // Sum of qs[16i .. 16i+15] = 128 * sum16_hi[i] + sum16_lo[i], sum16_lo in
  // 0..127: the Q2_K mins term, 16 sub-blocks, as two dot products.
  int8_t sum16_lo[16];
  int8_t sum16_hi[16];
};
static_assert(sizeof(LhsQ8K) == 372);

// Chunk bytes per block of a group (see the table above).
// IQ4_NL / IQ4_XS code book (ref::kIQ4Values) + 128: unsigned bytes for the
// unsigned-weight dot products, looked up from the nibbles by byte shuffle.
inline constexpr uint8_t kIQ4Unsigned[16] = {1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241};

inline constexpr size_t kQ4_0Chunk = 288;
inline constexpr size_t kQ8_0Chunk = 544;
inline constexpr size_t kQ4_KChunk = 2368;
inline constexpr size_t kQ5_KChunk = 2880;
inline constexpr size_t kQ6_KChunk = 3360;

// Activation packers (quantize.cpp): m rows of k floats (stride lhs_stride) to
// m rows of k/32 LhsQ8_0 (Q8_0 and Q8_1 alike; kOffset: the weight codes'
// offset of the kernel, see offset_sum) or k/256 LhsQ8K.
template <int32_t kOffset>
void pack_lhs_q8_0(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);
void pack_lhs_q8_k(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);

// The Highway target HWY_DYNAMIC_DISPATCH calls now (a HWY_* bit).
int64_t dispatched_target();

inline size_t groups(size_t n) { return (n + kRows - 1) / kRows; }

}  // namespace kernels::hwy_tier
