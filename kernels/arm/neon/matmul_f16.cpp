// matmul_f32_f32_f16_4x4_neon: Y = X * W^T with F16 weights (kernels/matmul.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so it
//   runs on any 64-bit ARM core (Cortex-A53 and up). Instructions: LD1 of 8
//   halves, FCVTL / FCVTL2 to f32, FMLA in f32 (no FEAT_FP16 arithmetic).
// - weights: the GGUF F16 rows as they are (pack_rhs = nullptr, no copy).
// - activations: F32 rows (pack_lhs = neon::pack_lhs_f32, a copy).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight vector converted once for 4 rows of X), decode and the m % 4
//   rows run 1 x 4 tiles, in one run(); any m, n and k (k % 8 tails inside).
// - result: within float rounding of matmul_f32_f32_f16_1x1_ref (which sums in
//   double); the same bits whatever the split of m and n (f16_tile.h).
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "arm/neon needs AArch64 Advanced SIMD: compile with -march=armv8-a"
#endif
#if defined(__ARM_FEATURE_QRDMX) || defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_SVE)
#error "arm/neon must run on Armv8.0 cores: compile it with exactly -march=armv8-a"
#endif

#include "kernels/arm/neon/f16_tile.h"
#include "kernels/arm/neon/kernels.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/arm/neon/tile.h"

namespace kernels::neon {

MatmulKernel matmul_f16_kernel() {
  return arm::tile_kernel<arm::F16Tile>("matmul_f32_f32_f16_4x4_neon", Tier::neon, arm::feature_bit(Feature::asimd),
                                        gguf::GgmlType::F16, gguf::GgmlType::F32, pack_lhs_f32);
}

}  // namespace kernels::neon
