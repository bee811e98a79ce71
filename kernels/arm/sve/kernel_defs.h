// Internal to the sve tier: the kernel each file defines, and the features
// the kernels require (the flags their files are compiled with).
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels::sve {

inline constexpr uint64_t kRequiredFeatures =
    (uint64_t{1} << static_cast<uint32_t>(Feature::asimd)) | (uint64_t{1} << static_cast<uint32_t>(Feature::sve));
inline constexpr uint64_t kRequiredFeaturesI8mm =
    kRequiredFeatures | (uint64_t{1} << static_cast<uint32_t>(Feature::svei8mm));

// Constant-initialized (no code runs to build them).
extern const MatmulKernel kMatmulF16;
extern const MatmulKernel kMatmulQ8_0;
extern const MatmulKernel kMatmulQ4_0;
extern const MatmulKernel kMatmulQ4_K;
extern const MatmulKernel kMatmulQ6_K;
extern const MatmulKernel kMatmulQ8_0Mmla;
extern const MatmulKernel kMatmulQ4_0Mmla;

}  // namespace kernels::sve
