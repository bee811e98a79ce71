// matmul_f32_q8_k_q6_k_8x4_i8mm: Q6_K weights x Q8_K activations with SMMLA.
//
// Features: Advanced SIMD + I8MM (SMMLA). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of kNr = 4 weight rows (2 SMMLA pairs), per
// super-block of 256, kPackedBlockBytes = 840 = 4 x 210 bytes (no growth):
//   uint16 d[4]                          fp16 scales of rows 0..3
//   int8   scales[16][4]                 sub-block s (16 elements), row r
//   uint8  bits[c][g][pair q][3][16]     R0, R1, R2: row 2q's 8 bytes, then row
//                                        2q+1's (c: 128-element chunk, g: group of 8)
// For i < 8, the codes of elements 128c + 8g + i + 32e (e = 0..3), q_e, are
// re-packed 4 per 3 bytes: R_e[i] = (q_e ^ 32) << 2 | two bits of q_3 ^ 32
// (bits 5-4 in R0, 3-2 in R1, 1-0 in R2), so that the int8 4 * (q_e - 32)
// costs one AND each for e < 3, and 3 shifts + 2 SRI for e = 3: 8 instructions
// per 64 codes (11 with the GGUF bit order). The 1/4 goes into the activation
// scale. Missing rows of the last tile are zero.
//
// LHS (pack_lhs): Q8_K pairs (lhs_pairs.h), scale multiplied by 1/4.
//
// run: tiles of kMr = 8 activation rows x kNr = 4 weight rows. Per sub-block
// of 16: 2 SMMLA per 2x2 tile, then one integer MLA by the sub-block scales;
// per super-block acc += float(S) * d_w * d_a. The 2x4 form (rows left over)
// and the single-row form (decode, row_tiles) do the same float operations
// per output, on the same S. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/i8mm/super_block_tiles.h"
#include "kernels/arm/in_order.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

constexpr size_t kScalesOffset = 8;
constexpr size_t kBitsOffset = 72;
constexpr size_t kPackedBlockBytes = kBitsOffset + 2 * 4 * 2 * 48;

// Offset of the 48 bytes of (c, g, q) in a packed super-block.
constexpr size_t bits_offset(size_t c, size_t g, size_t q) { return kBitsOffset + 384 * c + 96 * g + 48 * q; }

// The codes of (c, g) for one weight pair, as int8 4 * (q - 32): e[i] holds
// elements 128c + 32i + 8g .. +7 (sub-block 8c + 2i + g / 2).
struct Codes {
  int8x16_t e[4];
};

inline Codes decode_codes(const uint8_t* p) {
  const uint8x16x3_t v = vld1q_u8_x3(p);
  const uint8x16_t top6 = vdupq_n_u8(0xFC);
  Codes r;
  r.e[0] = vreinterpretq_s8_u8(vandq_u8(v.val[0], top6));
  r.e[1] = vreinterpretq_s8_u8(vandq_u8(v.val[1], top6));
  r.e[2] = vreinterpretq_s8_u8(vandq_u8(v.val[2], top6));
  const uint8x16_t e3 = vsriq_n_u8(vshlq_n_u8(v.val[0], 6), vshlq_n_u8(v.val[1], 6), 2);
  r.e[3] = vreinterpretq_s8_u8(vsriq_n_u8(e3, vshlq_n_u8(v.val[2], 6), 4));
  return r;
}

// The scales of sub-blocks 8c + half + 2e (e = 0..3) of the tile's 4 rows, as
// int32 {rows 0..3}; p points at the 8 sub-blocks of chunk c.
template <int kHalf>
inline void load_scales(const uint8_t* p, int32x4_t scale[4]) {
  const uint32x4x2_t v = vld1q_u32_x2(reinterpret_cast<const uint32_t*>(p));
  const int8x16_t s8 =
      vreinterpretq_s8_u32(kHalf == 0 ? vuzp1q_u32(v.val[0], v.val[1]) : vuzp2q_u32(v.val[0], v.val[1]));
  const int16x8_t lo = vmovl_s8(vget_low_s8(s8)), hi = vmovl_high_s8(s8);
  scale[0] = vmovl_s16(vget_low_s16(lo));
  scale[1] = vmovl_high_s16(lo);
  scale[2] = vmovl_s16(vget_low_s16(hi));
  scale[3] = vmovl_high_s16(hi);
}

