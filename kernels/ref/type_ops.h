// Scalar reference operations per weight type, bit-exact with GGUF files written
// by llama.cpp: quantize a row, dequantize a row, and the dot product of one
// weight row with one activation row in the type's dot format (8-bit blocks for
// the integer types, F32 for the float types).
//
// These are the oracle every faster tier is tested against, and the last
// fallback. Plain loops, no intrinsics.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"

namespace kernels::ref {

struct TypeOps {
  gguf::GgmlType type;
  // k is a multiple of the type's block size in all three.
  void (*quantize_row)(const float* x, void* dst, size_t k);
  void (*dequantize_row)(const void* src, float* y, size_t k);
  // Activation format vec_dot expects (F32, Q8_0, Q8_1 or Q8_K).
  gguf::GgmlType dot_type;
  // sum_i w[i] * a[i], w in `type`, a in `dot_type`; nullptr for pure
  // activation formats (Q8_1, Q8_K) that are never weights.
  float (*vec_dot)(size_t k, const void* w, const void* a);
  // quantize_row under an importance matrix: qw holds k non-negative weights
  // (quants.h). nullptr where llama.cpp's quantizer ignores them.
  void (*quantize_row_weighted)(const float* x, void* dst, size_t k, const float* qw);
};

// Types the engine computes: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
// Q5_K, Q6_K, Q2_K, Q3_K, IQ4_NL, IQ4_XS, and the activation formats Q8_1 and
// Q8_K. nullptr otherwise.
const TypeOps* type_ops(gguf::GgmlType type);

}  // namespace kernels::ref
