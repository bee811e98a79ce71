// matmul_f32_f32_{f16,bf16,f32}_4x4_i8mm: F16, BF16 or F32 weights x F32
// activations, FP32 FMA (kernels/matmul.h).
//
// Features: Advanced SIMD only (FCVTL widens fp16 to fp32 in base Armv8). They
// sit in the i8mm tier so that the tier covers the float types with its own
// flags: i8mm has no fp16 arithmetic (BFMMLA is bf16, a different format, and
// FP16 FMLA would round the products and sums to 11 bits). Converting each
// weight to fp32 and accumulating in fp32 keeps the error to float
// accumulation. BF16 widens with a shift (SHLL); a CPU with FEAT_BF16 runs
// BFMMLA instead (matmul_bf16_bfmmla.cpp), this kernel is for the i8mm CPUs
// without it.
//
// The tile is the neon tier's (arm/neon/float_tile.h: 4 x 4 tiles, 1 x 4 for
// decode and the m % 4 rows, the k % 4 tail in order), compiled with this
// tier's flags. It replaced the tier's own F16 tile (one accumulator reduced
// with FADDP across lanes, the k % 8 tail in scalar), which ran more
// instructions (kernel_insn under qemu -cpu max: decode 1 x 256 x 1024
// 227838 -> 209920, prefill 16 x 64 x 1024 557246 -> 475680).
//
// RHS: the GGUF rows as they are (pack_rhs = nullptr). LHS: F32 rows, copied.
// m_step 4, n_step 4.
//
// On an in-order core (run_in_order) the F16 and BF16 decode rows (m < 4) are
// the dotprod tier's compile of the same tile: the same formats and
// operations, without this tier's -fno-schedule-insns (i8mm/CMakeLists.txt),
// whose order leaves the in-order Cortex-A510 waiting on each load's
// conversion: decode 1 x 1024 x 4096 on LLVM's A510 model, F16 0.753 -> 0.440
// cycles a weight, BF16 0.690 -> 0.441 (docs/cycles.md). Prefill keeps this
// tier's tiles there (F16 0.219 against the dotprod compile's 0.243), and the
// out-of-order cores keep run() (BF16 decode on the X2's model 0.130 against
// 0.145). F32 is the same either way (0.378).
#include "kernels/arm/i8mm/isa_check.h"

#include "kernels/arm/dotprod/kernel_defs.h"
#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/neon/float_tile.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"

namespace kernels::i8mm {
namespace {

constexpr MatmulKernel kF16Tiles =
    arm::tile_kernel<arm::F16Tile>("matmul_f32_f32_f16_4x4_i8mm", Tier::i8mm, kRequiredFeatures);
constexpr MatmulKernel kBF16Tiles =
    arm::tile_kernel<arm::BF16Tile>("matmul_f32_f32_bf16_4x4_i8mm", Tier::i8mm, kRequiredFeatures);

// run_in_order: decode rows by the dotprod tier's kernel of the same tile (an
// i8mm CPU has dotprod: kRequiredFeatures), the rest by this tier's.
template <const MatmulKernel& kTiles, const MatmulKernel& kDotprod>
void rows_by_dotprod(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                     size_t dst_stride) {
  (m < arm::kTileM ? kDotprod.run : kTiles.run)(m, n, k, lhs_packed, rhs_packed, dst, dst_stride);
}

constexpr MatmulKernel with_run_in_order(MatmulKernel kernel, decltype(MatmulKernel::run) run_in_order) {
  kernel.run_in_order = run_in_order;
  return kernel;
}

}  // namespace

constinit const MatmulKernel kMatmulF16 =
    with_run_in_order(kF16Tiles, rows_by_dotprod<kF16Tiles, dotprod::kMatmulF16>);
constinit const MatmulKernel kMatmulBF16 =
    with_run_in_order(kBF16Tiles, rows_by_dotprod<kBF16Tiles, dotprod::kMatmulBF16>);
constinit const MatmulKernel kMatmulF32 =
    arm::tile_kernel<arm::F32Tile>("matmul_f32_f32_f32_4x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