inline int32x4_t chain2(const int8x16x2_t& x, int8x16_t w0, int8x16_t w1) {
  return vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), x.val[0], w0), x.val[1], w1);
}

// Groups g = 2 kHalf, 2 kHalf + 1 of chunk c for P pairs of activation rows:
// one sub-block per e. bits: the (c, 2 kHalf) group; x: chunk c's codes.
template <int P, int kHalf>
inline void half_chunk(const uint8_t* bits, const uint8_t* scales, const uint8_t* x, size_t pair_bytes,
                       int32x4_t (&sum)[P][2]) {
  int32x4_t scale[4];
  load_scales<kHalf>(scales, scale);
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q) {
    const Codes g0 = decode_codes(bits + 48 * q);
    const Codes g1 = decode_codes(bits + 96 + 48 * q);
#pragma GCC unroll 4
    for (int e = 0; e < 4; ++e) {
      const int32x4_t pattern = q == 0 ? pair_pattern_lo(scale[e]) : pair_pattern_hi(scale[e]);
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        const int8x16x2_t xe = vld1q_s8_x2(reinterpret_cast<const int8_t*>(x + p * pair_bytes + 64 * e + 32 * kHalf));
        sum[p][q] = vmlaq_s32(sum[p][q], chain2(xe, g0.e[e], g1.e[e]), pattern);
      }
    }
  }
}

// One activation row (decode, or the last odd row) against a tile: per output
// the same integer sum S and the same float operations as tile<P>, so a row's
// result does not depend on the batch it came in.
//
// The 2x4 form of the sub-block loop spent, per sub-block, 2 register clears,
// a ZIP1 and an MLA on 4 SMMLA. Here the two chains (weight pairs 0 and 1)
// run through the whole super-block and D_s, the ZIP1 of their row-0 halves
// after sub-block s, is their running sum; Abel summation turns
// S = sum_s sc_s (D_s - D_s-1) into S = sum_s D_s (sc_s - sc_next), with
// sc_next the scale of the sub-block processed next (0 after the last):
// one ZIP1 and one MLA per sub-block. The int32 arithmetic wraps, but it is
// exact modulo 2^32 and S fits in int32 (|S| < 2^29), so S comes out exact.
// The scale differences come from SSUBL, which widens as it subtracts: they
// cost one EXT per 4 sub-blocks over the plain scales. The 4th code of each
// 3 bytes is rebuilt with SHL and 2 SLI (3 instructions, 5 with
// decode_codes' order).
//
// Processing order: chunk c, half h, then e = 0..3: sub-block 8c + 2e + h.
// Per super-block and tile (objdump): 64 SMMLA, 96 to decode the codes,
// 40 LDP, 16 ZIP1 + 16 MLA, 30 for the scale steps, 12 else: 274. Q6_K at
// M=1, n=32000, k=1024 (kernel_insn, qemu -cpu max): 0.4197 -> 0.2688
// instructions per weight; the dotprod tier's Q6_K takes 0.2856.

// The scales of chunk c's halves in processing order, as int8 {rows 0..3} per
// sub-block: val[h] = sub-blocks 8c + h + 2e, e = 0..3 (LD2 splits the 32-bit
// groups into even and odd sub-blocks).
inline int8x16x2_t chunk_scales(const uint8_t* scales) {
  const uint32x4x2_t v = vld2q_u32(reinterpret_cast<const uint32_t*>(scales));
  return {vreinterpretq_s8_u32(v.val[0]), vreinterpretq_s8_u32(v.val[1])};
}

// sc_s - sc_next for the 4 sub-blocks of a half, as int16 {rows 0..3} x
// (e = 0, 1) and (e = 2, 3): `cur` holds their scales, `next` those of the
// following half (0 after the last).
struct ScaleSteps {
  int16x8_t e01, e23;

  ScaleSteps(int8x16_t cur, int8x16_t next) {
    const int8x16_t following = vextq_s8(cur, next, 4);
    e01 = vsubl_s8(vget_low_s8(cur), vget_low_s8(following));
    e23 = vsubl_high_s8(cur, following);
  }

