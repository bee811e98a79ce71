// Properties of the ARM tiers (kernels/arm/neon, kernels/arm/dotprod, and the
// i8mm kernels that round as the reference: Q2_K, Q3_K) that the generic tier
// harness (tier_matmul_test) does not check:
// - the SIMD activation quantizers write exactly the bytes of the reference
//   quantizers (rounding ties, zero, tiny and outlier blocks, sign ties);
// - the quantized kernels give the reference's results bit for bit on random
//   data, not only within the harness's tolerance (they reproduce its integer
//   sums and its float operations in order);
// - pack_rhs called on slices of n_step rows writes the same bytes as one call.
// A kernel this CPU cannot run is skipped, never passed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/arm/neon/lhs_q8_0.h"
#include "kernels/arm/neon/quantize.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quants.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;

// Rows of k floats exercising the quantizers' corner cases, block by block.
std::vector<std::vector<float>> quantizer_rows(size_t k, size_t block) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows;
  for (float scale : {1.0f, 1e-3f, 300.0f}) {
    std::vector<float> r(k);
    for (float& v : r) v = normal(rng) * scale;
    rows.push_back(r);
  }
  // Ties: amax 127 gives d = 1 (Q8_0) and iscale = -1 (Q8_K): x.5 values land
  // exactly on rounding ties (away from zero in Q8_0, to even in Q8_K).
  std::vector<float> ties(k);
  for (size_t i = 0; i < k; ++i)
    ties[i] = i % block == 0 ? -127.0f : static_cast<float>(static_cast<int>(i % 61) - 30) + 0.5f;
  rows.push_back(ties);
  // Zero, negative zero, tiny (1/d overflows), one outlier, +max and -max both
  // present (the first decides the sign), and a block of NaNs next to numbers.
  std::vector<float> corners(k, 0.0f);
  for (size_t b = 0; b < k / block; ++b) {  // k / block >= 7 blocks
    float* x = corners.data() + b * block;
    switch (b % 7) {
      case 0:
        break;
      case 1:
        for (size_t i = 0; i < block; ++i) x[i] = -0.0f;
        break;
      case 2:
        for (size_t i = 0; i < block; ++i) x[i] = (i % 3 == 0 ? 1e-38f : -2e-38f);
        break;
      case 3:
        for (size_t i = 0; i < block; ++i) x[i] = i == 5 ? 1e4f : normal(rng);
        break;
      case 4:
        for (size_t i = 0; i < block; ++i) x[i] = i == 7 ? 3.0f : (i == 9 ? -3.0f : normal(rng));
        break;
      case 5:
        for (size_t i = 0; i < block; ++i) x[i] = i == 2 ? -5.0f : (i == 1 ? 5.0f : 0.25f);
        break;
      default:
        for (size_t i = 0; i < block; ++i) x[i] = i % 4 == 1 ? std::nanf("") : normal(rng);
        break;
    }
  }
  rows.push_back(corners);
  return rows;
}

TEST(ArmQuantize, Q8_0BytesEqualTheReference) {
  const size_t k = 32 * 24;
  for (const auto& row : quantizer_rows(k, 32)) {
    std::vector<uint8_t> mine(k / 32 * sizeof(kernels::ref::BlockQ8_0)), ref(mine.size());
    kernels::neon::quantize_row_q8_0(row.data(), mine.data(), k);
    kernels::ref::quantize_row_q8_0(row.data(), ref.data(), k);
    for (size_t i = 0; i < mine.size(); ++i) ASSERT_EQ(mine[i], ref[i]) << "byte " << i << " of block " << i / 34;
  }
}

TEST(ArmQuantize, Q8_KBytesEqualTheReference) {
  const size_t k = 256 * 7;
  for (const auto& row : quantizer_rows(k, 256)) {
    std::vector<uint8_t> mine(k / 256 * sizeof(kernels::ref::BlockQ8_K)), ref(mine.size());
    kernels::neon::quantize_row_q8_k(row.data(), mine.data(), k);
    kernels::ref::quantize_row_q8_k(row.data(), ref.data(), k);
    for (size_t i = 0; i < mine.size(); ++i) ASSERT_EQ(mine[i], ref[i]) << "byte " << i << " of block " << i / 292;
  }
}

