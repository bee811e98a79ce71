// matmul_f32_f32_{f16,bf16,f32}_4x4_dotprod: Y = X * W^T with F16, BF16 or
// F32 weights (kernels/matmul.h).
//
// Contract:
// - tier dotprod, aarch64, requires asimd + dotprod; compiled with
//   -march=armv8.2-a+dotprod. Instructions: the neon tier's f32 code (LD1,
//   FCVTL / FCVTL2 for F16, SHLL / SHLL2 for BF16, FMLA;
//   arm/neon/float_tile.h): Armv8.2-A without
//   FEAT_FP16 adds nothing for float weights. They are here so that a dotprod
//   CPU gets every type from its own tier, with no fallback warning.
// - weights: the GGUF rows as they are (pack_rhs = nullptr, no copy).
// - activations: F32 rows (pack_lhs = neon::pack_lhs_f32, a copy).
// - m_step = kTileM = 4, n_step = kTileN = 4 (arm/neon/tile.h): 4 x 4 tiles for
//   prefill, 1 x 4 for decode and the m % 4 rows; any m, n and k.
// - result: within float rounding of the ref kernels (which sum in double);
//   the same bits as the neon tier's kernels.
#include "kernels/arm/dotprod/isa_check.h"

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/neon/float_tile.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"

namespace kernels::dotprod {

constinit const MatmulKernel kMatmulF16 =
    arm::tile_kernel<arm::F16Tile>("matmul_f32_f32_f16_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulBF16 =
    arm::tile_kernel<arm::BF16Tile>("matmul_f32_f32_bf16_4x4_dotprod", Tier::dotprod, kRequiredFeatures);
constinit const MatmulKernel kMatmulF32 =
    arm::tile_kernel<arm::F32Tile>("matmul_f32_f32_f32_4x4_dotprod", Tier::dotprod, kRequiredFeatures);

}  // namespace kernels::dotprod
