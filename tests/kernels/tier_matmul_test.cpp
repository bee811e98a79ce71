// Every non-reference matmul kernel in the registry against its ref twin, on
// the CPU the test runs on. A kernel this CPU cannot run is reported as
// SKIPPED with the missing features, never as passed. Run natively (hwy) and
// under qemu on each CPU model (neon, dotprod, i8mm, sve at several vector
// lengths), the same binary exercises a different set each time.
//
// Three properties:
// 1. Exact data (power-of-two scales, small integer codes, activations that
//    quantize without error): every product and sum is exact in float, so the
//    kernel's result must equal the ref's bit for bit — integer paths must
//    produce exactly the reference's integer sums.
// 2. Random data on odd shapes (N = 1..67, M = 1..17, 64, 128, K from one block
//    to 4096+): |y - y_exact| within the tolerance derived from the formats
//    (see tolerance()).
// 3. Calls on sub-ranges (split as a thread pool would) equal one whole call,
//    bit for bit.
// The float weight types (blocks of one element) also go through every k from
// 1 to 19 and odd long rows (FloatTierMatmul): the vector loops' k tails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;

std::vector<const MatmulKernel*> tier_kernels() {
  std::vector<const MatmulKernel*> out;
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const MatmulKernel* k : kernels::matmul_table(static_cast<GgmlType>(id))) {
      if (k->tier != kernels::Tier::ref) out.push_back(k);
      // A kernel's in-order schedule goes through every check below too.
      if (const MatmulKernel* in_order = kernels::in_order_variant(*k)) out.push_back(in_order);
    }
  }
  return out;
}

size_t block_size(GgmlType t) { return gguf::traits(t).block_size; }
size_t bytes_per_row(GgmlType t, size_t k) { return static_cast<size_t>(*gguf::row_bytes(t, k)); }

struct Operands {
  size_t m, n, k;
  std::vector<float> x;        // (m, k) activations
  std::vector<uint8_t> w;      // (n rows) weights in the GGUF layout
  std::vector<double> w_f;     // (n, k) weights dequantized
};

// y[i, j] with the kernel, in one call or in pieces of the given sizes.
std::vector<float> run(const MatmulKernel& kern, const Operands& o, size_t m_piece = 0, size_t n_piece = 0) {
  std::vector<uint8_t> rhs_packed;
  const uint8_t* rhs = o.w.data();
  if (kern.pack_rhs != nullptr) {
    rhs_packed.resize(kern.rhs_packed_size(o.n, o.k));
    kern.pack_rhs(o.n, o.k, o.w.data(), rhs_packed.data());
    rhs = rhs_packed.data();
  }
  std::vector<uint8_t> lhs(kern.lhs_packed_size(o.m, o.k));
  kern.pack_lhs(o.m, o.k, o.x.data(), o.k, lhs.data());
  const size_t ldy = o.n + 3;  // a stride wider than n: the kernel must not write past column n
  std::vector<float> y(o.m * ldy, -12345.0f);
  const size_t mp = m_piece == 0 ? o.m : m_piece;
  const size_t np = n_piece == 0 ? o.n : n_piece;
  for (size_t m0 = 0; m0 < o.m; m0 += mp) {
    for (size_t n0 = 0; n0 < o.n; n0 += np) {
      kern.run(std::min(mp, o.m - m0), std::min(np, o.n - n0), o.k, lhs.data() + kern.lhs_packed_offset(m0, o.k),
               rhs + kern.rhs_packed_offset(n0, o.k), y.data() + m0 * ldy + n0, ldy);
    }
  }
  std::vector<float> out(o.m * o.n);
  for (size_t i = 0; i < o.m; ++i) {
    for (size_t j = 0; j < o.n; ++j) out[i * o.n + j] = y[i * ldy + j];
    for (size_t j = o.n; j < ldy; ++j) EXPECT_EQ(y[i * ldy + j], -12345.0f) << "wrote past column n";
  }
  return out;
}

void dequantize_weights(Operands& o, GgmlType type) {
  std::vector<float> row(o.k);
  o.w_f.resize(o.n * o.k);
  for (size_t j = 0; j < o.n; ++j) {
    kernels::ref::type_ops(type)->dequantize_row(o.w.data() + j * bytes_per_row(type, o.k), row.data(), o.k);
    for (size_t i = 0; i < o.k; ++i) o.w_f[j * o.k + i] = row[i];
  }
}

