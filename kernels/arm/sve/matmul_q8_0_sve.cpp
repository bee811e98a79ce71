// matmul_f32_q8_0_q8_0_4x16_sve: Q8_0 weights x Q8_0 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): groups of kGroupRows = 16 weight rows, per block of
// 32, kPackedBlockBytes = 544 = 16 x 34 bytes (no growth):
//   uint16 d[16]         fp16 scales of rows 0..15
//   int8   qs[8][16][4]  quad i, row r: the row's codes 4i..4i+3
// Missing rows of the last group are zero.
//
// LHS (pack_lhs): Q8_0 rows (lhs_rows.h).
//
// run (groups.h): per pass of a group (VL/32 rows), kMr = 4 activation rows at
// a time: per block 8 quad loads shared by the rows, then per row 8 SDOT
// (indexed) into one int32 lane per weight row, one convert and one FMA with
// d_w * d_a. Leftover rows run the same code one at a time. m_step 4, n_step 16.
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
constexpr size_t kPackedBlockBytes = kQsOffset + 8 * 4 * kNr;

size_t rhs_packed_size(size_t n, size_t k) { return groups_of(n) * (k / kBlock) * kPackedBlockBytes; }
size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx / kNr * (k / kBlock) * kPackedBlockBytes; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const size_t nb = k / kBlock;
  const auto* rows = static_cast<const ref::BlockQ8_0*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups_of(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kPackedBlockBytes) {
      std::memset(out, 0, kPackedBlockBytes);
      for (size_t r = 0; r < kNr && g * kNr + r < n; ++r) {
        const ref::BlockQ8_0& blk = rows[(g * kNr + r) * nb + b];
        std::memcpy(out + 2 * r, &blk.d, 2);
        for (size_t i = 0; i < 8; ++i) std::memcpy(out + kQsOffset + 4 * kNr * i + 4 * r, blk.qs + 4 * i, 4);
      }
    }
  }
}

size_t lhs_packed_size(size_t m, size_t k) { return m * (k / kBlock) * kQ8_0RowBlockBytes; }
size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx * (k / kBlock) * kQ8_0RowBlockBytes; }

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  pack_lhs_q8_0_rows(m, k, lhs, lhs_stride, lhs_packed, 1.0f);
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
      const int8_t* qs = reinterpret_cast<const int8_t*>(blk + kQsOffset + 4 * r0);
      const svint8_t w0 = svld1_s8(pg8, qs), w1 = svld1_s8(pg8, qs + 4 * kNr);
      const svint8_t w2 = svld1_s8(pg8, qs + 8 * kNr), w3 = svld1_s8(pg8, qs + 12 * kNr);
      const svint8_t w4 = svld1_s8(pg8, qs + 16 * kNr), w5 = svld1_s8(pg8, qs + 20 * kNr);
      const svint8_t w6 = svld1_s8(pg8, qs + 24 * kNr), w7 = svld1_s8(pg8, qs + 28 * kNr);
#define ROW(i)                                                                                             \
  {                                                                                                        \
    const uint8_t* xi = xb + x_row_bytes * (i);                                                            \
    const svfloat32_t da = ld1rqw_lo8<32>(xi);                                                             \
    const svint8_t xlo = ld1rq_lo8<0>(xi);                                                                 \
    const svint8_t xhi = ld1rq_lo8<16>(xi);                                                                \
    svint32_t sum = sdot_lane<0>(svdup_s32(0), w0, xlo);                                                   \
    sum = sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sum, w1, xlo), w2, xlo), w3, xlo);                        \
    sum = sdot_lane<3>(sdot_lane<2>(sdot_lane<1>(sdot_lane<0>(sum, w4, xhi), w5, xhi), w6, xhi), w7, xhi); \
    acc##i = svmla_f32_x(pg32, acc##i, svcvt_f32_s32_x(pg32, sum), svmul_lane_f32(dw, da, 0));             \
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

const MatmulKernel kMatmulQ8_0{
    .name = "matmul_f32_q8_0_q8_0_4x16_sve",
    .tier = Tier::sve,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeatures,
    .rhs_type = gguf::GgmlType::Q8_0,
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
