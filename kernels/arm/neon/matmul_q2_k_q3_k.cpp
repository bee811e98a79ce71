// matmul_f32_q8_k_q3_k_4x4_neon: Y = X * W^T with Q3_K weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a (any
//   64-bit ARM core). Instructions: SHL / SRI / SSHR to unpack the 3-bit
//   codes, SMULL / SMLAL2 into int16 lanes, ADDP / SADDLP, MLA by the
//   sub-block scales, SCVTF, FMUL / FADD.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q3KPacked
//   (k_quants.h): same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (super_block_tile.h); any m and
//   n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q3_k_1x1_ref bit for bit.
//
// Layout (Q3KPacked's order): vector c of quarter g holds row c, byte i
// element i of each of the quarter's sub-blocks. The codes q - 4 (-4..3) times
// +-127 stay inside NeonSmallCodes' int16 lanes (dot16); per 16-element
// sub-block one MLA adds scale * sum, and the float step is the reference's.
#include "kernels/arm/neon/isa_check.h"

#include <arm_neon.h>

#include <utility>

#include "kernels/arm/neon/int8_dot.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/kernel_defs.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::neon {
namespace {

struct RowPlace {
  std::pair<size_t, size_t> operator()(size_t c, size_t i) const { return {c, i}; }
};

struct Q3_K : arm::Q3KType<RowPlace, Q3_K> {
  template <unsigned kT, size_t MR>
  __attribute__((always_inline)) static void sub_block(const Packed& p, size_t g, const arm::Q6KQuarterScales& sc,
                                                       const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
    int8x16_t w[arm::kTileN];
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) {
      w[c] = arm::q3_k_codes<kT>(vld1q_u8(p.low[g][c]), arm::q3_k_high(p.high[g][c]));
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) {
      const int8x16_t a = vld1q_s8(xb[i]->qs + 16 * (4 * g + kT));
      const int32x4_t sub =
          arm::NeonSmallCodes::sum4(arm::NeonSmallCodes::dot16(w[0], a), arm::NeonSmallCodes::dot16(w[1], a),
                                    arm::NeonSmallCodes::dot16(w[2], a), arm::NeonSmallCodes::dot16(w[3], a));
      isum[i] = vmlaq_s32(isum[i], sub, sc.sc[kT]);
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ3_K =
    arm::tile_kernel<arm::SuperBlockTile<Q3_K>>("matmul_f32_q8_k_q3_k_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
