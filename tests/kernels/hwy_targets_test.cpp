// The hwy tier on every Highway target it was compiled for, not only the one
// Highway picks on this CPU (gemma.cpp's rule): each test forces one target
// (hwy::SetSupportedTargetsForTest through kernels::hwy::force_target) and
// checks every hwy kernel against the ref tier. A target this CPU cannot run is
// reported as SKIPPED. tier_matmul_test covers the chosen target with the
// general tier checks; this file adds what the hwy tier promises beyond them:
//
// - Activation packing equals the reference quantizers bit for bit (codes,
//   scales, sums), including rounding ties, zeros, tiny and non-finite inputs.
// - Integer kernels equal the ref kernels on random data up to the rounding of
//   the float additions (rounding_bound): they compute the reference's integer
//   sums and scale products, and add each term with a fused multiply-add. An
//   integer sum off by one fails at every shape here.
// - Float kernels (F32, F16, BF16; float accumulation, fused multiply-add)
//   stay within (k + 16) 2^-23 sum |w x| of the exact result, the bound the
//   tier harness derives for float accumulation in any order.
// - Calls split as a thread pool splits them equal one call, bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/hwy/kernels.h"
#include "kernels/hwy/layout.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quants.h"
#include "kernels/ref/type_ops.h"

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;
using kernels::hwy_tier::LhsQ8_0;
using kernels::hwy_tier::LhsQ8K;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

size_t bytes_of_row(GgmlType t, size_t k) { return static_cast<size_t>(*gguf::row_bytes(t, k)); }

