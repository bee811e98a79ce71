// matmul_f32_q8_k_q4_k_8x4_i8mm and matmul_f32_q8_k_q5_k_8x4_i8mm: Q4_K or
// Q5_K weights x Q8_K activations with SMMLA, one kernel template for both
// (kQ5 below).
//
// Features: Advanced SIMD + I8MM (SMMLA) + DotProd (SDOT, single rows only).
// Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of kNr = 4 weight rows (2 SMMLA pairs), per
// super-block of 256, kPackedBlockBytes = 576 = 4 x 144 bytes (no growth):
//   uint16 d[4], dmin[4]            fp16 scales of rows 0..3
//   uint8  scales[3][4][4]          byte plane i, row r: the row's scale bytes
//                                   4i..4i+3, so that one 16-byte register
//                                   decodes the 6-bit scales/mins of 4 rows
//   uint8  qs[c][pair q][g][16]     row 2q bytes 32c+8g..32c+8g+7 of qs, then
//                                   row 2q+1's (c: 64-element chunk, g: 8 bytes)
// Low nibbles of (c, g) are elements 64c+8g..+7 (sub-block 2c), high nibbles
// 64c+32+8g..+7 (sub-block 2c+1). Missing rows of the last tile are zero.
// Q5_K adds, at kQhOffset = 576 (kPackedBlockBytes 704 = 4 x 176):
//   uint8  qh[pair q][g][16]        the GGUF qh bytes 8g..8g+7 of row 2q, then
//                                   row 2q+1's, inverted: bit s is the fifth
//                                   bit of the element of sub-block s at the
//                                   same place in the code vectors above
// and its codes are decoded as q - 16 (arm/fifth_bits.h: one
// CMTST and one BSL or SRI more than Q4_K's per vector); S then gets
// 16 sum_j sc_j * bsum_j added back, computed as the mins term is, so S is the
// reference's integer sum. A missing row's zero planes decode as -16: its
// outputs are never stored.
//
// LHS (pack_lhs): Q8_K pairs (lhs_pairs.h), with the 32-element sums.
//
// run: tiles of kMr = 8 activation rows x kNr = 4 weight rows. Per sub-block
// of 32: 4 SMMLA per 2x2 tile, then one integer MLA by the sub-block scales;
// the mins term sum_j m_j * bsum_j is itself a 2x8 by 2x8 product, done with
// two SMMLA on the sums split into 7-bit halves (4 SDOT for a single row).
// Per super-block, per tile: acc += (float(S) * d_w - float(M) * dmin_w) * d_a.
// The 2x4 form (rows left over) and the single-row form (decode, row_tiles)
// do the same float operations per output, on the same S and M. m_step 8,
// n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/i8mm/super_block_tiles.h"
#include "kernels/arm/fifth_bits.h"
#include "kernels/arm/in_order.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

constexpr size_t kScalesOffset = 16;
constexpr size_t kQsOffset = 64;
constexpr size_t kQhOffset = kQsOffset + 4 * 128;  // Q5_K only
template <bool kQ5>
constexpr size_t kPackedBlockBytes = kQhOffset + (kQ5 ? 128 : 0);

// TBL indices reading the decoded scales {sc[0..3] of rows 0..3, sc[4..7] of
// rows 0..3} as the int32 pattern {sc_2q, sc_2q+1, sc_2q, sc_2q+1} of
// sub-block s for a 2x2 tile of weight pair q (0xFF reads as zero).
struct ScaleIndex {
  uint8_t pair[8][2][16];
};

constexpr uint8_t scale_byte(int s, int row) { return static_cast<uint8_t>((s < 4 ? 0 : 16) + 4 * row + s % 4); }

constexpr ScaleIndex make_scale_index() {
  ScaleIndex t{};
  for (int s = 0; s < 8; ++s) {
    for (int lane = 0; lane < 4; ++lane) {
      for (int i = 0; i < 4; ++i) {
        t.pair[s][0][4 * lane + i] = i == 0 ? scale_byte(s, lane % 2) : 0xFF;
        t.pair[s][1][4 * lane + i] = i == 0 ? scale_byte(s, 2 + lane % 2) : 0xFF;
      }
    }
  }
  return t;
}
constexpr ScaleIndex kScaleIndex = make_scale_index();

// The 6-bit scales of the tile's 4 rows: {sc[0..3] of rows 0..3, sc[4..7]}.
inline uint8x16x2_t decode_scales(const uint8_t* planes) {
  const uint8x16x3_t s = vld1q_u8_x3(planes);
  uint8x16x2_t r;
  r.val[0] = vandq_u8(s.val[0], vdupq_n_u8(63));
  r.val[1] = vsliq_n_u8(s.val[2], vshrq_n_u8(s.val[0], 6), 4);
  return r;
}

// The 6-bit mins of the tile's 4 rows: {m[0..3] of rows 0..3}, {m[4..7]}.
inline int8x16x2_t decode_mins(const uint8_t* planes) {
  const uint8x16x3_t s = vld1q_u8_x3(planes);
  int8x16x2_t r;
  r.val[0] = vreinterpretq_s8_u8(vandq_u8(s.val[1], vdupq_n_u8(63)));
  r.val[1] = vreinterpretq_s8_u8(vsliq_n_u8(vshrq_n_u8(s.val[2], 4), vshrq_n_u8(s.val[1], 6), 4));
  return r;
}

