// The one mechanism that chooses among implementations compiled for several
// instruction sets: the matmul kernels of a weight type (registry.h) and the
// engine's row operations (engine/ops/ops_isa.h) alike. A candidate names itself,
// its tier, its architecture and the CPU features it executes; the first of a
// best-first list that this CPU runs and that ENGINE_MAX_TIER allows is chosen,
// and every better one is kept with the reason it was passed over, for the
// one log line format both use (describe_choice).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/tier.h"

namespace kernels {

template <class V>
concept Candidate = requires(const V& v) {
  { v.name } -> std::convertible_to<const char*>;
  { v.tier } -> std::convertible_to<Tier>;
  { v.arch } -> std::convertible_to<Arch>;
  { v.required_features } -> std::convertible_to<uint64_t>;
};

// Whether a CPU runs code of this architecture that executes these features.
bool can_run(Arch arch, uint64_t required_features, const CpuFeatures& cpu);
// "cpu lacks dotprod+i8mm"; empty when the CPU has them all.
std::string missing_features(uint64_t required_features, const CpuFeatures& cpu);

template <Candidate V>
struct Passed {
  const V* candidate;
  std::string reason;  // "cpu lacks i8mm", "above ENGINE_MAX_TIER=neon"
};

template <Candidate V>
struct Choice {
  const V* chosen = nullptr;        // nullptr: none of the list runs here
  std::vector<Passed<V>> rejected;  // the better candidates, and why
};

template <Candidate V>
Choice<V> choose(std::span<const V* const> best_first, const CpuFeatures& cpu, std::optional<Tier> cap) {
  Choice<V> c;
  for (const V* v : best_first) {
    if (cap && static_cast<uint8_t>(v->tier) > static_cast<uint8_t>(*cap)) {
      c.rejected.push_back({v, "above ENGINE_MAX_TIER=" + std::string(tier_name(*cap))});
    } else if (!can_run(v->arch, v->required_features, cpu)) {
      c.rejected.push_back({v, missing_features(v->required_features, cpu)});
    } else {
      c.chosen = v;
      break;
    }
  }
  return c;
}

// "<name> [<tier>]; rejected: <name> (<reason>) ...", the part after "<what>: "
// of every selection line; `chosen_detail` is added inside the brackets (a
// Highway kernel names its instruction set) and `none` stands for no choice.
template <Candidate V>
std::string describe_choice(const Choice<V>& c, const std::string& none, const std::string& chosen_detail = "") {
  // Built with append(): GCC 12 reports a false -Wrestrict on "literal" + std::string&&.
  std::string line;
  if (c.chosen == nullptr) {
    line.append(none);
  } else {
    line.append(c.chosen->name).append(" [").append(tier_name(c.chosen->tier));
    if (!chosen_detail.empty()) line.append(" ").append(chosen_detail);
    line.append("]");
  }
  if (!c.rejected.empty()) {
    line.append("; rejected:");
    for (const Passed<V>& r : c.rejected) line.append(" ").append(r.candidate->name).append(" (").append(r.reason).append(")");
  }
  return line;
}

}  // namespace kernels
