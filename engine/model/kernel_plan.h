// Chooses one matmul kernel per weight type of a model, once, and logs the
// choice: the CPU features detected, the kernel and tier per type, every better
// kernel rejected and why, and a WARNING for each fallback.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/cpu_features.h"
#include "kernels/registry.h"

namespace engine {

class ThreadPool;

struct KernelPlan {
  kernels::CpuFeatures cpu;
  std::optional<kernels::Tier> cap;  // ENGINE_MAX_TIER
  std::vector<kernels::MatmulSelection> selections;

  // nullptr when the type is not in the plan or cannot be computed.
  const kernels::MatmulKernel* kernel_for(gguf::GgmlType type) const;
  bool has_fallback() const;
  // Which threads of the pool are on in-order cores and which kernels run
  // their in-order schedule there (MatmulKernel::run_in_order), in words; ""
  // when no thread is on such a core.
  std::string describe_in_order(const ThreadPool& pool) const;
};

// Throws std::invalid_argument for an unknown ENGINE_MAX_TIER.
KernelPlan plan_kernels(std::span<const gguf::GgmlType> weight_types,
                        const kernels::CpuFeatures& cpu = kernels::host_cpu_features());

// "aarch64: asimd dotprod; compiled tiers: ref neon dotprod; ENGINE_MAX_TIER=neon"
std::string describe_cpu_line(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap);

}  // namespace engine
