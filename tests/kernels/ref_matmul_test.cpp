// The ref matmul kernels, driven only through their MatmulKernel function
// pointers as the engine drives them: pack the activations, then run() on the
// whole problem and on sub-ranges addressed with the *_offset functions.
// Checked against a double-precision loop over the dequantized weights and the
// ORIGINAL float activations, with a tolerance derived from the 8-bit
// activation rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/matmul_ref.h"
#include "tests/kernels/ref_test_util.h"

// Counts heap allocations while `g_counting` is set, to check that run() and
// pack_lhs() allocate nothing.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
}  // namespace

// GCC cannot see that this replaced operator new is the malloc below.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size != 0 ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;
using ref_test::dequantize;
using ref_test::normal_row;
using ref_test::ops;
using ref_test::quantize;

TEST(RefMatmul, OneKernelPerComputedType) {
  const struct {
    GgmlType rhs;
    GgmlType lhs;
    const char* name;
  } expected[] = {
      {GgmlType::F32, GgmlType::F32, "matmul_f32_f32_f32_1x1_ref"},
      {GgmlType::F16, GgmlType::F32, "matmul_f32_f32_f16_1x1_ref"},
      {GgmlType::BF16, GgmlType::F32, "matmul_f32_f32_bf16_1x1_ref"},
      {GgmlType::Q4_0, GgmlType::Q8_0, "matmul_f32_q8_0_q4_0_1x1_ref"},
      {GgmlType::Q4_1, GgmlType::Q8_1, "matmul_f32_q8_1_q4_1_1x1_ref"},
      {GgmlType::Q5_0, GgmlType::Q8_0, "matmul_f32_q8_0_q5_0_1x1_ref"},
      {GgmlType::Q5_1, GgmlType::Q8_1, "matmul_f32_q8_1_q5_1_1x1_ref"},
      {GgmlType::Q8_0, GgmlType::Q8_0, "matmul_f32_q8_0_q8_0_1x1_ref"},
      {GgmlType::Q4_K, GgmlType::Q8_K, "matmul_f32_q8_k_q4_k_1x1_ref"},
      {GgmlType::Q5_K, GgmlType::Q8_K, "matmul_f32_q8_k_q5_k_1x1_ref"},
      {GgmlType::Q6_K, GgmlType::Q8_K, "matmul_f32_q8_k_q6_k_1x1_ref"},
      {GgmlType::Q2_K, GgmlType::Q8_K, "matmul_f32_q8_k_q2_k_1x1_ref"},
      {GgmlType::Q3_K, GgmlType::Q8_K, "matmul_f32_q8_k_q3_k_1x1_ref"},
      {GgmlType::IQ4_NL, GgmlType::Q8_0, "matmul_f32_q8_0_iq4_nl_1x1_ref"},
      {GgmlType::IQ4_XS, GgmlType::Q8_K, "matmul_f32_q8_k_iq4_xs_1x1_ref"},
  };
  ASSERT_EQ(kernels::ref::ref_matmul_kernels().size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    const MatmulKernel& k = kernels::ref::ref_matmul_kernels()[i];
    EXPECT_STREQ(k.name, expected[i].name);
    EXPECT_EQ(k.rhs_type, expected[i].rhs);
    EXPECT_EQ(k.lhs_type, expected[i].lhs);
    EXPECT_EQ(k.lhs_type, ops(k.rhs_type).dot_type);
    EXPECT_EQ(k.tier, kernels::Tier::ref);
    EXPECT_EQ(k.arch, kernels::Arch::unknown);
    EXPECT_EQ(k.required_features, 0u);
    EXPECT_EQ(k.m_step, 1u);
    EXPECT_EQ(k.n_step, 1u);
    EXPECT_EQ(k.pack_rhs, nullptr);
    EXPECT_EQ(kernels::ref::ref_matmul_kernel(expected[i].rhs), &k);
    // Without pack_rhs the packed weights are the GGUF rows.
    EXPECT_EQ(k.rhs_packed_size(7, 512), *gguf::row_bytes(k.rhs_type, 512) * 7);
    EXPECT_EQ(k.rhs_packed_offset(3, 512), *gguf::row_bytes(k.rhs_type, 512) * 3);
    EXPECT_EQ(k.lhs_packed_size(5, 512), *gguf::row_bytes(k.lhs_type, 512) * 5);
    EXPECT_EQ(k.lhs_packed_offset(2, 512), *gguf::row_bytes(k.lhs_type, 512) * 2);
  }
  for (GgmlType t : {GgmlType::Q8_1, GgmlType::Q8_K, GgmlType::IQ2_XS, GgmlType::I32}) {
    EXPECT_EQ(kernels::ref::ref_matmul_kernel(t), nullptr) << gguf::type_name(t);
  }
}

