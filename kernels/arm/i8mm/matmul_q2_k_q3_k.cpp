// matmul_f32_q8_k_q2_k_8x4_i8mm and matmul_f32_q8_k_q3_k_8x4_i8mm: Q2_K or
// Q3_K weights x Q8_K activations with SMMLA, one decode struct for both.
//
// Features: Advanced SIMD + I8MM (SMMLA) + DotProd (SDOT, the Q2_K mins of a
// single row). Compiled with -march=armv8.2-a+dotprod+i8mm.
//
// RHS (pack_rhs, at load): tiles of 4 weight rows, per super-block of 256,
// arm::Q2KPacked or arm::Q3KPacked (arm/low_bit_k.h: 336 = 4 x 84 and 440 =
// 4 x 110 bytes, no growth) with the SMMLA operands' order: vector 2q + k of
// quarter g holds, at bytes 0..7, elements 8k..8k+7 of row 2q of each of the
// quarter's sub-blocks, at 8..15 those of row 2q + 1. The codes decode as on
// neon (Q2_K: AND / USHR; Q3_K: LD1R, SHL, CMTST, SRI), the Q3_K scales once
// per super-block, the Q2_K scale nibbles per quarter.
//
// LHS (pack_lhs): Q8_K pairs (lhs_pairs.h). run: super_block_tiles.h. Per
// 16-element sub-block: 2 SMMLA per 2x2 tile, then one MLA by the scales
// {row 2q, 2q + 1} of the pair; per super-block acc += (d_w d_a) float(S),
// and for Q2_K - (dmin_w d_a) float(M) (the reference's roundings) with M =
// sum_s m_s * bsum16_s, 4 SMMLA per 2x2 tile on the 16-element sums split in
// 7-bit halves (8 SDOT for a single row). A single row (decode) runs two
// SMMLA chains (one per weight pair) through the whole super-block, zips
// their row-0 halves after each sub-block and multiplies them by the 4 rows'
// scale steps sc_j - sc_j+1 (the same integer S; Q2_K's codes there are
// masked in place, times 4^t, and weighted to give 16 S), with the same float
// operations. Missing rows of the last tile are
// zero. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#include <arm_neon.h>

#include <utility>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/arm/i8mm/super_block_tiles.h"
#include "kernels/arm/low_bit_k.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

// (row c, element i) -> (vector 2q + k, byte): the SMMLA operand of pair q, chunk k.
struct PairPlace {
  std::pair<size_t, size_t> operator()(size_t c, size_t i) const { return {2 * (c / 2) + i / 8, 8 * (c % 2) + i % 8}; }
};

// A single row's scale steps sc_j - sc_{j+1} (sc_16 = 0) of sub-blocks j = 4g
// + t, in place of the scales (bytes 4t + c; Q3_K's -32..31 give steps within
// int8). Its SMMLA chains then run on through the super-block, and sum_j P_j
// step_j = sum_j s_j sc_j for the chains' running sums P_j: no chain restarts
// from zero per sub-block.
struct ByteSteps {
  int8x16_t g[4];
};
__attribute__((always_inline)) inline ByteSteps scale_steps(const int8x16_t (&sc)[4]) {
  return {{vsubq_s8(sc[0], vextq_s8(sc[0], sc[1], 4)), vsubq_s8(sc[1], vextq_s8(sc[1], sc[2], 4)),
           vsubq_s8(sc[2], vextq_s8(sc[2], sc[3], 4)), vsubq_s8(sc[3], vextq_s8(sc[3], vdupq_n_s8(0), 4))}};
}

