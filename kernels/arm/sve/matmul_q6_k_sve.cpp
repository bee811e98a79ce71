// matmul_f32_q8_k_q6_k_4x16_sve: Q6_K weights x Q8_K activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per
// super-block of 256, kPackedBlockBytes = 3360 = 16 x 210 bytes (no growth):
//   uint16 d[16]                fp16 scales of rows 0..15
//   int8   scales[16][16]       sub-block s (16 elements), row r
//   uint8  bits[2][8][3][16][4] chunk c, quad i, plane e, row r: 4 bytes
// For l < 4 the codes q_e of elements 128c + 32e + 4i + l (e = 0..3) are
// re-packed 4 per 3 bytes: plane e < 3 holds (q_e ^ 32) << 2 | two bits of
// q_3 ^ 32 (bits 5-4 in plane 0, 3-2 in plane 1, 1-0 in plane 2), so that
// int8 4 * (q_e - 32) is one AND for e < 3 and 7 shifts/masks for e = 3 (SVE1
// has no SRI). The 1/4 goes into the activation scale. Missing rows are zero.
//
// LHS (pack_lhs): Q8_K rows (lhs_rows.h), scale multiplied by 1/4.
//
// run (groups.h): per pass of a group (VL/32 rows), kMr = 4 activation rows at
// a time. Per sub-block of 16: 4 quads decoded once for the rows, then per row
// 4 SDOT (indexed) and one MLA by the rows' sub-block scales; per super-block
// and row acc += float(S) * d_w * d_a. m_step 4, n_step 16.
#if !defined(__ARM_FEATURE_SVE)
#error "kernels/arm/sve must be compiled with -march=armv8.2-a+sve"
#endif

#include <arm_sve.h>

#include <cstring>

#include "kernels/arm/sve/groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/arm/sve/lhs_rows.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

constexpr size_t kNr = kGroupRows;
constexpr size_t kBlock = 256;
constexpr size_t kScalesOffset = 2 * kNr;
constexpr size_t kBitsOffset = kScalesOffset + 16 * kNr;
constexpr size_t kPackedBlockBytes = kBitsOffset + 2 * 8 * 3 * 4 * kNr;

size_t rhs_packed_size(size_t n, size_t k) { return groups_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

// Offset of plane e of quad i of chunk c in a packed super-block.
constexpr size_t plane_offset(size_t c, size_t i, size_t e) { return kBitsOffset + 4 * kNr * (24 * c + 3 * i + e); }

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
  for (size_t g = 0; g < groups_of(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr && g * kNr + r < n; ++r) {
        const ref::BlockQ6_K& blk = rows[(g * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        for (size_t s = 0; s < 16; ++s) out[kScalesOffset + kNr * s + r] = static_cast<uint8_t>(blk.scales[s]);
        for (size_t c = 0; c < 2; ++c) {
          for (size_t i = 0; i < 8; ++i) {
            for (size_t l = 0; l < 4; ++l) {
              uint8_t q[4];
              for (size_t e = 0; e < 4; ++e) q[e] = code_of(blk, 128 * c + 32 * e + 4 * i + l) ^ 32;
              for (size_t e = 0; e < 3; ++e) {
                out[plane_offset(c, i, e) + 4 * r + l] = static_cast<uint8_t>(q[e] << 2 | ((q[3] >> (4 - 2 * e)) & 3));
              }
            }
          }
        }
      }
    }
  }
}

size_t lhs_packed_size(size_t m, size_t k) { return m * (k / kBlock) * kQ8_KRowBlockBytes; }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx * (k / kBlock) * kQ8_KRowBlockBytes; }

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_k_rows(m, k, lhs, lhs_stride, lhs_packed, 0.25f);
}

// Codes 4 * (q_e - 32) of one quad (planes at p, rows of the pass).
template <int kE>
inline svint8_t codes(svbool_t pg8, const uint8_t* p) {
  const svbool_t all = svptrue_b8();
  if constexpr (kE < 3) return svreinterpret_s8_u8(svand_n_u8_x(all, svld1_u8(pg8, p + 4 * kNr * kE), 0xFC));
  const svuint8_t r0 = svld1_u8(pg8, p), r1 = svld1_u8(pg8, p + 4 * kNr), r2 = svld1_u8(pg8, p + 8 * kNr);
  const svuint8_t t = svorr_u8_x(all, svlsl_n_u8_x(all, r0, 6), svlsr_n_u8_x(all, svlsl_n_u8_x(all, r1, 6), 2));
  return svreinterpret_s8_u8(svorr_u8_x(all, t, svlsr_n_u8_x(all, svlsl_n_u8_x(all, r2, 6), 4)));
}