TEST(ArmQuantize, PackLhsQuantizesEachRowAtItsStride) {
  const size_t m = 3, k = 512, stride = k + 32;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(m * stride);
  for (float& v : x) v = normal(rng);
  const size_t rowk = k / 256 * sizeof(kernels::ref::BlockQ8_K);
  std::vector<uint8_t> qk(m * rowk), rk(rowk);
  kernels::neon::pack_lhs_q8_k(m, k, x.data(), stride, qk.data());
  for (size_t i = 0; i < m; ++i) {
    kernels::ref::quantize_row_q8_k(x.data() + i * stride, rk.data(), k);
    EXPECT_EQ(0, std::memcmp(qk.data() + i * rowk, rk.data(), rowk)) << "Q8_K row " << i;
  }
}

// The block kernels' activation blocks: the reference's codes, its fp16 scale
// widened to float, zero padding; Q8_1 rows (the Q4_1 / Q5_1 kernels') also
// its fp16 s widened and the codes' sum, which Q8_0 rows leave zero; every
// row at its stride.
template <typename RefBlock>
void expect_float_scale_blocks(void (*pack)(size_t, size_t, const float*, size_t, void*),
                               void (*quantize)(const float*, void*, size_t)) {
  constexpr bool kQ8_1 = std::is_same_v<RefBlock, kernels::ref::BlockQ8_1>;
  const size_t k = 32 * 24;
  const std::vector<std::vector<float>> rows = quantizer_rows(k, 32);
  const size_t m = rows.size(), stride = k + 32, nb = k / 32;
  std::vector<float> x(m * stride, 7.0f);
  for (size_t i = 0; i < m; ++i) std::memcpy(x.data() + i * stride, rows[i].data(), k * sizeof(float));
  std::vector<kernels::neon::BlockQ8_0F> mine(m * nb);
  std::memset(mine.data(), 0xA5, mine.size() * sizeof mine[0]);
  pack(m, k, x.data(), stride, mine.data());
  std::vector<RefBlock> ref(nb);
  for (size_t i = 0; i < m; ++i) {
    quantize(x.data() + i * stride, ref.data(), k);
    for (size_t b = 0; b < nb; ++b) {
      const kernels::neon::BlockQ8_0F& got = mine[i * nb + b];
      ASSERT_EQ(0, std::memcmp(got.qs, ref[b].qs, sizeof got.qs)) << "codes of row " << i << " block " << b;
      const float want = kernels::ref::fp16_to_fp32(ref[b].d);
      ASSERT_EQ(std::memcmp(&got.d, &want, sizeof want), 0) << "scale of row " << i << " block " << b;
      int32_t sum = 0;
      for (int8_t q : ref[b].qs) sum += q;
      float want_s = 0.0f;
      if constexpr (kQ8_1) want_s = kernels::ref::fp16_to_fp32(ref[b].s);
      ASSERT_EQ(std::memcmp(&got.s, &want_s, sizeof want_s), 0) << "s of row " << i << " block " << b;
      EXPECT_EQ(got.sum, kQ8_1 ? sum : 0) << "sum of row " << i << " block " << b;
      ASSERT_EQ(got.pad, 0.0f);
    }
  }
}

TEST(ArmQuantize, FloatScaleQ8_0BlocksHoldTheReferenceCodesAndScale) {
  expect_float_scale_blocks<kernels::ref::BlockQ8_0>(kernels::neon::pack_lhs_q8_0f, kernels::ref::quantize_row_q8_0);
}

TEST(ArmQuantize, FloatScaleQ8_1BlocksHoldTheReferenceCodesScaleAndSum) {
  expect_float_scale_blocks<kernels::ref::BlockQ8_1>(kernels::neon::pack_lhs_q8_1f, kernels::ref::quantize_row_q8_1);
}

// The neon and dotprod kernels of the registry that satisfy `keep`.
template <typename Keep>
std::vector<const MatmulKernel*> arm_kernels(Keep keep) {
  std::vector<const MatmulKernel*> out;
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const MatmulKernel* k : kernels::matmul_table(static_cast<GgmlType>(id))) {
      const bool exact_i8mm = k->tier == kernels::Tier::i8mm && (k->rhs_type == GgmlType::Q2_K || k->rhs_type == GgmlType::Q3_K);
      if ((k->tier == kernels::Tier::neon || k->tier == kernels::Tier::dotprod || exact_i8mm) && keep(*k)) {
        out.push_back(k);
      }
    }
  }
  return out;
}

class ArmKernel : public ::testing::TestWithParam<const MatmulKernel*> {
 protected:
  void SetUp() override {
    kern_ = GetParam();
    if (!kernels::can_run(*kern_, kernels::host_cpu_features())) {
      GTEST_SKIP() << kern_->name << ": this CPU (" << kernels::host_cpu_features().describe() << ") cannot run it";
    }
  }
  size_t row_bytes(size_t k) const { return static_cast<size_t>(*gguf::row_bytes(kern_->rhs_type, k)); }

