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
// per super-block acc += float(S) * d_w * d_a. The 2x4 form (rows left over,
// decode) does the same operations per output. m_step 8, n_step 4.
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
constexpr size_t kScalesOffset = 8;
constexpr size_t kBitsOffset = 72;
constexpr size_t kPackedBlockBytes = kBitsOffset + 2 * 4 * 2 * 48;

size_t tiles_of(size_t n) { return (n + kNr - 1) / kNr; }

size_t rhs_packed_size(size_t n, size_t k) { return tiles_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

// Offset of the 48 bytes of (c, g, q) in a packed super-block.
constexpr size_t bits_offset(size_t c, size_t g, size_t q) { return kBitsOffset + 384 * c + 96 * g + 48 * q; }

// The 6-bit code (0..63) of element e of a Q6_K block (blocks.h).
uint8_t code_of(const ref::BlockQ6_K& b, size_t e) {
  const size_t c = e / 128, l = e % 32, quarter = e % 128 / 32;
  const uint8_t ql = b.ql[64 * c + l + (quarter % 2) * 32];
  const uint8_t low = quarter < 2 ? ql & 0xF : ql >> 4;
  return static_cast<uint8_t>(low | ((b.qh[32 * c + l] >> (2 * quarter)) & 3) << 4);
}

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ6_K*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of(n); ++t) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr; ++r) {
        // A missing row: codes 32 (value 0), scales 0, d = 0.
        ref::BlockQ6_K blk{};
        std::memset(blk.ql, 0, sizeof blk.ql);
        std::memset(blk.qh, 0xAA, sizeof blk.qh);
        if (t * kNr + r < n) blk = rows[(t * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        for (size_t s = 0; s < 16; ++s) out[kScalesOffset + 4 * s + r] = static_cast<uint8_t>(blk.scales[s]);
        for (size_t c = 0; c < 2; ++c) {
          for (size_t g = 0; g < 4; ++g) {
            uint8_t* o = out + bits_offset(c, g, r / 2) + 8 * (r % 2);
            for (size_t i = 0; i < 8; ++i) {
              uint8_t q[4];
              for (size_t e = 0; e < 4; ++e) q[e] = code_of(blk, 128 * c + 8 * g + i + 32 * e) ^ 32;
              for (size_t e = 0; e < 3; ++e)
                o[16 * e + i] = static_cast<uint8_t>(q[e] << 2 | ((q[3] >> (4 - 2 * e)) & 3));
            }
          }
        }
      }
    }
  }
}

size_t lhs_packed_size(size_t m, size_t k) { return pairs_of(m) * (k / kBlock) * kQ8_KPairBlockBytes; }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx / 2 * (k / kBlock) * kQ8_KPairBlockBytes; }

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_k_pairs(m, k, lhs, lhs_stride, lhs_packed, 0.25f);
}

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

// P pairs of activation rows (P = 4: 8 rows; P = 1: 2 rows) x 4 weight rows.
// The float accumulators live in memory: they change once per super-block.
template <int P>
void tile(size_t nb, const uint8_t* lhs, size_t pair_bytes, const uint8_t* rhs, float* y, size_t ldy, size_t rows,
          size_t cols) {
  float acc[P][2][4] = {};
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* w = rhs + b * kPackedBlockBytes;
    const uint8_t* a = lhs + b * kQ8_KPairBlockBytes;
    int32x4_t sum[P][2];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) sum[p][0] = sum[p][1] = vdupq_n_s32(0);
#pragma GCC unroll 1
    for (int c = 0; c < 2; ++c) {
      const uint8_t* scales = w + kScalesOffset + 32 * c;
      const uint8_t* x = a + kQ8_KQsOffset + 256 * c;
      half_chunk<P, 0>(w + bits_offset(c, 0, 0), scales, x, pair_bytes, sum);
      half_chunk<P, 1>(w + bits_offset(c, 2, 0), scales, x, pair_bytes, sum);
    }
    const float32x4_t d4 = load_f16x4(w);
    const float32x4_t dpat[2] = {pair_pattern_lo(d4), pair_pattern_hi(d4)};
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      const float32x4_t apat = vld1q_f32(reinterpret_cast<const float*>(a + p * pair_bytes));
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        vst1q_f32(acc[p][q], vfmaq_f32(vld1q_f32(acc[p][q]), vcvtq_f32_s32(sum[p][q]), vmulq_f32(dpat[q], apat)));
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

// half_chunk for a single activation row: the two tiles' row-0 halves are
// joined before one MLA by the 4 rows' scales.
template <int kHalf>
inline int32x4_t half_chunk_row(const uint8_t* bits, const uint8_t* scales, const uint8_t* x, int32x4_t sum) {
  int32x4_t scale[4];
  load_scales<kHalf>(scales, scale);
  Codes g[2][2];
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q) {
    g[q][0] = decode_codes(bits + 48 * q);
    g[q][1] = decode_codes(bits + 96 + 48 * q);
  }
#pragma GCC unroll 4
  for (int e = 0; e < 4; ++e) {
    const int8x16x2_t xe = vld1q_s8_x2(reinterpret_cast<const int8_t*>(x + 64 * e + 32 * kHalf));
    const int32x4_t t = tile_row0(chain2(xe, g[0][0].e[e], g[0][1].e[e]), chain2(xe, g[1][0].e[e], g[1][1].e[e]));
    sum = vmlaq_s32(sum, t, scale[e]);
  }
  return sum;
}

// One activation row (decode, or the last odd row): per output the same
// integer sums and float operations as tile<P>.
void tile_1x4(size_t nb, const uint8_t* lhs, const uint8_t* rhs, float* y, size_t cols) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* w = rhs + b * kPackedBlockBytes;
    const uint8_t* a = lhs + b * kQ8_KPairBlockBytes;
    int32x4_t sum = vdupq_n_s32(0);
#pragma GCC unroll 1
    for (int c = 0; c < 2; ++c) {
      const uint8_t* scales = w + kScalesOffset + 32 * c;
      const uint8_t* x = a + kQ8_KQsOffset + 256 * c;
      sum = half_chunk_row<0>(w + bits_offset(c, 0, 0), scales, x, sum);
      sum = half_chunk_row<1>(w + bits_offset(c, 2, 0), scales, x, sum);
    }
    const float a0 = *reinterpret_cast<const float*>(a);
    acc = vfmaq_f32(acc, vcvtq_f32_s32(sum), vmulq_n_f32(load_f16x4(w), a0));
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

const MatmulKernel kMatmulQ6_K{
    .name = "matmul_f32_q8_k_q6_k_8x4_i8mm",
    .tier = Tier::i8mm,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q6_K,
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
