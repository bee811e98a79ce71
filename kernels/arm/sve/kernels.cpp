// The sve tier's table (kernels.h), best first within the tier; the registry
// orders the tiers. The svmmla kernels come first for their types: on a CPU
// with SVE I8MM they do half the multiply instructions of SDOT in prefill; a
// CPU without it (A64FX) gets the SDOT kernel.
//
// This one file is compiled WITHOUT the tier's flags: the registry builds its
// tables from it on every CPU, including those without SVE, so no code
// compiled for SVE may run here. The kernels themselves are constant data.
#include "kernels/arm/sve/kernels.h"

#include "kernels/arm/sve/kernel_defs.h"

namespace kernels::sve {

std::span<const MatmulKernel> matmul_kernels() {
  static const MatmulKernel table[] = {kMatmulF32,      kMatmulF16,  kMatmulBF16, kMatmulQ8_0Mmla, kMatmulQ8_0,
                                       kMatmulQ4_0Mmla, kMatmulQ4_0, kMatmulQ4_1, kMatmulQ5_0,     kMatmulQ5_1,
                                       kMatmulIQ4_NL,   kMatmulQ4_K, kMatmulQ5_K, kMatmulQ6_K,     kMatmulIQ4_XS,
                                       kMatmulQ3_K,     kMatmulQ2_K};
  return table;
}

}  // namespace kernels::sve
