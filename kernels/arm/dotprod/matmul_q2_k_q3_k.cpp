// matmul_f32_q8_k_q2_k_4x4_dotprod, matmul_f32_q8_k_q3_k_4x4_dotprod: Y = X *
// W^T with Q2_K or Q3_K weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: AND / USHR (Q2_K) or LD1R / SHL /
//   CMTST / SRI (Q3_K) to unpack the codes, SDOT by element, MLA by the sub-block
//   scales, SCVTF, FMUL / FADD; for the Q2_K mins SMLAL by lane against the
//   activations' sums.
// - weights: repacked at load (pack_rhs) into groups of 4 rows, Q2KPacked or
//   Q3KPacked (arm/low_bit_k.h): same size as the 4 GGUF rows.
// - activations: Q8_K rows (pack_lhs = neon::pack_lhs_q8_k).
// - m_step = kTileM = 4, n_step = kTileN = 4 (arm/neon/super_block_tile.h);
//   any m and n, k a multiple of 256.
// - result: equal to matmul_f32_q8_k_q2_k_1x1_ref / ..._q3_k_1x1_ref bit for bit.
//
// Layout (the packed types' order): vector j of quarter g holds, at byte 4c +
// u, element 4j + u of row c of each of the quarter's sub-blocks (4-byte
// runs, arm/dotprod/sdot_runs.h).
#include "kernels/arm/dotprod/isa_check.h"

#include <arm_neon.h>

#include <utility>

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/dotprod/sdot_runs.h"
#include "kernels/arm/neon/k_quants.h"
#include "kernels/arm/neon/super_block_tile.h"

namespace kernels::dotprod {
namespace {

struct RunPlace {
  std::pair<size_t, size_t> operator()(size_t c, size_t i) const { return {i / 4, 4 * c + i % 4}; }
};

// The decode struct of a 2- or 3-bit type (Base: arm::Q2KType, arm::Q3KType).
template <template <class, class> class Base>
struct LowBitK : Base<RunPlace, LowBitK<Base>> {
  using Packed = typename Base<RunPlace, LowBitK<Base>>::Packed;

  template <unsigned kT, size_t MR>
  __attribute__((always_inline)) static void sub_block(const Packed& p, size_t g, const arm::Q6KQuarterScales& sc,
                                                       const ref::BlockQ8_K* const* xb, int32x4_t* isum) {
    int8x16_t v[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; ++j) v[j] = LowBitK::template codes<kT>(p, g, j);
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; ++i) {
      const int32x4_t sub = arm::sdot_runs16(vdupq_n_s32(0), v, vld1q_s8(xb[i]->qs + 16 * (4 * g + kT)));
      isum[i] = vmlaq_s32(isum[i], sub, sc.sc[kT]);
    }
  }
};

}  // namespace

constinit const MatmulKernel kMatmulQ2_K = arm::tile_kernel<arm::SuperBlockTile<LowBitK<arm::Q2KType>>>(
    "matmul_f32_q8_k_q2_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulQ3_K = arm::tile_kernel<arm::SuperBlockTile<LowBitK<arm::Q3KType>>>(
    "matmul_f32_q8_k_q3_k_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
