// matmul_f32_q8_k_q4_k_4x16_sve and matmul_f32_q8_k_q5_k_4x16_sve: Q4_K or
// Q5_K weights x Q8_K activations with SVE SDOT, one struct for both (KQuant).
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per
// super-block of 256, kPackedBlockBytes = 2304 = 16 x 144 bytes for Q4_K and
// 2816 = 16 x 176 for Q5_K (no growth):
//   uint16 d[16], dmin[16]     fp16 scales of rows 0..15
//   uint8  scales[3][16][4]    word t, row r: the row's scale bytes 4t..4t+3,
//                              so that one 32-bit lane decodes a row's 6-bit
//                              scales and mins with word-wide shifts and masks
//   uint8  qh[8][16][4]        Q5_K only: quad i, row r: the row's qh bytes
//                              4i..4i+3 (bit j: the fifth bit of element
//                              32j + 4i + l, sub-block j)
//   uint8  qs[4][8][16][4]     chunk c, quad i, row r: the row's qs bytes
//                              32c+4i..32c+4i+3 (low nibbles: elements
//                              64c+4i.., sub-block 2c; high: 64c+32+4i.., 2c+1)
// Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_K rows (lhs_rows.h), with the sub-block sums split into
// 7-bit halves.
//
// run (super_block_groups.h): per pass of a group (VL/32 rows), kMr = 4
// activation rows at a time. Per sub-block of 32: 8 quad loads and masks or
// shifts shared by the rows (Q5_K: 4 more per quad, a qh load, a shift bringing
// sub-block j's bit to bit 4, an AND and an ORR; SVE1 has no BSL or SLI), then
// per row 8 SDOT (indexed) and one MLA by the rows' sub-block scales. The mins
// term sum_j m_j * bsum_j is 4 more SDOT per super-block (the 8 mins of a row
// are two 32-bit lanes). Per super-block and row:
// acc += (float(S) * d_w - float(M) * dmin_w) * d_a. m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/super_block_groups.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

constexpr size_t kNr = kGroupRows;

// The low (kHigh false) or high nibbles of u.
template <bool kHigh>
inline svuint8_t nibbles(svbool_t all, svuint8_t u) {
  return kHigh ? svlsr_n_u8_x(all, u, 4) : svand_n_u8_x(all, u, 0x0F);
}

// Byte kByte of every 32-bit lane, zero-extended.
template <int kByte>
inline svint32_t byte_of(svbool_t pg, svuint32_t v) {
  if constexpr (kByte == 3) return svreinterpret_s32_u32(svlsr_n_u32_x(pg, v, 24));
  if constexpr (kByte == 0) return svreinterpret_s32_u32(svand_n_u32_x(pg, v, 0xFF));
  return svreinterpret_s32_u32(svand_n_u32_x(pg, svlsr_n_u32_x(pg, v, 8 * kByte), 0xFF));
}

// Q5_K's fifth bits of sub-block kJ (bit kJ of each qh byte) at bit 4.
template <int kJ>
inline svuint8_t fifth_bits(svbool_t all, svuint8_t h) {
  const svuint8_t at4 = kJ <= 4 ? svlsl_n_u8_x(all, h, 4 - kJ) : svlsr_n_u8_x(all, h, kJ - 4);
  return svand_n_u8_x(all, at4, 0x10);
}

// The same for sub-block 2c + kHigh of a chunk c known at run time: LSR by
// 2c (shift: 2c in every byte), then the constant LSL by 4 or 3. (LSL by
// 4 - j would be one shift, but needs LSR for j > 4, and GCC unrolled the two
// loops that took and spilled: 58.9 instructions per weight, Q5_K prefill
// 128 x 256 x 4096 at 128 bits.)
template <bool kHigh>
inline svuint8_t fifth_bits(svbool_t all, svuint8_t h, svuint8_t shift) {
  return svand_n_u8_x(all, svlsl_n_u8_x(all, svlsr_u8_x(all, h, shift), kHigh ? 3 : 4), 0x10);
}

