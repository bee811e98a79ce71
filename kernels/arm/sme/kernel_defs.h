// Internal to the sme tier: the kernels it builds, the features they require
// and the entry points of the streaming-mode loops (the .S files).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"

namespace kernels::sme {

inline constexpr uint64_t kRequiredFeatures =
    feature_bits({Feature::asimd, Feature::dotprod, Feature::i8mm, Feature::sme});

// The streaming vector length in bytes on this CPU (RDSVL, through
// prctl(PR_SME_GET_VL)); 64 where the CPU has no SME, so that the geometry of
// a kernel that cannot run here is still well defined.
inline size_t vector_bytes() {
  static const size_t bytes = [] {
    const uint32_t bits = host_cpu_features().sme_vector_bits;
    return bits != 0 ? size_t{bits} / 8 : size_t{64};
  }();
  return bytes;
}

// Built at first use: the tile geometry follows vector_bytes().
MatmulKernel q4_0_kernel();
MatmulKernel q8_0_kernel();

// Arguments of the streaming loop (f32_panel_sme.S), read by offset.
struct PanelArgs {
  const float* act;   // k-major activations of the chunk, G floats per k
  const float* w;     // k-major weights of the chunk, P floats per k
  float* dst;         // row 0, column 0 of the output
  size_t dst_stride;  // bytes between output rows
  size_t kc;          // k of the chunk, a multiple of 4
  size_t rows;        // valid rows, 1..G
  size_t cols;        // valid columns, 1..P
  size_t accumulate;  // 0: start from zero, else add to dst
};
static_assert(sizeof(PanelArgs) == 64);

}  // namespace kernels::sme

extern "C" void engine_sme_f32_panel(const kernels::sme::PanelArgs* args);
