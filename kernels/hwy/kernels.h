// The hwy tier: portable matmul kernels written with Google Highway, compiled
// for several targets (on x86: SSE4, AVX2, AVX3 = AVX-512, AVX3_DL = AVX-512
// with VNNI) and dispatched at run time (HWY_DYNAMIC_DISPATCH) to the best
// one the CPU has. It is the tier x86 and any CPU without an ARM tier run.
//
// The registry sees one Highway kernel per weight type; which Highway target
// runs it is Highway's choice, so target_name() reports it for the kernel log
// line. BF16 also has an AVX512-BF16 kernel (raw intrinsics, x86 only), listed
// first: a CPU without AVX512-BF16 gets the Highway one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul.h"

namespace kernels::hwy {

// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_NL and IQ4_XS (every type the ref tier computes), named
// matmul_<dst>_<lhs>_<rhs>_<tile>_hwy (e.g. matmul_f32_q8_0_q4_0_4x16_hwy).
std::span<const MatmulKernel> matmul_kernels();

// The Highway target the kernels dispatch to on this CPU: "AVX3_DL", "AVX3",
// "AVX2", "SSE4", "NEON", ... (hwy::TargetName).
const char* target_name();

// For tests ("every compiled target, not only the best one", as gemma.cpp):
// the targets compiled into the tier, best first, whether this CPU can run
// each, and a way to make the kernels dispatch to a runnable one (0: back to
// Highway's own choice).
struct Target {
  int64_t bits;  // a HWY_* target bit
  const char* name;
  bool runnable;
};
std::vector<Target> compiled_targets();
void force_target(int64_t bits);

}  // namespace kernels::hwy
