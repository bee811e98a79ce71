// matmul_f32_q8_k_q2_k_4x16_sve and matmul_f32_q8_k_q3_k_4x16_sve: Q2_K or
// Q3_K weights x Q8_K activations with SVE SDOT, one struct for both
// (LowBitK: their 2-bit codes are laid out alike).
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per
// super-block of 256, no growth: kPackedBlockBytes = 1344 = 16 x 84 (Q2_K),
// 1760 = 16 x 110 (Q3_K):
//   uint16 d[16]                fp16 scales of rows 0..15
//   uint16 dmin[16]             Q2_K: fp16 mins' scales
//   uint8  scales[4 or 3][16][4] word t, row r: the row's scale bytes 4t..4t+3
//   uint8  hm[8][16][4]         Q3_K: quad i, row r: the row's hmask bytes
//                               4i..4i+3, inverted (g = 1 - bit 2 of q)
//   uint8  qs[2][8][16][4]      chunk c, quad i, row r: the row's qs bytes
//                               32c+4i..32c+4i+3
// Element 128c + 32s + l (quarter s, l < 32) is in byte l of quad l / 4: its
// low two bits at bit 2s of qs (Q2_K's code; LSR by a vector count in a
// rolled loop, AND), Q3_K's g at bit 4c + s of hm, so q - 4 = low - 4 g (LSR,
// AND, MLS).
//
// LHS (pack_lhs): Q8_K rows (lhs_rows.h); Q2_K's with the 16-element sums
// (Q8_K16 rows) for its 16 mins.
//
// run (super_block_groups.h): per super-block, the 16 scales of the pass's
// rows unpacked in their lanes (4 a 32-bit lane; Q3_K's 6-bit and signed,
// Q2_K's low nibbles) and kept on the stack as int32 vectors; per quarter
// (two sub-blocks of 16), 8 quads decoded once for the rows, then per row 8
// SDOT (indexed) and 2 MLA by the sub-blocks' scales; one row (row_sums)
// unrolls the quarters and keeps the quads in registers. Q2_K's mins (the high
// nibbles, 4 a lane) are 8 SDOT per super-block and row. Per super-block and
// row acc += (float(S) * d_w [- float(M) * dmin_w]) * d_a. m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>
#include <type_traits>

#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/super_block_groups.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

constexpr size_t kNr = kGroupRows;

// The signed 6-bit field at byte kByte of every lane (bits 8 kByte .. +5).
template <int kByte>
inline svint32_t signed_byte(svbool_t pg, svint32_t v) {
  return svasr_n_s32_x(pg, svlsl_n_s32_x(pg, v, 26 - 8 * kByte), 26);
}

