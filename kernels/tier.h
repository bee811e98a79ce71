// Kernel tiers: one folder of kernels each, ranked so that ENGINE_MAX_TIER can cap
// the choice ("use nothing above neon"). The rank is a cap order, not a speed
// promise: each family's table says which tier it prefers on a given CPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kernels {

enum class Tier : uint8_t {
  ref = 0,      // scalar C++: the oracle for tests and the last fallback
  hwy = 1,      // Google Highway with dynamic dispatch (x86, other CPUs)
  neon = 2,     // Armv8.0 Advanced SIMD
  dotprod = 3,  // + SDOT/UDOT
  i8mm = 4,     // + SMMLA/USMMLA
  sve = 5,      // vector-length-agnostic SVE (dot / i8mm where present)
  sme = 6,      // SME outer products into ZA, in streaming mode
};

inline constexpr Tier kAllTiers[] = {Tier::ref, Tier::hwy, Tier::neon, Tier::dotprod, Tier::i8mm, Tier::sve, Tier::sme};

std::string_view tier_name(Tier tier);
std::optional<Tier> parse_tier(std::string_view name);

}  // namespace kernels
