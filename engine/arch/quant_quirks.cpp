#include "engine/arch/quant_quirks.h"

namespace engine::arch {

QuantQuirks quant_quirks(std::string_view arch) {
  QuantQuirks q;
  q.falcon_rules = arch == "falcon";
  q.llama_70b_attn_v = arch == "llama";
  return q;
}

}  // namespace engine::arch