Operands random_operands(GgmlType type, size_t m, size_t n, size_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Operands o{m, n, k, std::vector<float>(m * k), std::vector<uint8_t>(n * bytes_per_row(type, k)), {}};
  for (float& v : o.x) v = normal(rng);
  std::vector<float> row(k);
  for (size_t j = 0; j < n; ++j) {
    for (float& v : row) v = normal(rng) * 0.1f;
    kernels::ref::type_ops(type)->quantize_row(row.data(), o.w.data() + j * bytes_per_row(type, k), k);
  }
  dequantize_weights(o, type);
  return o;
}

// The first m activation rows and n weight rows of o. Quantizing random
// weights to the K types searches scales per block, and under qemu it was
// most of the suite's time (84% of the instructions of the N = 1..67 sweep):
// the sweeps quantize their largest shape once and take slices of it.
Operands first_rows(const Operands& o, size_t m, size_t n, GgmlType type) {
  const size_t row = bytes_per_row(type, o.k);
  return Operands{m,
                  n,
                  o.k,
                  {o.x.begin(), o.x.begin() + static_cast<long>(m * o.k)},
                  {o.w.begin(), o.w.begin() + static_cast<long>(n * row)},
                  {o.w_f.begin(), o.w_f.begin() + static_cast<long>(n * o.k)}};
}

// Weights built block by block with power-of-two scales and random codes;
// activations whose 8-bit quantization is exact (each block of 32 has one
// element of +-127 units, the others within +-15 units, unit 2^-6).
Operands exact_operands(GgmlType type, size_t m, size_t n, size_t k, uint32_t seed) {
  using namespace kernels::ref;
  std::mt19937 rng(seed);
  auto byte = [&] { return static_cast<uint8_t>(rng()); };
  auto small = [&](int lim) { return static_cast<int>(rng() % (2 * lim + 1)) - lim; };
  const uint16_t pow2 = fp32_to_fp16(0.0625f);
  const uint16_t pow2b = fp32_to_fp16(0.125f);
  Operands o{m, n, k, std::vector<float>(m * k), std::vector<uint8_t>(n * bytes_per_row(type, k)), {}};
  for (size_t i = 0; i < m * k; ++i) {
    o.x[i] = static_cast<float>(i % 32 == rng() % 32 ? (rng() & 1 ? 127 : -127) : small(15)) * 0x1p-6f;
  }
  for (size_t i = 0; i < m * k; i += 32) o.x[i] = 127 * 0x1p-6f;  // every block's maximum is exact
  uint8_t* w = o.w.data();
  const size_t blocks = n * k / block_size(type);
  auto put16 = [](uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); };
  for (size_t b = 0; b < blocks; ++b) {
    switch (type) {
      case GgmlType::F32: {
        const float v = static_cast<float>(small(15)) * 0.125f;
        std::memcpy(w, &v, 4);
        w += 4;
        break;
      }
      case GgmlType::F16:
        put16(w, fp32_to_fp16(static_cast<float>(small(15)) * 0.125f));
        w += 2;
        break;
      case GgmlType::BF16:
        put16(w, fp32_to_bf16(static_cast<float>(small(15)) * 0.125f));
        w += 2;
        break;
      case GgmlType::Q8_0: {
        auto* blk = reinterpret_cast<BlockQ8_0*>(w);
        blk->d = pow2;
        for (auto& q : blk->qs) q = static_cast<int8_t>(small(127));
        w += sizeof *blk;
        break;
      }
      case GgmlType::Q4_0:
      case GgmlType::Q4_1:
      case GgmlType::Q5_0:
      case GgmlType::Q5_1:
      case GgmlType::Q4_K:
      case GgmlType::Q5_K:
      case GgmlType::Q6_K:
      case GgmlType::Q2_K:
      case GgmlType::Q3_K:
      case GgmlType::IQ4_NL:
      case GgmlType::IQ4_XS: {
        const size_t bytes = gguf::traits(type).block_bytes;
        for (size_t i = 0; i < bytes; ++i) w[i] = byte();
        if (type == GgmlType::Q4_0 || type == GgmlType::Q5_0) put16(w, pow2);
        if (type == GgmlType::Q4_1 || type == GgmlType::Q5_1) {
          put16(w, pow2);
          put16(w + 2, pow2b);
        }
        if (type == GgmlType::Q4_K || type == GgmlType::Q5_K) {
          put16(w, pow2);
          put16(w + 2, pow2b);
        }
        if (type == GgmlType::Q2_K) {
          put16(w + offsetof(BlockQ2_K, d), pow2);
          put16(w + offsetof(BlockQ2_K, dmin), pow2b);
        }
        if (type == GgmlType::Q3_K) put16(w + offsetof(BlockQ3_K, d), pow2);
        if (type == GgmlType::IQ4_NL || type == GgmlType::IQ4_XS) put16(w, pow2);
        if (type == GgmlType::Q6_K) {
          auto* blk = reinterpret_cast<BlockQ6_K*>(w);
          blk->d = pow2;
          for (auto& s : blk->scales) s = static_cast<int8_t>(small(31));
        }
        w += bytes;
        break;
      }
      default:
        ADD_FAILURE() << "no exact-data builder for " << gguf::type_name(type);
        return o;
    }
  }
  dequantize_weights(o, type);
  return o;
}

