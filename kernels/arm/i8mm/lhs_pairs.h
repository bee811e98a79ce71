// Activation formats of the i8mm tier: rows quantized to 8 bits (the ref's Q8_0
// and Q8_K codes and scales, bit for bit) and stored in PAIRS of rows, so that
// one 16-byte register holds 8 consecutive codes of two rows: the left operand
// of SMMLA (a 2x8 int8 matrix). An odd last row is paired with a zero row.
//
// A pair of rows is one contiguous stream of blocks (pair p at p * pair_bytes),
// so a caller may start anywhere on an even row and a decode call (m = 1)
// reads one short stream.
//
// Q8_0 pairs, per block of 32 (kQ8_0PairBlockBytes = 80 bytes):
//   float scale[4]   {d0, d0, d1, d1} * mult  (d = the fp16-rounded Q8_0 scale)
//   int8  qs[4][16]  chunk c: row 0 codes 8c..8c+7, then row 1 codes 8c..8c+7
// Q8_1 pairs, per block of 32 (kQ8_1PairBlockBytes = 96 bytes): Q8_0's codes
// and scale, and between them float s[4] {s0, s0, s1, s1} (s = the fp16
// rounding of d * the sum of the codes, d before its rounding, as the ref's
// Q8_1; mult does not apply to it)
// Q8_K pairs, per super-block of 256 (kQ8_KPairBlockBytes = 624 bytes):
//   float scale[4]   {d0, d0, d1, d1} * mult  (d = the Q8_K scale)
//   int8  bsum_lo[16], bsum_hi[16]: row 0 then row 1, sub-block j (32 codes):
//                    sum = 128 * hi + lo, lo in 0..127, hi in -32..31, so that
//                    SMMLA can multiply the sums by the weights' 6-bit mins
//   int8  qs[32][16] chunk t: row 0 codes 8t..8t+7, then row 1 codes 8t..8t+7
//   int8  bsum16_lo[2][16], bsum16_hi[2][16]: the sums of the 16-element
//                    sub-blocks (Q2_K's mins) split as bsum's; vector h holds
//                    row 0's sub-blocks 8h..8h+7, then row 1's
// `mult` folds a power of two of the weight decoding into the scale (exact).
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arm/interleaved.h"

namespace kernels::i8mm {

inline constexpr size_t kQ8_0PairBlockBytes = 16 + 64;
inline constexpr size_t kQ8_1PairBlockBytes = 16 + 16 + 64;
inline constexpr size_t kQ8_1PairCodesOffset = 32;
inline constexpr size_t kQ8_KPairBlockBytes = 16 + 32 + 512 + 64;
inline constexpr size_t kQ8_KBsumOffset = 16;
inline constexpr size_t kQ8_KQsOffset = 48;
inline constexpr size_t kQ8_KBsum16Offset = 560;

inline size_t pairs_of(size_t m) { return (m + 1) / 2; }

void pack_lhs_q8_0_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_1_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);
void pack_lhs_q8_k_pairs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed, float mult);

// The formats for arm::interleaved_kernel.
using Q8_0Pairs = arm::LhsFormat<gguf::GgmlType::Q8_0, 32, kQ8_0PairBlockBytes, 2, pack_lhs_q8_0_pairs>;
using Q8_1Pairs = arm::LhsFormat<gguf::GgmlType::Q8_1, 32, kQ8_1PairBlockBytes, 2, pack_lhs_q8_1_pairs>;
using Q8_KPairs = arm::LhsFormat<gguf::GgmlType::Q8_K, 256, kQ8_KPairBlockBytes, 2, pack_lhs_q8_k_pairs>;

// Stores the first `cols` (1..4) lanes of v at y.
inline void store_cols(float* y, float32x4_t v, size_t cols) {
  if (cols == 4) {
    vst1q_f32(y, v);
    return;
  }
  y[0] = vgetq_lane_f32(v, 0);
  if (cols > 1) y[1] = vgetq_lane_f32(v, 1);
  if (cols > 2) y[2] = vgetq_lane_f32(v, 2);
}

// A 2x4 block of outputs held as two SMMLA tiles (lanes r0w0 r0w1 r1w0 r1w1 and
// r0w2 r0w3 r1w2 r1w3): row 0 is the low halves, row 1 the high halves.
inline float32x4_t tile_row0(float32x4_t t01, float32x4_t t23) {
  return vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(t01), vreinterpretq_f64_f32(t23)));
}
inline float32x4_t tile_row1(float32x4_t t01, float32x4_t t23) {
  return vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(t01), vreinterpretq_f64_f32(t23)));
}
inline int32x4_t tile_row0(int32x4_t t01, int32x4_t t23) {
  return vreinterpretq_s32_s64(vzip1q_s64(vreinterpretq_s64_s32(t01), vreinterpretq_s64_s32(t23)));
}

