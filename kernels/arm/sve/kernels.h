// The sve tier: vector-length-agnostic SVE matmul kernels (correct at any
// vector length; tested at 128, 256 and 512 bits), for CPUs with SVE, e.g.
// A64FX (512-bit SVE without the NEON dotprod/i8mm extensions). SDOT-based
// kernels need SVE only; the svmmla kernels also need SVE I8MM.
#pragma once

#include <span>

#include "kernels/matmul.h"

namespace kernels::sve {

// F32, F16, BF16 (widening), Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K, Q6_K,
// Q3_K, Q2_K and IQ4_XS (SDOT), and SMMLA variants of Q8_0 and Q4_0 listed first for their
// types (contracts at the top of each matmul_*.cpp).
std::span<const MatmulKernel> matmul_kernels();

}  // namespace kernels::sve