// What Q2_K and Q3_K differ in: the packed block, its codes, the scales of a
// quarter (from what decode() gives once per super-block), and the float step.
struct Q3KDecode {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::Q3_K;
  using GgufBlock = ref::BlockQ3_K;
  using Packed = arm::Q3KPacked;
  using Scales = arm::Q3KScales;
  static void pack(const GgufBlock& blk, Packed& p, size_t r) { arm::pack_q3_k_row<PairPlace>(blk, r, p); }
  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t codes(const Packed& p, size_t g, size_t v) {
    return arm::q3_k_codes<kT>(vld1q_u8(p.low[g][v]), arm::q3_k_high(p.high[g][v]));
  }
  // The single row's quarter g: its low bits, and its high bits by four
  // post-indexed LD1R from h, which walks the super-block's high bytes
  // (p.high, quarter after quarter). GCC 12 made the intrinsic loads an LDP
  // and two DUPs per two vectors, or an ADD per LD1R for its address.
  struct RowQuarter {
    uint8x16_t low[4], high[4];
  };
  __attribute__((always_inline)) static RowQuarter row_quarter(const Packed& p, size_t g, const uint8_t*& h) {
    RowQuarter q;
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) {
      q.low[v] = vld1q_u8(p.low[g][v]);
      q.high[v] = ld1r_u64_post(h);
    }
    return q;
  }
  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t row_codes(const RowQuarter& q, size_t v) {
    return arm::q3_k_codes<kT>(q.low[v], q.high[v]);
  }
  __attribute__((always_inline)) static const uint8_t* row_high(const Packed& p) { return p.high[0][0]; }
  __attribute__((always_inline)) static Scales decode(const Packed& p) { return arm::decode_q3_k_scales(p); }
  __attribute__((always_inline)) static arm::Q6KQuarterScales quarter(const Packed&, const Scales& s, size_t g) {
    return arm::quarter_scales(vld1q_s8(s.sc[g]));
  }
  // The single row's steps, by quarter; its S needs no shift.
  using RowSteps = ByteSteps;
  static constexpr int kRowShift = 0;
  __attribute__((always_inline)) static RowSteps row_steps(const Packed& p) {
    const Scales s = decode(p);
    const int8x16_t sc[4] = {vld1q_s8(s.sc[0]), vld1q_s8(s.sc[1]), vld1q_s8(s.sc[2]), vld1q_s8(s.sc[3])};
    return scale_steps(sc);
  }
  __attribute__((always_inline)) static arm::Q6KQuarterScales quarter_steps(const RowSteps& s, size_t g) {
    return arm::quarter_scales(s.g[g]);
  }
};

// Q2_K's mins as SMMLA operands: mins[q][h] holds row 2q's m of sub-blocks
// 8h..8h+7, then row 2q + 1's; and for one activation row's SDOT, by[j]
// holds at bytes 4c + u row c's m of sub-block 4j + u.
struct Q2KMinsOperands {
  int8x16_t pair[2][2];
};
__attribute__((always_inline)) inline Q2KMinsOperands q2_k_mins_pairs(const arm::Q2KPacked& p) {
  // scales[g][4t + c] (sub-block 4g + t of row c) -> byte 8 (c % 2) + 4 (g % 2) + t.
  static constexpr uint8_t kIndex[2][16] = {{0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29},
                                            {2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31}};
  Q2KMinsOperands m;
#pragma GCC unroll 2
  for (size_t h = 0; h < 2; ++h) {
    const uint8x16x2_t t = {{vshrq_n_u8(vld1q_u8(p.scales[2 * h]), 4), vshrq_n_u8(vld1q_u8(p.scales[2 * h + 1]), 4)}};
    m.pair[0][h] = vreinterpretq_s8_u8(vqtbl2q_u8(t, vld1q_u8(kIndex[0])));
    m.pair[1][h] = vreinterpretq_s8_u8(vqtbl2q_u8(t, vld1q_u8(kIndex[1])));
  }
  return m;
}

// sum_s m_s * bsum16_s of a 2x2 tile: the sums' 7-bit halves (lo: sub-blocks
// 0-7, 8-15; hi: the same) times the mins of a weight pair.
__attribute__((always_inline)) inline int32x4_t q2_k_mins_tile(const int8x16x4_t& s16, const int8x16_t (&mins)[2]) {
  const int32x4_t hi = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), s16.val[2], mins[0]), s16.val[3], mins[1]);
  return vmmlaq_s32(vmmlaq_s32(vshlq_n_s32(hi, 7), s16.val[0], mins[0]), s16.val[1], mins[1]);
}

