// matmul_f32_q8_k_q4_k_8x4_i8mm: Q4_K weights x Q8_K activations with SMMLA.
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
//
// LHS (pack_lhs): Q8_K pairs (lhs_pairs.h), with the 32-element sums.
//
// run: tiles of kMr = 8 activation rows x kNr = 4 weight rows. Per sub-block
// of 32: 4 SMMLA per 2x2 tile, then one integer MLA by the sub-block scales;
// the mins term sum_j m_j * bsum_j is itself a 2x8 by 2x8 product, done with
// two SMMLA on the sums split into 7-bit halves (4 SDOT for a single row). Per super-block, per tile:
// acc += (float(S) * d_w - float(M) * dmin_w) * d_a. The 2x4 form (rows left
// over, decode) does the same operations per output. m_step 8, n_step 4.
#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "kernels/arm/i8mm must be compiled with -march=armv8.2-a+dotprod+i8mm"
#endif

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"
#include "kernels/ref/blocks.h"

namespace kernels::i8mm {
namespace {

constexpr size_t kMr = 8;
constexpr size_t kNr = 4;
constexpr size_t kBlock = 256;
constexpr size_t kScalesOffset = 16;
constexpr size_t kQsOffset = 64;
constexpr size_t kPackedBlockBytes = kQsOffset + 4 * 128;

size_t tiles_of(size_t n) { return (n + kNr - 1) / kNr; }

size_t rhs_packed_size(size_t n, size_t k) { return tiles_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ4_K*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of(n); ++t) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr && t * kNr + r < n; ++r) {
        const ref::BlockQ4_K& blk = rows[(t * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        std::memcpy(out + 8 + 2 * r, &blk.dmin, 2);
        for (size_t i = 0; i < 3; ++i) std::memcpy(out + kScalesOffset + 16 * i + 4 * r, blk.scales + 4 * i, 4);
        for (size_t c = 0; c < 4; ++c) {
          for (size_t g = 0; g < 4; ++g) {
            std::memcpy(out + kQsOffset + 128 * c + 64 * (r / 2) + 16 * g + 8 * (r % 2), blk.qs + 32 * c + 8 * g, 8);
          }
        }
      }
    }
  }
}

size_t lhs_packed_size(size_t m, size_t k) { return pairs_of(m) * (k / kBlock) * kQ8_KPairBlockBytes; }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx / 2 * (k / kBlock) * kQ8_KPairBlockBytes; }

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_k_pairs(m, k, lhs, lhs_stride, lhs_packed, 1.0f);
}

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

// Sub-block 2c (kHigh false: low nibbles) or 2c+1 (high nibbles) of both pairs.
template <bool kHigh>
inline void load_sub_block(const uint8_t* qs_c, int8x16_t w[2][4]) {
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q) {
    const uint8x16x4_t nib = vld1q_u8_x4(qs_c + 64 * q);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      w[q][g] = vreinterpretq_s8_u8(kHigh ? vshrq_n_u8(nib.val[g], 4) : vandq_u8(nib.val[g], vdupq_n_u8(0x0F)));
    }
  }
}

inline int32x4_t chain4(const int8x16x4_t& x, const int8x16_t* w) {
  int32x4_t t = vmmlaq_s32(vdupq_n_s32(0), x.val[0], w[0]);
  t = vmmlaq_s32(t, x.val[1], w[1]);
  t = vmmlaq_s32(t, x.val[2], w[2]);
  return vmmlaq_s32(t, x.val[3], w[3]);
}

// One sub-block for P pairs of activation rows: sum[p][q] += tile * pattern.
template <int P, bool kHigh>
inline void sub_block(const uint8_t* qs_c, const uint8_t* x_s, size_t pair_bytes, const uint8x16x2_t& sc,
                      const uint8_t (*index)[16], int32x4_t (&sum)[P][2]) {
  int8x16_t w[2][4];
  load_sub_block<kHigh>(qs_c, w);
  const int32x4_t pattern[2] = {vreinterpretq_s32_u8(vqtbl2q_u8(sc, vld1q_u8(index[0]))),
                                vreinterpretq_s32_u8(vqtbl2q_u8(sc, vld1q_u8(index[1])))};
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(x_s + p * pair_bytes));
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) sum[p][q] = vmlaq_s32(sum[p][q], chain4(x, w[q]), pattern[q]);
  }
}

