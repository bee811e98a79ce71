#include "kernels/tier.h"

namespace kernels {

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::ref:
      return "ref";
    case Tier::hwy:
      return "hwy";
    case Tier::neon:
      return "neon";
    case Tier::dotprod:
      return "dotprod";
    case Tier::i8mm:
      return "i8mm";
    case Tier::sve:
      return "sve";
    case Tier::sme:
      return "sme";
  }
  return "?";
}

std::optional<Tier> parse_tier(std::string_view name) {
  for (Tier t : kAllTiers) {
    if (tier_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace kernels