// The same for one activation row (row 0 of its pair) against the 4 rows: SDOT
// by lane on {sums of sub-blocks 0-7, 8-15} of the row, the mins transposed
// to bytes 4c + u (sub-block 4j + u of row c in vector j).
__attribute__((always_inline)) inline int32x4_t q2_k_row_mins(const arm::Q2KPacked& p, const uint8_t* a) {
  static constexpr uint8_t kTranspose[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  const uint8x16_t idx = vld1q_u8(kTranspose);
  int8x16_t m[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < 4; ++j) m[j] = vreinterpretq_s8_u8(vqtbl1q_u8(vshrq_n_u8(vld1q_u8(p.scales[j]), 4), idx));
  const int8x16x4_t s = vld1q_s8_x4(reinterpret_cast<const int8_t*>(a + kQ8_KBsum16Offset));
  const auto row0 = [](int8x16_t lo8, int8x16_t hi8) {
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(lo8), vreinterpretq_s64_s8(hi8)));
  };
  const int8x16_t lo = row0(s.val[0], s.val[1]), hi = row0(s.val[2], s.val[3]);
  int32x4_t h = vdotq_laneq_s32(vdotq_laneq_s32(vdupq_n_s32(0), m[0], hi, 0), m[1], hi, 1);
  h = vdotq_laneq_s32(vdotq_laneq_s32(h, m[2], hi, 2), m[3], hi, 3);
  int32x4_t l = vdotq_laneq_s32(vdotq_laneq_s32(vshlq_n_s32(h, 7), m[0], lo, 0), m[1], lo, 1);
  return vdotq_laneq_s32(vdotq_laneq_s32(l, m[2], lo, 2), m[3], lo, 3);
}

// A super-block's term with the reference's roundings (no fused multiply-add):
// (d_w d_a) float(S), and for Q2_K minus (dmin_w d_a) float(M). With FMAs a
// 2-layer pure Q2_K model's logits moved by up to 0.07 (of 4) from the
// reference's: a last-bit change in one layer flips a Q8_K code of the next
// layer's activations, most often where the mins term cancels the codes'.
__attribute__((always_inline)) inline float32x4_t scaled(int32x4_t s, float32x4_t d_w, float32x4_t d_a) {
  return vmulq_f32(vmulq_f32(d_w, d_a), vcvtq_f32_s32(s));
}
__attribute__((always_inline)) inline float32x4_t q2_k_block(int32x4_t s, int32x4_t m, float32x4_t d_w,
                                                             float32x4_t dmin_w, float32x4_t d_a) {
  return vsubq_f32(scaled(s, d_w, d_a), scaled(m, dmin_w, d_a));
}

struct Q2KDecode {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::Q2_K;
  using GgufBlock = ref::BlockQ2_K;
  using Packed = arm::Q2KPacked;
  struct Scales {};  // the nibbles unpack per quarter
  static void pack(const GgufBlock& blk, Packed& p, size_t r) { arm::pack_q2_k_row<PairPlace>(blk, r, p); }
  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t codes(const Packed& p, size_t g, size_t v) {
    return arm::q2_k_codes<kT>(vld1q_u8(p.low[g][v]));
  }
  struct RowQuarter {
    uint8x16_t low[4];
  };
  __attribute__((always_inline)) static RowQuarter row_quarter(const Packed& p, size_t g, const uint8_t*&) {
    RowQuarter q;
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) q.low[v] = vld1q_u8(p.low[g][v]);
    return q;
  }
  // The single row's codes of sub-block 4g + t carry a factor 4^t for t < 3:
  // a mask (AND with 3 << 2t) in place of USHR + AND. Weighting them by 16 sc /
  // 4^t (t = 3: 16 sc; all integers of 0..240) gives the chains 16 S, which
  // shifts back exactly (kRowShift).
  template <unsigned kT>
  __attribute__((always_inline)) static int8x16_t row_codes(const RowQuarter& q, size_t v) {
    if constexpr (kT == 3) return vreinterpretq_s8_u8(vshrq_n_u8(q.low[v], 6));
    return vreinterpretq_s8_u8(vandq_u8(q.low[v], vdupq_n_u8(static_cast<uint8_t>(3u << (2 * kT)))));
  }
  // The steps of those weights, w_j - w_{j+1}, in int16 (-240..240): h[g][0]
  // sub-blocks 4g, 4g + 1 (lanes 4t + c), h[g][1] 4g + 2, 4g + 3.
  struct RowSteps {
    int16x8_t h[4][2];
  };
  static constexpr int kRowShift = 4;
  __attribute__((always_inline)) static RowSteps row_steps(const Packed& p) {
    static constexpr int8_t kShift[16] = {4, 4, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, 4, 4, 4, 4};
    const int8x16_t shift = vld1q_s8(kShift);
    const uint8x16x4_t raw = vld1q_u8_x4(p.scales[0]);
    const uint8x16_t w[5] = {vshlq_u8(vandq_u8(raw.val[0], vdupq_n_u8(0x0F)), shift),
                             vshlq_u8(vandq_u8(raw.val[1], vdupq_n_u8(0x0F)), shift),
                             vshlq_u8(vandq_u8(raw.val[2], vdupq_n_u8(0x0F)), shift),
                             vshlq_u8(vandq_u8(raw.val[3], vdupq_n_u8(0x0F)), shift), vdupq_n_u8(0)};
    RowSteps s;
#pragma GCC unroll 4
    for (size_t g = 0; g < 4; ++g) {
      const uint8x16_t next = vextq_u8(w[g], w[g + 1], 4);
      s.h[g][0] = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(w[g]), vget_low_u8(next)));
      s.h[g][1] = vreinterpretq_s16_u16(vsubl_high_u8(w[g], next));
    }
    return s;
  }
  __attribute__((always_inline)) static arm::Q6KQuarterScales quarter_steps(const RowSteps& s, size_t g) {
    return {{vmovl_s16(vget_low_s16(s.h[g][0])), vmovl_high_s16(s.h[g][0]), vmovl_s16(vget_low_s16(s.h[g][1])),
             vmovl_high_s16(s.h[g][1])}};
  }
  __attribute__((always_inline)) static const uint8_t* row_high(const Packed&) { return nullptr; }
  __attribute__((always_inline)) static Scales decode(const Packed&) { return {}; }
  __attribute__((always_inline)) static arm::Q6KQuarterScales quarter(const Packed& p, const Scales&, size_t g) {
    return arm::q2_k_quarter_scales(p, g);
  }
};