// The mins as two SMMLA operands: pair q holds row 2q's m[0..7], then row 2q+1's.
inline void mins_pairs(const int8x16x2_t& m, int8x16_t mins[2]) {
  const uint32x4_t lo = vreinterpretq_u32_s8(m.val[0]), hi = vreinterpretq_u32_s8(m.val[1]);
  mins[0] = vreinterpretq_s8_u32(vzip1q_u32(lo, hi));
  mins[1] = vreinterpretq_s8_u32(vzip2q_u32(lo, hi));
}

// sum_j m_j * bsum_j of a 2x2 tile: the bsums' 7-bit halves times the mins.
inline int32x4_t mins_tile(const int8x16x2_t& bsum, int8x16_t mins) {
  return vmmlaq_s32(vshlq_n_s32(vmmlaq_s32(vdupq_n_s32(0), bsum.val[1], mins), 7), bsum.val[0], mins);
}

// The codes of one vector: Q4_K's nibbles, or Q5_K's q - 16 with the fifth
// bits of sub-block `bit` from the plane.
template <bool kQ5, bool kHigh>
__attribute__((always_inline)) inline int8x16_t codes(uint8x16_t nib, const uint8_t* plane, unsigned bit) {
  if constexpr (kQ5) return arm::fifth_bit_codes<kHigh ? 1 : 0>(nib, vld1q_u8(plane), bit);
  return vreinterpretq_s8_u8(kHigh ? vshrq_n_u8(nib, 4) : vandq_u8(nib, vdupq_n_u8(0x0F)));
}

// Sub-block s = 2c (kHigh false: low nibbles) or 2c+1 (high nibbles) of both
// pairs; qh: the block's planes (Q5_K).
template <bool kQ5, bool kHigh>
inline void load_sub_block(const uint8_t* qs_c, const uint8_t* qh, unsigned s, int8x16_t w[2][4]) {
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q) {
    const uint8x16x4_t nib = vld1q_u8_x4(qs_c + 64 * q);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) w[q][g] = codes<kQ5, kHigh>(nib.val[g], qh + 64 * q + 16 * g, s);
  }
}

// One sub-block for P pairs of activation rows: sum[p][q] += tile * pattern.
template <int P, bool kQ5, bool kHigh>
inline void sub_block(const uint8_t* qs_c, const uint8_t* qh, unsigned s, const uint8_t* x_s, size_t pair_bytes,
                      const uint8x16x2_t& sc, const uint8_t (*index)[16], int32x4_t (&sum)[P][2]) {
  int8x16_t w[2][4];
  load_sub_block<kQ5, kHigh>(qs_c, qh, s, w);
  const int32x4_t pattern[2] = {vreinterpretq_s32_u8(vqtbl2q_u8(sc, vld1q_u8(index[0]))),
                                vreinterpretq_s32_u8(vqtbl2q_u8(sc, vld1q_u8(index[1])))};
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(x_s + p * pair_bytes));
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) sum[p][q] = vmlaq_s32(sum[p][q], smmla_chain4(x, w[q]), pattern[q]);
  }
}

// One activation row (decode, or the last odd row) against a tile: per output
// the same integer sums S and M and the same float operations as tile<P>, so a
// row's result does not depend on the batch it came in.
//
// The two SMMLA chains (weight pairs 0 and 1) run through the super-block and
// D_j, the ZIP1 of their row-0 halves after sub-block j, is their running sum;
// Abel summation turns S = sum_j sc_j (D_j - D_j-1) into sum_j D_j (sc_j -
// sc_j+1) (sc_8 = 0): one ZIP1 and one MLA per sub-block, where the 2x4 form
// spent 2 register clears more. The 6-bit scales differ by at most 63, so the
// steps are computed on the bytes (SUB), then sign-extended per sub-block.
// The int32 arithmetic wraps, but it is exact modulo 2^32 and S fits in
// int32, so S comes out exact. The mins term M takes 4 SDOT on the row's split
// block sums. Per super-block and tile (objdump): 64 SMMLA, 64 to unpack the
// nibbles, 37 loads, 16 ZIP1 + MLA, 47 for the scales, steps, mins and float
// work: 228 (Q4_K: 7 ADD more since its chains were split, below). Q4_K at
// M=1, n=2816, k=1024 (kernel_insn, qemu -cpu max): 0.2478 -> 0.2239
// instructions per weight; the dotprod tier's Q4_K takes 0.2571.

// sc_j - sc_j+1 of sub-blocks j = 0..3 (steps.val[0]) and 4..7 (val[1]) in
// decode_scales' layout: byte j % 4 of lane r for row r.
inline int8x16x2_t scale_steps(const uint8x16x2_t& sc) {
  const uint32x4_t v0 = vreinterpretq_u32_u8(sc.val[0]), v1 = vreinterpretq_u32_u8(sc.val[1]);
  const uint32x4_t next0 = vsliq_n_u32(vshrq_n_u32(v0, 8), v1, 24);  // sc_1..sc_4
  const uint32x4_t next1 = vshrq_n_u32(v1, 8);                       // sc_5..sc_7, 0
  return {vsubq_s8(vreinterpretq_s8_u32(v0), vreinterpretq_s8_u32(next0)),
          vsubq_s8(vreinterpretq_s8_u32(v1), vreinterpretq_s8_u32(next1))};
}

