// matmul_f32_q8_0_q4_0_4x16_sve: Q4_0 weights x Q8_0 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per block of
// 32, kPackedBlockBytes = 288 = 16 x 18 bytes (no growth):
//   uint16 d[16]         fp16 scales of rows 0..15
//   uint8  qs[4][16][4]  quad i, row r: the row's bytes 4i..4i+3, every nibble
//                        XOR 8 (low nibbles: elements 4i..4i+3, high: 16+4i..)
// XOR 8 makes `lsl 4` / `and 0xF0` give 16 * (q - 8) as int8; the 1/16 goes
// into the activation scale. Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_0 rows (lhs_rows.h), scale multiplied by 1/16.
//
// run: per pass of a group (VL/32 rows), kMr = 4 activation rows at a time:
// per block, 4 quad loads + 8 shift/and shared by the rows, then per row 8
// SDOT (indexed) into one int32 lane per weight row, one convert and one FMA
// with d_w * d_a. Leftover rows run the same code one at a time, with the same
// float operations per output. m_step 4, n_step 16.
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
constexpr size_t kBlock = 32;
constexpr size_t kQsOffset = 2 * kNr;
constexpr size_t kPackedBlockBytes = kQsOffset + 4 * 4 * kNr;

size_t rhs_packed_size(size_t n, size_t k) { return groups_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ4_0*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups_of(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr && g * kNr + r < n; ++r) {
        const ref::BlockQ4_0& blk = rows[(g * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        for (size_t i = 0; i < 16; ++i) out[kQsOffset + 4 * kNr * (i / 4) + 4 * r + i % 4] = blk.qs[i] ^ 0x88;
      }
    }
  }
}

size_t lhs_packed_size(size_t m, size_t k) { return m * (k / kBlock) * kQ8_0RowBlockBytes; }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx * (k / kBlock) * kQ8_0RowBlockBytes; }

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_0_rows(m, k, lhs, lhs_stride, lhs_packed, 1.0f / 16);
}

struct Kernel {
  static constexpr size_t kBlock = 32;
  static constexpr size_t kPackedBlockBytes = sve::kPackedBlockBytes;
  static constexpr size_t kRowBlockBytes = kQ8_0RowBlockBytes;
  static constexpr int kMr = 4;

  // One pass (weight rows r0 .. of the group at w) for R activation rows at x.
  template <int R>
  static void pass(size_t nb, const uint8_t* x, size_t x_row_bytes, const uint8_t* w, size_t r0, float* y, size_t ldy,
                   size_t cols) {
    const svbool_t pg32 = rows_b32(r0, kNr), pg8 = rows_b8(r0, kNr);
    [[maybe_unused]] svfloat32_t acc0 = svdup_f32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* blk = w + b * kPackedBlockBytes;
      const uint8_t* xb = x + b * kQ8_0RowBlockBytes;
      const svfloat32_t dw = load_f16_rows(pg32, blk, r0);
      // The 4 quads of the block, unpacked once for all the rows: lo[q] holds
      // elements 4q..4q+3 of each weight row, hi[q] elements 16+4q..19+4q.
      const uint8_t* qs = blk + kQsOffset + 4 * r0;
      const svuint8_t u0 = svld1_u8(pg8, qs), u1 = svld1_u8(pg8, qs + 4 * kNr);
      const svuint8_t u2 = svld1_u8(pg8, qs + 8 * kNr), u3 = svld1_u8(pg8, qs + 12 * kNr);
      const svint8_t lo0 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u0, 4));
      const svint8_t lo1 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u1, 4));
      const svint8_t lo2 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u2, 4));
      const svint8_t lo3 = svreinterpret_s8_u8(svlsl_n_u8_x(pg8, u3, 4));
      const svint8_t hi0 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u0, 0xF0));
      const svint8_t hi1 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u1, 0xF0));
      const svint8_t hi2 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u2, 0xF0));
      const svint8_t hi3 = svreinterpret_s8_u8(svand_n_u8_x(pg8, u3, 0xF0));
      // Then one row at a time, so that its 2 activation registers fit in
      // z0-z7, the only registers indexed SDOT can read them from.
#define ROW(i)                                                                                 \
  {                                                                                            \
    const uint8_t* xi = xb + x_row_bytes * (i);                                                \
    const svfloat32_t da = ld1rqw_lo8<32>(xi);                                                 \
    const svint8_t xlo = ld1rq_lo8<0>(xi);                                                     \
    const svint8_t xhi = ld1rq_lo8<16>(xi);                                                    \
    svint32_t sum = sdot_lane<0>(svdup_s32(0), lo0, xlo);                                      \
    sum = sdot_lane<0>(sum, hi0, xhi);                                                         \
    sum = sdot_lane<1>(sdot_lane<1>(sum, lo1, xlo), hi1, xhi);                                 \
    sum = sdot_lane<2>(sdot_lane<2>(sum, lo2, xlo), hi2, xhi);                                 \
    sum = sdot_lane<3>(sdot_lane<3>(sum, lo3, xlo), hi3, xhi);                                 \
    acc##i = svmla_f32_x(pg32, acc##i, svcvt_f32_s32_x(pg32, sum), svmul_lane_f32(dw, da, 0)); \
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

const MatmulKernel kMatmulQ4_0{
    .name = "matmul_f32_q8_0_q4_0_4x16_sve",
    .tier = Tier::sve,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q4_0,
    .lhs_type = gguf::GgmlType::Q8_0,
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