// {v0, v1, v0, v1} and {v2, v3, v2, v3}: the weight-side pattern of a 2x2 tile.
inline float32x4_t pair_pattern_lo(float32x4_t v) {
  return vreinterpretq_f32_f64(vdupq_laneq_f64(vreinterpretq_f64_f32(v), 0));
}
inline float32x4_t pair_pattern_hi(float32x4_t v) {
  return vreinterpretq_f32_f64(vdupq_laneq_f64(vreinterpretq_f64_f32(v), 1));
}

inline int32x4_t pair_pattern_lo(int32x4_t v) {
  return vreinterpretq_s32_s64(vdupq_laneq_s64(vreinterpretq_s64_s32(v), 0));
}
inline int32x4_t pair_pattern_hi(int32x4_t v) {
  return vreinterpretq_s32_s64(vdupq_laneq_s64(vreinterpretq_s64_s32(v), 1));
}

// Four fp16 values (raw bits) as floats.
inline float32x4_t load_f16x4(const void* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(static_cast<const uint16_t*>(p))));
}

// One-instruction helpers for the single-row loops, each where GCC 12 left
// extra instructions around the intrinsic it replaces (objdump). They work in
// GCC and clang alike. None declares the memory it reads: valid because the
// packed weights and activations are written by pack_rhs and pack_lhs before
// run(), never during it.

// load_f16x4(p), then p += 8, as one post-indexed LDR, so that the LD1 of the
// block's codes that follows post-increments p too. Written with vld1_u16 and
// p += 8, GCC gave every tile an ADD (or MOVs between pointer registers).
inline float32x4_t load_f16x4_post(const uint8_t*& p) {
  float16x4_t h;
  asm("ldr %d0, [%1], #8" : "=w"(h), "+r"(p));
  return vcvt_f32_f16(h);
}

// The float at p in every lane, then p += stride: one LD1R post-indexed by a
// register, which saves the ADD of the row pointer per super-block.
inline float32x4_t ld1r_f32_post(const uint8_t*& p, size_t stride) {
  float32x4_t v;
  asm("ld1r {%0.4s}, [%1], %2" : "=w"(v), "+r"(p) : "r"(stride));
  return v;
}

// The 8 bytes at p in both halves, then p += 8: one post-indexed LD1R.
inline uint8x16_t ld1r_u64_post(const uint8_t*& p) {
  uint8x16_t v;
  asm("ld1r {%0.2d}, [%1], #8" : "=w"(v), "+r"(p));
  return v;
}

// a, b = the 16-byte registers at p + kOffset and p + kOffset + 16, as one
// LDP. GCC forms LDP only from loads that stay adjacent through register
// allocation: in the Q6_K single-row loop it left 12 of 40 pairs as two LDR.
template <int kOffset, class V>
inline void ldp_q(const uint8_t* p, V& a, V& b) {
  static_assert(kOffset % 16 == 0 && kOffset >= -1024 && kOffset <= 1008, "LDP Q: imm7 * 16");
  asm("ldp %q0, %q1, [%2, #%3]" : "=w"(a), "=w"(b) : "r"(p), "i"(kOffset));
}

// One pair of activation rows against one weight pair over 4 chunks of 8
// codes: a 2x2 tile of integer sums.
inline int32x4_t smmla_chain4(const int8x16x4_t& x, const int8x16_t* w) {
  int32x4_t s = vmmlaq_s32(vdupq_n_s32(0), x.val[0], w[0]);
  s = vmmlaq_s32(s, x.val[1], w[1]);
  s = vmmlaq_s32(s, x.val[2], w[2]);
  return vmmlaq_s32(s, x.val[3], w[3]);
}

// vmmlaq_s32(0, x, w) with the zero made in the result register. With the
// intrinsic GCC copied a shared zero register into the accumulator, then the
// accumulator again (2 MOVs per chain).
inline int32x4_t smmla_from_zero(int8x16_t x, int8x16_t w) {
  int32x4_t c;
  asm("movi %0.4s, #0\n\tsmmla %0.4s, %1.16b, %2.16b" : "=&w"(c) : "w"(x), "w"(w));
  return c;
}

// tile_row0(c0, c1) in a register of its own. When c0 and c1 are chains that
// go on accumulating, GCC put the ZIP1 in c0's register and first copied c0
// elsewhere (a MOV per sub-block in the Q4_K single-row loop).
inline int32x4_t tile_row0_apart(int32x4_t c0, int32x4_t c1) {
  int32x4_t d;
  asm("zip1 %0.2d, %1.2d, %2.2d" : "=&w"(d) : "w"(c0), "w"(c1));
  return d;
}

}  // namespace kernels::i8mm