// Byte kByte of each 32-bit lane of v, sign-extended: sub-block kByte's (or
// kByte + 4's) step of the lane's row.
template <int kByte>
inline int32x4_t lane_byte(int8x16_t v) {
  const int32x4_t s = vreinterpretq_s32_s8(v);
  if constexpr (kByte == 3) return vshrq_n_s32(s, 24);
  return vshrq_n_s32(vshlq_n_s32(s, 24 - 8 * kByte), 24);
}

// decode_scales and decode_mins of one tile's planes together, the planes
// loaded with LDP + LDR at offsets from w (no address to compute) and the
// mins decoded first (the scales' SLI may then take the third plane in place).
struct RowPlanes {
  uint8x16x2_t sc;
  int8x16x2_t mins;
};

inline RowPlanes row_planes(const uint8_t* w) {
  uint8x16_t s0, s1;
  ldp_q<static_cast<int>(kScalesOffset)>(w, s0, s1);
  uint8x16_t s2 = vld1q_u8(w + kScalesOffset + 32);
  RowPlanes r;
  r.mins.val[1] = vreinterpretq_s8_u8(vsliq_n_u8(vshrq_n_u8(s2, 4), vshrq_n_u8(s1, 6), 4));
  r.mins.val[0] = vreinterpretq_s8_u8(vandq_u8(s1, vdupq_n_u8(63)));
  r.sc.val[0] = vandq_u8(s0, vdupq_n_u8(63));
  r.sc.val[1] = vsliq_n_u8(s2, vshrq_n_u8(s0, 6), 4);
  return r;
}

// Q4_K: two sets of chains, one for the even sub-blocks and one for the odd:
// one set through the whole super-block was 32 SMMLAs back to back a chain,
// and the loop waited on them (3 cycles each on LLVM's Neoverse V1 model).
// D_j is then the sum of the two sets' ZIP1s, one ADD more a sub-block. Q4_K
// decode, 1 x 1024 x 4096 (bench/cycles/cycle_table.py): Neoverse V1 0.088 ->
// 0.050 cycles a weight (1.92x -> 1.01x its port bound), Neoverse V2 0.057 ->
// 0.050; 0.223 -> 0.235 instructions a weight under qemu. Q5_K keeps one set:
// its fifth bits already fill the chain's waits, and two sets took 11% more
// instructions and 15-27% more cycles (registers spilled).
template <bool kQ5>
inline constexpr int kChainSets = kQ5 ? 1 : 2;

struct RowChains {
  int32x4_t c0[2], c1[2];  // running SMMLA chains of weight pairs 0 and 1, by parity of the sub-block
  int32x4_t d[2];          // the ZIP1 of each set after its last sub-block
  int32x4_t sum;           // S so far
};

// Sub-block kJ (chunk kJ / 2, its high nibbles when kJ is odd): nib = the
// chunk's codes, pair q in nib[4q .. 4q + 3]; a = the row's block.
template <bool kQ5, int kJ>
inline void row_sub_block(const uint8x16_t* nib, const uint8_t* qh, const uint8_t* a, int32x4_t step, RowChains& ch) {
  constexpr int kX = static_cast<int>(kQ8_KQsOffset) + 64 * kJ;
  constexpr int kSet = kJ % kChainSets<kQ5>;
  int8x16_t x[4];
  ldp_q<kX>(a, x[0], x[1]);
  ldp_q<kX + 32>(a, x[2], x[3]);
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const uint8x16_t n0 = nib[g], n1 = nib[4 + g];
    const int8x16_t w0 = codes<kQ5, kJ % 2 != 0>(n0, qh + 16 * g, kJ);
    const int8x16_t w1 = codes<kQ5, kJ % 2 != 0>(n1, qh + 64 + 16 * g, kJ);
    if (kJ < kChainSets<kQ5> && g == 0) {
      ch.c0[kSet] = smmla_from_zero(x[0], w0);
      ch.c1[kSet] = smmla_from_zero(x[0], w1);
    } else {
      ch.c0[kSet] = vmmlaq_s32(ch.c0[kSet], x[g], w0);
      ch.c1[kSet] = vmmlaq_s32(ch.c1[kSet], x[g], w1);
    }
  }
  ch.d[kSet] = tile_row0_apart(ch.c0[kSet], ch.c1[kSet]);
  const int32x4_t d = kChainSets<kQ5> == 1 || kJ == 0 ? ch.d[kSet] : vaddq_s32(ch.d[0], ch.d[1]);
  ch.sum = kJ == 0 ? vmulq_s32(d, step) : vmlaq_s32(ch.sum, d, step);
}

