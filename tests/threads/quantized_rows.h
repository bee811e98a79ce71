// Random weights in a type's GGUF row format, for the threading tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/ref/type_ops.h"

namespace threads_test {

// n rows of k normal(0, scale) weights, quantized row by row.
inline std::vector<uint8_t> quantized_rows(gguf::GgmlType type, size_t n, size_t k, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t row = *gguf::row_bytes(type, k);
  std::vector<uint8_t> rows(row * n);
  std::vector<float> w(k);
  for (size_t i = 0; i < n; ++i) {
    for (float& v : w) v = normal(rng) * scale;
    kernels::ref::type_ops(type)->quantize_row(w.data(), rows.data() + i * row, k);
  }
  return rows;
}

}  // namespace threads_test
