// Internal to the sve tier: the kernel each file defines, and the features
// the kernels require (the flags their files are compiled with).
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels::sve {

inline constexpr uint64_t kRequiredFeatures = feature_bits({Feature::asimd, Feature::sve});
inline constexpr uint64_t kRequiredFeaturesI8mm = kRequiredFeatures | feature_bits({Feature::svei8mm});

// Constant-initialized (no code runs to build them).
extern const MatmulKernel kMatmulF16, kMatmulBF16, kMatmulF32, kMatmulQ8_0, kMatmulQ4_0, kMatmulQ4_1, kMatmulQ5_0,
    kMatmulQ5_1, kMatmulIQ4_NL, kMatmulQ4_K, kMatmulQ5_K, kMatmulQ6_K, kMatmulQ3_K, kMatmulQ2_K, kMatmulIQ4_XS,
    kMatmulQ8_0Mmla, kMatmulQ4_0Mmla;

}  // namespace kernels::sve
