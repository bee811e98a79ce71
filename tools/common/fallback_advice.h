// What to do when a model's weight type has no kernel at this CPU's tier: the
// `quantize` command to a type that has one here, with the speed-up measured
// on this CPU. run, bench and doctor print the same advice.
//
// The speed-up is of the matrix products of one decoded token: for every
// kernel the model would use, the time per weight of an M = 1 product on one
// thread, measured here on a small matrix (in cache), weighted by the model's
// weights of each type. Decode gains up to that factor; where memory
// bandwidth limits the faster kernel, less.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/model/kernel_plan.h"
#include "gguf/file.h"
#include "kernels/matmul.h"

namespace tools {

struct QuantizeAdvice {
  std::string target;      // quantize's type name: "Q4_K_M"
  std::string command;     // "quantize --allow-requantize in.gguf in-Q4_K_M.gguf Q4_K_M"
  double matmul_ms_now = 0;    // matrix products of one token on one thread, as the file is
  double matmul_ms_after = 0;  // ... after quantizing to `target`
  double speedup() const { return matmul_ms_after > 0 ? matmul_ms_now / matmul_ms_after : 0; }
};

struct FallbackAdvice {
  std::vector<std::string> slow_types;  // the model's types on a fallback or with no kernel: "Q5_0"
  std::string slow_kernels;             // "Q5_0 on matmul_f32_q8_0_q5_0_1x1_ref [ref]"
  std::vector<QuantizeAdvice> options;  // best first; empty when no candidate type runs well here
  bool empty() const { return slow_types.empty(); }
  // Lines for a terminal: what is slow, then one line per option.
  std::vector<std::string> lines() const;
};

// Seconds per weight of an M = 1 product with `kernel` (the measurement above);
// replaceable in tests, where the CPU in the plan is not the one running.
using KernelTimer = std::function<double(const kernels::MatmulKernel&)>;
double time_per_weight(const kernels::MatmulKernel& kernel);

// Empty when every weight type of the model runs at this CPU's expected tier
// (or below it only because ENGINE_MAX_TIER asked).
// `file` is the model's (for its weights per type), `plan` the kernels chosen
// for it, `path` the file's path as the user gave it (for the command).
FallbackAdvice advise_on_fallbacks(const gguf::File& file, const engine::KernelPlan& plan, const std::string& path,
                                   const KernelTimer& timer = time_per_weight);

}  // namespace tools