// The largest error of one dequantized activation in block `b` of row x (the
// packed format's rounding): the code is round(x / d) with d = amax / 127, so
// |x - d q| <= d/2; Q8_0 / Q8_1 then store d in fp16, moving d q by at most
// 127 * fp16_store_error(d). Q8_K keeps d in fp32 (relative 2^-24, covered by
// the 1e-6). F32 activations are not rounded.
double activation_error(GgmlType lhs_type, const float* block, size_t block_size) {
  if (lhs_type == GgmlType::F32) return 0;
  double abs_max = 0;
  for (size_t i = 0; i < block_size; ++i) abs_max = std::max(abs_max, std::fabs(double{block[i]}));
  const double d = abs_max / 127;
  if (lhs_type == GgmlType::Q8_K) return d / 2 * (1 + 1e-6);
  return d / 2 + 127 * ref_test::fp16_store_error(d) + 1e-6 * d;
}

// Tolerance for Y[i][j] against sum_k W[j][k] X[i][k] (double, dequantized W,
// original X):
//   sum_k |W[j][k]| e_k                        activation rounding, e_k above
// + (nb + 6) 2^-23 sum_k (|W| + 2|off|) |X| 1.01   vec_dot's float rounding
//                                                 (see ref_dot_test.cpp; 1.01
//                                                 covers |dequantized X| vs |X|)
// + per Q8_1 block |m_b| * 2 fp16_store_error(sum |X|)   s = fp16(d sum q)
double matmul_tolerance(const MatmulKernel& kernel, const float* w_deq, const double* offsets,
                        const float* x, size_t k) {
  const size_t lhs_block = gguf::traits(kernel.lhs_type).block_size;  // 1 for F32
  double rounding = 0, magnitude = 0, s_error = 0;
  for (size_t b = 0; b < k; b += lhs_block) {
    const double e = activation_error(kernel.lhs_type, x + b, lhs_block);
    double block_abs = 0;
    for (size_t i = b; i < b + lhs_block; ++i) {
      rounding += std::fabs(double{w_deq[i]}) * e;
      magnitude += (std::fabs(double{w_deq[i]}) + 2 * offsets[i]) * std::fabs(double{x[i]}) * 1.01;
      block_abs += std::fabs(double{x[i]});
    }
    if (kernel.lhs_type == GgmlType::Q8_1) s_error += offsets[b] * 2 * ref_test::fp16_store_error(block_abs * 1.01);
  }
  const double blocks = double(k) / gguf::traits(kernel.rhs_type).block_size;
  const double float_rounding = ops(kernel.rhs_type).dot_type == GgmlType::F32 ? 0x1p-22 * magnitude
                                                                               : (blocks + 6) * 0x1p-23 * magnitude;
  return rounding + float_rounding + s_error;
}

struct Problem {
  size_t m = 5, n = 7, k = 512;  // m, n odd; k two super-blocks
  size_t lhs_stride = 512 + 3;   // floats; rows are not contiguous
  size_t dst_stride = 7 + 4;     // > n: the padding must stay untouched
};

