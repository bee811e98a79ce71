// The hwy tier's table and its Highway target queries. Compiled with the
// tier's definitions (CMakeLists.txt) so HWY_TARGETS here is the set the
// kernel files were compiled for.
#include "kernels/hwy/kernels.h"

#include <array>

#include "hwy/targets.h"
#include "kernels/hwy/layout.h"

namespace kernels::hwy_tier {

Arch baseline_arch() {
#if defined(__x86_64__) || defined(_M_X64)
  return Arch::x86_64;
#elif defined(__aarch64__)
  return Arch::aarch64;
#else
  return Arch::unknown;
#endif
}

uint64_t baseline_features() {
#if defined(__x86_64__) || defined(_M_X64)
  return features_of(Arch::x86_64, {Feature::sse42}).bits;  // HWY_BASELINE_TARGETS=HWY_SSE4
#elif defined(__aarch64__)
  return features_of(Arch::aarch64, {Feature::asimd}).bits;
#else
  return 0;
#endif
}

}  // namespace kernels::hwy_tier

namespace kernels::hwy {

std::span<const MatmulKernel> matmul_kernels() {
  static const std::array<MatmulKernel, 11> table = {
      hwy_tier::matmul_f32_kernel(),  hwy_tier::matmul_f16_kernel(),  hwy_tier::matmul_bf16_kernel(),
      hwy_tier::matmul_q4_0_kernel(), hwy_tier::matmul_q4_1_kernel(), hwy_tier::matmul_q5_0_kernel(),
      hwy_tier::matmul_q5_1_kernel(), hwy_tier::matmul_q8_0_kernel(), hwy_tier::matmul_q4_k_kernel(),
      hwy_tier::matmul_q5_k_kernel(), hwy_tier::matmul_q6_k_kernel(),
  };
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
