// matmul_f32_q8_k_q2_k_4x4_neon, matmul_f32_q8_k_q3_k_4x4_neon: Y = X * W^T
// with Q2_K or Q3_K weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a (any
//   64-bit ARM core). Instructions: AND / USHR (Q2_K) or LD1R / SHL / CMTST /
//   SRI (Q3_K) to unpack the codes, SMULL / SMLAL2 into int16 lanes, ADDP /
//   SADDLP, MLA by the sub-block scales, SCVTF, FMUL / FADD; for the Q2_K
//   mins SMLAL by lane against the activations' sums.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q2KPacked or
//   Q3KPacked (arm/low_bit_k.h): same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (super_block_tile.h); any m and
//   n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q2_k_1x1_ref / ..._q3_k_1x1_ref bit for bit.
//
// Layout (the packed types' order): vector c of quarter g holds row c, byte
// i element i of each of the quarter's sub-blocks. The codes, Q2_K's 0..3 and
// Q3_K's q - 4 (-4..3), times +-127 stay inside NeonSmallCodes' int16 lanes
// (dot16); per 16-element sub-block one MLA adds scale * sum, and the float
// step is the reference's.
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

// The decode struct of a 2- or 3-bit type (Base: arm::Q2KType, arm::Q3KType).
template <template <class, class> class Base>
struct LowBitK : Base<RowPlace, LowBitK<Base>> {
  using Packed = typename Base<RowPlace, LowBitK<Base>>::Packed;

  template <unsigned kT, size_t MR>
  __attribute__((always_inline)) static void sub_block(const Packed& p, size_t g, const arm::Q6KQuarterScales& sc,
                                                       const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
    int8x16_t w[arm::kTileN];
#pragma GCC unroll 4
    for (size_t c = 0; c < arm::kTileN; ++c) w[c] = LowBitK::template codes<kT>(p, g, c);
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

constinit const MatmulKernel kMatmulQ2_K = arm::tile_kernel<arm::SuperBlockTile<LowBitK<arm::Q2KType>>>(
    "matmul_f32_q8_k_q2_k_4x4_neon", Tier::neon, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ3_K = arm::tile_kernel<arm::SuperBlockTile<LowBitK<arm::Q3KType>>>(
    "matmul_f32_q8_k_q3_k_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
