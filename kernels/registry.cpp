#include "kernels/registry.h"

#include <array>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/ref/matmul_ref.h"
#if ENGINE_HAVE_TIER_NEON
#include "kernels/arm/neon/kernels.h"
#endif
#if ENGINE_HAVE_TIER_DOTPROD
#include "kernels/arm/dotprod/kernels.h"
#endif
#if ENGINE_HAVE_TIER_I8MM
#include "kernels/arm/i8mm/kernels.h"
#endif
#if ENGINE_HAVE_TIER_SVE
#include "kernels/arm/sve/kernels.h"
#endif
#if ENGINE_HAVE_TIER_SME
#include "kernels/arm/sme/kernels.h"
#endif
#if ENGINE_HAVE_TIER_HWY
#include "kernels/hwy/kernels.h"
#endif

namespace kernels {
namespace {

constexpr uint8_t rank(Tier t) { return static_cast<uint8_t>(t); }

// Preference when several tiers can run, by instructions per weight under qemu
// (docs/kernels.md): at 128 bits SVE runs more than the i8mm and dotprod
// kernels on NEON registers (Q4_0 decode, 1 x 4096 x 4096: i8mm 0.193, dotprod
// 0.261, sve 0.284; Q4_K: 0.223, 0.249, 0.306), so it comes after both and
// only runs where neither does; with wider vectors SVE runs fewer (0.071 at
// 512 bits) and goes first where that is fewer cycles too (sve_first). SME's
// float outer products need a streaming vector of at least 256 bits to beat
// SMMLA (Q4_0 prefill, 128 x 256 x 4096, per weight for all 128 rows: 6.70 at
// 256 bits, 3.31 at 512, 20.3 at 128, against i8mm's 11.7; a single row runs
// the i8mm code either way), so sme goes first from 256 bits where SVE is 128
// bits (phones); wide SVE runs fewer still (5.89 at 512 bits, and 0.071 per
// weight in decode), so there SVE stays first. Then neon; hwy; ref last.
// expected_tier below names the tier a CPU must at least get; sme ranks above
// all of them.
constexpr Tier kPreference[] = {Tier::i8mm, Tier::dotprod, Tier::sve, Tier::sme, Tier::neon, Tier::hwy, Tier::ref};
constexpr Tier kWideSvePreference[] = {Tier::sve,  Tier::i8mm, Tier::dotprod, Tier::sme,
                                       Tier::neon, Tier::hwy,  Tier::ref};
constexpr Tier kWideSmePreference[] = {Tier::sme,  Tier::i8mm, Tier::dotprod, Tier::sve,
                                       Tier::neon, Tier::hwy,  Tier::ref};

bool wide_sve(const CpuFeatures& cpu) { return cpu.has(Feature::sve) && cpu.sve_vector_bits > 128; }
bool sve_512_or_wider(const CpuFeatures& cpu) { return cpu.has(Feature::sve) && cpu.sve_vector_bits >= 512; }
bool wide_sme(const CpuFeatures& cpu) { return cpu.has(Feature::sme) && cpu.sme_vector_bits >= 256; }

// Whether a type's sve kernel goes before the i8mm and dotprod kernels on this
// CPU. From 512 bits (A64FX) every type's does: a quarter of NEON's
// instructions per weight (Q5_K decode, 1 x 4096 x 4096: 0.134 against the
// i8mm kernel's 0.314), except BF16 where the CPU can run BFMMLA (0.220
// against SVE's widening 0.347). At 256 bits fewer instructions are not fewer
// cycles: Neoverse V1, the core with 256-bit SVE, does as many bits of vector
// work a cycle with 128-bit NEON as with SVE (four 128-bit or two 256-bit
// operations), and on LLVM's model of it (docs/cycles.md) the i8mm
// kernels take fewer cycles in prefill for every quantized type (per weight
// and row, Q4_K 0.019 against 0.038, Q5_K 0.023 against 0.049) and in decode
// are within 15% either way (Q5_K 0.075 against 0.100, IQ4_NL 0.085 against
// 0.072); the dotprod kernels likewise. So at 256 bits only F32 weights (decode
// 0.130 against 0.254, prefill 0.064 both) and BF16 weights on a CPU without
// BFMMLA (widening: 0.131 against 0.255, prefill 0.087 against 0.081) take SVE
// first. A CPU with neither i8mm nor dotprod gets the sve kernels at any
// width, after the tiers it cannot run.
bool sve_first(const CpuFeatures& cpu, gguf::GgmlType weight_type) {
  if (!wide_sve(cpu)) return false;
  if (weight_type == gguf::GgmlType::BF16 && cpu.has(Feature::bf16) && cpu.has(Feature::i8mm)) return false;
  if (sve_512_or_wider(cpu)) return true;
  return weight_type == gguf::GgmlType::F32 || weight_type == gguf::GgmlType::BF16;
}

std::span<const Tier> preference(const CpuFeatures& cpu, gguf::GgmlType weight_type) {
  if (sve_first(cpu, weight_type)) return kWideSvePreference;
  if (wide_sme(cpu)) return kWideSmePreference;
  return kPreference;
}

// Every matmul kernel compiled into this binary, from every tier.
// Each tier exposes `std::span<const MatmulKernel> <tier>::matmul_kernels()`
// from its kernels.h; only the tiers built into this binary are listed.
std::vector<const MatmulKernel*> all_kernels() {
  std::vector<const MatmulKernel*> all;
  auto add = [&](std::span<const MatmulKernel> tier) {
    for (const MatmulKernel& k : tier) all.push_back(&k);
  };
  add(ref::ref_matmul_kernels());
#if ENGINE_HAVE_TIER_NEON
  add(neon::matmul_kernels());
#endif
#if ENGINE_HAVE_TIER_DOTPROD
  add(dotprod::matmul_kernels());
#endif
#if ENGINE_HAVE_TIER_I8MM
  add(i8mm::matmul_kernels());
#endif
#if ENGINE_HAVE_TIER_SVE
  add(sve::matmul_kernels());
#endif
#if ENGINE_HAVE_TIER_SME
  add(sme::matmul_kernels());
#endif
#if ENGINE_HAVE_TIER_HWY
  add(hwy::matmul_kernels());
#endif
  return all;
}

using Table = std::vector<const MatmulKernel*>;

const std::array<Table, gguf::kGgmlTypeIdCount>& tables() {
  static const std::array<Table, gguf::kGgmlTypeIdCount> built = [] {
    std::array<Table, gguf::kGgmlTypeIdCount> t;
    const std::vector<const MatmulKernel*> all = all_kernels();
    for (Tier tier : kPreference) {
      for (const MatmulKernel* k : all) {
        if (k->tier == tier) t[static_cast<uint32_t>(k->rhs_type)].push_back(k);
      }
    }
    return t;
  }();
  return built;
}

}  // namespace

std::span<const MatmulKernel* const> matmul_table(gguf::GgmlType weight_type) {
  return tables()[static_cast<uint32_t>(weight_type)];
}

bool can_run(const MatmulKernel& k, const CpuFeatures& cpu) { return can_run(k.arch, k.required_features, cpu); }

Tier expected_tier(const CpuFeatures& cpu) {
  switch (cpu.arch) {
    case Arch::aarch64:
      if (sve_512_or_wider(cpu)) return Tier::sve;
      if (cpu.has(Feature::i8mm)) return Tier::i8mm;
      if (cpu.has(Feature::dotprod)) return Tier::dotprod;
      if (cpu.has(Feature::sve)) return Tier::sve;
      return Tier::neon;
    case Arch::x86_64:
      return Tier::hwy;
    case Arch::unknown:
      break;
  }
  return Tier::ref;
}

Tier expected_tier(const CpuFeatures& cpu, gguf::GgmlType weight_type) {
  const Tier tier = expected_tier(cpu);
  if (!cpu.has(Feature::sve) || !(cpu.has(Feature::i8mm) || cpu.has(Feature::dotprod))) return tier;
  const Tier narrow = cpu.has(Feature::i8mm) ? Tier::i8mm : Tier::dotprod;
  if (!sve_first(cpu, weight_type)) return narrow;
  bool sve_built = false;  // a build without the sve tier still expects it
  for (const auto& table : tables()) {
    for (const MatmulKernel* k : table) sve_built |= k->tier == Tier::sve;
  }
  bool sve_has_type = false;
  for (const MatmulKernel* k : matmul_table(weight_type)) sve_has_type |= k->tier == Tier::sve;
  return sve_has_type || !sve_built ? Tier::sve : narrow;
}

bool MatmulSelection::is_fallback() const {
  if (kernel == nullptr) return true;
  if (rank(kernel->tier) >= rank(expected)) return false;
  return !(cap && rank(*cap) < rank(expected));  // below expectation because the user asked
}

const MatmulKernel* in_order_variant(const MatmulKernel& kernel) {
  if (kernel.run_in_order == nullptr) return nullptr;
  static std::mutex mutex;
  static std::deque<std::pair<std::string, MatmulKernel>> variants;
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string name = std::string(kernel.name) + "_in_order";
  for (const auto& [n, k] : variants) {
    if (n == name) return &k;
  }
  auto& [stored_name, variant] = variants.emplace_back(name, kernel);
  variant.name = stored_name.c_str();
  variant.run = kernel.run_in_order;
  variant.run_in_order = nullptr;
  return &variant;
}

MatmulSelection select_matmul(gguf::GgmlType weight_type, const CpuFeatures& cpu, std::optional<Tier> max_tier) {
  MatmulSelection s;
  s.weight_type = weight_type;
  s.expected = expected_tier(cpu, weight_type);
  s.cap = max_tier;
  std::vector<const MatmulKernel*> best_first;  // the table in this CPU's order of tiers
  for (Tier tier : preference(cpu, weight_type)) {
    for (const MatmulKernel* k : matmul_table(weight_type)) {
      if (k->tier == tier) best_first.push_back(k);
    }
  }
  Choice<MatmulKernel> c = choose<MatmulKernel>(best_first, cpu, max_tier);
  s.kernel = c.chosen;
  s.rejected = std::move(c.rejected);
  return s;
}

std::string MatmulSelection::describe() const {
  std::string hwy_target;
#if ENGINE_HAVE_TIER_HWY
  // A Highway kernel (name ending _hwy) picks its instruction set at run time:
  // name it. The tier's intrinsics kernels name theirs in the kernel's name.
  if (kernel != nullptr && kernel->tier == Tier::hwy && std::string_view(kernel->name).ends_with("_hwy")) {
    hwy_target = hwy::target_name();
  }
#endif
  // Built with append(): GCC 12 reports a false -Wrestrict on "literal" + std::string&&.
  std::string line(gguf::type_name(weight_type));
  line.append(": ").append(describe_choice(Choice<MatmulKernel>{kernel, rejected},
                                           "no kernel: this build cannot compute " + std::string(gguf::type_name(weight_type)),
                                           hwy_target));
  if (kernel != nullptr && rank(kernel->tier) < rank(expected)) {
    if (cap && rank(*cap) < rank(expected)) {
      line.append("; below this CPU's ").append(tier_name(expected)).append(" tier because ENGINE_MAX_TIER=");
      line.append(tier_name(*cap));
    } else {
      line.append("; FALLBACK: this CPU should get the ").append(tier_name(expected));
      line.append(" tier, and this build has no such kernel for ").append(gguf::type_name(weight_type));
    }
  }
  return line;
}

std::optional<Tier> max_tier_from_env() {
  const char* env = std::getenv("ENGINE_MAX_TIER");
  if (env == nullptr || *env == '\0') return std::nullopt;
  if (auto t = parse_tier(env)) return t;
  std::string valid;
  for (Tier t : kAllTiers) {
    if (!valid.empty()) valid += ", ";
    valid += tier_name(t);
  }
  throw std::invalid_argument("ENGINE_MAX_TIER='" + std::string(env) + "' is not a tier (valid: " + valid + ")");
}

}  // namespace kernels
