// Kernel selection: one table per weight type, best tier first, ending in ref.
// Detection (cpu_features.h) and selection (here, through choose.h, which the
// row operations use too) are separate functions; the engine selects once per
// weight type when it loads a model and logs the line.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/choose.h"
#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels {

// The matmul kernels compiled into this binary for a weight type, best first.
// Empty when the engine cannot compute the type.
std::span<const MatmulKernel* const> matmul_table(gguf::GgmlType weight_type);
bool can_run(const MatmulKernel& kernel, const CpuFeatures& cpu);

// A kernel's in-order schedule (MatmulKernel::run_in_order) as a kernel of its
// own, named "<name>_in_order", that tests and the bench tools run like any
// other; nullptr when the kernel has none. The object lives as long as the
// process.
const MatmulKernel* in_order_variant(const MatmulKernel& kernel);

// A better kernel of the table, and why it was passed over.
using Rejection = Passed<MatmulKernel>;

struct MatmulSelection {
  gguf::GgmlType weight_type;
  const MatmulKernel* kernel = nullptr;  // nullptr: the type cannot be computed
  std::vector<Rejection> rejected;       // better entries of the table, and why
  Tier expected = Tier::ref;             // expected_tier(cpu, weight_type)
  std::optional<Tier> cap;               // ENGINE_MAX_TIER, when set

  // Chosen below what this CPU should get, and not because of the cap: the
  // engine logs this as a WARNING.
  bool is_fallback() const;
  // One log line: "Q4_0: matmul_f32_q8_0_q4_0_1x1_ref (ref); rejected: ..."
  std::string describe() const;
};

MatmulSelection select_matmul(gguf::GgmlType weight_type, const CpuFeatures& cpu,
                              std::optional<Tier> max_tier);

// The tier a CPU with these features should get from a complete build: on
// aarch64 sve from 512-bit SVE, else i8mm if present, else dotprod, else sve
// (SVE without dotprod), else neon; hwy elsewhere. A kernel of this tier or a higher rank
// meets the expectation.
Tier expected_tier(const CpuFeatures& cpu);

// The tier a CPU should get for one weight type: on a CPU with SVE and i8mm
// (or dotprod), the sve tier for the types whose sve kernel goes first there
// (every type the sve tier has from 512 bits, but BF16 where the CPU runs
// BFMMLA; F32 and widened BF16 at 256 bits: registry.cpp, sve_first), else
// the i8mm (dotprod) tier. Otherwise expected_tier(cpu): A64FX, with neither,
// expects sve for every type.
Tier expected_tier(const CpuFeatures& cpu, gguf::GgmlType weight_type);

// ENGINE_MAX_TIER from the environment: nullopt when unset or empty; throws
// std::invalid_argument naming the valid tiers for an unknown value.
std::optional<Tier> max_tier_from_env();

}  // namespace kernels