struct Kernel {
  static constexpr size_t kBlock = 256;
  static constexpr size_t kPackedBlockBytes = sve::kPackedBlockBytes;
  static constexpr size_t kRowBlockBytes = kQ8_KRowBlockBytes;
  static constexpr int kMr = 4;

  // Sub-block 8c + 2e + ih: quads i = 4 ih .. 4 ih + 3 of plane e. bits: quad
  // 4 ih's planes; x: the rows' codes at 128c + 16 ih.
  template <int R, int kE>
  static void sub_block(svbool_t pg8, svbool_t pg32, const uint8_t* bits, const uint8_t* x, size_t x_row_bytes,
                        svint32_t scale, svint32_t& sum0, svint32_t& sum1, svint32_t& sum2, svint32_t& sum3) {
    const svint8_t c0 = codes<kE>(pg8, bits), c1 = codes<kE>(pg8, bits + 12 * kNr);
    const svint8_t c2 = codes<kE>(pg8, bits + 24 * kNr), c3 = codes<kE>(pg8, bits + 36 * kNr);
#define ROW(i)                                                                                                \
  {                                                                                                           \
    const svint8_t xq = ld1rq_lo8<32 * kE>(x + x_row_bytes * (i));                                            \
    const svint32_t t =                                                                                       \
        sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(svdup_s32(0), c0, xq), c1, xq), c2, xq), c3, xq); \
    sum##i = svmla_s32_x(pg32, sum##i, t, scale);                                                             \
  }
    SVE_ROWS(R, ROW)
#undef ROW
  }

  // One pass (weight rows r0 .. of the group at w) for R activation rows at x.
  template <int R>
  static void pass(size_t nb, const uint8_t* x, size_t x_row_bytes, const uint8_t* w, size_t r0, float* y, size_t ldy,
                   size_t cols) {
    const svbool_t pg32 = rows_b32(r0, kNr), pg8 = rows_b8(r0, kNr);
    [[maybe_unused]] svfloat32_t acc0 = svdup_f32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* blk = w + b * kPackedBlockBytes;
      const uint8_t* xb = x + b * kQ8_KRowBlockBytes;
      [[maybe_unused]] svint32_t sum0 = svdup_s32(0), sum1 = sum0, sum2 = sum0, sum3 = sum0;
#pragma GCC unroll 1
      for (size_t ci = 0; ci < 4; ++ci) {
        const size_t c = ci / 2, ih = ci % 2;
        const uint8_t* bits = blk + plane_offset(c, 4 * ih, 0) + 4 * r0;
        const uint8_t* xc = xb + 128 * c + 16 * ih;
        const int8_t* sc = reinterpret_cast<const int8_t*>(blk + kScalesOffset + kNr * (8 * c + ih) + r0);
        sub_block<R, 0>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc), sum0, sum1, sum2, sum3);
        sub_block<R, 1>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 2 * kNr), sum0, sum1, sum2, sum3);
        sub_block<R, 2>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 4 * kNr), sum0, sum1, sum2, sum3);
        sub_block<R, 3>(pg8, pg32, bits, xc, x_row_bytes, svld1sb_s32(pg32, sc + 6 * kNr), sum0, sum1, sum2, sum3);
      }
      const svfloat32_t dw = load_f16_rows(pg32, blk, r0);
#define ROW(i)                                                                                    \
  {                                                                                               \
    const svfloat32_t da = ld1rqw_lo8<0>(xb + x_row_bytes * (i) + kQ8_KRowScaleOffset);           \
    acc##i = svmla_lane_f32(acc##i, svmul_f32_x(pg32, svcvt_f32_s32_x(pg32, sum##i), dw), da, 0); \
  }
      SVE_ROWS(R, ROW)
#undef ROW
    }
    const svbool_t st = rows_b32(r0, cols);
#define ROW_STORE(i) svst1_f32(st, y + ldy * (i) + r0, acc##i);
    SVE_ROWS(R, ROW_STORE)
#undef ROW_STORE
  }
};

}  // namespace

const MatmulKernel kMatmulQ6_K{
    .name = "matmul_f32_q8_k_q6_k_4x16_sve",
    .tier = Tier::sve,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q6_K,
    .lhs_type = gguf::GgmlType::Q8_K,
    .m_step = Kernel::kMr,
    .n_step = kNr,
    .rhs_packed_size = rhs_packed_size,
    .rhs_packed_offset = rhs_packed_offset,
    .pack_rhs = pack_rhs,
    .lhs_packed_size = lhs_packed_size,
    .lhs_packed_offset = lhs_packed_offset,
    .pack_lhs = pack_lhs,
    .run = run_groups<Kernel>,
};

}  // namespace kernels::sve