// P pairs of activation rows (P = 4: 8 rows; P = 1: 2 rows) x 4 weight rows.
// The float accumulators live in memory: they change once per super-block,
// and keeping them out of the registers leaves the sub-block loop unspilled.
template <int P>
void tile(size_t nb, const uint8_t* lhs, size_t pair_bytes, const uint8_t* rhs, float* y, size_t ldy, size_t rows,
          size_t cols) {
  float acc[P][2][4] = {};
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* w = rhs + b * kPackedBlockBytes;
    const uint8_t* a = lhs + b * kQ8_KPairBlockBytes;
    const uint8x16x2_t sc = decode_scales(w + kScalesOffset);
    int32x4_t sum[P][2];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) sum[p][0] = sum[p][1] = vdupq_n_s32(0);
#pragma GCC unroll 1
    for (int c = 0; c < 4; ++c) {
      const uint8_t* qs_c = w + kQsOffset + 128 * c;
      const uint8_t* x_c = a + kQ8_KQsOffset + 128 * c;
      sub_block<P, false>(qs_c, x_c, pair_bytes, sc, kScaleIndex.pair[2 * c], sum);
      sub_block<P, true>(qs_c, x_c + 64, pair_bytes, sc, kScaleIndex.pair[2 * c + 1], sum);
    }
    int8x16_t mins[2];
    mins_pairs(decode_mins(w + kScalesOffset), mins);
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
        const float32x4_t v =
            vfmsq_f32(vmulq_f32(vcvtq_f32_s32(sum[p][q]), dpat[q]), vcvtq_f32_s32(mins_tile(bsum, mins[q])), mpat[q]);
        vst1q_f32(acc[p][q], vfmaq_f32(vld1q_f32(acc[p][q]), v, apat));
      }
    }
  }
#pragma GCC unroll 4
  for (size_t p = 0; p < P; ++p) {
    const float32x4_t t0 = vld1q_f32(acc[p][0]), t1 = vld1q_f32(acc[p][1]);
    if (2 * p < rows) store_cols(y + 2 * p * ldy, tile_row0(t0, t1), cols);
    if (2 * p + 1 < rows) store_cols(y + (2 * p + 1) * ldy, tile_row1(t0, t1), cols);
  }
}

// Byte kByte of each 32-bit lane of v, zero-extended: the scale of sub-block
// kByte (or kByte + 4) of the lane's row, from decode_scales' registers.
template <int kByte>
inline int32x4_t lane_byte(uint8x16_t v) {
  const uint32x4_t u = vreinterpretq_u32_u8(v);
  if constexpr (kByte == 3) return vreinterpretq_s32_u32(vshrq_n_u32(u, 24));
  if constexpr (kByte == 0) return vreinterpretq_s32_u32(vandq_u32(u, vdupq_n_u32(0xFF)));
  return vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(u, 8 * kByte), vdupq_n_u32(0xFF)));
}

// One sub-block for a single activation row: the two tiles' row-0 halves are
// joined first, then one MLA by the 4 rows' scales.
template <bool kHigh>
inline int32x4_t sub_block_row(const uint8_t* qs_c, const uint8_t* x_s, int32x4_t scales, int32x4_t sum) {
  int8x16_t w[2][4];
  load_sub_block<kHigh>(qs_c, w);
  const int8x16x4_t x = vld1q_s8_x4(reinterpret_cast<const int8_t*>(x_s));
  return vmlaq_s32(sum, tile_row0(chain4(x, w[0]), chain4(x, w[1])), scales);
}

