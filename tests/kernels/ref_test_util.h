// Helpers shared by the ref kernel tests: seeded random rows, row sizes and the
// rounding error of an fp16 store.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/type_ops.h"

namespace ref_test {

// The largest error fp32_to_fp16 makes on a value of magnitude |v| <= 65504:
// half an ulp, relative 2^-11 for normal halves, absolute 2^-25 below them.
inline double fp16_store_error(double v) { return std::max(std::fabs(v) * 0x1p-11, 0x1p-25); }

inline std::vector<float> normal_row(size_t k, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> row(k);
  for (float& v : row) v = dist(rng);
  return row;
}

inline size_t row_size(gguf::GgmlType type, size_t k) { return static_cast<size_t>(*gguf::row_bytes(type, k)); }

inline const kernels::ref::TypeOps& ops(gguf::GgmlType type) { return *kernels::ref::type_ops(type); }

inline std::vector<uint8_t> quantize(gguf::GgmlType type, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(type, x.size()));
  ops(type).quantize_row(x.data(), q.data(), x.size());
  return q;
}

inline std::vector<float> dequantize(gguf::GgmlType type, const std::vector<uint8_t>& q, size_t k) {
  std::vector<float> y(k);
  ops(type).dequantize_row(q.data(), y.data(), k);
  return y;
}

// |offset| of every element of a weight row: m of Q4_1 / Q5_1 blocks, dmin * m_j
// of Q4_K / Q5_K sub-blocks, 0 for the other types. The dot products apply the
// offset separately from the scaled codes, so their float rounding scales
// with |d q| + |offset| rather than with |w|.
inline std::vector<double> offset_magnitudes(gguf::GgmlType type, const uint8_t* row, size_t k) {
  using namespace kernels::ref;
  std::vector<double> out(k, 0.0);
  if (type == gguf::GgmlType::Q4_1 || type == gguf::GgmlType::Q5_1) {
    const size_t block_bytes = type == gguf::GgmlType::Q4_1 ? sizeof(BlockQ4_1) : sizeof(BlockQ5_1);
    for (size_t b = 0; b < k / QK; ++b) {
      uint16_t m;  // both blocks start {d, m}
      std::memcpy(&m, row + b * block_bytes + 2, sizeof m);
      for (size_t i = 0; i < QK; ++i) out[b * QK + i] = std::fabs(fp16_to_fp32(m));
    }
  } else if (type == gguf::GgmlType::Q4_K || type == gguf::GgmlType::Q5_K) {
    const size_t block_bytes = type == gguf::GgmlType::Q4_K ? sizeof(BlockQ4_K) : sizeof(BlockQ5_K);
    for (size_t b = 0; b < k / QK_K; ++b) {
      const uint8_t* block = row + b * block_bytes;  // both start {d, dmin, scales[12]}
      uint16_t dmin;
      std::memcpy(&dmin, block + 2, sizeof dmin);
      for (size_t j = 0; j < kKSubBlocks; ++j) {
        uint8_t sc, m;
        unpack_k_scale_min(block + 4, j, sc, m);
        for (size_t i = 0; i < 32; ++i) out[b * QK_K + 32 * j + i] = double{fp16_to_fp32(dmin)} * m;
      }
    }
  } else if (type == gguf::GgmlType::Q2_K) {
    const auto* blocks = reinterpret_cast<const BlockQ2_K*>(row);
    for (size_t e = 0; e < k; ++e) {
      const BlockQ2_K& b = blocks[e / QK_K];
      out[e] = double{fp16_to_fp32(b.dmin)} * (b.scales[e % QK_K / 16] >> 4);
    }
  }
  return out;
}

}  // namespace ref_test
