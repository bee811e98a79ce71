#include "engine/support/version.h"

#include "kernels/registry.h"

namespace engine {

const char* version() { return ENGINE_VERSION; }
const char* compiler() { return ENGINE_COMPILER; }

std::string compiled_tiers() {
  bool present[std::size(kernels::kAllTiers)] = {};
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const kernels::MatmulKernel* k : kernels::matmul_table(static_cast<gguf::GgmlType>(id))) {
      present[static_cast<size_t>(k->tier)] = true;
    }
  }
  std::string s;
  for (kernels::Tier t : kernels::kAllTiers) {
    if (!present[static_cast<size_t>(t)]) continue;
    if (!s.empty()) s += ' ';
    s += kernels::tier_name(t);
  }
  return s;
}

}  // namespace engine