// The error bound of one output: the activation format's rounding of x plus
// float accumulation, derived from the formats:
// - F32 activations: none; F16: half an ulp, |x| 2^-11 (+2^-25 absolute);
//   BF16: |x| 2^-8; 8-bit blocks (Q8_0, Q8_1, Q8_K): half a step, amax/254 per
//   element, plus the fp16 rounding of the Q8_0/Q8_1 block scale (127 d 2^-11).
// - accumulation in float: (blocks + 16) 2^-23 sum |w x| for any summation order.
double tolerance(const MatmulKernel& kern, const Operands& o, size_t i, size_t j) {
  const double* w = &o.w_f[j * o.k];
  const float* x = &o.x[i * o.k];
  double bound = 0, abs_dot = 0;
  const GgmlType a = kern.lhs_type;
  const size_t group = a == GgmlType::Q8_K ? 256 : 32;
  for (size_t b = 0; b < o.k; b += group) {
    double amax = 0;
    for (size_t t = b; t < std::min(o.k, b + group); ++t) amax = std::max(amax, std::fabs(static_cast<double>(x[t])));
    for (size_t t = b; t < std::min(o.k, b + group); ++t) {
      double e = 0;
      if (a == GgmlType::F16) e = std::fabs(x[t]) * 0x1p-11 + 0x1p-25;
      if (a == GgmlType::BF16) e = std::fabs(x[t]) * 0x1p-8;
      if (a == GgmlType::Q8_0 || a == GgmlType::Q8_1) e = amax / 254 + amax * 0x1p-11;
      if (a == GgmlType::Q8_K) e = amax / 254;
      bound += std::fabs(w[t]) * e;
      abs_dot += std::fabs(w[t] * x[t]) + std::fabs(w[t]) * e;
    }
  }
  const double blocks = static_cast<double>(o.k) / static_cast<double>(block_size(kern.rhs_type));
  return bound + (blocks + 16) * 0x1p-23 * abs_dot + 1e-30;
}

std::string missing(const MatmulKernel& k) {
  std::string s;
  for (uint32_t i = 0; i < static_cast<uint32_t>(kernels::Feature::kCount); ++i) {
    if (((k.required_features >> i) & 1) && !kernels::host_cpu_features().has(static_cast<kernels::Feature>(i))) {
      s += std::string(s.empty() ? "" : "+") + kernels::feature_name(static_cast<kernels::Feature>(i));
    }
  }
  return s.empty() ? std::string("another architecture") : s;
}

class TierMatmul : public ::testing::TestWithParam<const MatmulKernel*> {
 protected:
  void SetUp() override {
    kern_ = GetParam();
    if (!kernels::can_run(*kern_, kernels::host_cpu_features())) {
      GTEST_SKIP() << kern_->name << " needs " << missing(*kern_) << ", which this CPU ("
                   << kernels::host_cpu_features().describe() << ") lacks";
    }
    ref_ = kernels::ref::ref_matmul_kernel(kern_->rhs_type);
    ASSERT_NE(ref_, nullptr);
  }
  size_t bs() const { return block_size(kern_->rhs_type) < 32 ? 32 : block_size(kern_->rhs_type); }

  void check_random(size_t m, size_t n, size_t k, uint32_t seed) {
    check(random_operands(kern_->rhs_type, m, n, k, seed));
  }