  template <int kE>
  inline int32x4_t get() const {
    if constexpr (kE == 0) return vmovl_s16(vget_low_s16(e01));
    if constexpr (kE == 1) return vmovl_high_s16(e01);
    if constexpr (kE == 2) return vmovl_s16(vget_low_s16(e23));
    return vmovl_high_s16(e23);
  }
};

// The 192 bytes of codes of half h of chunk c: register 3u + i (u = 2g' + q,
// the group (g', q) = (0, 0), (0, 1), (1, 0), (1, 1); i = 0..2: R0, R1, R2).
// Loaded with 6 LDP: out of three 4-register LD1, GCC 12 copied every
// register once more (objdump).
struct HalfBits {
  uint8x16_t r[12];

  template <int kOffset>
  HalfBits(const uint8_t* w8, std::integral_constant<int, kOffset>) {
    ldp_q<kOffset>(w8, r[0], r[1]);
    ldp_q<kOffset + 32>(w8, r[2], r[3]);
    ldp_q<kOffset + 64>(w8, r[4], r[5]);
    ldp_q<kOffset + 96>(w8, r[6], r[7]);
    ldp_q<kOffset + 128>(w8, r[8], r[9]);
    ldp_q<kOffset + 160>(w8, r[10], r[11]);
  }

  // Code e (0..3) of group u (decode_codes' e[e]), as int8 4 * (q - 32).
  template <int kU, int kE>
  inline int8x16_t code() const {
    if constexpr (kE < 3) return vreinterpretq_s8_u8(vandq_u8(r[3 * kU + kE], vdupq_n_u8(0xFC)));
    const uint8x16_t t = vsliq_n_u8(vshlq_n_u8(r[3 * kU + 2], 2), r[3 * kU + 1], 4);
    return vreinterpretq_s8_u8(vsliq_n_u8(t, r[3 * kU], 6));
  }
};

struct RowChains {
  int32x4_t c0, c1;  // running SMMLA chains of weight pairs 0 and 1
  int32x4_t sum;     // S so far
};

// Sub-block e of a half; the row's chunks of the half start at a + kX.
template <int kX, int kE, bool kFirst>
inline void row_sub_block(const HalfBits& r, const uint8_t* a, const ScaleSteps& steps, RowChains& ch) {
  int8x16_t x0, x1;
  ldp_q<kX + 64 * kE>(a, x0, x1);
  if constexpr (kFirst) {
    ch.c0 = smmla_from_zero(x0, r.code<0, kE>());
    ch.c1 = smmla_from_zero(x0, r.code<1, kE>());
  } else {
    ch.c0 = vmmlaq_s32(ch.c0, x0, r.code<0, kE>());
    ch.c1 = vmmlaq_s32(ch.c1, x0, r.code<1, kE>());
  }
  ch.c0 = vmmlaq_s32(ch.c0, x1, r.code<2, kE>());
  ch.c1 = vmmlaq_s32(ch.c1, x1, r.code<3, kE>());
  ch.sum = vmlaq_s32(ch.sum, tile_row0(ch.c0, ch.c1), steps.get<kE>());
}

// Half h of chunk c: w8 = the tile's super-block + 8 (LDP offsets are
// multiples of 16), a = the row's block.
template <int kC, int kH>
inline void row_half(const uint8_t* w8, const uint8_t* a, int8x16_t cur, int8x16_t next, RowChains& ch) {
  constexpr int kX = static_cast<int>(kQ8_KQsOffset) + 256 * kC + 32 * kH;
  const HalfBits r(w8, std::integral_constant<int, static_cast<int>(bits_offset(kC, 2 * kH, 0)) - 8>{});
  const ScaleSteps steps(cur, next);
  row_sub_block<kX, 0, kC + kH == 0>(r, a, steps, ch);
  row_sub_block<kX, 1, false>(r, a, steps, ch);
  row_sub_block<kX, 2, false>(r, a, steps, ch);
  row_sub_block<kX, 3, false>(r, a, steps, ch);
}

