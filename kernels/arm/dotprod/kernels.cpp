#include "kernels/arm/dotprod/kernels.h"

#include <array>

namespace kernels::dotprod {

std::span<const MatmulKernel> matmul_kernels() {
  static const std::array<MatmulKernel, 5> table = {matmul_f16_kernel(), matmul_q4_0_kernel(), matmul_q8_0_kernel(),
                                                    matmul_q4_k_kernel(), matmul_q6_k_kernel()};
  return table;
}

}  // namespace kernels::dotprod
