// Internal to the hwy tier: the kernel each file defines, the features every
// kernel of the tier requires, and the MatmulKernel they are built with.
// Plain C++, like layout.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu_features.h"
#include "kernels/hwy/layout.h"
#include "kernels/matmul.h"
#include "kernels/ref/blocks.h"

namespace kernels::hwy_tier {

// The kernels, one per weight type, constant-initialized (matmul_float.cpp,
// matmul_blocks.cpp, matmul_super_blocks.cpp, matmul_sub16.cpp), for the table in kernels.cpp.
extern const MatmulKernel kMatmulF32;
extern const MatmulKernel kMatmulF16;
extern const MatmulKernel kMatmulBF16;
#if defined(__x86_64__)
// VDPBF16PS on BF16 activations (matmul_bf16_avx512bf16.cpp), before kMatmulBF16 in the table.
extern const MatmulKernel kMatmulBF16Dpbf16;
#endif
extern const MatmulKernel kMatmulQ4_0;
extern const MatmulKernel kMatmulQ4_1;
extern const MatmulKernel kMatmulQ5_0;
extern const MatmulKernel kMatmulQ5_1;
extern const MatmulKernel kMatmulQ8_0;
extern const MatmulKernel kMatmulIQ4_NL;
extern const MatmulKernel kMatmulIQ4_XS;
extern const MatmulKernel kMatmulQ4_K;
extern const MatmulKernel kMatmulQ5_K;
extern const MatmulKernel kMatmulQ6_K;
extern const MatmulKernel kMatmulQ3_K;
extern const MatmulKernel kMatmulQ2_K;

// arch and required_features of every kernel of the tier: the baseline the
// files are compiled for (Highway picks the best target above it at run time).
#if defined(__x86_64__) || defined(_M_X64)
inline constexpr Arch kBaselineArch = Arch::x86_64;
inline constexpr uint64_t kBaselineFeatures = feature_bits({Feature::sse42});  // HWY_SSE4
#elif defined(__aarch64__)
inline constexpr Arch kBaselineArch = Arch::aarch64;
inline constexpr uint64_t kBaselineFeatures = feature_bits({Feature::asimd});
#else
inline constexpr Arch kBaselineArch = Arch::unknown;
inline constexpr uint64_t kBaselineFeatures = 0;
#endif

using RunFn = void (*)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                       size_t dst_stride);
using PackRhsFn = void (*)(size_t n, size_t k, const void* rhs, void* rhs_packed);
using PackLhsFn = void (*)(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed);

// The MatmulKernel of every kernel of the tier: weights in groups of kRows
// rows, kChunk bytes per block of kBlock elements of the 16 rows (the float
// types: kBlock 1, kChunk 16 elements), activations kLhsBytes per block of
// a row; m_step 1 (run() takes any rows), n_step kRows.
template <size_t kBlock, size_t kChunk, size_t kLhsBytes>
constexpr MatmulKernel group_kernel(const char* name, gguf::GgmlType rhs_type, gguf::GgmlType lhs_type,
                                    PackRhsFn pack_rhs, PackLhsFn pack_lhs, RunFn run) {
  return MatmulKernel{
      .name = name,
      .tier = Tier::hwy,
      .arch = kBaselineArch,
      .required_features = kBaselineFeatures,
      .rhs_type = rhs_type,
      .lhs_type = lhs_type,
      .m_step = 1,
      .n_step = kRows,
      .rhs_packed_size = [](size_t n, size_t k) { return groups(n) * (k / kBlock) * kChunk; },
      .rhs_packed_offset = [](size_t n_idx, size_t k) { return n_idx / kRows * (k / kBlock) * kChunk; },
      .pack_rhs = pack_rhs,
      .lhs_packed_size = [](size_t m, size_t k) { return m * (k / kBlock) * kLhsBytes; },
      .lhs_packed_offset = [](size_t m_idx, size_t k) { return m_idx * (k / kBlock) * kLhsBytes; },
      .pack_lhs = pack_lhs,
      .run = run,
  };
}

// The packing loop of the K types (super-blocks of 256): each chunk of kBytes zeroed (rows
// past n stay zero), then pack_row(block, chunk, r) for each row r of it.
template <class Block, size_t kBytes, class PackRow>
void pack_groups(size_t n, size_t k, const void* rhs, void* rhs_packed, PackRow pack_row) {
  const size_t nb = k / ref::QK_K;
  const auto* rows = static_cast<const Block*>(rhs);
  auto* out = static_cast<uint8_t*>(rhs_packed);
  for (size_t g = 0; g < groups(n); ++g) {
    for (size_t b = 0; b < nb; ++b, out += kBytes) {
      std::memset(out, 0, kBytes);
      for (size_t r = 0; r < kRows && g * kRows + r < n; ++r) pack_row(rows[(g * kRows + r) * nb + b], out, r);
    }
  }
}

// The MatmulKernel of a K type: Q8_K activations (LhsQ8K).
template <size_t kChunk>
constexpr MatmulKernel q8_k_kernel(const char* name, gguf::GgmlType type, PackRhsFn pack_rhs, RunFn run) {
  return group_kernel<ref::QK_K, kChunk, sizeof(LhsQ8K)>(name, type, gguf::GgmlType::Q8_K, pack_rhs, pack_lhs_q8_k, run);
}

}  // namespace kernels::hwy_tier
