// What a report says about a model file and the kernels chosen for it.
#pragma once

#include <string>

#include "engine/model/model.h"
#include "kernels/registry.h"
#include "tools/bench/report.h"

namespace bench {

KernelChoice kernel_choice(const kernels::MatmulSelection& s);

// Everything but the digest, the load time and the memory figures.
ModelInfo describe_model(const engine::Model& model, const std::string& path);

// The tier and activation format (int8 blocks, bf16 or float) of the kernel
// that streams the most weight bytes: the one prefill time is spent in.
struct DominantKernel {
  std::string tier = "ref";
  gguf::GgmlType lhs_type = gguf::GgmlType::F32;
  std::string weight_type;
  const kernels::MatmulKernel* kernel = nullptr;  // nullptr: no layer matrix has one
  size_t k = 0;  // the row length of its largest matrix (the probe streams that shape)
};
DominantKernel dominant_kernel(const engine::Model& model);

}  // namespace bench
