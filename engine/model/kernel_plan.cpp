#include "engine/model/kernel_plan.h"

#include <algorithm>

#include "engine/support/log.h"
#include "engine/ops/ops_isa.h"
#include "engine/support/version.h"
#include "engine/threads/thread_pool.h"

namespace engine {

const kernels::MatmulKernel* KernelPlan::kernel_for(gguf::GgmlType type) const {
  for (const auto& s : selections) {
    if (s.weight_type == type) return s.kernel;
  }
  return nullptr;
}

bool KernelPlan::has_fallback() const {
  return std::any_of(selections.begin(), selections.end(), [](const auto& s) { return s.is_fallback(); });
}

std::string KernelPlan::describe_in_order(const ThreadPool& pool) const {
  std::string threads;
  for (size_t t = 0; t < pool.size(); ++t) {
    if (pool.in_order(t)) threads += (threads.empty() ? "t" : ", t") + std::to_string(t);
  }
  if (threads.empty()) return "";
  std::string kernels;
  for (const auto& s : selections) {
    if (s.kernel == nullptr || s.kernel->run_in_order == nullptr) continue;
    kernels += (kernels.empty() ? "" : ", ") + std::string(gguf::type_name(s.weight_type)) + " " + s.kernel->name;
  }
  const std::string head = "threads " + threads + " run on in-order cores: ";
  if (kernels.empty()) return head + "no kernel of this model has an in-order schedule; they run the loops of all cores";
  return head + kernels +
         " run their in-order schedule there (instructions in the order such a core issues them best, docs/cycles.md); "
         "the other types the same loops as everywhere";
}

std::string describe_cpu_line(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap) {
  std::string line = "cpu " + cpu.describe() + "; compiled tiers: " + compiled_tiers();
  if (cap) line += "; ENGINE_MAX_TIER=" + std::string(kernels::tier_name(*cap)) + " caps the choice";
  return line;
}

KernelPlan plan_kernels(std::span<const gguf::GgmlType> weight_types, const kernels::CpuFeatures& cpu) {
  KernelPlan plan;
  plan.cpu = cpu;
  plan.cap = kernels::max_tier_from_env();
  log_info(describe_cpu_line(cpu, plan.cap));
  log_info("row operations (attention, activations, convolutions, delta rule): " + ops::describe_isa_ops_choice(cpu, plan.cap));
  std::vector<gguf::GgmlType> types(weight_types.begin(), weight_types.end());
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  for (gguf::GgmlType type : types) {
    kernels::MatmulSelection s = kernels::select_matmul(type, cpu, plan.cap);
    const std::string line = "kernel " + s.describe();
    if (s.is_fallback()) {
      log_warning(line);
    } else {
      log_info(line);
    }
    plan.selections.push_back(std::move(s));
  }
  return plan;
}

}  // namespace engine
