#include "kernels/ref/matmul_ref.h"

#include <array>
#include <cstdint>

#include "kernels/ref/quants.h"

namespace kernels::ref {
namespace {

using gguf::GgmlType;
using RowDot = float (*)(size_t k, const void* w, const void* a);
using RowQuantize = void (*)(const float* x, void* dst, size_t k);

// Bytes of one row of k elements (k a multiple of the block size).
template <GgmlType Type>
size_t row_size(size_t k) {
  const gguf::GgmlTypeTraits& t = gguf::traits(Type);
  return k / t.block_size * t.block_bytes;
}

// Weights of type W, activations packed as A by QuantizeA, one Dot per output.
template <GgmlType W, GgmlType A, RowQuantize QuantizeA, RowDot Dot>
struct RefMatmul {
  // The GGUF rows are used as they are: "packed" weights are the file's rows.
  static size_t rhs_packed_size(size_t n, size_t k) { return n * row_size<W>(k); }
  static size_t rhs_packed_offset(size_t n_idx, size_t k) { return n_idx * row_size<W>(k); }

  static size_t lhs_packed_size(size_t m, size_t k) { return m * row_size<A>(k); }
  static size_t lhs_packed_offset(size_t m_idx, size_t k) { return m_idx * row_size<A>(k); }

  // lhs: (m, lhs_stride) floats; lhs_packed: m rows of row_size<A>(k) bytes.
  static void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
    auto* out = static_cast<uint8_t*>(lhs_packed);
    const size_t packed_row = row_size<A>(k);
    for (size_t i = 0; i < m; ++i) QuantizeA(lhs + i * lhs_stride, out + i * packed_row, k);
  }

  // dst: (m, dst_stride) floats, of which the first n columns are written.
  static void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                  size_t dst_stride) {
    const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
    const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
    const size_t lhs_row = row_size<A>(k);
    const size_t rhs_row = row_size<W>(k);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) dst[i * dst_stride + j] = Dot(k, rhs + j * rhs_row, lhs + i * lhs_row);
    }
  }

  static constexpr MatmulKernel kernel(const char* name) {
    return MatmulKernel{
        .name = name,
        .tier = Tier::ref,
        .arch = Arch::unknown,
        .required_features = 0,
        .rhs_type = W,
        .lhs_type = A,
        .m_step = 1,
        .n_step = 1,
        .rhs_packed_size = rhs_packed_size,
        .rhs_packed_offset = rhs_packed_offset,
        .pack_rhs = nullptr,
        .lhs_packed_size = lhs_packed_size,
        .lhs_packed_offset = lhs_packed_offset,
        .pack_lhs = pack_lhs,
        .run = run,
    };
  }
};


constexpr std::array<MatmulKernel, 15> kKernels = {
    RefMatmul<GgmlType::F32, GgmlType::F32, quantize_row_f32, vec_dot_f32_f32>::kernel("matmul_f32_f32_f32_1x1_ref"),
    RefMatmul<GgmlType::F16, GgmlType::F32, quantize_row_f32, vec_dot_f16_f32>::kernel("matmul_f32_f32_f16_1x1_ref"),
    RefMatmul<GgmlType::BF16, GgmlType::F32, quantize_row_f32, vec_dot_bf16_f32>::kernel(
        "matmul_f32_f32_bf16_1x1_ref"),
    RefMatmul<GgmlType::Q4_0, GgmlType::Q8_0, quantize_row_q8_0, vec_dot_q4_0_q8_0>::kernel(
        "matmul_f32_q8_0_q4_0_1x1_ref"),
    RefMatmul<GgmlType::Q4_1, GgmlType::Q8_1, quantize_row_q8_1, vec_dot_q4_1_q8_1>::kernel(
        "matmul_f32_q8_1_q4_1_1x1_ref"),
    RefMatmul<GgmlType::Q5_0, GgmlType::Q8_0, quantize_row_q8_0, vec_dot_q5_0_q8_0>::kernel(
        "matmul_f32_q8_0_q5_0_1x1_ref"),
    RefMatmul<GgmlType::Q5_1, GgmlType::Q8_1, quantize_row_q8_1, vec_dot_q5_1_q8_1>::kernel(
        "matmul_f32_q8_1_q5_1_1x1_ref"),
    RefMatmul<GgmlType::Q8_0, GgmlType::Q8_0, quantize_row_q8_0, vec_dot_q8_0_q8_0>::kernel(
        "matmul_f32_q8_0_q8_0_1x1_ref"),
    RefMatmul<GgmlType::Q4_K, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_q4_k_q8_k>::kernel(
        "matmul_f32_q8_k_q4_k_1x1_ref"),
    RefMatmul<GgmlType::Q5_K, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_q5_k_q8_k>::kernel(
        "matmul_f32_q8_k_q5_k_1x1_ref"),
    RefMatmul<GgmlType::Q6_K, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_q6_k_q8_k>::kernel(
        "matmul_f32_q8_k_q6_k_1x1_ref"),
    RefMatmul<GgmlType::Q2_K, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_q2_k_q8_k>::kernel(
        "matmul_f32_q8_k_q2_k_1x1_ref"),
    RefMatmul<GgmlType::Q3_K, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_q3_k_q8_k>::kernel(
        "matmul_f32_q8_k_q3_k_1x1_ref"),
    RefMatmul<GgmlType::IQ4_NL, GgmlType::Q8_0, quantize_row_q8_0, vec_dot_iq4_nl_q8_0>::kernel(
        "matmul_f32_q8_0_iq4_nl_1x1_ref"),
    RefMatmul<GgmlType::IQ4_XS, GgmlType::Q8_K, quantize_row_q8_k, vec_dot_iq4_xs_q8_k>::kernel(
        "matmul_f32_q8_k_iq4_xs_1x1_ref"),
};

}  // namespace

std::span<const MatmulKernel> ref_matmul_kernels() { return kKernels; }

const MatmulKernel* ref_matmul_kernel(gguf::GgmlType weight_type) {
  for (const MatmulKernel& k : kKernels) {
    if (k.rhs_type == weight_type) return &k;
  }
  return nullptr;
}

}  // namespace kernels::ref