  // n rows of random weights (GGUF layout), quantized by the reference.
  std::vector<uint8_t> weights(size_t n, size_t k, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.1f);
    std::vector<uint8_t> w(n * row_bytes(k));
    std::vector<float> row(k);
    for (size_t j = 0; j < n; ++j) {
      for (float& v : row) v = normal(rng);
      kernels::ref::type_ops(kern_->rhs_type)->quantize_row(row.data(), w.data() + j * row_bytes(k), k);
    }
    return w;
  }

  const MatmulKernel* kern_ = nullptr;
};

std::vector<float> multiply(const MatmulKernel& kern, size_t m, size_t n, size_t k, const std::vector<float>& x,
                            const std::vector<uint8_t>& w) {
  std::vector<uint8_t> packed;
  const uint8_t* rhs = w.data();
  if (kern.pack_rhs != nullptr) {
    packed.resize(kern.rhs_packed_size(n, k));
    kern.pack_rhs(n, k, w.data(), packed.data());
    rhs = packed.data();
  }
  std::vector<uint8_t> lhs(kern.lhs_packed_size(m, k));
  kern.pack_lhs(m, k, x.data(), k, lhs.data());
  std::vector<float> y(m * n);
  kern.run(m, n, k, lhs.data(), rhs, y.data(), n);
  return y;
}

// Kernels with quantized weights (the float ones sum in another order than
// the reference, which sums in double: tier_matmul_test bounds them).
using ArmQuantizedKernel = ArmKernel;

TEST_P(ArmQuantizedKernel, ResultsEqualTheReferenceBitForBit) {
  const MatmulKernel* ref = kernels::ref::ref_matmul_kernel(kern_->rhs_type);
  ASSERT_NE(ref, nullptr);
  const size_t k = 2 * std::max<size_t>(256, gguf::traits(kern_->rhs_type).block_size);
  for (auto [m, n] : {std::pair<size_t, size_t>{1, 11}, {6, 7}, {11, 9}}) {  // i8mm: rows, pairs, 8-row tiles
    std::mt19937 rng(static_cast<uint32_t>(m * 31 + n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(m * k);
    for (float& v : x) v = normal(rng);
    const std::vector<uint8_t> w = weights(n, k, static_cast<uint32_t>(n));
    const std::vector<float> y = multiply(*kern_, m, n, k, x, w);
    const std::vector<float> y_ref = multiply(*ref, m, n, k, x, w);
    for (size_t i = 0; i < m * n; ++i) {
      ASSERT_EQ(y[i], y_ref[i]) << "m=" << m << " n=" << n << ": row " << i / n << " col " << i % n;
    }
  }
}

// Kernels that repack their weights at load.
using ArmRepackingKernel = ArmKernel;

TEST_P(ArmRepackingKernel, PackingSlicesOfNStepRowsEqualsOnePack) {
  const size_t n = 3 * kern_->n_step + 2, k = 2 * std::max<size_t>(256, gguf::traits(kern_->rhs_type).block_size);
  const std::vector<uint8_t> w = weights(n, k, 5);
  std::vector<uint8_t> whole(kern_->rhs_packed_size(n, k)), sliced(whole.size(), 0xAB);
  kern_->pack_rhs(n, k, w.data(), whole.data());
  for (size_t j0 = 0; j0 < n; j0 += kern_->n_step) {
    kern_->pack_rhs(std::min(kern_->n_step, n - j0), k, w.data() + j0 * row_bytes(k),
                    sliced.data() + kern_->rhs_packed_offset(j0, k));
  }
  ASSERT_EQ(whole, sliced);
}

std::string kernel_name(const ::testing::TestParamInfo<const MatmulKernel*>& p) { return p.param->name; }

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ArmQuantizedKernel);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ArmRepackingKernel);
INSTANTIATE_TEST_SUITE_P(Registry, ArmQuantizedKernel, ::testing::ValuesIn(arm_kernels([](const MatmulKernel& k) {
                           return gguf::traits(k.rhs_type).quantized;
                         })),
                         kernel_name);
INSTANTIATE_TEST_SUITE_P(Registry, ArmRepackingKernel,
                         ::testing::ValuesIn(arm_kernels([](const MatmulKernel& k) { return k.pack_rhs != nullptr; })),
                         kernel_name);

}  // namespace
