// The hwy tier's table and its Highway target queries. Compiled with the
// tier's definitions (CMakeLists.txt) so HWY_TARGETS here is the set the
// kernel files were compiled for.
#include "kernels/hwy/kernels.h"

#include "hwy/targets.h"
#include "kernels/hwy/kernel_defs.h"
#include "kernels/hwy/layout.h"

namespace kernels::hwy {

std::span<const MatmulKernel> matmul_kernels() {
  using namespace hwy_tier;
  // The AVX512-BF16 kernel before the widening one: a CPU without it gets the
  // widening kernel, the rejection logged.
  static const MatmulKernel table[] = {kMatmulF32,
                                       kMatmulF16,
#if defined(__x86_64__)
                                       kMatmulBF16Dpbf16,
#endif
                                       kMatmulBF16, kMatmulQ4_0, kMatmulQ4_1,
                                       kMatmulQ5_0, kMatmulQ5_1, kMatmulQ8_0, kMatmulQ4_K, kMatmulQ5_K,
                                       kMatmulQ6_K, kMatmulQ3_K, kMatmulQ2_K, kMatmulIQ4_NL, kMatmulIQ4_XS};
  return table;
}

const char* target_name() { return ::hwy::TargetName(hwy_tier::dispatched_target()); }

std::vector<Target> compiled_targets() {
  std::vector<Target> out;
  const int64_t supported = ::hwy::SupportedTargets();
  // HWY_TARGETS: what this folder's files were compiled for; better targets
  // have lower bits.
  for (int64_t left = HWY_TARGETS; left != 0; left &= left - 1) {
    const int64_t bit = left & -left;
    out.push_back({bit, ::hwy::TargetName(bit), (supported & bit) != 0});
  }
  return out;
}

void force_target(int64_t bits) {
  ::hwy::SetSupportedTargetsForTest(bits);
  ::hwy::GetChosenTarget().Update(::hwy::SupportedTargets());
}

}  // namespace kernels::hwy