// Chunk c (sub-blocks 2c, 2c + 1): its 128 bytes of codes loaded once.
template <bool kQ5, int kC>
inline void row_chunk(const uint8_t* w, const uint8_t* a, int32x4_t step_lo, int32x4_t step_hi, RowChains& ch) {
  constexpr int kQs = static_cast<int>(kQsOffset) + 128 * kC;
  uint8x16_t nib[8];
  ldp_q<kQs>(w, nib[0], nib[1]);
  ldp_q<kQs + 32>(w, nib[2], nib[3]);
  ldp_q<kQs + 64>(w, nib[4], nib[5]);
  ldp_q<kQs + 96>(w, nib[6], nib[7]);
  // No planes for Q4_K: given the unused w + kQhOffset, GCC 12 kept a copy of
  // w per super-block (Q4_K decode, 1 x 4096 x 4096: 3740738 -> 3757120).
  const uint8_t* qh = kQ5 ? w + kQhOffset : nullptr;
  row_sub_block<kQ5, 2 * kC>(nib, qh, a, step_lo, ch);
  row_sub_block<kQ5, 2 * kC + 1>(nib, qh, a, step_hi, ch);
}

// sum_j v_j * bsum_j of the row for the 4 rows' v (the mins, or Q5_K's
// scales; 4 per lane) with SDOT on b0 = {bsum_lo[0..7], bsum_hi[0..7]}: the
// high part first, shifted, then accumulating the low part.
__attribute__((always_inline)) inline int32x4_t row_bsum_dot(const int8x16x2_t& v, int8x16_t b0) {
  const int32x4_t hi = vdotq_laneq_s32(vdotq_laneq_s32(vdupq_n_s32(0), v.val[0], b0, 2), v.val[1], b0, 3);
  return vdotq_laneq_s32(vdotq_laneq_s32(vshlq_n_s32(hi, 7), v.val[0], b0, 0), v.val[1], b0, 1);
}

// acc + the super-block (the row's at a, the tile's at w); a advances to the
// row's next block.
template <bool kQ5>
__attribute__((always_inline)) inline float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w,
                                                            size_t a_stride) {
  const RowPlanes planes = row_planes(w);
  const int8x16x2_t steps = scale_steps(planes.sc);
  RowChains ch;
  row_chunk<kQ5, 0>(w, a, lane_byte<0>(steps.val[0]), lane_byte<1>(steps.val[0]), ch);
  row_chunk<kQ5, 1>(w, a, lane_byte<2>(steps.val[0]), lane_byte<3>(steps.val[0]), ch);
  row_chunk<kQ5, 2>(w, a, lane_byte<0>(steps.val[1]), lane_byte<1>(steps.val[1]), ch);
  row_chunk<kQ5, 3>(w, a, lane_byte<2>(steps.val[1]), lane_byte<3>(steps.val[1]), ch);
  // sum_j m_j * bsum_j of the row with SDOT: {bsum_lo[0..7], bsum_hi[0..7]}
  // of the row against the 4 rows' mins (4 per lane); the high part first,
  // shifted, then accumulating the low part.
  const int8x16x2_t& m = planes.mins;
  int8x16_t lo, hi;
  ldp_q<static_cast<int>(kQ8_KBsumOffset)>(a, lo, hi);
  const int8x16_t b0 = vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(lo), vreinterpretq_s64_s8(hi)));
  const int32x4_t msum = row_bsum_dot(m, b0);
  if constexpr (kQ5) {  // S += 16 sum_j sc_j * bsum_j (the scales are 6-bit: int8)
    const int8x16x2_t sc = {vreinterpretq_s8_u8(planes.sc.val[0]), vreinterpretq_s8_u8(planes.sc.val[1])};
    ch.sum = vaddq_s32(ch.sum, vshlq_n_s32(row_bsum_dot(sc, b0), 4));
  }
  const float16x8_t d = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(w)));  // d[4], dmin[4]
  const float32x4_t v = vfmsq_f32(vmulq_f32(vcvtq_f32_s32(ch.sum), vcvt_f32_f16(vget_low_f16(d))), vcvtq_f32_s32(msum),
                                  vcvt_high_f32_f16(d));
  return vfmaq_f32(acc, v, ld1r_f32_post(a, a_stride));
}