  void check(const Operands& o) {
    const size_t m = o.m, n = o.n, k = o.k;
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
    const std::vector<float> y = run(*kern_, o);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double exact = 0;
        for (size_t t = 0; t < k; ++t) exact += o.w_f[j * k + t] * static_cast<double>(o.x[i * k + t]);
        ASSERT_NEAR(y[i * n + j], exact, tolerance(*kern_, o, i, j)) << "row " << i << " col " << j;
      }
    }
  }

  const MatmulKernel* kern_ = nullptr;
  const MatmulKernel* ref_ = nullptr;
};

TEST_P(TierMatmul, ExactDataGivesTheRefResultBitForBit) {
  for (size_t k : {bs(), 2 * bs(), 4 * bs() <= 1024 ? 4 * bs() : bs()}) {
    for (auto [m, n] : {std::pair<size_t, size_t>{1, 1}, {1, 9}, {3, 17}, {8, 8}, {17, 5}}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
      const Operands o = exact_operands(kern_->rhs_type, m, n, k, static_cast<uint32_t>(m * 131 + n * 7 + k));
      const std::vector<float> y = run(*kern_, o);
      const std::vector<float> y_ref = run(*ref_, o);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double exact = 0;
          for (size_t t = 0; t < k; ++t) exact += o.w_f[j * k + t] * static_cast<double>(o.x[i * k + t]);
          ASSERT_EQ(y_ref[i * n + j], exact) << "the data is not exact: row " << i << " col " << j;
          ASSERT_EQ(y[i * n + j], y_ref[i * n + j]) << "row " << i << " col " << j;
        }
      }
    }
  }
}

TEST_P(TierMatmul, DecodeEveryNFrom1To67) {
  const Operands all = random_operands(kern_->rhs_type, 1, 67, 2 * bs(), 67);
  for (size_t n = 1; n <= 67; ++n) check(first_rows(all, 1, n, kern_->rhs_type));
}

TEST_P(TierMatmul, PrefillEveryMFrom1To17AndWideBatches) {
  const Operands all = random_operands(kern_->rhs_type, 17, 9, bs(), 117);
  for (size_t m = 1; m <= 17; ++m) check(first_rows(all, m, 9, kern_->rhs_type));
  check_random(64, 19, 2 * bs(), 7);
  check_random(128, 5, bs(), 8);
}

TEST_P(TierMatmul, LongRows) {
  const size_t k = (4096 / bs() + 1) * bs();  // past 4096, not a power of two
  check_random(1, 7, k, 11);
  check_random(5, 3, k, 12);
}

TEST_P(TierMatmul, ExtremeBlocks) {
  // All-zero weights and activations, and activations with one huge outlier.
  Operands o = random_operands(kern_->rhs_type, 3, 5, 2 * bs(), 21);
  std::fill(o.x.begin(), o.x.begin() + static_cast<long>(o.k), 0.0f);
  o.x[o.k + 3] = 1e4f;
  const std::vector<float> y = run(*kern_, o);
  for (size_t j = 0; j < o.n; ++j) EXPECT_EQ(y[j], 0.0f);
  std::vector<float> zero_row(o.k, 0.0f);
  Operands z = o;
  for (size_t j = 0; j < z.n; ++j) {
    const size_t bytes = bytes_per_row(kern_->rhs_type, z.k);
    kernels::ref::type_ops(kern_->rhs_type)->quantize_row(zero_row.data(), z.w.data() + j * bytes, z.k);
  }
  for (float v : run(*kern_, z)) EXPECT_EQ(v, 0.0f);
  for (size_t i = 0; i < o.m; ++i) {
    for (size_t j = 0; j < o.n; ++j) {
      double exact = 0;
      for (size_t t = 0; t < o.k; ++t) exact += o.w_f[j * o.k + t] * static_cast<double>(o.x[i * o.k + t]);
      EXPECT_NEAR(y[i * o.n + j], exact, tolerance(*kern_, o, i, j));
    }
  }
}

TEST_P(TierMatmul, PiecesEqualOneCall) {
  const size_t m = 2 * kern_->m_step + 1, n = 3 * kern_->n_step + 2;
  const Operands o = random_operands(kern_->rhs_type, m, n, 2 * bs(), 31);
  const std::vector<float> whole = run(*kern_, o);
  const std::vector<float> pieces = run(*kern_, o, kern_->m_step, kern_->n_step);
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], pieces[i]) << "element " << i;
}

