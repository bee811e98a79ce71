// Internal to the dotprod tier: the kernel each file defines, and the features
// every kernel of the tier requires.
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels::dotprod {

inline constexpr uint64_t kRequiredFeatures = feature_bits({Feature::asimd, Feature::dotprod});

// Constant-initialized (no code runs to build them).
extern const MatmulKernel kMatmulF16;
extern const MatmulKernel kMatmulQ4_0;
extern const MatmulKernel kMatmulQ8_0;
extern const MatmulKernel kMatmulQ4_K;
extern const MatmulKernel kMatmulQ6_K;

}  // namespace kernels::dotprod