// The kernel's type for SuperBlockTiles (super_block_tiles.h).
template <class D>
struct LowBitK : arm::WeightType<D::kType, typename D::GgufBlock> {
  using Packed = typename D::Packed;
  static constexpr bool kMins = D::kType == gguf::GgmlType::Q2_K;
  static constexpr size_t kPackedBlockBytes = sizeof(Packed);
  static constexpr size_t kRowTileStart = 0;

  static void pack(const typename D::GgufBlock& blk, uint8_t* out, size_t r) {
    D::pack(blk, *reinterpret_cast<Packed*>(out), r);
  }

  // The codes of sub-block 4g + kT: w[2q + k], pair q's chunk k.
  template <unsigned kT>
  __attribute__((always_inline)) static void operands(const Packed& p, size_t g, int8x16_t w[4]) {
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) w[v] = D::template codes<kT>(p, g, v);
  }

  template <unsigned kT, int P>
  __attribute__((always_inline)) static void sub_block(const Packed& p, size_t g, const arm::Q6KQuarterScales& sc,
                                                       const uint8_t* a, size_t pair_bytes, int32x4_t (&sum)[P][2]) {
    int8x16_t w[4];
    operands<kT>(p, g, w);
    const int32x4_t pattern[2] = {pair_pattern_lo(sc.sc[kT]), pair_pattern_hi(sc.sc[kT])};
#pragma GCC unroll 4
    for (int i = 0; i < P; ++i) {
      const int8x16x2_t x =
          vld1q_s8_x2(reinterpret_cast<const int8_t*>(a + i * pair_bytes + kQ8_KQsOffset + 32 * (4 * g + kT)));
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        const int32x4_t t = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), x.val[0], w[2 * q]), x.val[1], w[2 * q + 1]);
        sum[i][q] = vmlaq_s32(sum[i][q], t, pattern[q]);
      }
    }
  }

  template <int P>
  __attribute__((always_inline)) static void sums(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                  int32x4_t (&sum)[P][2]) {
    const auto& p = *reinterpret_cast<const Packed*>(w);
    const auto scales = D::decode(p);
#pragma GCC unroll 1
    for (size_t g = 0; g < 4; ++g) {
      const arm::Q6KQuarterScales sc = D::quarter(p, scales, g);
      sub_block<0, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<1, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<2, P>(p, g, sc, a, pair_bytes, sum);
      sub_block<3, P>(p, g, sc, a, pair_bytes, sum);
    }
  }

  // acc += (d_w d_a) float(S), and for Q2_K - (dmin_w d_a) float(M).
  template <int P>
  __attribute__((always_inline)) static void add(const uint8_t* w, const uint8_t* a, size_t pair_bytes,
                                                 const int32x4_t (&sum)[P][2], float (&acc)[P][2][4]) {
    const auto& p = *reinterpret_cast<const Packed*>(w);
    const float32x4_t d4 = load_f16x4(p.d);
    const float32x4_t dpat[2] = {pair_pattern_lo(d4), pair_pattern_hi(d4)};
    [[maybe_unused]] Q2KMinsOperands mins;
    [[maybe_unused]] float32x4_t mpat[2];
    if constexpr (kMins) {
      mins = q2_k_mins_pairs(p);
      const float32x4_t dmin4 = load_f16x4(p.dmin);
      mpat[0] = pair_pattern_lo(dmin4);
      mpat[1] = pair_pattern_hi(dmin4);
    }
#pragma GCC unroll 4
    for (int i = 0; i < P; ++i) {
      const uint8_t* ap = a + i * pair_bytes;
      const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(ap));
      [[maybe_unused]] int8x16x4_t s16;  // the pair's 16-element sums, for both weight pairs
      if constexpr (kMins) s16 = vld1q_s8_x4(reinterpret_cast<const int8_t*>(ap + kQ8_KBsum16Offset));
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        float32x4_t v;
        if constexpr (kMins) {
          v = q2_k_block(sum[i][q], q2_k_mins_tile(s16, mins.pair[q]), dpat[q], mpat[q], apat);
        } else {
          v = scaled(sum[i][q], dpat[q], apat);
        }
        vst1q_f32(acc[i][q], vaddq_f32(vld1q_f32(acc[i][q]), v));
      }
    }
  }

  // Sub-block 4g + kT of the row on the chains c0, c1 (weight pairs 0, 1):
  // sum += (their row-0 halves) * step.
  template <unsigned kT>
  __attribute__((always_inline)) static void row_sub_block(const typename D::RowQuarter& rq, size_t g, int32x4_t step,
                                                           const uint8_t* a, int32x4_t& c0, int32x4_t& c1,
                                                           int32x4_t& sum) {
    int8x16_t w[4];
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) w[v] = D::template row_codes<kT>(rq, v);
    int8x16_t x0, x1;  // LDP at an offset from the quarter's codes: no address per sub-block
    ldp_q<static_cast<int>(kQ8_KQsOffset + 32 * kT)>(a + 128 * g, x0, x1);
    c0 = vmmlaq_s32(vmmlaq_s32(c0, x0, w[0]), x1, w[1]);
    c1 = vmmlaq_s32(vmmlaq_s32(c1, x0, w[2]), x1, w[3]);
    sum = vmlaq_s32(sum, tile_row0_apart(c0, c1), step);
  }

  // acc + the super-block (the row's at a, the tile's at w); a advances to
  // the row's next block.
  __attribute__((always_inline)) static float32x4_t row_block(float32x4_t acc, const uint8_t*& a, const uint8_t* w,
                                                              size_t a_stride) {
    const auto& p = *reinterpret_cast<const Packed*>(w);
    const typename D::RowSteps steps = D::row_steps(p);
    int32x4_t sum = vdupq_n_s32(0), c0 = vdupq_n_s32(0), c1 = vdupq_n_s32(0);
    const uint8_t* h = D::row_high(p);
#pragma GCC unroll 1
    for (size_t g = 0; g < 4; ++g) {
      const arm::Q6KQuarterScales st = D::quarter_steps(steps, g);
      const typename D::RowQuarter rq = D::row_quarter(p, g, h);
      row_sub_block<0>(rq, g, st.sc[0], a, c0, c1, sum);
      row_sub_block<1>(rq, g, st.sc[1], a, c0, c1, sum);
      row_sub_block<2>(rq, g, st.sc[2], a, c0, c1, sum);
      row_sub_block<3>(rq, g, st.sc[3], a, c0, c1, sum);
    }
    if constexpr (D::kRowShift != 0) sum = vshrq_n_s32(sum, D::kRowShift);
    if constexpr (kMins) {
      const int32x4_t m = q2_k_row_mins(p, a);
      return vaddq_f32(acc, q2_k_block(sum, m, load_f16x4(p.d), load_f16x4(p.dmin), ld1r_f32_post(a, a_stride)));
    } else {
      return vaddq_f32(acc, scaled(sum, load_f16x4(p.d), ld1r_f32_post(a, a_stride)));
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ2_K = arm::interleaved_kernel<SuperBlockTiles<LowBitK<Q2KDecode>>>(
    "matmul_f32_q8_k_q2_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ3_K = arm::interleaved_kernel<SuperBlockTiles<LowBitK<Q3KDecode>>>(
    "matmul_f32_q8_k_q3_k_8x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