template <bool kQ3>
struct LowBitK : arm::WeightType<kQ3 ? gguf::GgmlType::Q3_K : gguf::GgmlType::Q2_K,
                                 std::conditional_t<kQ3, ref::BlockQ3_K, ref::BlockQ2_K>> {
  using GgufBlock = std::conditional_t<kQ3, ref::BlockQ3_K, ref::BlockQ2_K>;
  static constexpr bool kMins = !kQ3, kMins16 = !kQ3;
  static constexpr size_t kDminOffset = 2 * kNr;
  static constexpr size_t kScalesOffset = kQ3 ? 2 * kNr : 4 * kNr;
  static constexpr size_t kHmOffset = kScalesOffset + (kQ3 ? 3 : 4) * 4 * kNr;
  static constexpr size_t kQsOffset = kHmOffset + (kQ3 ? 8 * 4 * kNr : 0);
  static constexpr size_t kPackedBlockBytes = kQsOffset + 16 * 4 * kNr;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    if constexpr (kQ3) {
      for (size_t i = 0; i < 32; ++i) out[kHmOffset + 4 * kNr * (i / 4) + 4 * r + i % 4] = ~blk.hmask[i] & 0xFF;
    } else {
      std::memcpy(out + kDminOffset + 2 * r, &blk.dmin, 2);
    }
    for (size_t t = 0; t < (kQ3 ? 3 : 4); ++t) {
      std::memcpy(out + kScalesOffset + 4 * kNr * t + 4 * r, blk.scales + 4 * t, 4);
    }
    for (size_t q = 0; q < 16; ++q) std::memcpy(out + kQsOffset + 4 * kNr * q + 4 * r, blk.qs + 4 * q, 4);
  }

  // The 16 scales of the pass's rows into sc (vector j at sc + j lanes).
  // Q3_K: sc_j - 32, low nibbles from words 0-1, bits 4-5 from word 2; Q2_K:
  // the low nibble of byte j.
  __attribute__((always_inline)) static void scales(svbool_t pg32, const uint8_t* blk, size_t r0, int32_t* sc) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(blk + kScalesOffset) + r0;
    const svuint32_t w0 = svld1_u32(pg32, words), w1 = svld1_u32(pg32, words + kNr);
    const svuint32_t w2 = svld1_u32(pg32, words + 2 * kNr);
    const size_t lanes = svcntw();
    if constexpr (kQ3) {
      const auto six = [&](svuint32_t low, svuint32_t high) {  // 4 biased scales XOR 32: 6-bit two's complement
        return svreinterpret_s32_u32(sveor_n_u32_x(
            pg32, svorr_u32_x(pg32, svand_n_u32_x(pg32, low, 0x0F0F0F0F), svand_n_u32_x(pg32, high, 0x30303030)),
            0x20202020));
      };
      const svint32_t s0 = six(w0, svlsl_n_u32_x(pg32, w2, 4)), s1 = six(w1, svlsl_n_u32_x(pg32, w2, 2));
      const svint32_t s2 = six(svlsr_n_u32_x(pg32, w0, 4), w2);
      const svint32_t s3 = six(svlsr_n_u32_x(pg32, w1, 4), svlsr_n_u32_x(pg32, w2, 2));
#define STORE4(k, v)                                                    \
  svst1_s32(pg32, sc + (4 * (k) + 0) * lanes, signed_byte<0>(pg32, v)); \
  svst1_s32(pg32, sc + (4 * (k) + 1) * lanes, signed_byte<1>(pg32, v)); \
  svst1_s32(pg32, sc + (4 * (k) + 2) * lanes, signed_byte<2>(pg32, v)); \
  svst1_s32(pg32, sc + (4 * (k) + 3) * lanes, signed_byte<3>(pg32, v));
      STORE4(0, s0) STORE4(1, s1) STORE4(2, s2) STORE4(3, s3)
#undef STORE4
    } else {
      const svuint32_t w3 = svld1_u32(pg32, words + 3 * kNr);
#define STORE4(k, v)                                                                                      \
  svst1_u32(pg32, reinterpret_cast<uint32_t*>(sc) + (4 * (k) + 0) * lanes, svand_n_u32_x(pg32, v, 0x0F)); \
  svst1_u32(pg32, reinterpret_cast<uint32_t*>(sc) + (4 * (k) + 1) * lanes,                                \
            svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, v, 8), 0x0F));                                        \
  svst1_u32(pg32, reinterpret_cast<uint32_t*>(sc) + (4 * (k) + 2) * lanes,                                \
            svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, v, 16), 0x0F));                                       \
  svst1_u32(pg32, reinterpret_cast<uint32_t*>(sc) + (4 * (k) + 3) * lanes,                                \
            svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, v, 24), 0x0F));
      STORE4(0, w0) STORE4(1, w1) STORE4(2, w2) STORE4(3, w3)
