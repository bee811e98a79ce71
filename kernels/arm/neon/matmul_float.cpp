// matmul_f32_f32_{f16,bf16,f32}_4x4_neon: Y = X * W^T with F16, BF16 or F32
// weights (kernels/matmul.h), one tile (float_tile.h).
//
// Contract:
// - tier neon, aarch64, requires asimd; compiled with -march=armv8-a, so they
//   run on any 64-bit ARM core (Cortex-A53 and up). Instructions: LD1 of 8
//   halves, FCVTL / FCVTL2 to f32 (F16) or SHLL / SHLL2 by 16 (BF16), or LD1
//   of 4 floats (F32), FMLA in f32 (no FEAT_FP16 or FEAT_BF16 arithmetic).
// - weights: the GGUF rows as they are (pack_rhs = nullptr, no copy).
// - activations: F32 rows (pack_lhs = neon::pack_lhs_f32, a copy).
// - m_step = kTileM = 4, n_step = kTileN = 4 (tile.h): prefill runs 4 x 4 tiles
//   (each weight vector loaded once for 4 rows of X), decode and the m % 4
//   rows run 1 x 4 tiles, in one run(); any m, n and k (k % 8 tails inside).
// - result: within float rounding of the ref kernels of the same weight type
//   (which sum in double); the same bits whatever
//   the split of m and n (float_tile.h).
#include "kernels/arm/neon/isa_check.h"

#include "kernels/arm/neon/float_tile.h"
#include "kernels/arm/neon/kernel_defs.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"

namespace kernels::neon {

constinit const MatmulKernel kMatmulF16 =
    arm::tile_kernel<arm::F16Tile>("matmul_f32_f32_f16_4x4_neon", Tier::neon, kRequiredFeatures);
constinit const MatmulKernel kMatmulBF16 =
    arm::tile_kernel<arm::BF16Tile>("matmul_f32_f32_bf16_4x4_neon", Tier::neon, kRequiredFeatures);
constinit const MatmulKernel kMatmulF32 =
    arm::tile_kernel<arm::F32Tile>("matmul_f32_f32_f32_4x4_neon", Tier::neon, kRequiredFeatures);

}  // namespace kernels::neon
