// Internal to the dotprod tier: the kernel each file defines, and the features
// every kernel of the tier requires.
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels::dotprod {

inline constexpr uint64_t kRequiredFeatures = feature_bits({Feature::asimd, Feature::dotprod});

// Constant-initialized (no code runs to build them), one per weight type.
extern const MatmulKernel kMatmulF16, kMatmulF32, kMatmulQ4_0, kMatmulQ5_0, kMatmulQ8_0, kMatmulQ4_K, kMatmulQ5_K,
    kMatmulQ6_K, kMatmulIQ4_NL, kMatmulIQ4_XS,
    kMatmulQ4_1, kMatmulQ5_1, kMatmulQ3_K, kMatmulQ2_K, kMatmulBF16;

}  // namespace kernels::dotprod