#undef STORE4
    }
  }

  // Q2_K's mins: the high nibbles of scale bytes 4t..4t+3, 4 a lane.
  __attribute__((always_inline)) static void mins(svbool_t pg32, const uint8_t* blk, size_t r0, svint8_t& m0,
                                                  svint8_t& m1, svint8_t& m2, svint8_t& m3) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(blk + kScalesOffset) + r0;
    const auto high = [&](size_t t) {
      return svreinterpret_s8_u32(
          svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, svld1_u32(pg32, words + t * kNr), 4), 0x0F0F0F0F));
    };
    m0 = high(0), m1 = high(1), m2 = high(2), m3 = high(3);
  }

  // The code vector of a quad for quarter kS of chunk kC in the one-row form:
  // u its qs bytes, h its hm bytes (Q3_K), the shifts immediate.
  template <int kS, int kC>
  __attribute__((always_inline)) static svint8_t code1(svbool_t all, svuint8_t u, [[maybe_unused]] svuint8_t h) {
    svuint8_t low = svand_n_u8_x(all, kS == 0 ? u : svlsr_n_u8_x(all, u, 2 * kS), 3);
    if constexpr (kQ3) {
      constexpr int kG = 4 * kC + kS;
      low = svmls_n_u8_x(all, low, svand_n_u8_x(all, kG == 0 ? h : svlsr_n_u8_x(all, h, kG), 1), 4);
    }
    return svreinterpret_s8_u8(low);
  }

  // The integer sums of one row (R = 1, decode): the quarters unrolled, each
  // chunk's 8 qs quads loaded once for its 4 quarters and Q3_K's 8 hm quads
  // once for all 8, where the rolled loop of the 4-row form reloads them every
  // quarter (Q3_K decode 0.887 instructions per weight at 128 bits with it).
  static svint32_t row_sums(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* x, size_t r0,
                            const int32_t* sc) {
    const svbool_t all = svptrue_b8();
    const size_t lanes = svcntw();
    const uint8_t* hm = blk + kHmOffset + 4 * r0;
    svuint8_t h0 = svdup_u8(0), h1 = h0, h2 = h0, h3 = h0, h4 = h0, h5 = h0, h6 = h0, h7 = h0;
    if constexpr (kQ3) {
      h0 = svld1_u8(pg8, hm), h1 = svld1_u8(pg8, hm + 4 * kNr), h2 = svld1_u8(pg8, hm + 8 * kNr);
      h3 = svld1_u8(pg8, hm + 12 * kNr), h4 = svld1_u8(pg8, hm + 16 * kNr), h5 = svld1_u8(pg8, hm + 20 * kNr);
      h6 = svld1_u8(pg8, hm + 24 * kNr), h7 = svld1_u8(pg8, hm + 28 * kNr);
    }
    svint32_t sum = svdup_s32(0);
#define QUARTER(c, s)                                                                                         \
  {                                                                                                           \
    const uint8_t* xq = x + 32 * (4 * (c) + (s));                                                             \
    const svint8_t xa = ld1rq_lo8<0>(xq), xc = ld1rq_lo8<16>(xq);                                             \
    svint32_t t0 = svdup_s32(0), t1 = t0;                                                                     \
    t0 = sdot_lane<0>(t0, code1<s, c>(all, u0, h0), xa), t0 = sdot_lane<1>(t0, code1<s, c>(all, u1, h1), xa); \
    t0 = sdot_lane<2>(t0, code1<s, c>(all, u2, h2), xa), t0 = sdot_lane<3>(t0, code1<s, c>(all, u3, h3), xa); \
    t1 = sdot_lane<0>(t1, code1<s, c>(all, u4, h4), xc), t1 = sdot_lane<1>(t1, code1<s, c>(all, u5, h5), xc); \
    t1 = sdot_lane<2>(t1, code1<s, c>(all, u6, h6), xc), t1 = sdot_lane<3>(t1, code1<s, c>(all, u7, h7), xc); \
    sum = svmla_s32_x(pg32, sum, t0, svld1_s32(pg32, sc + (8 * (c) + 2 * (s)) * lanes));                      \
    sum = svmla_s32_x(pg32, sum, t1, svld1_s32(pg32, sc + (8 * (c) + 2 * (s) + 1) * lanes));                  \
  }
#define CHUNK(c)                                                                                                \
  {                                                                                                             \
    const uint8_t* qs = blk + kQsOffset + 32 * kNr * (c) + 4 * r0;                                              \
    const svuint8_t u0 = svld1_u8(pg8, qs), u1 = svld1_u8(pg8, qs + 4 * kNr), u2 = svld1_u8(pg8, qs + 8 * kNr); \
    const svuint8_t u3 = svld1_u8(pg8, qs + 12 * kNr), u4 = svld1_u8(pg8, qs + 16 * kNr);                       \
    const svuint8_t u5 = svld1_u8(pg8, qs + 20 * kNr), u6 = svld1_u8(pg8, qs + 24 * kNr);                       \
    const svuint8_t u7 = svld1_u8(pg8, qs + 28 * kNr);                                                          \
    QUARTER(c, 0) QUARTER(c, 1) QUARTER(c, 2) QUARTER(c, 3)                                                     \
  }
    CHUNK(0)
    CHUNK(1)
#undef CHUNK
#undef QUARTER
    return sum;
  }

  template <int R>
  __attribute__((always_inline)) static void sums(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* xb,
                                                  size_t x_row_bytes, size_t r0, svint32_t& sum0, svint32_t& sum1,
                                                  svint32_t& sum2, svint32_t& sum3) {
    int32_t sc[16 * 64];  // 16 vectors of up to 64 lanes (2048-bit SVE)
    scales(pg32, blk, r0, sc);
    if constexpr (R == 1) {
      sum0 = row_sums(pg8, pg32, blk, xb, r0, sc);
      return;
    }
    const size_t lanes = svcntw();
    const svbool_t all = svptrue_b8();
#pragma GCC unroll 1
    for (size_t q = 0; q < 8; ++q) {  // quarter s = q % 4 of chunk c = q / 4
      const size_t c = q / 4, s = q % 4;
      // Q3_K's hm quads are the same for every quarter: kept from hoisting
      // their loads out of the loop (8 more live vectors, spilled).
      [[maybe_unused]] const uint8_t* hm = blk + kHmOffset + 4 * r0;
      if constexpr (kQ3) asm("" : "+r"(hm));
      const uint8_t* qs = blk + kQsOffset + 32 * kNr * c + 4 * r0;
      const svuint8_t low_shift = svdup_u8(static_cast<uint8_t>(2 * s));
      [[maybe_unused]] const svuint8_t g_shift = svdup_u8(static_cast<uint8_t>(4 * c + s));
#define CODES(i)                                                                                                       \
  svuint8_t u##i = svand_n_u8_x(all, svlsr_u8_x(all, svld1_u8(pg8, qs + 4 * kNr * (i)), low_shift), 3);                \
  if constexpr (kQ3) {                                                                                                 \
    u##i =                                                                                                             \
        svmls_n_u8_x(all, u##i, svand_n_u8_x(all, svlsr_u8_x(all, svld1_u8(pg8, hm + 4 * kNr * (i)), g_shift), 1), 4); \
  }                                                                                                                    \
  const svint8_t w##i = svreinterpret_s8_u8(u##i);
      // clang-format off
      CODES(0) CODES(1) CODES(2) CODES(3) CODES(4) CODES(5) CODES(6) CODES(7)
      // clang-format on
#undef CODES
          const svint32_t sc0 = svld1_s32(pg32, sc + (2 * q) * lanes),
                          sc1 = svld1_s32(pg32, sc + (2 * q + 1) * lanes);
      const uint8_t* xq = xb + 32 * q;
#define ROW(i)                                                                                                \
  {                                                                                                           \
    const uint8_t* xi = xq + x_row_bytes * (i);                                                               \
    const svint8_t xa = ld1rq_lo8<0>(xi), xc = ld1rq_lo8<16>(xi);                                             \
    const svint32_t t0 =                                                                                      \
        sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), w0, xa), w1, xa), w2, xa), w3, xa); \
    const svint32_t t1 =                                                                                      \
        sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), w4, xc), w5, xc), w6, xc), w7, xc); \
    sum##i = svmla_s32_x(pg32, svmla_s32_x(pg32, sum##i, t0, sc0), t1, sc1);                                  \
  }
      SVE_ROWS(R, ROW)
#undef ROW
    }
  }
};

using Q2_K = LowBitK<false>;
using Q3_K = LowBitK<true>;

}  // namespace

constinit const MatmulKernel kMatmulQ2_K =
    arm::interleaved_kernel<SuperBlockGroups<Q2_K>>("matmul_f32_q8_k_q2_k_4x16_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ3_K =
    arm::interleaved_kernel<SuperBlockGroups<Q3_K>>("matmul_f32_q8_k_q3_k_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