// acc + the super-block (the row's at a, the tile's at w8 - 8); a advances
// to the row's next block.
__attribute__((always_inline)) inline float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w8,
                                                            size_t a_stride) {
  RowChains ch;
  ch.sum = vdupq_n_s32(0);
  const int8x16x2_t sc0 = chunk_scales(w8);
  row_half<0, 0>(w8, a, sc0.val[0], sc0.val[1], ch);
  const int8x16x2_t sc1 = chunk_scales(w8 + 32);
  row_half<0, 1>(w8, a, sc0.val[1], sc1.val[0], ch);
  row_half<1, 0>(w8, a, sc1.val[0], sc1.val[1], ch);
  row_half<1, 1>(w8, a, sc1.val[1], vdupq_n_s8(0), ch);
  const float32x4_t a0 = ld1r_f32_post(a, a_stride);
  return vfmaq_f32(acc, vcvtq_f32_s32(ch.sum), vmulq_f32(load_f16x4(w8 - 8), a0));
}

// The kernel's type, for SuperBlockTiles (super_block_tiles.h).
struct Q6_K : arm::WeightType<gguf::GgmlType::Q6_K, ref::BlockQ6_K, 0.25f>, k_quant::NoMinsAdd {
  static constexpr size_t kPackedBlockBytes = i8mm::kPackedBlockBytes;
  static constexpr size_t kRowTileStart = 8;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    for (size_t s = 0; s < 16; ++s) out[kScalesOffset + 4 * s + r] = static_cast<uint8_t>(blk.scales[s]);
    for (size_t c = 0; c < 2; ++c) {
      for (size_t g = 0; g < 4; ++g) {
        uint8_t* o = out + bits_offset(c, g, r / 2) + 8 * (r % 2);
        for (size_t i = 0; i < 8; ++i) arm::pack_q6_k_quad(blk, 128 * c + 8 * g + i, 32, o + i, 16);
      }
    }
  }

  template <int P>
  __attribute__((always_inline)) static void sums(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                  int32x4_t (&sum)[P][2]) {
#pragma GCC unroll 1
    for (int c = 0; c < 2; ++c) {
      const uint8_t* scales = w + kScalesOffset + 32 * c;
      const uint8_t* x = a + kQ8_KQsOffset + 256 * c;
      half_chunk<P, 0>(w + bits_offset(c, 0, 0), scales, x, pair_bytes, sum);
      half_chunk<P, 1>(w + bits_offset(c, 2, 0), scales, x, pair_bytes, sum);
    }
  }

  __attribute__((always_inline)) static float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w8,
                                                              size_t a_stride) {
    return i8mm::row_block(acc, a, w8, a_stride);
  }
};