void check_kernel(const MatmulKernel& kernel, const Problem& p) {
  SCOPED_TRACE(kernel.name);
  // Weights: n GGUF rows of the kernel's type.
  std::vector<uint8_t> rhs;
  std::vector<float> w_deq;
  std::vector<double> offsets;
  for (size_t j = 0; j < p.n; ++j) {
    const std::vector<uint8_t> row = quantize(kernel.rhs_type, normal_row(p.k, 1000 + uint32_t(j), 0.05f));
    const std::vector<float> row_deq = dequantize(kernel.rhs_type, row, p.k);
    const std::vector<double> row_off = ref_test::offset_magnitudes(kernel.rhs_type, row.data(), p.k);
    rhs.insert(rhs.end(), row.begin(), row.end());
    w_deq.insert(w_deq.end(), row_deq.begin(), row_deq.end());
    offsets.insert(offsets.end(), row_off.begin(), row_off.end());
  }
  ASSERT_EQ(rhs.size(), kernel.rhs_packed_size(p.n, p.k));
  std::vector<uint8_t> packed_rhs_storage;
  const void* rhs_packed = rhs.data();
  if (kernel.pack_rhs != nullptr) {
    packed_rhs_storage.resize(kernel.rhs_packed_size(p.n, p.k));
    kernel.pack_rhs(p.n, p.k, rhs.data(), packed_rhs_storage.data());
    rhs_packed = packed_rhs_storage.data();
  }

  // Activations: m rows with a stride; row 2 all zeros, row 3 an outlier.
  std::vector<float> lhs(p.m * p.lhs_stride, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < p.m; ++i) {
    std::vector<float> row = normal_row(p.k, 2000 + uint32_t(i));
    if (i == 2) std::fill(row.begin(), row.end(), 0.0f);
    if (i == 3) row[100] = -40.0f;
    std::copy(row.begin(), row.end(), lhs.begin() + i * p.lhs_stride);
  }

  std::vector<uint8_t> lhs_packed(kernel.lhs_packed_size(p.m, p.k));
  const float kSentinel = -12345.0f;
  std::vector<float> dst(p.m * p.dst_stride, kSentinel);
  g_allocations = 0;
  g_counting = true;
  kernel.pack_lhs(p.m, p.k, lhs.data(), p.lhs_stride, lhs_packed.data());
  kernel.run(p.m, p.n, p.k, lhs_packed.data(), rhs_packed, dst.data(), p.dst_stride);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u) << "pack_lhs / run allocated";

  for (size_t i = 0; i < p.m; ++i) {
    const float* x = lhs.data() + i * p.lhs_stride;
    for (size_t j = 0; j < p.n; ++j) {
      const float* w = w_deq.data() + j * p.k;
      double want = 0;
      for (size_t kk = 0; kk < p.k; ++kk) want += double{w[kk]} * double{x[kk]};
      const double tolerance = matmul_tolerance(kernel, w, offsets.data() + j * p.k, x, p.k);
      EXPECT_NEAR(dst[i * p.dst_stride + j], want, tolerance) << "row " << i << " col " << j;
    }
    for (size_t j = p.n; j < p.dst_stride; ++j) EXPECT_EQ(dst[i * p.dst_stride + j], kSentinel) << "padding";
  }

  // The same result from pieces: packing rows [m_split, m) on their own, and
  // run() on the four quadrants addressed with the offset functions.
  const size_t m_split = std::min<size_t>(3, p.m) / kernel.m_step * kernel.m_step;
  const size_t n_split = std::min<size_t>(4, p.n) / kernel.n_step * kernel.n_step;
  std::vector<uint8_t> lhs_packed_pieces(lhs_packed.size());
  kernel.pack_lhs(m_split, p.k, lhs.data(), p.lhs_stride, lhs_packed_pieces.data());
  kernel.pack_lhs(p.m - m_split, p.k, lhs.data() + m_split * p.lhs_stride, p.lhs_stride,
                  lhs_packed_pieces.data() + kernel.lhs_packed_offset(m_split, p.k));
  EXPECT_EQ(lhs_packed_pieces, lhs_packed);

  std::vector<float> dst_pieces(dst.size(), kSentinel);
  for (size_t m0 : {size_t{0}, m_split}) {
    for (size_t n0 : {size_t{0}, n_split}) {
      const size_t rows = m0 == 0 ? m_split : p.m - m_split;
      const size_t cols = n0 == 0 ? n_split : p.n - n_split;
      kernel.run(rows, cols, p.k, lhs_packed.data() + kernel.lhs_packed_offset(m0, p.k),
                 static_cast<const uint8_t*>(rhs_packed) + kernel.rhs_packed_offset(n0, p.k),
                 dst_pieces.data() + m0 * p.dst_stride + n0, p.dst_stride);
    }
  }
  for (size_t i = 0; i < dst.size(); ++i) {
    // Same kernel, same per-element computation: bit-identical.
    EXPECT_EQ(std::memcmp(&dst_pieces[i], &dst[i], sizeof(float)), 0) << "element " << i;
  }
}

TEST(RefMatmul, MatchesDoubleLoopOverDequantizedWeights) {
  for (const MatmulKernel& kernel : kernels::ref::ref_matmul_kernels()) check_kernel(kernel, Problem{});
}

TEST(RefMatmul, SingleRowAndColumn) {
  Problem p;
  p.m = 1;
  p.n = 1;
  p.k = 256;
  p.lhs_stride = 256;
  p.dst_stride = 1;
  for (const MatmulKernel& kernel : kernels::ref::ref_matmul_kernels()) check_kernel(kernel, p);
}

}  // namespace
