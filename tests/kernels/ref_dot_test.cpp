// vec_dot of every weight type with its activation format, against the dot of
// the dequantized rows: within float rounding on random rows, and exactly
// where every value and partial sum is representable (power-of-two scales,
// small codes), which pins down the integer block math bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "tests/kernels/ref_test_util.h"

namespace {

using gguf::GgmlType;
using kernels::ref::fp16_to_fp32;
using kernels::ref::fp32_to_fp16;
using kernels::ref::QK;
using kernels::ref::QK_K;
using ref_test::dequantize;
using ref_test::normal_row;
using ref_test::ops;
using ref_test::quantize;

constexpr GgmlType kWeightTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                     GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                     GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q2_K,
                                     GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

std::string name(GgmlType t) { return std::string(gguf::type_name(t)); }

bool is_float(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

double exact_dot(const std::vector<float>& w, const std::vector<float>& a) {
  double sum = 0;
  for (size_t i = 0; i < w.size(); ++i) sum += double{w[i]} * double{a[i]};
  return sum;
}

// How far vec_dot may be from the double dot of the dequantized rows.
//
// Integer formats: each block adds (d_w d_a) * sum + (offset term) with at
// most 4 roundings (the scale product, int -> float, the multiply, the add),
// then nb additions accumulate: |error| <= (nb + 4) u sum_i (|d q_i| + |off_i|)
// |a_i|, u = 2^-24, and |d q_i| <= |w_i| + |off_i|. The reference's float
// dequantization adds 2u sum |w_i a_i|. We allow twice that:
//   (nb + 6) * 2^-23 * sum_i (|w_i| + 2 |off_i|) |a_i|.
// With Q8_1 activations the offset term uses s = fp16(d_a sum_j c_j), not the
// dequantized sum, adding |m_b| * (fp16 error of s_b) per block (x2 for a
// rounding at a binade edge).
// Float formats: exact products summed in double, rounded once:
//   2^-24 |dot| + k 2^-52 sum |w_i a_i|.
double dot_tolerance(GgmlType type, const std::vector<uint8_t>& w, const std::vector<float>& w_deq,
                     const std::vector<uint8_t>& a, const std::vector<float>& a_deq) {
  const size_t k = w_deq.size();
  double sum_abs = 0;
  for (size_t i = 0; i < k; ++i) sum_abs += std::fabs(double{w_deq[i]} * a_deq[i]);
  if (is_float(type)) return 0x1p-24 * std::fabs(exact_dot(w_deq, a_deq)) + double(k) * 0x1p-52 * sum_abs;

  const std::vector<double> offsets = ref_test::offset_magnitudes(type, w.data(), k);
  double magnitude = 0;
  for (size_t i = 0; i < k; ++i) magnitude += (std::fabs(double{w_deq[i]}) + 2 * offsets[i]) * std::fabs(a_deq[i]);
  const double blocks = double(k) / gguf::traits(type).block_size;
  double tolerance = (blocks + 6) * 0x1p-23 * magnitude;
  if (ops(type).dot_type == GgmlType::Q8_1) {
    const auto* act = reinterpret_cast<const kernels::ref::BlockQ8_1*>(a.data());
    for (size_t b = 0; b < k / QK; ++b) {
      tolerance += offsets[b * QK] * 2 * ref_test::fp16_store_error(fp16_to_fp32(act[b].s));
    }
  }
  return tolerance;
}

TEST(RefDot, MatchesDequantizedDotWithinFloatRounding) {
  const size_t k = 1024;
  for (GgmlType type : kWeightTypes) {
    const GgmlType dot_type = ops(type).dot_type;
    for (uint32_t seed = 0; seed < 6; ++seed) {
      std::vector<float> x = normal_row(k, 100 + seed);
      std::vector<float> act = normal_row(k, 200 + seed, seed % 2 == 0 ? 1.0f : 0.01f);
      if (seed == 3) act[77] = 300.0f;  // an activation outlier
      if (seed == 4) std::fill(act.begin(), act.begin() + 256, 0.0f);
      const std::vector<uint8_t> w = quantize(type, x);
      const std::vector<uint8_t> a = quantize(dot_type, act);
      const std::vector<float> w_deq = dequantize(type, w, k);
      const std::vector<float> a_deq = dequantize(dot_type, a, k);

      const float got = ops(type).vec_dot(k, w.data(), a.data());
      const double want = exact_dot(w_deq, a_deq);
      EXPECT_NEAR(got, want, dot_tolerance(type, w, w_deq, a, a_deq)) << name(type) << " seed " << seed;
    }
  }
}

// ---- exact: every float operation of vec_dot is exact

// Random block bytes with power-of-two fp16 scales: the dequantized weights
// are integers times 2^-5 of at most 12 bits, so the dot's terms are exact.
std::vector<uint8_t> random_weight_row(GgmlType type, size_t k, std::mt19937& rng) {
  using namespace kernels::ref;
  std::vector<uint8_t> row(ref_test::row_size(type, k));
  if (is_float(type)) {  // small integers times 2^-3: exact in F16 and BF16
    std::uniform_int_distribution<int> v(-8, 8);
    std::vector<float> x(k);
    for (float& f : x) f = v(rng) * 0.125f;
    ops(type).quantize_row(x.data(), row.data(), k);
    return row;
  }
  for (uint8_t& byte : row) byte = static_cast<uint8_t>(rng());
  const uint16_t d = fp32_to_fp16(0.0625f), dmin = fp32_to_fp16(0.03125f);
  std::uniform_int_distribution<int> small(-8, 8);
  auto set_half = [](uint8_t* at, uint16_t v) { std::memcpy(at, &v, sizeof v); };
  const size_t block_bytes = gguf::traits(type).block_bytes;
  for (size_t b = 0; b < row.size(); b += block_bytes) {
    uint8_t* block = row.data() + b;
    switch (type) {
      case GgmlType::Q4_0:
      case GgmlType::Q5_0:
      case GgmlType::Q8_0:
        set_half(block, d);
        break;
      case GgmlType::Q4_1:
      case GgmlType::Q5_1:  // m: a small integer times 2^-5
        set_half(block, d);
        set_half(block + 2, fp32_to_fp16(small(rng) * 0.03125f));
        break;
      case GgmlType::Q4_K:
      case GgmlType::Q5_K:
        set_half(block, d);
        set_half(block + 2, dmin);
        break;
      case GgmlType::Q6_K:
        set_half(block + offsetof(BlockQ6_K, d), d);
        break;
      case GgmlType::Q2_K:
        set_half(block + offsetof(BlockQ2_K, d), d);
        set_half(block + offsetof(BlockQ2_K, dmin), dmin);
        break;
      case GgmlType::Q3_K:
        set_half(block + offsetof(BlockQ3_K, d), d);
        break;
      case GgmlType::IQ4_NL:
      case GgmlType::IQ4_XS:
        set_half(block, d);
        break;
      default:
        ADD_FAILURE() << name(type);
    }
  }
  return row;
}

// Activation blocks with codes in -8..8 and power-of-two scales.
std::vector<uint8_t> random_activation_row(GgmlType dot_type, size_t k, std::mt19937& rng) {
  using namespace kernels::ref;
  std::uniform_int_distribution<int> code(-8, 8);
  std::vector<uint8_t> row(ref_test::row_size(dot_type, k));
  if (dot_type == GgmlType::F32) {
    std::vector<float> x(k);
    for (float& f : x) f = code(rng) * 0.25f;
    std::memcpy(row.data(), x.data(), k * sizeof(float));
  } else if (dot_type == GgmlType::Q8_0 || dot_type == GgmlType::Q8_1) {
    for (size_t b = 0; b < k / QK; ++b) {
      const float d = b % 2 == 0 ? 0.25f : 0.125f;
      int sum = 0;
      int8_t qs[QK];
      for (int8_t& q : qs) sum += (q = static_cast<int8_t>(code(rng)));
      if (dot_type == GgmlType::Q8_0) {
        auto& block = reinterpret_cast<BlockQ8_0*>(row.data())[b];
        block.d = fp32_to_fp16(d);
        std::memcpy(block.qs, qs, QK);
      } else {
        auto& block = reinterpret_cast<BlockQ8_1*>(row.data())[b];
        block.d = fp32_to_fp16(d);
        block.s = fp32_to_fp16(d * float(sum));  // |sum| <= 256: exact in fp16
        std::memcpy(block.qs, qs, QK);
      }
    }
  } else {
    for (size_t b = 0; b < k / QK_K; ++b) {
      auto& block = reinterpret_cast<BlockQ8_K*>(row.data())[b];
      block.d = 0.015625f;
      for (int8_t& q : block.qs) q = static_cast<int8_t>(code(rng));
      for (size_t g = 0; g < QK_K / 16; ++g) {
        int sum = 0;
        for (size_t i = 0; i < 16; ++i) sum += block.qs[16 * g + i];
        block.bsums[g] = static_cast<int16_t>(sum);
      }
    }
  }
  return row;
}

bool representable_in_float(double v) { return double(float(v)) == v; }

TEST(RefDot, ExactWhenEveryTermIsRepresentable) {
  std::mt19937 rng(42);
  for (GgmlType type : kWeightTypes) {
    const GgmlType dot_type = ops(type).dot_type;
    const size_t block = std::max<size_t>(gguf::traits(type).block_size, 32);
    const size_t k = 2 * QK_K;
    for (int trial = 0; trial < 8; ++trial) {
      const std::vector<uint8_t> w = random_weight_row(type, k, rng);
      const std::vector<uint8_t> a = random_activation_row(dot_type, k, rng);
      const std::vector<float> w_deq = dequantize(type, w, k);
      const std::vector<float> a_deq = dequantize(dot_type, a, k);
      // Precondition: every block's contribution and every running sum is a
      // float, so no operation inside vec_dot can round.
      double running = 0;
      for (size_t b = 0; b < k; b += block) {
        double contribution = 0;
        for (size_t i = b; i < b + block; ++i) contribution += double{w_deq[i]} * a_deq[i];
        running += contribution;
        ASSERT_TRUE(representable_in_float(contribution) && representable_in_float(running)) << name(type);
      }
      EXPECT_EQ(double{ops(type).vec_dot(k, w.data(), a.data())}, exact_dot(w_deq, a_deq))
          << name(type) << " trial " << trial;
    }
  }
}

}  // namespace