// The kernels' types, for SuperBlockTiles (super_block_tiles.h): Q4_K
// (kQ5 false) and Q5_K.
template <bool kQ5>
struct OffsetK : arm::WeightType<kQ5 ? gguf::GgmlType::Q5_K : gguf::GgmlType::Q4_K,
                                 std::conditional_t<kQ5, ref::BlockQ5_K, ref::BlockQ4_K>> {
  using GgufBlock = std::conditional_t<kQ5, ref::BlockQ5_K, ref::BlockQ4_K>;
  static constexpr size_t kPackedBlockBytes = i8mm::kPackedBlockBytes<kQ5>;
  static constexpr size_t kRowTileStart = 0;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    std::memcpy(out + 8 + 2 * r, &blk.dmin, 2);
    for (size_t i = 0; i < 3; ++i) std::memcpy(out + kScalesOffset + 16 * i + 4 * r, blk.scales + 4 * i, 4);
    for (size_t c = 0; c < 4; ++c) {
      for (size_t g = 0; g < 4; ++g) {
        std::memcpy(out + kQsOffset + 128 * c + 64 * (r / 2) + 16 * g + 8 * (r % 2), blk.qs + 32 * c + 8 * g, 8);
      }
    }
    if constexpr (kQ5) {
      for (size_t l = 0; l < 32; ++l) {
        out[kQhOffset + 64 * (r / 2) + 16 * (l / 8) + 8 * (r % 2) + l % 8] = static_cast<uint8_t>(~blk.qh[l]);
      }
    }
  }

  template <int P>
  __attribute__((always_inline)) static void sums(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                  int32x4_t (&sum)[P][2]) {
    const uint8x16x2_t sc = decode_scales(w + kScalesOffset);
#pragma GCC unroll 1
    for (int c = 0; c < 4; ++c) {
      const uint8_t* qs_c = w + kQsOffset + 128 * c;
      const uint8_t* x_c = a + kQ8_KQsOffset + 128 * c;
      const auto s = static_cast<unsigned>(2 * c);
      sub_block<P, kQ5, false>(qs_c, w + kQhOffset, s, x_c, pair_bytes, sc, kScaleIndex.pair[2 * c], sum);
      sub_block<P, kQ5, true>(qs_c, w + kQhOffset, s + 1, x_c + 64, pair_bytes, sc, kScaleIndex.pair[2 * c + 1], sum);
    }
  }

  // acc += (float(S) * d_w - float(M) * dmin_w) * d_a, M the mins term (and
  // Q5_K's S + 16 sum_j sc_j * bsum_j, the same product with the scales).
  template <int P>
  __attribute__((always_inline)) static void add(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                 const int32x4_t (&sum)[P][2], float (&acc)[P][2][4]) {
    int8x16_t mins[2];
    mins_pairs(decode_mins(w + kScalesOffset), mins);
    [[maybe_unused]] int8x16_t scales[2];
    if constexpr (kQ5) {
      const uint8x16x2_t sc = decode_scales(w + kScalesOffset);
      mins_pairs({vreinterpretq_s8_u8(sc.val[0]), vreinterpretq_s8_u8(sc.val[1])}, scales);
    }
    const float32x4_t d4 = load_f16x4(w), dmin4 = load_f16x4(w + 8);
    const float32x4_t dpat[2] = {pair_pattern_lo(d4), pair_pattern_hi(d4)};
    const float32x4_t mpat[2] = {pair_pattern_lo(dmin4), pair_pattern_hi(dmin4)};
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      const uint8_t* ap = a + p * pair_bytes;
      const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(ap));
      const int8x16x2_t bsum = vld1q_s8_x2(reinterpret_cast<const int8_t*>(ap + kQ8_KBsumOffset));
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        int32x4_t s = sum[p][q];
        if constexpr (kQ5) s = vaddq_s32(s, vshlq_n_s32(mins_tile(bsum, scales[q]), 4));
        const float32x4_t v =
            vfmsq_f32(vmulq_f32(vcvtq_f32_s32(s), dpat[q]), vcvtq_f32_s32(mins_tile(bsum, mins[q])), mpat[q]);
        vst1q_f32(acc[p][q], vfmaq_f32(vld1q_f32(acc[p][q]), v, apat));
      }
    }
  }

  __attribute__((always_inline)) static float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w,
                                                              size_t a_stride) {
    return i8mm::row_block<kQ5>(acc, a, w, a_stride);
  }
};

