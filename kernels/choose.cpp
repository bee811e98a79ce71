#include "kernels/choose.h"

namespace kernels {

bool can_run(Arch arch, uint64_t required_features, const CpuFeatures& cpu) {
  if (arch != Arch::unknown && arch != cpu.arch) return false;
  return (cpu.bits & required_features) == required_features;
}

std::string missing_features(uint64_t required_features, const CpuFeatures& cpu) {
  std::string s;
  for (uint32_t i = 0; i < static_cast<uint32_t>(Feature::kCount); ++i) {
    if (((required_features >> i) & 1) && !cpu.has(static_cast<Feature>(i))) {
      s += s.empty() ? "cpu lacks " : "+";
      s += feature_name(static_cast<Feature>(i));
    }
  }
  return s;
}

}  // namespace kernels
