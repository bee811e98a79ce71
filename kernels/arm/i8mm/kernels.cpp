// The i8mm tier's table (kernels.h), best first within the tier; the registry
// orders the tiers.
//
// This one file is compiled WITHOUT the tier's flags: the registry builds its
// tables from it on every CPU, including those without i8mm, so no code
// compiled for i8mm may run here. The kernels themselves are constant data.
#include "kernels/arm/i8mm/kernels.h"

#include "kernels/arm/i8mm/kernel_defs.h"

namespace kernels::i8mm {

std::span<const MatmulKernel> matmul_kernels() {
  // BFMMLA first: it needs bf16 as well, and a CPU without it gets the
  // widening BF16 kernel of the tier.
  static const MatmulKernel table[] = {kMatmulF32,  kMatmulF16,  kMatmulBF16Mmla, kMatmulBF16, kMatmulQ8_0, kMatmulQ4_0,
                                       kMatmulQ5_0, kMatmulQ4_K, kMatmulQ5_K, kMatmulQ6_K, kMatmulIQ4_NL, kMatmulIQ4_XS,
                                       kMatmulQ4_1, kMatmulQ5_1, kMatmulQ3_K, kMatmulQ2_K};
  return table;
}

}  // namespace kernels::i8mm
