// matmul_f32_q8_k_q4_k_4x16_sve: Q4_K weights x Q8_K activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per
// super-block of 256, kPackedBlockBytes = 2304 = 16 x 144 bytes (no growth):
//   uint16 d[16], dmin[16]     fp16 scales of rows 0..15
//   uint8  scales[3][16][4]    word t, row r: the row's scale bytes 4t..4t+3,
//                              so that one 32-bit lane decodes a row's 6-bit
//                              scales and mins with word-wide shifts and masks
//   uint8  qs[4][8][16][4]     chunk c, quad i, row r: the row's qs bytes
//                              32c+4i..32c+4i+3 (low nibbles: elements
//                              64c+4i.., sub-block 2c; high: 64c+32+4i.., 2c+1)
// Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_K rows (lhs_rows.h), with the sub-block sums split into
// 7-bit halves.
//
// run (super_block_groups.h): per pass of a group (VL/32 rows), kMr = 4
// activation rows at a time. Per sub-block of 32: 8 quad loads and masks or shifts shared by the
// rows, then per row 8 SDOT (indexed) and one MLA by the rows' sub-block
// scales. The mins term sum_j m_j * bsum_j is 4 more SDOT per super-block (the
// 8 mins of a row are two 32-bit lanes). Per super-block and row:
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

// The low (kHigh false) or high nibbles of u as int8.
template <bool kHigh>
inline svint8_t nibbles(svbool_t all, svuint8_t u) {
  return svreinterpret_s8_u8(kHigh ? svlsr_n_u8_x(all, u, 4) : svand_n_u8_x(all, u, 0x0F));
}

// Byte kByte of every 32-bit lane, zero-extended.
template <int kByte>
inline svint32_t byte_of(svbool_t pg, svuint32_t v) {
  if constexpr (kByte == 3) return svreinterpret_s32_u32(svlsr_n_u32_x(pg, v, 24));
  if constexpr (kByte == 0) return svreinterpret_s32_u32(svand_n_u32_x(pg, v, 0xFF));
  return svreinterpret_s32_u32(svand_n_u32_x(pg, svlsr_n_u32_x(pg, v, 8 * kByte), 0xFF));
}

struct Q4_K : arm::WeightType<gguf::GgmlType::Q4_K, ref::BlockQ4_K> {
  static constexpr bool kMins = true;
  static constexpr size_t kDminOffset = 2 * kNr;
  static constexpr size_t kScalesOffset = 4 * kNr;
  static constexpr size_t kQsOffset = kScalesOffset + 3 * 4 * kNr;
  static constexpr size_t kPackedBlockBytes = kQsOffset + 32 * 4 * kNr;

  static void pack(const GgufBlock& blk, uint8_t* out, size_t r) {
    std::memcpy(out + 2 * r, &blk.d, 2);
    std::memcpy(out + kDminOffset + 2 * r, &blk.dmin, 2);
    for (size_t t = 0; t < 3; ++t) std::memcpy(out + kScalesOffset + 4 * kNr * t + 4 * r, blk.scales + 4 * t, 4);
    for (size_t q = 0; q < 32; ++q) std::memcpy(out + kQsOffset + 4 * kNr * q + 4 * r, blk.qs + 4 * q, 4);
  }

  // One sub-block (kHigh: the high nibbles of chunk c) for R rows: 8 quads
  // unpacked once, then per row 8 SDOT and sum += dot * scale.
  template <int R, bool kHigh>
  static void sub_block(svbool_t pg8, svbool_t pg32, const uint8_t* qs_c, const uint8_t* x_c, size_t x_row_bytes,
                        svint32_t scale, svint32_t& sum0, svint32_t& sum1, svint32_t& sum2, svint32_t& sum3) {
#define UNPACK(i)                                             \
  const svuint8_t u##i = svld1_u8(pg8, qs_c + 4 * kNr * (i)); \
  const svint8_t w##i =                                       \
      svreinterpret_s8_u8(kHigh ? svlsr_n_u8_x(svptrue_b8(), u##i, 4) : svand_n_u8_x(svptrue_b8(), u##i, 0x0F));
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

  // The integer sums of one row (R = 1, decode): the chunks unrolled and the
  // scales taken from the lanes directly, with no round trip through memory.
  static svint32_t row_sums(svbool_t pg8, svbool_t pg32, const uint8_t* qs, const uint8_t* x, svuint32_t sc03,
                            svuint32_t sc47) {
    const svbool_t all = svptrue_b8();
    svint32_t sum = svdup_s32(0);
    // Each sub-block loads its chunk's quads again: the AND then works in
    // place and 8 fewer registers stay live. Merged by GCC, the two loads kept
    // 16 quads live, with spills and MOVPRFX: 332 instructions per
    // super-block and 128-bit pass, 306 with the reload (objdump).
#define HALF(c, kHigh, xoff, scale)                                                             \
  {                                                                                             \
    const uint8_t* q = qs + 32 * kNr * (c);                                                     \
    const svint8_t xa = ld1rq_lo8<xoff>(x + 64 * (c)), xb = ld1rq_lo8<xoff + 16>(x + 64 * (c)); \
    svint32_t t = svdup_s32(0);                                                                 \
    t = sdot_lane<0>(t, nibbles<kHigh>(all, svld1_u8(pg8, q)), xa);                             \
    t = sdot_lane<1>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 4 * kNr)), xa);                   \
    t = sdot_lane<2>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 8 * kNr)), xa);                   \
    t = sdot_lane<3>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 12 * kNr)), xa);                  \
    t = sdot_lane<0>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 16 * kNr)), xb);                  \
    t = sdot_lane<1>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 20 * kNr)), xb);                  \
    t = sdot_lane<2>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 24 * kNr)), xb);                  \
    t = sdot_lane<3>(t, nibbles<kHigh>(all, svld1_u8(pg8, q + 28 * kNr)), xb);                  \
    sum = svmla_s32_x(pg32, sum, t, scale);                                                     \
    asm volatile("" ::: "memory"); /* keeps GCC from merging the two halves' loads */           \
  }
    HALF(0, false, 0, byte_of<0>(pg32, sc03))
    HALF(0, true, 32, byte_of<1>(pg32, sc03))
    HALF(1, false, 0, byte_of<2>(pg32, sc03))
    HALF(1, true, 32, byte_of<3>(pg32, sc03))
    HALF(2, false, 0, byte_of<0>(pg32, sc47))
    HALF(2, true, 32, byte_of<1>(pg32, sc47))
    HALF(3, false, 0, byte_of<2>(pg32, sc47))
    HALF(3, true, 32, byte_of<3>(pg32, sc47))
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
      sum0 = row_sums(pg8, pg32, blk + kQsOffset + 4 * r0, xb, sc03, sc47);
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
#pragma GCC unroll 1
      for (size_t c = 0; c < 4; ++c) {
        const uint8_t* qs_c = blk + kQsOffset + 32 * kNr * c + 4 * r0;
        const uint8_t* x_c = xb + 64 * c;
        sub_block<R, false>(pg8, pg32, qs_c, x_c, x_row_bytes, svld1_s32(pg32, sc + 2 * c * lanes), sum0, sum1, sum2,
                            sum3);
        sub_block<R, true>(pg8, pg32, qs_c, x_c, x_row_bytes, svld1_s32(pg32, sc + (2 * c + 1) * lanes), sum0, sum1,
                           sum2, sum3);
      }
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

}  // namespace

constinit const MatmulKernel kMatmulQ4_K =
    arm::interleaved_kernel<SuperBlockGroups<Q4_K>>("matmul_f32_q8_k_q4_k_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
