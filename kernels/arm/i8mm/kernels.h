// The i8mm tier: matmul kernels built on SMMLA (FEAT_I8MM) over 128-bit NEON
// registers, with weights repacked at load into interleaved row pairs. Files
// of this folder are compiled with -march=armv8.2-a+dotprod+i8mm and run only
// on CPUs that report asimd, dotprod and i8mm.
#pragma once

#include <span>

#include "kernels/matmul.h"

namespace kernels::i8mm {

// F32 and F16 (the neon tier's float tile), Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K,
// IQ4_NL, IQ4_XS, Q4_1, Q5_1, Q3_K and Q2_K, one kernel each (contracts at the top of each matmul_*.cpp).
std::span<const MatmulKernel> matmul_kernels();

}  // namespace kernels::i8mm