template <class Block, bool kFive>
struct KQuant : arm::WeightType<kFive ? gguf::GgmlType::Q5_K : gguf::GgmlType::Q4_K, Block> {
  using GgufBlock = Block;
  static constexpr bool kMins = true;
  static constexpr size_t kDminOffset = 2 * kNr;
  static constexpr size_t kScalesOffset = 4 * kNr;
  static constexpr size_t kQhOffset = kScalesOffset + 3 * 4 * kNr;
  static constexpr size_t kQsOffset = kQhOffset + (kFive ? 8 * 4 * kNr : 0);
  static constexpr size_t kPackedBlockBytes = kQsOffset + 32 * 4 * kNr;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    std::memcpy(out + kDminOffset + 2 * r, &blk.dmin, 2);
    for (size_t t = 0; t < 3; ++t) std::memcpy(out + kScalesOffset + 4 * kNr * t + 4 * r, blk.scales + 4 * t, 4);
    if constexpr (kFive) {
      for (size_t i = 0; i < 8; ++i) std::memcpy(out + kQhOffset + 4 * kNr * i + 4 * r, blk.qh + 4 * i, 4);
    }
    for (size_t q = 0; q < 32; ++q) std::memcpy(out + kQsOffset + 4 * kNr * q + 4 * r, blk.qs + 4 * q, 4);
  }

  // One sub-block (kHigh: the high nibbles of chunk c) for R rows: 8 quads
  // unpacked once, then per row 8 SDOT and sum += dot * scale. Q5_K: qh, the
  // pass's qh quads, and amount, the shift bringing this sub-block's bit to
  // bit 4 (fifth_bits<kLeft>).
  template <int R, bool kHigh>
  static void sub_block(svbool_t pg8, svbool_t pg32, const uint8_t* qs_c, const uint8_t* qh, svuint8_t shift,
                        const uint8_t* x_c, size_t x_row_bytes, svint32_t scale, svint32_t& sum0, svint32_t& sum1,
                        svint32_t& sum2, svint32_t& sum3) {
    const svbool_t all = svptrue_b8();
#define UNPACK(i)                                                                                                      \
  svuint8_t u##i = nibbles<kHigh>(all, svld1_u8(pg8, qs_c + 4 * kNr * (i)));                                           \
  if constexpr (kFive) u##i = svorr_u8_x(all, u##i, fifth_bits<kHigh>(all, svld1_u8(pg8, qh + 4 * kNr * (i)), shift)); \
  const svint8_t w##i = svreinterpret_s8_u8(u##i);
    // clang-format off
    UNPACK(0) UNPACK(1) UNPACK(2) UNPACK(3) UNPACK(4) UNPACK(5) UNPACK(6) UNPACK(7)
    // clang-format on
#undef UNPACK
        constexpr int kX = kHigh ? 32 : 0;  // the sub-block's codes in the row's chunk
#define ROW(i)                                                                                                \
  {                                                                                                           \
    const uint8_t* xi = x_c + x_row_bytes * (i);                                                              \
    const svint8_t xa = ld1rq_lo8<kX>(xi), xb = ld1rq_lo8<kX + 16>(xi);                                       \
    svint32_t t =                                                                                             \
        sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), w0, xa), w1, xa), w2, xa), w3, xa); \
    t = sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(t, w4, xb), w5, xb), w6, xb), w7, xb);            \
    sum##i = svmla_s32_x(pg32, sum##i, t, scale);                                                             \
  }
    SVE_ROWS(R, ROW)