// pack_lhs on slices of m_step rows writes the bytes of one call over all
// rows (kernels/matmul.h), so a session can quantize a batch's activations
// across threads.
TEST_P(TierMatmul, PackingActivationsInSlicesWritesTheSameBytes) {
  const size_t m = 3 * kern_->m_step + 1, k = 2 * bs();
  const Operands o = random_operands(kern_->rhs_type, m, 1, k, 41);
  std::vector<uint8_t> whole(kern_->lhs_packed_size(m, k), 0xA5), sliced(whole.size(), 0xA5);
  kern_->pack_lhs(m, k, o.x.data(), k, whole.data());
  for (size_t m0 = 0; m0 < m; m0 += kern_->m_step) {
    const size_t rows = std::min(kern_->m_step, m - m0);
    kern_->pack_lhs(rows, k, o.x.data() + m0 * k, k, sliced.data() + kern_->lhs_packed_offset(m0, k));
  }
  ASSERT_EQ(std::memcmp(whole.data(), sliced.data(), whole.size()), 0);
}

// The float weight types (F32, F16, BF16) have blocks of one element, so k is
// anything: every k % 8 tail of the vector loops, rows shorter than one
// vector, and a long row with a tail, in one call and in pieces.
class FloatTierMatmul : public TierMatmul {};

TEST_P(FloatTierMatmul, AnyKIncludingTails) {
  for (size_t k = 1; k <= 19; ++k) check_random(5, 7, k, static_cast<uint32_t>(k));
  check_random(6, 9, 1003, 3);
  for (size_t k : {size_t{7}, size_t{37}}) {
    const size_t m = 2 * kern_->m_step + 1, n = 3 * kern_->n_step + 2;
    const Operands o = random_operands(kern_->rhs_type, m, n, k, 33);
    const std::vector<float> whole = run(*kern_, o);
    const std::vector<float> pieces = run(*kern_, o, kern_->m_step, kern_->n_step);
    for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], pieces[i]) << "k=" << k << " element " << i;
  }
}

// A kernel's in-order schedule gives its run()'s results bit for bit, so a
// pool whose threads choose by core stays deterministic: random data, one
// block to nine (every pairing of blocks and a lone last one), decode and a
// few rows.
TEST(InOrderSchedule, GivesTheResultsOfRunBitForBit) {
  size_t checked = 0;
  for (const MatmulKernel* kern : tier_kernels()) {
    if (kern->run_in_order == nullptr || !kernels::can_run(*kern, kernels::host_cpu_features())) continue;
    const MatmulKernel* twin = kernels::in_order_variant(*kern);
    const size_t bs = std::max<size_t>(block_size(kern->rhs_type), 32);
    for (size_t blocks = 1; blocks <= 9; ++blocks) {
      for (size_t m : {size_t{1}, size_t{5}}) {
        const Operands o = random_operands(kern->rhs_type, m, 11, blocks * bs, static_cast<uint32_t>(blocks * 7 + m));
        const std::vector<float> y = run(*kern, o), y_in_order = run(*twin, o);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(y_in_order[i], y[i]) << kern->name << " blocks " << blocks << " m " << m << " element " << i;
        }
      }
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no kernel with an in-order schedule runs on this CPU";
}

std::vector<const MatmulKernel*> float_kernels(std::vector<const MatmulKernel*> all) {
  std::erase_if(all, [](const MatmulKernel* k) { return block_size(k->rhs_type) != 1; });
  return all;
}

std::vector<const MatmulKernel*> ref_kernels() {
  std::vector<const MatmulKernel*> out;
  for (const MatmulKernel& k : kernels::ref::ref_matmul_kernels()) out.push_back(&k);
  return out;
}

std::string kernel_name(const ::testing::TestParamInfo<const MatmulKernel*>& p) { return p.param->name; }

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TierMatmul);
// The ref kernels through the same checks: proves the exact data is exact and
// the tolerances hold for the oracle itself.
INSTANTIATE_TEST_SUITE_P(Ref, TierMatmul, ::testing::ValuesIn(ref_kernels()), kernel_name);
INSTANTIATE_TEST_SUITE_P(Registry, TierMatmul, ::testing::ValuesIn(tier_kernels()), kernel_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FloatTierMatmul);
INSTANTIATE_TEST_SUITE_P(Ref, FloatTierMatmul, ::testing::ValuesIn(float_kernels(ref_kernels())), kernel_name);
INSTANTIATE_TEST_SUITE_P(Registry, FloatTierMatmul, ::testing::ValuesIn(float_kernels(tier_kernels())), kernel_name);

}  // namespace
