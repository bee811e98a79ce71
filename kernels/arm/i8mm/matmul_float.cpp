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
#include "kernels/arm/i8mm/isa_check.h"

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/neon/float_tile.h"
#include "kernels/arm/neon/packed.h"
#include "kernels/arm/neon/quantize.h"

namespace kernels::i8mm {

constinit const MatmulKernel kMatmulF16 =
    arm::tile_kernel<arm::F16Tile>("matmul_f32_f32_f16_4x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulBF16 =
    arm::tile_kernel<arm::BF16Tile>("matmul_f32_f32_bf16_4x4_i8mm", Tier::i8mm, kRequiredFeatures);
constinit const MatmulKernel kMatmulF32 =
    arm::tile_kernel<arm::F32Tile>("matmul_f32_f32_f32_4x4_i8mm", Tier::i8mm, kRequiredFeatures);

}  // namespace kernels::i8mm