bool is_float(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// The offset of the packed weight codes (unsigned), paid back through the
// activations' offset_sum (layout.h).
int32_t code_offset(GgmlType t) {
  return t == GgmlType::Q4_0 ? 8 : t == GgmlType::Q5_0 ? 16 : t == GgmlType::Q8_0 || t == GgmlType::IQ4_NL ? 128 : 0;
}

struct Problem {
  size_t m, n, k;
  std::vector<float> x;    // (m, k)
  std::vector<uint8_t> w;  // n GGUF rows
};

Problem random_problem(GgmlType type, size_t m, size_t n, size_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p{m, n, k, std::vector<float>(m * k), std::vector<uint8_t>(n * bytes_of_row(type, k))};
  for (float& v : p.x) v = normal(rng);
  std::vector<float> row(k);
  for (size_t j = 0; j < n; ++j) {
    for (float& v : row) v = normal(rng) * 0.1f;
    kernels::ref::type_ops(type)->quantize_row(row.data(), p.w.data() + j * bytes_of_row(type, k), k);
  }
  return p;
}

// Y with the kernel, the work split in pieces of m_piece x n_piece (0: whole).
std::vector<float> run(const MatmulKernel& kern, const Problem& p, size_t m_piece = 0, size_t n_piece = 0) {
  std::vector<uint8_t> packed;
  const uint8_t* rhs = p.w.data();
  if (kern.pack_rhs != nullptr) {
    packed.resize(kern.rhs_packed_size(p.n, p.k));
    kern.pack_rhs(p.n, p.k, p.w.data(), packed.data());
    rhs = packed.data();
  }
  std::vector<uint8_t> lhs(kern.lhs_packed_size(p.m, p.k));
  kern.pack_lhs(p.m, p.k, p.x.data(), p.k, lhs.data());
  std::vector<float> y(p.m * p.n, -1.0f);
  const size_t mp = m_piece == 0 ? p.m : m_piece, np = n_piece == 0 ? p.n : n_piece;
  for (size_t m0 = 0; m0 < p.m; m0 += mp) {
    for (size_t n0 = 0; n0 < p.n; n0 += np) {
      kern.run(std::min(mp, p.m - m0), std::min(np, p.n - n0), p.k, lhs.data() + kern.lhs_packed_offset(m0, p.k),
               rhs + kern.rhs_packed_offset(n0, p.k), y.data() + m0 * p.n + n0, p.n);
    }
  }
  return y;
}

// The tier's Highway kernels (names ending in _hwy): the ones a forced target
// changes. The tier's intrinsics kernel (AVX512-BF16) has no Highway target;
// tier_matmul_test checks it against ref like every registry kernel.
std::vector<const MatmulKernel*> hwy_kernels() {
  std::vector<const MatmulKernel*> out;
  for (const MatmulKernel& k : kernels::hwy::matmul_kernels()) {
    if (std::string_view(k.name).ends_with("_hwy")) out.push_back(&k);
  }
  return out;
}

class HwyTarget : public ::testing::TestWithParam<kernels::hwy::Target> {
 protected:
  void SetUp() override {
    if (!GetParam().runnable) GTEST_SKIP() << "this CPU cannot run the " << GetParam().name << " target";
    kernels::hwy::force_target(GetParam().bits);
    ASSERT_STREQ(kernels::hwy::target_name(), GetParam().name) << "forcing the target did not take";
  }
  void TearDown() override { kernels::hwy::force_target(0); }

  static size_t block(GgmlType t) { return std::max<size_t>(32, gguf::traits(t).block_size); }
};

TEST_P(HwyTarget, ActivationPackingEqualsTheReferenceQuantizers) {
  // Rows with ties at x / d = n + 1/2, zeros, huge and tiny values, infinities.
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 6; ++i) {
    std::vector<float> r(512);
    for (float& v : r) v = normal(rng) * std::pow(10.0f, static_cast<float>(i - 3));
    rows.push_back(r);
  }
  // Ties: each block's largest element is 127, so d = 1 (Q8_0) and -1/iscale
  // = 1 (Q8_K), and the others are k + 1/2: roundf and round-to-even differ.
  std::vector<float> ties(512);
  for (size_t i = 0; i < ties.size(); ++i) {
    ties[i] = i % 32 == 0 ? 127.0f : static_cast<float>(static_cast<int>(i % 200) - 100) + 0.5f;
  }
  rows.push_back(ties);
  rows.push_back(std::vector<float>(512, 0.0f));
  std::vector<float> special(512, 1.0f);
  special[3] = std::numeric_limits<float>::infinity();
  special[40] = 1e-39f;                                    // subnormal
  for (size_t i = 256; i < 288; ++i) special[i] = 1e-38f;  // an inverse scale that overflows
  special[300] = -std::numeric_limits<float>::infinity();
  rows.push_back(special);

  for (const MatmulKernel* kern : hwy_kernels()) {
    if (is_float(kern->rhs_type)) continue;
    SCOPED_TRACE(kern->name);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      SCOPED_TRACE("row " + std::to_string(ri));
      const std::vector<float>& x = rows[ri];
      std::vector<uint8_t> packed(kern->lhs_packed_size(1, x.size()));
      kern->pack_lhs(1, x.size(), x.data(), x.size(), packed.data());
      if (kern->lhs_type == GgmlType::Q8_0 || kern->lhs_type == GgmlType::Q8_1) {
        std::vector<kernels::ref::BlockQ8_1> ref(x.size() / 32);  // Q8_0's codes and d, and s
        kernels::ref::quantize_row_q8_1(x.data(), ref.data(), x.size());
        ASSERT_EQ(packed.size(), ref.size() * sizeof(LhsQ8_0));
        for (size_t b = 0; b < ref.size(); ++b) {
          LhsQ8_0 got;
          std::memcpy(&got, packed.data() + b * sizeof got, sizeof got);
          ASSERT_EQ(0, std::memcmp(got.qs, ref[b].qs, 32)) << "block " << b;
          ASSERT_EQ(bits(got.d), bits(kernels::ref::fp16_to_fp32(ref[b].d))) << "block " << b;
          int32_t sum = 0;
          for (int8_t q : ref[b].qs) sum += q;
          ASSERT_EQ(got.offset_sum, -code_offset(kern->rhs_type) * sum) << "block " << b;
          ASSERT_EQ(bits(got.s), bits(kernels::ref::fp16_to_fp32(ref[b].s))) << "block " << b;
        }
      } else {
        ASSERT_EQ(kern->lhs_type, GgmlType::Q8_K);
        std::vector<kernels::ref::BlockQ8_K> ref(x.size() / 256);
        kernels::ref::quantize_row_q8_k(x.data(), ref.data(), x.size());
        ASSERT_EQ(packed.size(), ref.size() * sizeof(LhsQ8K));
        for (size_t b = 0; b < ref.size(); ++b) {
          LhsQ8K got;
          std::memcpy(&got, packed.data() + b * sizeof got, sizeof got);
          ASSERT_EQ(0, std::memcmp(got.qs, ref[b].qs, 256)) << "block " << b;
          ASSERT_EQ(bits(got.d), bits(ref[b].d)) << "block " << b;
          for (size_t g = 0; g < 16; ++g) {
            ASSERT_EQ(got.offset16[g], -32 * ref[b].bsums[g]) << "block " << b;
            ASSERT_EQ(128 * got.sum16_hi[g] + got.sum16_lo[g], ref[b].bsums[g]) << "block " << b;
            ASSERT_GE(got.sum16_lo[g], 0);
          }
          for (size_t j = 0; j < 8; ++j) {
            ASSERT_EQ(128 * got.pair_hi[j] + got.pair_lo[j], ref[b].bsums[2 * j] + ref[b].bsums[2 * j + 1]);
            ASSERT_GE(got.pair_lo[j], 0);
          }
        }
      }
    }
  }
}