// One activation row (decode, or the last odd row): per output the same
// integer sums and the same float operations as tile<P>.
void tile_1x4(size_t nb, const uint8_t* lhs, const uint8_t* rhs, float* y, size_t cols) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* w = rhs + b * kPackedBlockBytes;
    const uint8_t* a = lhs + b * kQ8_KPairBlockBytes;
    const uint8x16x2_t sc = decode_scales(w + kScalesOffset);
    const uint8_t* qs = w + kQsOffset;
    const uint8_t* x = a + kQ8_KQsOffset;
    int32x4_t sum = vdupq_n_s32(0);
    sum = sub_block_row<false>(qs, x, lane_byte<0>(sc.val[0]), sum);
    sum = sub_block_row<true>(qs, x + 64, lane_byte<1>(sc.val[0]), sum);
    sum = sub_block_row<false>(qs + 128, x + 128, lane_byte<2>(sc.val[0]), sum);
    sum = sub_block_row<true>(qs + 128, x + 192, lane_byte<3>(sc.val[0]), sum);
    sum = sub_block_row<false>(qs + 256, x + 256, lane_byte<0>(sc.val[1]), sum);
    sum = sub_block_row<true>(qs + 256, x + 320, lane_byte<1>(sc.val[1]), sum);
    sum = sub_block_row<false>(qs + 384, x + 384, lane_byte<2>(sc.val[1]), sum);
    sum = sub_block_row<true>(qs + 384, x + 448, lane_byte<3>(sc.val[1]), sum);
    // sum_j m_j * bsum_j of row 0 with SDOT: {bsum_lo[0..7], bsum_hi[0..7]}
    // of the row against the 4 rows' mins (4 per lane).
    const int8x16x2_t m = decode_mins(w + kScalesOffset);
    const int8x16x2_t bsum = vld1q_s8_x2(reinterpret_cast<const int8_t*>(a + kQ8_KBsumOffset));
    const int8x16_t b0 =
        vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(bsum.val[0]), vreinterpretq_s64_s8(bsum.val[1])));
    const int32x4_t lo = vdotq_laneq_s32(vdotq_laneq_s32(vdupq_n_s32(0), m.val[0], b0, 0), m.val[1], b0, 1);
    const int32x4_t hi = vdotq_laneq_s32(vdotq_laneq_s32(vdupq_n_s32(0), m.val[0], b0, 2), m.val[1], b0, 3);
    const int32x4_t msum = vaddq_s32(lo, vshlq_n_s32(hi, 7));
    const float a0 = *reinterpret_cast<const float*>(a);
    const float16x8_t d = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(w)));  // d[4], dmin[4]
    const float32x4_t v = vfmsq_f32(vmulq_f32(vcvtq_f32_s32(sum), vcvt_f32_f16(vget_low_f16(d))), vcvtq_f32_s32(msum),
                                    vcvt_high_f32_f16(d));
    acc = vfmaq_n_f32(acc, v, a0);
  }
  store_cols(y, acc, cols);
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  const size_t nb = k / kBlock;
  const size_t pair_bytes = nb * kQ8_KPairBlockBytes;
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  for (size_t n0 = 0; n0 < n; n0 += kNr) {
    const uint8_t* w = rhs + n0 / kNr * nb * kPackedBlockBytes;
    const size_t cols = n - n0 < kNr ? n - n0 : kNr;
    float* y = dst + n0;
    size_t m0 = 0;
    for (; m0 + kMr <= m; m0 += kMr)
      tile<4>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, w, y + m0 * dst_stride, dst_stride, kMr, cols);
    for (; m0 + 2 <= m; m0 += 2)
      tile<1>(nb, lhs + m0 / 2 * pair_bytes, pair_bytes, w, y + m0 * dst_stride, dst_stride, 2, cols);
    if (m0 < m) tile_1x4(nb, lhs + m0 / 2 * pair_bytes, w, y + m0 * dst_stride, cols);
  }
}

}  // namespace

const MatmulKernel kMatmulQ4_K{
    .name = "matmul_f32_q8_k_q4_k_8x4_i8mm",
    .tier = Tier::i8mm,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q4_K,
    .lhs_type = gguf::GgmlType::Q8_K,
    .m_step = kMr,
    .n_step = kNr,
    .rhs_packed_size = rhs_packed_size,
    .rhs_packed_offset = rhs_packed_offset,
    .pack_rhs = pack_rhs,
    .lhs_packed_size = lhs_packed_size,
    .lhs_packed_offset = lhs_packed_offset,
    .pack_lhs = pack_lhs,
    .run = run,
};

}  // namespace kernels::i8mm
