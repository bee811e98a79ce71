// matmul_f32_q8_0_q8_0_4x16_sve: Q8_0 weights x Q8_0 activations with SVE SDOT.
//
// Features: SVE (SDOT indexed is in the base SVE set). Compiled with
// -march=armv8.2-a+sve. Vector-length agnostic (groups.h).
//
// RHS (pack_rhs, at load): block_groups.h's layout, kPackedBlockBytes = 544 =
// 16 x 34 bytes (no growth), the 8 quads of a row its codes.
//
// LHS (pack_lhs): Q8_0 rows (lhs_rows.h).
//
// run (block_groups.h): per block 8 quad loads shared by the rows, then per
// row 8 SDOT (indexed). m_step 4, n_step 16.
#include "kernels/arm/sve/isa_check.h"

#include <arm_sve.h>

#include "kernels/arm/sve/block_groups.h"
#include "kernels/arm/sve/kernel_defs.h"
#include "kernels/ref/blocks.h"

namespace kernels::sve {
namespace {

struct Q8_0 : arm::WeightType<gguf::GgmlType::Q8_0, ref::BlockQ8_0> {
  static constexpr size_t kQuads = 8;

  static void pack(const GgufBlock& blk, uint8_t* quad0, size_t r) {
    pack_quads(reinterpret_cast<const uint8_t*>(blk.qs), 8, quad0, r);
  }

  __attribute__((always_inline)) static void decode(svbool_t pg8, const uint8_t* qs, svint8_t& w0, svint8_t& w1,
                                                    svint8_t& w2, svint8_t& w3, svint8_t& w4, svint8_t& w5,
                                                    svint8_t& w6, svint8_t& w7) {
    const int8_t* q = reinterpret_cast<const int8_t*>(qs);
    w0 = svld1_s8(pg8, q), w1 = svld1_s8(pg8, q + 4 * kGroupRows);
    w2 = svld1_s8(pg8, q + 8 * kGroupRows), w3 = svld1_s8(pg8, q + 12 * kGroupRows);
    w4 = svld1_s8(pg8, q + 16 * kGroupRows), w5 = svld1_s8(pg8, q + 20 * kGroupRows);
    w6 = svld1_s8(pg8, q + 24 * kGroupRows), w7 = svld1_s8(pg8, q + 28 * kGroupRows);
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ8_0 =
    arm::interleaved_kernel<BlockGroups<Q8_0>>("matmul_f32_q8_0_q8_0_4x16_sve", Tier::sve, kRequiredFeatures);

}  // namespace kernels::sve
