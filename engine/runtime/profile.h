// Where a session's time goes, by operation class (`bench --profile`). A
// Session with a Profile attached reads the clock around each step of the
// forward pass; without one it reads none.
#pragma once

#include <array>
#include <cstdint>

#include "gguf/ggml_types.h"

namespace engine {

struct Profile {
  // Seconds of wall time. A parallel step's time is split between its class
  // and pool_wait by the share of the threads' time spent inside tasks, so the
  // classes add up to the wall time of the evaluations.
  std::array<double, gguf::kGgmlTypeIdCount> matmul{};  // by weight type
  double attention = 0;         // scores, softmax, weighted values, KV reads
  double shortconv = 0;         // LFM2's gated short convolutions and their state
  double delta_net = 0;         // gated DeltaNet: convolution, gates, the delta rule, gated norm
  double elementwise = 0;       // embedding, norms, RoPE, residual adds, SwiGLU, finite checks
  double activation_quant = 0;  // packing activations for the matmul kernels
  double pool_wait = 0;         // threads idle inside parallel steps
  double sampling = 0;          // filled by the caller that samples
  uint64_t tokens = 0;          // tokens evaluated while attached

  double total() const {
    double t = attention + shortconv + delta_net + elementwise + activation_quant + pool_wait + sampling;
    for (double m : matmul) t += m;
    return t;
  }
};

}  // namespace engine
