// The sme tier's table (kernels.h). Unlike the other tiers' tables it is
// built when first read: the kernels' tile geometry depends on the streaming
// vector length of this CPU. No SME instruction runs here.
#include "kernels/arm/sme/kernels.h"

#include "kernels/arm/sme/kernel_defs.h"

namespace kernels::sme {

std::span<const MatmulKernel> matmul_kernels() {
  static const MatmulKernel table[] = {q4_0_kernel(), q8_0_kernel()};
  return table;
}

}  // namespace kernels::sme