// How far an integer kernel may be from the ref kernel: both compute the same
// exact int32 sums per block and the same scale products, and differ only in
// how the float terms are added (the hwy kernels fuse each term's product
// into the sum, the reference rounds it first). Each float step rounds by at
// most 2^-24 of the running sum, which stays below M = sum over t of
// (3 max|w| of t's block of 32) x (max|x| of t's activation block, 1.01 for
// the 8-bit scale's rounding): the codes times a block's scale, and a block's
// min, are at most 3 max|w| for weights the reference quantizers made from
// random normal values (the min is within max|w|, the codes times the scale
// within max|w| + |min|). The bound, (k/16 + 2) 2^-23 M, is a few thousandths
// of one step of the integer sums at the small shapes below: an integer sum
// off by one fails.
double rounding_bound(const std::vector<float>& w, const float* x, size_t a_block) {
  const size_t k = w.size();
  double m = 0;
  for (size_t b = 0; b < k; b += 32) {
    double wmax = 0;
    for (size_t t = b; t < b + 32; ++t) wmax = std::max(wmax, std::fabs(double{w[t]}));
    const size_t a0 = b / a_block * a_block;
    double xmax = 0;
    for (size_t t = a0; t < a0 + a_block; ++t) xmax = std::max(xmax, std::fabs(double{x[t]}));
    m += 32 * 3 * wmax * 1.01 * xmax;
  }
  return (static_cast<double>(k) / 16 + 2) * 0x1p-23 * m;
}

TEST_P(HwyTarget, EveryKernelAgainstRef) {
  struct Shape {
    size_t m, n;
    size_t blocks;  // k in blocks of the weight type (at least 32 elements)
  };
  const Shape shapes[] = {{1, 1, 1},  {1, 17, 2},  {1, 67, 3},  {2, 16, 1},   {3, 33, 2}, {4, 16, 2},
                          {5, 31, 1}, {9, 48, 2},  {17, 5, 1},  {64, 19, 2},  {1, 7, 17}, {6, 35, 5}, {5, 20, 70}};
  for (const MatmulKernel* kern : hwy_kernels()) {
    SCOPED_TRACE(kern->name);
    const MatmulKernel* ref = kernels::ref::ref_matmul_kernel(kern->rhs_type);
    ASSERT_NE(ref, nullptr);
    uint32_t seed = 1;
    for (const Shape& s : shapes) {
      const size_t k = s.blocks * block(kern->rhs_type) + (is_float(kern->rhs_type) ? s.blocks % 3 : 0);
      SCOPED_TRACE("m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(k));
      const Problem p = random_problem(kern->rhs_type, s.m, s.n, k, seed++);
      const std::vector<float> y = run(*kern, p);
      const std::vector<float> y_ref = run(*ref, p);
      std::vector<float> w_row(k);
      if (!is_float(kern->rhs_type)) {
        for (size_t j = 0; j < p.n; ++j) {
          kernels::ref::type_ops(kern->rhs_type)->dequantize_row(p.w.data() + j * bytes_of_row(kern->rhs_type, k),
                                                                 w_row.data(), k);
          for (size_t i = 0; i < p.m; ++i) {
            const double bound = rounding_bound(w_row, &p.x[i * k], kern->lhs_type == GgmlType::Q8_K ? 256 : 32);
            ASSERT_NEAR(y[i * p.n + j], y_ref[i * p.n + j], bound) << "row " << i << " col " << j;
          }
        }
        continue;
      }
      for (size_t j = 0; j < p.n; ++j) {
        kernels::ref::type_ops(kern->rhs_type)->dequantize_row(p.w.data() + j * bytes_of_row(kern->rhs_type, k),
                                                               w_row.data(), k);
        for (size_t i = 0; i < p.m; ++i) {
          double exact = 0, magnitude = 0;
          for (size_t t = 0; t < k; ++t) {
            exact += double{w_row[t]} * double{p.x[i * k + t]};
            magnitude += std::fabs(double{w_row[t]} * double{p.x[i * k + t]});
          }
          const double bound = static_cast<double>(k + 16) * 0x1p-23 * magnitude;
          ASSERT_NEAR(y[i * p.n + j], exact, bound) << "row " << i << " col " << j;
        }
      }
    }
  }
}

TEST_P(HwyTarget, PiecesEqualOneCall) {
  for (const MatmulKernel* kern : hwy_kernels()) {
    SCOPED_TRACE(kern->name);
    const Problem p = random_problem(kern->rhs_type, 11, 3 * kern->n_step + 5, 2 * block(kern->rhs_type), 77);
    const std::vector<float> whole = run(*kern, p);
    const std::vector<float> pieces = run(*kern, p, kern->m_step, kern->n_step);
    const std::vector<float> rows = run(*kern, p, 1, 0);
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_EQ(whole[i], pieces[i]) << "element " << i;
      ASSERT_EQ(whole[i], rows[i]) << "element " << i << " (decode row by row)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Compiled, HwyTarget, ::testing::ValuesIn(kernels::hwy::compiled_targets()),
                         [](const ::testing::TestParamInfo<kernels::hwy::Target>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