// The decode row of a tile on an in-order core (run_in_order), one
// super-block an iteration. The compiled row (row_block above) takes 0.375
// cycles a weight on LLVM's Cortex-A510 model, 2.4x what its instructions
// need in their order (it waits on the SMMLA chains and on the scale steps).
// This loop (bench/cycles/in_order/q6_k_i8mm.s) is GCC's instructions, the
// float work of a super-block software pipelined into the next iteration,
// ordered by order_search.py --schedule (list scheduling by the model, every
// value renamed to the register free the longest). Cortex-A510 model: 0.166
// cycles a weight (170 a super-block of the tile), 2.3x fewer, 1.08x its
// port bound in this order (docs/cycles.md). What limits it is issue: 277
// instructions on two vector pipes. The integer sums and the float
// operations are row_block's, in its order: the results of run() bit for
// bit (InOrderSchedule, TierMatmul).
__attribute__((noinline)) float32x4_t q6_k_row_in_order(const uint8_t*& w_ref, const uint8_t* x, const uint8_t* end) {
  // The offsets and strides the loop's lines use (w: the super-block + 8).
  static_assert(kPackedBlockBytes == 840 && kScalesOffset == 8 && kBitsOffset == 72 && Q6_K::kRowTileStart == 8);
  static_assert(kQ8_KPairBlockBytes == 624 && kQ8_KQsOffset == 48);
  const uint8_t* w = w_ref;
  float32x4_t acc = vdupq_n_f32(0.0f);
  asm volatile(
      "movi d0, #0\n"
      "movi d1, #0\n"
      "movi d2, #0\n"
      "movi d8, #0\n"
      "movi d11, #0\n"
      "movi d23, #0\n"
      "1:\n"
      "movi v3.16b, #0xfc\n"
      "ld2 {v20.4s - v21.4s}, [%[w]]\n"
      "movi v4.4s, #0\n"
      "movi v5.4s, #0\n"
      "ldp q6, q7, [%[w], #64]\n"
      "fcvtl v8.4s, v2.4h\n"
      "ldp q9, q10, [%[w], #96]\n"
      "scvtf v11.4s, v0.4s\n"
      "ldp q12, q13, [%[x], #48]\n"
      "and v14.16b, v6.16b, v3.16b\n"
      "ldp q15, q16, [%[w], #160]\n"
      "and v17.16b, v10.16b, v3.16b\n"
      "ldp q18, q19, [%[w], #192]\n"
      "ext v22.16b, v20.16b, v21.16b, #4\n"
      "fmul v23.4s, v8.4s, v1.4s\n"
      "smmla v4.4s, v12.16b, v14.16b\n"
      "smmla v5.4s, v12.16b, v17.16b\n"
      "and v24.16b, v15.16b, v3.16b\n"
      "and v25.16b, v19.16b, v3.16b\n"
      "ssubl v26.8h, v20.8b, v22.8b\n"
      "ssubl2 v27.8h, v20.16b, v22.16b\n"
      "fmla %[acc].4s, v11.4s, v23.4s\n"
      "ldp q29, q30, [%[w], #128]\n"
      "and v31.16b, v7.16b, v3.16b\n"
      "smmla v4.4s, v13.16b, v24.16b\n"
      "smmla v5.4s, v13.16b, v25.16b\n"
      "ldp q2, q1, [%[x], #112]\n"
      "and v0.16b, v16.16b, v3.16b\n"
      "and v8.16b, v29.16b, v3.16b\n"
      "ldp q14, q12, [%[w], #224]\n"
      "sxtl v17.4s, v26.4h\n"
      "sxtl2 v20.4s, v26.8h\n"
      "zip1 v22.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v2.16b, v31.16b\n"
      "smmla v5.4s, v2.16b, v8.16b\n"
      "and v11.16b, v14.16b, v3.16b\n"
      "and v23.16b, v30.16b, v3.16b\n"
      "and v24.16b, v9.16b, v3.16b\n"
      "ldp q13, q25, [%[x], #176]\n"
      "smmla v4.4s, v1.16b, v0.16b\n"
      "mul v0.4s, v22.4s, v17.4s\n"
      "smmla v5.4s, v1.16b, v11.16b\n"
      "shl v26.16b, v30.16b, #2\n"
      "shl v31.16b, v9.16b, #2\n"
      "and v2.16b, v18.16b, v3.16b\n"
      "and v8.16b, v12.16b, v3.16b\n"
      "shl v17.16b, v18.16b, #2\n"
      "shl v22.16b, v12.16b, #2\n"
      "zip1 v1.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v13.16b, v24.16b\n"
      "smmla v5.4s, v13.16b, v23.16b\n"
      "sli v26.16b, v29.16b, #4\n"
      "sli v31.16b, v7.16b, #4\n"
      "sli v17.16b, v16.16b, #4\n"
      "sli v22.16b, v14.16b, #4\n"
      "smmla v4.4s, v25.16b, v2.16b\n"
      "mla v0.4s, v1.4s, v20.4s\n"
      "smmla v5.4s, v25.16b, v8.16b\n"
      "sli v26.16b, v10.16b, #6\n"
      "sli v31.16b, v6.16b, #6\n"
      "sli v17.16b, v15.16b, #6\n"
      "ldp q11, q30, [%[x], #240]\n"
      "sli v22.16b, v19.16b, #6\n"
      "ldp q9, q18, [%[w], #256]\n"
      "sxtl v12.4s, v27.4h\n"
      "zip1 v24.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v11.16b, v31.16b\n"
      "smmla v5.4s, v11.16b, v26.16b\n"
      "ldp q13, q23, [%[w], #288]\n"
      "and v29.16b, v9.16b, v3.16b\n"
      "ldp q7, q16, [%[x], #80]\n"
      "sxtl2 v14.4s, v27.8h\n"
      "ldp q2, q1, [%[w], #352]\n"
      "mla v0.4s, v24.4s, v12.4s\n"
      "smmla v4.4s, v30.16b, v17.16b\n"
      "smmla v5.4s, v30.16b, v22.16b\n"
      "and v20.16b, v23.16b, v3.16b\n"
      "ldp q8, q25, [%[w], #384]\n"
      "and v10.16b, v2.16b, v3.16b\n"
      "and v6.16b, v18.16b, v3.16b\n"
      "ldp q15, q19, [%[x], #144]\n"
      "and v31.16b, v1.16b, v3.16b\n"
      "zip1 v11.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v7.16b, v29.16b\n"
      "smmla v5.4s, v7.16b, v20.16b\n"
      "movi v26.4s, #0\n"
      "and v27.16b, v25.16b, v3.16b\n"
      "ldp q12, q24, [%[w], #320]\n"
      "ldp q17, q22, [%[w], #416]\n"
      "and v30.16b, v13.16b, v3.16b\n"
      "smmla v4.4s, v16.16b, v10.16b\n"
      "mla v0.4s, v11.4s, v14.4s\n"
      "smmla v5.4s, v16.16b, v27.16b\n"
      "and v29.16b, v12.16b, v3.16b\n"
      "and v7.16b, v17.16b, v3.16b\n"
      "shl v20.16b, v22.16b, #2\n"
      "ldp q10, q11, [%[x], #208]\n"
      "and v14.16b, v24.16b, v3.16b\n"
      "zip1 v16.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v15.16b, v6.16b\n"
      "smmla v5.4s, v15.16b, v29.16b\n"
      "sli v20.16b, v17.16b, #4\n"
      "shl v27.16b, v24.16b, #2\n"
      "smmla v4.4s, v19.16b, v31.16b\n"
      "smmla v5.4s, v19.16b, v7.16b\n"
      "sli v20.16b, v25.16b, #6\n"
      "sli v27.16b, v12.16b, #4\n"
      "ldp q15, q29, [%[x], #272]\n"
      "add x9, %[w], #32\n"
      "zip1 v17.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v10.16b, v30.16b\n"
      "ld2 {v6.4s - v7.4s}, [x9]\n"
      "smmla v5.4s, v10.16b, v14.16b\n"
      "sli v27.16b, v23.16b, #6\n"
      "shl v24.16b, v13.16b, #2\n"
      "and v31.16b, v22.16b, v3.16b\n"
      "shl v19.16b, v8.16b, #2\n"
      "ext v25.16b, v21.16b, v6.16b, #4\n"
      "sli v24.16b, v18.16b, #4\n"
      "smmla v5.4s, v11.16b, v31.16b\n"
      "sli v19.16b, v1.16b, #4\n"
      "ldp q12, q30, [%[w], #480]\n"
      "ext v10.16b, v6.16b, v7.16b, #4\n"
      "ssubl v14.8h, v21.8b, v25.8b\n"
      "ssubl2 v23.8h, v21.16b, v25.16b\n"
      "and v13.16b, v8.16b, v3.16b\n"
      "sli v24.16b, v9.16b, #6\n"
      "sli v19.16b, v2.16b, #6\n"
      "sxtl v22.4s, v14.4h\n"
      "sxtl2 v18.4s, v14.8h\n"
      "smmla v4.4s, v11.16b, v13.16b\n"
      "ldp q31, q1, [%[w], #448]\n"
      "sxtl v21.4s, v23.4h\n"
      "mla v0.4s, v16.4s, v22.4s\n"
      "ldp q25, q8, [%[x], #304]\n"
      "sxtl2 v9.4s, v23.8h\n"
      "zip1 v2.2d, v4.2d, v5.2d\n"
      "smmla v5.4s, v15.16b, v27.16b\n"
      "smmla v4.4s, v15.16b, v24.16b\n"
      "mla v0.4s, v17.4s, v18.4s\n"
      "and v14.16b, v31.16b, v3.16b\n"
      "and v11.16b, v30.16b, v3.16b\n"
      "smmla v5.4s, v29.16b, v20.16b\n"
      "smmla v4.4s, v29.16b, v19.16b\n"
      "ldp q13, q16, [%[w], #544]\n"
      "mla v0.4s, v2.4s, v21.4s\n"
      "ldp q22, q23, [%[w], #576]\n"
      "ssubl v27.8h, v6.8b, v10.8b\n"
      "ssubl2 v15.8h, v6.16b, v10.16b\n"
      "ldp q24, q17, [%[w], #512]\n"
      "zip1 v18.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v25.16b, v14.16b\n"
      "smmla v5.4s, v25.16b, v11.16b\n"
      "ext v20.16b, v7.16b, v26.16b, #4\n"
      "and v19.16b, v13.16b, v3.16b\n"
      "and v29.16b, v23.16b, v3.16b\n"
      "and v2.16b, v1.16b, v3.16b\n"
      "and v21.16b, v24.16b, v3.16b\n"
      "mla v0.4s, v18.4s, v9.4s\n"
      "smmla v4.4s, v8.16b, v19.16b\n"
      "smmla v5.4s, v8.16b, v29.16b\n"
      "ldp q6, q10, [%[x], #368]\n"
      "sxtl v14.4s, v27.4h\n"
      "ldp q11, q25, [%[w], #608]\n"
      "and v26.16b, v16.16b, v3.16b\n"
      "sxtl2 v9.4s, v27.8h\n"
      "shl v18.16b, v12.16b, #2\n"
      "zip1 v19.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v6.16b, v2.16b\n"
      "smmla v5.4s, v6.16b, v21.16b\n"
      "and v8.16b, v11.16b, v3.16b\n"
      "and v29.16b, v17.16b, v3.16b\n"
      "sli v18.16b, v1.16b, #4\n"
      "smmla v4.4s, v10.16b, v26.16b\n"
      "mla v0.4s, v19.4s, v14.4s\n"
      "smmla v5.4s, v10.16b, v8.16b\n"
      "and v27.16b, v12.16b, v3.16b\n"
      "ldp q2, q6, [%[x], #432]\n"
      "shl v21.16b, v17.16b, #2\n"
      "and v1.16b, v22.16b, v3.16b\n"
      "and v26.16b, v25.16b, v3.16b\n"
      "shl v14.16b, v22.16b, #2\n"
      "zip1 v19.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v2.16b, v27.16b\n"
      "smmla v5.4s, v2.16b, v29.16b\n"
      "sli v21.16b, v24.16b, #4\n"
      "shl v8.16b, v25.16b, #2\n"
      "sli v18.16b, v31.16b, #6\n"
      "sli v14.16b, v16.16b, #4\n"
      "smmla v4.4s, v6.16b, v1.16b\n"
      "mla v0.4s, v19.4s, v9.4s\n"
      "smmla v5.4s, v6.16b, v26.16b\n"
      "sli v8.16b, v11.16b, #4\n"
      "sli v21.16b, v30.16b, #6\n"
      "ldp q10, q12, [%[x], #496]\n"
      "sli v14.16b, v13.16b, #6\n"
      "ldp q17, q22, [%[w], #672]\n"
      "sxtl v27.4s, v15.4h\n"
      "zip1 v2.2d, v4.2d, v5.2d\n"
      "sli v8.16b, v23.16b, #6\n"
      "smmla v4.4s, v10.16b, v18.16b\n"
      "smmla v5.4s, v10.16b, v21.16b\n"
      "ldp q29, q24, [%[w], #640]\n"
      "and v25.16b, v22.16b, v3.16b\n"
      "ldp q31, q16, [%[x], #336]\n"
      "ssubl2 v1.8h, v7.16b, v20.16b\n"
      "ldp q9, q19, [%[w], #736]\n"
      "ssubl v6.8h, v7.8b, v20.8b\n"
      "smmla v4.4s, v12.16b, v14.16b\n"
      "smmla v5.4s, v12.16b, v8.16b\n"
      "and v26.16b, v29.16b, v3.16b\n"
      "ldp q11, q30, [%[w], #768]\n"
      "and v13.16b, v9.16b, v3.16b\n"
      "mla v0.4s, v2.4s, v27.4s\n"
      "ldp q23, q18, [%[w], #704]\n"
      "sxtl2 v10.4s, v15.8h\n"
      "zip1 v21.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v31.16b, v26.16b\n"
      "smmla v5.4s, v31.16b, v25.16b\n"
      "and v7.16b, v30.16b, v3.16b\n"
      "and v20.16b, v24.16b, v3.16b\n"
      "ldp q14, q8, [%[x], #400]\n"
      "and v12.16b, v23.16b, v3.16b\n"
      "smmla v4.4s, v16.16b, v13.16b\n"
      "mla v0.4s, v21.4s, v10.4s\n"
      "smmla v5.4s, v16.16b, v7.16b\n"
      "ldp q2, q27, [%[w], #800]\n"
      "and v15.16b, v19.16b, v3.16b\n"
      "sxtl v26.4s, v6.4h\n"
      "sxtl2 v25.4s, v6.8h\n"
      "and v31.16b, v17.16b, v3.16b\n"
      "shl v13.16b, v17.16b, #2\n"
      "zip1 v10.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v14.16b, v20.16b\n"
      "smmla v5.4s, v14.16b, v12.16b\n"
      "and v21.16b, v2.16b, v3.16b\n"
      "ldp q7, q16, [%[x], #464]\n"
      "and v6.16b, v18.16b, v3.16b\n"
      "shl v17.16b, v18.16b, #2\n"
      "smmla v4.4s, v8.16b, v15.16b\n"
      "mla v0.4s, v10.4s, v26.4s\n"
      "smmla v5.4s, v8.16b, v21.16b\n"
      "sli v13.16b, v24.16b, #4\n"
      "and v20.16b, v11.16b, v3.16b\n"
      "and v12.16b, v27.16b, v3.16b\n"
      "sli v17.16b, v23.16b, #4\n"
      "shl v14.16b, v11.16b, #2\n"
      "shl v18.16b, v27.16b, #2\n"
      "zip1 v15.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v7.16b, v31.16b\n"
      "smmla v5.4s, v7.16b, v6.16b\n"
      "sli v13.16b, v29.16b, #6\n"
      "sli v14.16b, v19.16b, #4\n"
      "sli v18.16b, v2.16b, #4\n"
      "sli v17.16b, v22.16b, #6\n"
      "smmla v4.4s, v16.16b, v20.16b\n"
      "mla v0.4s, v15.4s, v25.4s\n"
      "smmla v5.4s, v16.16b, v12.16b\n"
      "ldp q10, q26, [%[x], #528]\n"
      "sli v14.16b, v9.16b, #6\n"
      "sli v18.16b, v30.16b, #6\n"
      "sxtl v8.4s, v1.4h\n"
      "sxtl2 v21.4s, v1.8h\n"
      "ld1r {v1.4s}, [%[x]]\n"
      "zip1 v24.2d, v4.2d, v5.2d\n"
      "smmla v4.4s, v10.16b, v13.16b\n"
      "smmla v5.4s, v10.16b, v17.16b\n"
      "ldr d2, [%[w], #-8]\n"
      "smmla v4.4s, v26.16b, v14.16b\n"
      "mla v0.4s, v24.4s, v8.4s\n"
      "smmla v5.4s, v26.16b, v18.16b\n"
      "add %[x], %[x], #624\n"
      "add %[w], %[w], #840\n"
      "zip1 v3.2d, v4.2d, v5.2d\n"
      "cmp %[x], %[end]\n"
      "mla v0.4s, v3.4s, v21.4s\n"
      "b.ne 1b\n"
      "fcvtl v8.4s, v2.4h\n"
      "scvtf v11.4s, v0.4s\n"
      "fmul v23.4s, v8.4s, v1.4s\n"
      "fmla %[acc].4s, v11.4s, v23.4s\n"
      ENGINE_IN_ORDER_OPERANDS(w, x, end, acc));
  w_ref = w;
  return acc;
}

}  // namespace

constinit const MatmulKernel kMatmulQ6_K = arm::interleaved_kernel<InOrderSuperBlockTiles<Q6_K, q6_k_row_in_order>>(
    "matmul_f32_q8_k_q6_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
