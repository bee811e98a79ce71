// The sme tier: matmul kernels on SME outer products (FEAT_SME: SMOPA and
// FMOPA into the ZA array, in streaming mode), with weights repacked at load
// into column groups as wide as two ZA tiles. The geometry follows the
// streaming vector length, read at run time; the tier runs only on CPUs that
// report asimd and sme, and the registry prefers it where the streaming vector
// is at least 256 bits (registry.cpp).
#pragma once

#include <span>

#include "kernels/matmul.h"

namespace kernels::sme {

// Q4_0 and Q8_0 (contract at the top of matmul_blocks.cpp).
std::span<const MatmulKernel> matmul_kernels();

}  // namespace kernels::sme