#undef ROW
  }

  // The codes of quad i of sub-block kJ (chunk kJ / 2, nibble kJ % 2) for the
  // one-row form: q, the pass's qs quads of the chunk; h, the quad's qh bytes.
  template <int kJ>
  __attribute__((always_inline)) static svint8_t codes(svbool_t pg8, const uint8_t* q, svuint8_t h, size_t i) {
    const svbool_t all = svptrue_b8();
    svuint8_t u = nibbles<kJ % 2 == 1>(all, svld1_u8(pg8, q + 4 * kNr * i));
    if constexpr (kFive) u = svorr_u8_x(all, u, fifth_bits<kJ>(all, h));
    return svreinterpret_s8_u8(u);
  }

  // The integer sums of one row (R = 1, decode): the chunks unrolled and the
  // scales taken from the lanes directly, with no round trip through memory.
  static svint32_t row_sums(svbool_t pg8, svbool_t pg32, const uint8_t* qs, const uint8_t* qh, const uint8_t* x,
                            svuint32_t sc03, svuint32_t sc47) {
    svint32_t sum = svdup_s32(0);
    // Q5_K's qh quads, loaded once for the 8 sub-blocks (Q4_K: unused).
    const svuint8_t h0 = svld1_u8(pg8, qh), h1 = svld1_u8(pg8, qh + 4 * kNr), h2 = svld1_u8(pg8, qh + 8 * kNr),
                    h3 = svld1_u8(pg8, qh + 12 * kNr), h4 = svld1_u8(pg8, qh + 16 * kNr),
                    h5 = svld1_u8(pg8, qh + 20 * kNr), h6 = svld1_u8(pg8, qh + 24 * kNr),
                    h7 = svld1_u8(pg8, qh + 28 * kNr);
    // Each sub-block loads its chunk's quads again: the AND then works in
    // place and 8 fewer registers stay live. Merged by GCC, the two loads kept
    // 16 quads live, with spills and MOVPRFX: 332 instructions per
    // super-block and 128-bit pass, 306 with the reload (objdump, Q4_K).
#define HALF(j, xoff, scale)                                                                                \
  {                                                                                                         \
    const uint8_t* q = qs + 32 * kNr * ((j) / 2);                                                           \
    const svint8_t xa = ld1rq_lo8<xoff>(x + 64 * ((j) / 2)), xb = ld1rq_lo8<xoff + 16>(x + 64 * ((j) / 2)); \
    svint32_t t = svdup_s32(0);                                                                             \
    t = sdot_lane<0>(t, codes<j>(pg8, q, h0, 0), xa);                                                       \
    t = sdot_lane<1>(t, codes<j>(pg8, q, h1, 1), xa);                                                       \
    t = sdot_lane<2>(t, codes<j>(pg8, q, h2, 2), xa);                                                       \
    t = sdot_lane<3>(t, codes<j>(pg8, q, h3, 3), xa);                                                       \
    t = sdot_lane<0>(t, codes<j>(pg8, q, h4, 4), xb);                                                       \
    t = sdot_lane<1>(t, codes<j>(pg8, q, h5, 5), xb);                                                       \
    t = sdot_lane<2>(t, codes<j>(pg8, q, h6, 6), xb);                                                       \
    t = sdot_lane<3>(t, codes<j>(pg8, q, h7, 7), xb);                                                       \
    sum = svmla_s32_x(pg32, sum, t, scale);                                                                 \
    asm volatile("" ::: "memory"); /* keeps GCC from merging the two halves' loads */                       \
  }
    HALF(0, 0, byte_of<0>(pg32, sc03))
    HALF(1, 32, byte_of<1>(pg32, sc03))
    HALF(2, 0, byte_of<2>(pg32, sc03))
    HALF(3, 32, byte_of<3>(pg32, sc03))
    HALF(4, 0, byte_of<0>(pg32, sc47))
    HALF(5, 32, byte_of<1>(pg32, sc47))
    HALF(6, 0, byte_of<2>(pg32, sc47))
    HALF(7, 32, byte_of<3>(pg32, sc47))
#undef HALF
    return sum;
  }

  template <int R>
  __attribute__((always_inline)) static void sums(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* xb,
                                                  size_t x_row_bytes, size_t r0, svint32_t& sum0, svint32_t& sum1,
                                                  svint32_t& sum2, svint32_t& sum3) {
    [[maybe_unused]] int32_t scales[8 * 64];  // 8 vectors of up to 64 lanes (2048-bit SVE)
    const uint32_t* words = reinterpret_cast<const uint32_t*>(blk + kScalesOffset) + r0;
    const svuint32_t w0 = svld1_u32(pg32, words), w2 = svld1_u32(pg32, words + 2 * kNr);
    // 4 scales per lane: sc[0..3] and sc[4..7] of the lane's row. Several
    // rows spread them into one int32 vector per sub-block, in memory: the
    // chunk loop stays rolled and the accumulators in registers.
    const svuint32_t sc03 = svand_n_u32_x(pg32, w0, 0x3F3F3F3F);
    const svuint32_t sc47 = svorr_u32_x(pg32, svand_n_u32_x(pg32, w2, 0x0F0F0F0F),
                                        svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, w0, 2), 0x30303030));
    if constexpr (R == 1) {
      sum0 = row_sums(pg8, pg32, blk + kQsOffset + 4 * r0, blk + kQhOffset + 4 * r0, xb, sc03, sc47);
    } else {
      int32_t* const sc = scales;
      const size_t lanes = svcntw();
      svst1_s32(pg32, sc + 0 * lanes, byte_of<0>(pg32, sc03));
      svst1_s32(pg32, sc + 1 * lanes, byte_of<1>(pg32, sc03));
      svst1_s32(pg32, sc + 2 * lanes, byte_of<2>(pg32, sc03));
      svst1_s32(pg32, sc + 3 * lanes, byte_of<3>(pg32, sc03));
      svst1_s32(pg32, sc + 4 * lanes, byte_of<0>(pg32, sc47));
      svst1_s32(pg32, sc + 5 * lanes, byte_of<1>(pg32, sc47));
      svst1_s32(pg32, sc + 6 * lanes, byte_of<2>(pg32, sc47));
      svst1_s32(pg32, sc + 7 * lanes, byte_of<3>(pg32, sc47));
      chunks4<R>(pg8, pg32, blk, xb, x_row_bytes, r0, sc, sum0, sum1, sum2, sum3);
    }
  }

  // The 4 chunks for R rows, scales from sc; one rolled loop.
  template <int R>
  __attribute__((always_inline)) static void chunks4(svbool_t pg8, svbool_t pg32, const uint8_t* blk, const uint8_t* xb,
                                                     size_t x_row_bytes, size_t r0, const int32_t* sc, svint32_t& sum0,
                                                     svint32_t& sum1, svint32_t& sum2, svint32_t& sum3) {
    const size_t lanes = svcntw();
#pragma GCC unroll 1
    for (size_t c = 0; c < 4; ++c) {
      const uint8_t* qs_c = blk + kQsOffset + 32 * kNr * c + 4 * r0;
      const uint8_t* x_c = xb + 64 * c;
      // Q5_K's qh quads are the same for every chunk: kept from hoisting
      // their loads out of the loop (8 more live vectors, spilled).
      const uint8_t* qh = blk + kQhOffset + 4 * r0;
      if constexpr (kFive) asm("" : "+r"(qh));
      const svuint8_t shift = svdup_u8(static_cast<uint8_t>(2 * c));
      sub_block<R, false>(pg8, pg32, qs_c, qh, shift, x_c, x_row_bytes, svld1_s32(pg32, sc + 2 * c * lanes), sum0, sum1,
                          sum2, sum3);
      sub_block<R, true>(pg8, pg32, qs_c, qh, shift, x_c, x_row_bytes, svld1_s32(pg32, sc + (2 * c + 1) * lanes), sum0,
                         sum1, sum2, sum3);
    }
  }

  __attribute__((always_inline)) static void mins(svbool_t pg32, const uint8_t* blk, size_t r0, svint8_t& m03,
                                                  svint8_t& m47) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(blk + kScalesOffset) + r0;
    // The mins: m[0..3] and m[4..7] of each row as bytes of a lane.
    const svuint32_t w1 = svld1_u32(pg32, words + kNr), w2b = svld1_u32(pg32, words + 2 * kNr);
    m03 = svreinterpret_s8_u32(svand_n_u32_x(pg32, w1, 0x3F3F3F3F));
    m47 = svreinterpret_s8_u32(svorr_u32_x(pg32, svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, w2b, 4), 0x0F0F0F0F),
                                           svand_n_u32_x(pg32, svlsr_n_u32_x(pg32, w1, 2), 0x30303030)));
  }
};

using Q4_K = KQuant<ref::BlockQ4_K, false>;
using Q5_K = KQuant<ref::BlockQ5_K, true>;

}  // namespace

constinit const MatmulKernel kMatmulQ4_K =
    arm::interleaved_kernel<SuperBlockGroups<Q4_K>>("matmul_f32_q8_k_q4_k_4x16_sve", Tier::sve, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ5_K =
    arm::interleaved_kernel<SuperBlockGroups<Q5_K>>("matmul_f32_q8_k_q5_k_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
