// The neon tier's table (kernels.h), one kernel per weight type; the registry
// orders the tiers.
#include "kernels/arm/neon/kernels.h"

#include "kernels/arm/neon/kernel_defs.h"

namespace kernels::neon {

std::span<const MatmulKernel> matmul_kernels() {
  static const MatmulKernel table[] = {kMatmulF32, kMatmulF16, kMatmulBF16, kMatmulQ4_0, kMatmulQ5_0, kMatmulQ8_0,
                                       kMatmulQ4_K, kMatmulQ5_K, kMatmulQ6_K, kMatmulIQ4_NL, kMatmulIQ4_XS,
                                       kMatmulQ4_1, kMatmulQ5_1, kMatmulQ3_K, kMatmulQ2_K};
  return table;
}

}  // namespace kernels::neon