// The decode row of a Q4_K tile on an in-order core (run_in_order), one
// super-block an iteration. The compiled row (row_block<false> above) takes
// 0.332 cycles a weight on LLVM's Cortex-A510 model, 2.3x what its
// instructions need in their order: GCC's order waits on the SMMLA chains and
// the scale steps, and its register reuse (one register for every AND's
// result) pins that order. This loop (bench/cycles/in_order/q4_k_i8mm.s) is
// GCC's instructions, its copies folded and the float work of a super-block
// software pipelined into the next iteration, then ordered by
// order_search.py --schedule (list scheduling by the model, every value
// renamed to the register free the longest). Cortex-A510 model: 0.130 cycles
// a weight (133 a super-block of the tile), 2.6x fewer, 1.06x its port bound
// in this order (docs/cycles.md); the dotprod tier's in-order Q4_K loop takes
// 0.211 there. The A55 has no SMMLA: this loop is for the A510 and A520.
// What limits it is issue: its 238 instructions on the model's two vector
// pipes and three-wide dispatch. The integer sums and the float operations
// are row_block's, in its order: the results of run() bit for bit
// (InOrderSchedule, TierMatmul).
__attribute__((noinline)) float32x4_t q4_k_row_in_order(const uint8_t*& w_ref, const uint8_t* x, const uint8_t* end) {
  // The offsets and strides the loop's lines use.
  static_assert(kPackedBlockBytes<false> == 576 && kScalesOffset == 16 && kQsOffset == 64);
  static_assert(kQ8_KPairBlockBytes == 624 && kQ8_KBsumOffset == 16 && kQ8_KQsOffset == 48);
  const uint8_t* w = w_ref;
  float32x4_t acc = vdupq_n_f32(0.0f);
  asm volatile(
      "movi d0, #0\n"
      "movi d1, #0\n"
      "movi d2, #0\n"
      "movi d3, #0\n"
      "movi d4, #0\n"
      "movi d5, #0\n"
      "movi d10, #0\n"
      "movi d11, #0\n"
      "movi d13, #0\n"
      "1:\n"
      "scvtf v4.4s, v0.4s\n"
      "fcvtl v5.4s, v2.4h\n"
      "movi v6.16b, #0x0f\n"
      "movi v7.4s, #0\n"
      "ldp q8, q9, [%[w], #64]\n"
      "scvtf v10.4s, v3.4s\n"
      "fcvtl2 v11.4s, v2.8h\n"
      "movi v12.16b, #0x3f\n"
      "fmul v13.4s, v4.4s, v5.4s\n"
      "movi v14.4s, #0\n"
      "and v15.16b, v8.16b, v6.16b\n"
      "ldp q16, q17, [%[x], #48]\n"
      "ldp q18, q19, [%[w], #128]\n"
      "and v20.16b, v9.16b, v6.16b\n"
      "ldp q21, q22, [%[w], #16]\n"
      "movi v23.4s, #0\n"
      "smmla v7.4s, v16.16b, v15.16b\n"
      "fmls v13.4s, v10.4s, v11.4s\n"
      "movi v24.4s, #0\n"
      "and v25.16b, v18.16b, v6.16b\n"
      "ushr v26.16b, v8.16b, #4\n"
      "ldr q27, [%[w], #48]\n"
      "ushr v29.16b, v21.16b, #6\n"
      "and v30.16b, v21.16b, v12.16b\n"
      "ldp q31, q0, [%[x], #112]\n"
      "ushr v3.16b, v18.16b, #4\n"
      "ushr v4.16b, v27.16b, #4\n"
      "smmla v14.4s, v16.16b, v25.16b\n"
      "fmla %[acc].4s, v13.4s, v1.4s\n"
      "smmla v7.4s, v17.16b, v20.16b\n"
      "sli v27.16b, v29.16b, #4\n"
      "and v2.16b, v19.16b, v6.16b\n"
      "ushr v5.16b, v22.16b, #6\n"
      "ldp q15, q10, [%[w], #96]\n"
      "smmla v23.4s, v31.16b, v26.16b\n"
      "ldp q11, q8, [%[w], #160]\n"
      "smmla v24.4s, v31.16b, v3.16b\n"
      "smmla v14.4s, v17.16b, v2.16b\n"
      "sli v4.16b, v5.16b, #4\n"
      "ushr v21.16b, v19.16b, #4\n"
      "ushr v18.16b, v9.16b, #4\n"
      "ushr v16.4s, v30.4s, #8\n"
      "ldp q25, q1, [%[x], #80]\n"
      "and v13.16b, v15.16b, v6.16b\n"
      "and v20.16b, v11.16b, v6.16b\n"
      "smmla v24.4s, v0.16b, v21.16b\n"
      "smmla v23.4s, v0.16b, v18.16b\n"
      "sli v16.4s, v27.4s, #24\n"
      "smmla v7.4s, v25.16b, v13.16b\n"
      "smmla v14.4s, v25.16b, v20.16b\n"
      "ushr v29.16b, v15.16b, #4\n"
      "ldp q26, q3, [%[x], #144]\n"
      "ushr v31.16b, v11.16b, #4\n"
      "and v2.16b, v10.16b, v6.16b\n"
      "and v17.16b, v8.16b, v6.16b\n"
      "sub v5.16b, v30.16b, v16.16b\n"
      "smmla v23.4s, v26.16b, v29.16b\n"
      "smmla v24.4s, v26.16b, v31.16b\n"
      "smmla v7.4s, v1.16b, v2.16b\n"
      "smmla v14.4s, v1.16b, v17.16b\n"
      "ushr v19.16b, v10.16b, #4\n"
      "ushr v9.16b, v8.16b, #4\n"
      "ldp q21, q18, [%[w], #192]\n"
      "shl v0.4s, v5.4s, #24\n"
      "ldp q13, q20, [%[w], #256]\n"
      "shl v25.4s, v5.4s, #16\n"
      "smmla v24.4s, v3.16b, v9.16b\n"
      "smmla v23.4s, v3.16b, v19.16b\n"
      "zip1 v15.2d, v7.2d, v14.2d\n"
      "and v11.16b, v21.16b, v6.16b\n"
      "ldp q16, q30, [%[x], #176]\n"
      "and v29.16b, v13.16b, v6.16b\n"
      "sshr v26.4s, v0.4s, #24\n"
      "and v31.16b, v22.16b, v12.16b\n"
      "zip1 v2.2d, v23.2d, v24.2d\n"
      "smmla v7.4s, v16.16b, v11.16b\n"
      "smmla v14.4s, v16.16b, v29.16b\n"
      "mul v0.4s, v26.4s, v15.4s\n"
      "and v1.16b, v18.16b, v6.16b\n"
      "and v17.16b, v20.16b, v6.16b\n"
      "sshr v10.4s, v25.4s, #24\n"
      "ldp q8, q9, [%[w], #224]\n"
      "ldp q3, q19, [%[w], #288]\n"
      "add v12.4s, v2.4s, v15.4s\n"
      "ushr v22.16b, v21.16b, #4\n"
      "smmla v7.4s, v30.16b, v1.16b\n"
      "smmla v14.4s, v30.16b, v17.16b\n"
      "and v11.16b, v8.16b, v6.16b\n"
      "ldp q16, q29, [%[x], #208]\n"
      "and v26.16b, v3.16b, v6.16b\n"
      "mla v0.4s, v12.4s, v10.4s\n"
      "ushr v25.16b, v13.16b, #4\n"
      "ldp q15, q21, [%[x], #240]\n"
      "smmla v7.4s, v16.16b, v11.16b\n"
      "smmla v14.4s, v16.16b, v26.16b\n"
      "and v1.16b, v9.16b, v6.16b\n"
      "and v17.16b, v19.16b, v6.16b\n"
      "smmla v23.4s, v15.16b, v22.16b\n"
      "smmla v24.4s, v15.16b, v25.16b\n"
      "ushr v30.16b, v18.16b, #4\n"
      "ushr v10.16b, v20.16b, #4\n"
      "smmla v7.4s, v29.16b, v1.16b\n"
      "smmla v14.4s, v29.16b, v17.16b\n"
      "ushr v12.16b, v8.16b, #4\n"
      "ushr v13.16b, v3.16b, #4\n"
      "smmla v23.4s, v21.16b, v30.16b\n"
      "smmla v24.4s, v21.16b, v10.16b\n"
      "ldp q11, q16, [%[x], #272]\n"
      "ushr v26.16b, v9.16b, #4\n"
      "ushr v22.16b, v19.16b, #4\n"
      "ldp q15, q25, [%[w], #384]\n"
      "ldp q18, q20, [%[w], #320]\n"
      "ushr v1.4s, v27.4s, #8\n"
      "smmla v23.4s, v11.16b, v12.16b\n"
      "smmla v24.4s, v11.16b, v13.16b\n"
      "zip1 v17.2d, v7.2d, v14.2d\n"
      "shl v29.4s, v5.4s, #8\n"
      "ldp q8, q3, [%[x], #304]\n"
      "and v30.16b, v15.16b, v6.16b\n"
      "and v10.16b, v18.16b, v6.16b\n"
      "sub v21.16b, v27.16b, v1.16b\n"
      "sshr v9.4s, v5.4s, #24\n"
      "smmla v23.4s, v16.16b, v26.16b\n"
      "smmla v24.4s, v16.16b, v22.16b\n"
      "sshr v19.4s, v29.4s, #24\n"
      "smmla v14.4s, v8.16b, v30.16b\n"
      "smmla v7.4s, v8.16b, v10.16b\n"
      "add v12.4s, v2.4s, v17.4s\n"
      "and v11.16b, v25.16b, v6.16b\n"
      "ushr v13.16b, v18.16b, #4\n"
      "ushr v1.16b, v15.16b, #4\n"
      "zip1 v27.2d, v23.2d, v24.2d\n"
      "and v5.16b, v20.16b, v6.16b\n"
      "ldp q26, q16, [%[w], #416]\n"
      "mla v0.4s, v12.4s, v19.4s\n"
      "smmla v14.4s, v3.16b, v11.16b\n"
      "ldp q22, q29, [%[x], #368]\n"
      "ushr v30.16b, v20.16b, #4\n"
      "ldp q8, q10, [%[w], #352]\n"
      "smmla v7.4s, v3.16b, v5.16b\n"
      "and v2.16b, v26.16b, v6.16b\n"
      "ldp q18, q15, [%[x], #336]\n"
      "smmla v24.4s, v22.16b, v1.16b\n"
      "smmla v23.4s, v22.16b, v13.16b\n"
      "and v12.16b, v8.16b, v6.16b\n"
      "add v19.4s, v27.4s, v17.4s\n"
      "ushr v11.16b, v25.16b, #4\n"
      "smmla v14.4s, v18.16b, v2.16b\n"
      "and v20.16b, v10.16b, v6.16b\n"
      "and v3.16b, v16.16b, v6.16b\n"
      "smmla v7.4s, v18.16b, v12.16b\n"
      "smmla v23.4s, v29.16b, v30.16b\n"
      "smmla v24.4s, v29.16b, v11.16b\n"
      "mla v0.4s, v19.4s, v9.4s\n"
      "ushr v5.16b, v26.16b, #4\n"
      "ushr v1.16b, v8.16b, #4\n"
      "ldp q13, q22, [%[x], #400]\n"
      "smmla v14.4s, v15.16b, v3.16b\n"
      "smmla v7.4s, v15.16b, v20.16b\n"
      "ushr v17.16b, v10.16b, #4\n"
      "ushr v25.16b, v16.16b, #4\n"
      "smmla v24.4s, v13.16b, v5.16b\n"
      "smmla v23.4s, v13.16b, v1.16b\n"
      "ldp q2, q12, [%[w], #448]\n"
      "shl v18.4s, v21.4s, #24\n"
      "ldp q30, q11, [%[w], #512]\n"
      "zip1 v29.2d, v7.2d, v14.2d\n"
      "ldp q9, q19, [%[x], #432]\n"
      "and v26.16b, v2.16b, v6.16b\n"
      "smmla v24.4s, v22.16b, v25.16b\n"
      "smmla v23.4s, v22.16b, v17.16b\n"
      "and v8.16b, v30.16b, v6.16b\n"
      "and v3.16b, v12.16b, v6.16b\n"
      "smmla v7.4s, v9.16b, v26.16b\n"
      "sshr v15.4s, v18.4s, #24\n"
      "and v20.16b, v11.16b, v6.16b\n"
      "zip1 v10.2d, v23.2d, v24.2d\n"
      "smmla v14.4s, v9.16b, v8.16b\n"
      "ushr v16.16b, v2.16b, #4\n"
      "add v5.4s, v27.4s, v29.4s\n"
      "ldp q1, q13, [%[w], #480]\n"
      "smmla v7.4s, v19.16b, v3.16b\n"
      "ushr v25.16b, v12.16b, #4\n"
      "ushr v17.16b, v30.16b, #4\n"
      "add v22.4s, v10.4s, v29.4s\n"
      "smmla v14.4s, v19.16b, v20.16b\n"
      "ldp q26, q18, [%[w], #544]\n"
      "and v8.16b, v1.16b, v6.16b\n"
      "ldp q9, q2, [%[x], #464]\n"
      "shl v27.4s, v21.4s, #16\n"
      "ldp q3, q12, [%[x], #496]\n"
      "mla v0.4s, v5.4s, v15.4s\n"
      "and v30.16b, v26.16b, v6.16b\n"
      "ushr v29.16b, v26.16b, #4\n"
      "smmla v7.4s, v9.16b, v8.16b\n"
      "movi v19.4s, #0\n"
      "sshr v20.4s, v27.4s, #24\n"
      "smmla v23.4s, v3.16b, v16.16b\n"
      "smmla v24.4s, v3.16b, v17.16b\n"
      "smmla v14.4s, v9.16b, v30.16b\n"
      "ushr v5.16b, v11.16b, #4\n"
      "ldp q15, q26, [%[x], #16]\n"
      "and v8.16b, v13.16b, v6.16b\n"
      "and v27.16b, v18.16b, v6.16b\n"
      "smmla v23.4s, v12.16b, v25.16b\n"
      "mla v0.4s, v22.4s, v20.4s\n"
      "smmla v24.4s, v12.16b, v5.16b\n"
      "zip1 v16.2d, v15.2d, v26.2d\n"
      "ushr v3.16b, v1.16b, #4\n"
      "ldp q17, q9, [%[x], #528]\n"
      "smmla v7.4s, v2.16b, v8.16b\n"
      "smmla v14.4s, v2.16b, v27.16b\n"
      "ushr v30.16b, v13.16b, #4\n"
      "ushr v11.16b, v18.16b, #4\n"
      "ld1r {v1.4s}, [%[x]]\n"
      "smmla v23.4s, v17.16b, v3.16b\n"
      "smmla v24.4s, v17.16b, v29.16b\n"
      "sdot v19.4s, v31.16b, v16.4b[2]\n"
      "zip1 v6.2d, v7.2d, v14.2d\n"
      "shl v25.4s, v21.4s, #8\n"
      "sshr v20.4s, v21.4s, #24\n"
      "smmla v23.4s, v9.16b, v30.16b\n"
      "smmla v24.4s, v9.16b, v11.16b\n"
      "sdot v19.4s, v4.16b, v16.4b[3]\n"
      "add v22.4s, v10.4s, v6.4s\n"
      "sshr v5.4s, v25.4s, #24\n"
      "ldr q2, [%[w]]\n"
      "zip1 v12.2d, v23.2d, v24.2d\n"
      "shl v3.4s, v19.4s, #7\n"
      "mla v0.4s, v22.4s, v5.4s\n"
      "sdot v3.4s, v31.16b, v16.4b[0]\n"
      "add v15.4s, v12.4s, v6.4s\n"
      "add %[x], %[x], #624\n"
      "add %[w], %[w], #576\n"
      "mla v0.4s, v15.4s, v20.4s\n"
      "sdot v3.4s, v4.16b, v16.4b[1]\n"
      "cmp %[x], %[end]\n"
      "b.ne 1b\n"
      "scvtf v4.4s, v0.4s\n"
      "fcvtl v5.4s, v2.4h\n"
      "scvtf v10.4s, v3.4s\n"
      "fcvtl2 v11.4s, v2.8h\n"
      "fmul v13.4s, v4.4s, v5.4s\n"
      "fmls v13.4s, v10.4s, v11.4s\n"
      "fmla %[acc].4s, v13.4s, v1.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  w_ref = w;
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ4_K =
    arm::interleaved_kernel<InOrderSuperBlockTiles<OffsetK<false>, q4_k_row_in_order>>(
        "matmul_f32_q8_k_q4_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_K = arm::interleaved_kernel<SuperBlockTiles<OffsetK<true>>>(
    "matmul_f32_q8_k_q5_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
