// Quantize / dequantize of the ref types: the type table, and round trips with
// error bounds derived from each format on random and edge rows. The exact
// bytes of hand-derived blocks are in ref_known_blocks_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ref/blocks.h"
#include "tests/kernels/ref_test_util.h"

namespace {

using gguf::GgmlType;
using kernels::ref::QK;
using kernels::ref::QK_K;
using ref_test::dequantize;
using ref_test::fp16_store_error;
using ref_test::normal_row;
using ref_test::quantize;

constexpr GgmlType kLegacy[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1};
constexpr GgmlType kSuperBlock[] = {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K};
constexpr GgmlType kFloat[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16};

std::string name(GgmlType t) { return std::string(gguf::type_name(t)); }

// ------------------------------------------------------------------ table

TEST(RefTypeOps, TableCoversTheComputedTypesWithMatchingLayouts) {
  struct Expect {
    GgmlType type;
    GgmlType dot;
    size_t block_size;
    size_t block_bytes;
    bool has_dot;
  };
  const Expect expected[] = {
      {GgmlType::F32, GgmlType::F32, 1, 4, true},
      {GgmlType::F16, GgmlType::F32, 1, 2, true},
      {GgmlType::BF16, GgmlType::F32, 1, 2, true},
      {GgmlType::Q4_0, GgmlType::Q8_0, QK, sizeof(kernels::ref::BlockQ4_0), true},
      {GgmlType::Q4_1, GgmlType::Q8_1, QK, sizeof(kernels::ref::BlockQ4_1), true},
      {GgmlType::Q5_0, GgmlType::Q8_0, QK, sizeof(kernels::ref::BlockQ5_0), true},
      {GgmlType::Q5_1, GgmlType::Q8_1, QK, sizeof(kernels::ref::BlockQ5_1), true},
      {GgmlType::Q8_0, GgmlType::Q8_0, QK, sizeof(kernels::ref::BlockQ8_0), true},
      {GgmlType::Q8_1, GgmlType::Q8_1, QK, sizeof(kernels::ref::BlockQ8_1), false},
      {GgmlType::Q4_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ4_K), true},
      {GgmlType::Q5_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ5_K), true},
      {GgmlType::Q6_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ6_K), true},
      {GgmlType::Q2_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ2_K), true},
      {GgmlType::Q3_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ3_K), true},
      {GgmlType::IQ4_NL, GgmlType::Q8_0, QK, sizeof(kernels::ref::BlockIQ4_NL), true},
      {GgmlType::IQ4_XS, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockIQ4_XS), true},
      {GgmlType::Q8_K, GgmlType::Q8_K, QK_K, sizeof(kernels::ref::BlockQ8_K), false},
  };
  for (const Expect& e : expected) {
    const kernels::ref::TypeOps* ops = kernels::ref::type_ops(e.type);
    ASSERT_NE(ops, nullptr) << name(e.type);
    EXPECT_EQ(ops->type, e.type);
    EXPECT_EQ(ops->dot_type, e.dot) << name(e.type);
    EXPECT_EQ(ops->vec_dot != nullptr, e.has_dot) << name(e.type);
    EXPECT_NE(ops->quantize_row, nullptr);
    EXPECT_NE(ops->dequantize_row, nullptr);
    EXPECT_EQ(gguf::traits(e.type).block_size, e.block_size) << name(e.type);
    EXPECT_EQ(gguf::traits(e.type).block_bytes, e.block_bytes) << name(e.type);
  }
  for (GgmlType t : {GgmlType::IQ2_XS, GgmlType::IQ3_S, GgmlType::IQ4_NL_4_4, GgmlType::I8, GgmlType::F64}) {
    EXPECT_EQ(kernels::ref::type_ops(t), nullptr) << name(t);
  }
}

// ------------------------------------------------------------------ round trips

// Rows every format must survive, each a multiple of 256 long.
struct EdgeRow {
  const char* what;
  std::vector<float> x;
};

std::vector<EdgeRow> edge_rows() {
  const size_t k = 512;
  std::vector<EdgeRow> rows;
  rows.push_back({"zeros", std::vector<float>(k, 0.0f)});
  rows.push_back({"constant", std::vector<float>(k, 0.7f)});
  rows.push_back({"negative constant", std::vector<float>(k, -0.7f)});
  std::vector<float> outlier = normal_row(k, 7);
  outlier[37] = 1000.0f;
  rows.push_back({"one huge outlier", outlier});
  std::vector<float> negative_max = normal_row(k, 8);
  negative_max[300] = -50.0f;
  rows.push_back({"negative max", negative_max});
  std::vector<float> mixed = normal_row(k, 9);  // block b scaled by 10^(b % 7 - 3)
  for (size_t i = 0; i < k; ++i) mixed[i] *= std::pow(10.0f, float(int(i / 32 % 7) - 3));
  rows.push_back({"mixed magnitudes", mixed});
  rows.push_back({"fp16-subnormal scales", normal_row(k, 10, 1e-6f)});
  rows.push_back({"fp32 subnormals", normal_row(k, 11, 1e-39f)});
  return rows;
}

// The largest |x - y| the format allows for element j of the block at x.
// Codes are rounded to nearest except where noted; d and m are then stored in
// fp16, which moves y by |q| * fp16_store_error(d) + fp16_store_error(m). The
// last term covers float rounding inside quantize and dequantize.
double legacy_bound(GgmlType type, const float* x, size_t j) {
  double abs_max = 0, signed_max = 0, lo = x[0], hi = x[0];
  for (size_t i = 0; i < QK; ++i) {
    if (abs_max < std::fabs(x[i])) {
      abs_max = std::fabs(x[i]);
      signed_max = x[i];
    }
    lo = std::min<double>(lo, x[i]);
    hi = std::max<double>(hi, x[i]);
  }
  const double float_noise = 1e-5 * abs_max + 1e-44;
  switch (type) {
    case GgmlType::Q8_0:
    case GgmlType::Q8_1: {  // d = amax / 127, |q| <= 127
      const double d = abs_max / 127;
      return d / 2 + 127 * fp16_store_error(d) + float_noise;
    }
    case GgmlType::Q4_0:
    case GgmlType::Q5_0: {
      // d = max / -levels maps the signed extreme to code 0 (-levels); the
      // opposite side reaches +levels but the top code is levels - 1, so there
      // (x/d > levels - 1/2) the error grows to one step.
      const double levels = type == GgmlType::Q4_0 ? 8 : 16;
      const double d = signed_max / -levels;
      const double steps = d != 0 ? x[j] / d : 0;
      return (steps <= levels - 0.5 ? std::fabs(d) / 2 : std::fabs(d)) + levels * fp16_store_error(d) + float_noise;
    }
    case GgmlType::Q4_1:
    case GgmlType::Q5_1: {  // d = (max - min) / top, y = d * q + min, q in 0..top
      const double top = type == GgmlType::Q4_1 ? 15 : 31;
      const double d = (hi - lo) / top;
      return d / 2 + top * fp16_store_error(d) + fp16_store_error(lo) + float_noise;
    }
    default:
      ADD_FAILURE() << "not a legacy type";
      return 0;
  }
}

void expect_legacy_round_trip(GgmlType type, const std::vector<float>& x, const std::string& what) {
  const std::vector<float> y = dequantize(type, quantize(type, x), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double bound = legacy_bound(type, x.data() + i / QK * QK, i % QK);
    ASSERT_LE(std::fabs(double{y[i]} - x[i]), bound)
        << name(type) << " " << what << ": element " << i << " x=" << x[i] << " y=" << y[i];
  }
}

TEST(RefQuants, LegacyRoundTripWithinFormatBound) {
  for (GgmlType type : kLegacy) {
    for (uint32_t seed = 0; seed < 4; ++seed) expect_legacy_round_trip(type, normal_row(1024, seed), "random");
    for (const EdgeRow& row : edge_rows()) expect_legacy_round_trip(type, row.x, row.what);
  }
}

// RMSE / RMS over a super-block that a correct quantizer stays below on
// Gaussian data, from the step of a uniform quantizer (RMS error step/sqrt(12)):
// - Q4_K: 16 levels over the 32-element sub-block's span [min(x_min, 0), x_max],
//   about 4.1 sigma for 32 normals: step 0.27 sigma, RMSE 0.079 (the fit's search
//   gets 0.072). Bound 0.09.
// - Q5_K: 32 levels over the same span: step 0.132, RMSE 0.038. Bound 0.046.
// - Q6_K: 64 levels over +-amax of 16 elements (about 2.0 sigma): step 0.063,
//   RMSE 0.018. Bound 0.023.
// - Q8_K: 255 levels over +-amax of 256 elements (about 2.9 sigma): step 0.023,
//   RMSE 0.0066. Bound 0.0085.
// Bounds leave ~20% for the 6-/8-bit scale rounding and fp16 super-scales; a
// wrong scale, min or bit unpacking shifts whole sub-blocks by several steps.
// (Rows with outliers are not Gaussian: the small sub-blocks' scales are then
// coarse relative to the outlier's, so they get only the per-element bound.)
double super_block_rmse_bound(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_K: return 0.09;
    case GgmlType::Q5_K: return 0.046;
    case GgmlType::Q6_K: return 0.023;
    case GgmlType::Q8_K: return 0.0085;
    default: return 0;
  }
}

// Per-element bound for any row, from the super-block's amax: at most one step
// of the coarsest sub-block (half a step of rounding plus half a step for the
// rounded 6-/8-bit sub-block scale; the 6-bit mins are absorbed by the
// requantization, which uses the stored values), plus the fp16 rounding of d
// and dmin below fp16's normal range (2^-25 absolute, times the largest
// integer multiplier: sc*q + m). Steps: Q4_K span <= 2 amax over 15 levels,
// Q5_K over 31; Q6_K amax/32 per sub-block; Q8_K is exact rounding with an
// fp32 d: amax/254.
double super_block_element_bound(GgmlType type, double abs_max) {
  switch (type) {
    case GgmlType::Q4_K: return 2 * abs_max / 15 + (63 * 15 + 63) * 0x1p-25;
    case GgmlType::Q5_K: return 2 * abs_max / 31 + (63 * 31 + 63) * 0x1p-25;
    case GgmlType::Q6_K: return abs_max / 32 + 128 * 32 * 0x1p-25;
    case GgmlType::Q8_K:
      // Below 127 / FLT_MAX the scale 127/amax overflows and the block is zeros.
      return abs_max < 127 / double(std::numeric_limits<float>::max()) ? abs_max : abs_max / 254 * (1 + 1e-5);
    default: return 0;
  }
}

void expect_super_block_round_trip(GgmlType type, const std::vector<float>& x, const std::string& what,
                                   bool gaussian) {
  const std::vector<float> y = dequantize(type, quantize(type, x), x.size());
  for (size_t b = 0; b < x.size(); b += QK_K) {
    double squared_error = 0, squared = 0, abs_max = 0;
    for (size_t i = b; i < b + QK_K; ++i) abs_max = std::max(abs_max, std::fabs(double{x[i]}));
    const double bound = super_block_element_bound(type, abs_max);
    for (size_t i = b; i < b + QK_K; ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << name(type) << " " << what << " element " << i;
      ASSERT_LE(std::fabs(double{y[i]} - x[i]), bound)
          << name(type) << " " << what << " element " << i << " x=" << x[i] << " y=" << y[i];
      squared_error += std::pow(double{y[i]} - x[i], 2);
      squared += std::pow(double{x[i]}, 2);
    }
    if (squared == 0) {
      EXPECT_EQ(squared_error, 0) << name(type) << " " << what;
    }
    if (gaussian) {
      EXPECT_LE(std::sqrt(squared_error / squared), super_block_rmse_bound(type))
          << name(type) << " " << what << ", super-block " << b / QK_K;
    }
  }
}

TEST(RefQuants, SuperBlockRoundTripWithinBounds) {
  for (GgmlType type : kSuperBlock) {
    for (uint32_t seed = 0; seed < 4; ++seed) {
      expect_super_block_round_trip(type, normal_row(1024, seed), "random", true);
      // Another scale, still inside fp16's normal range for every super-scale
      // (Q6_K's d = amax / 32 / 128 needs sigma >~ 0.1 for that).
      expect_super_block_round_trip(type, normal_row(1024, seed, 0.125f), "random, sigma 1/8", true);
    }
    for (const EdgeRow& row : edge_rows()) expect_super_block_round_trip(type, row.x, row.what, false);
  }
}

TEST(RefQuants, FloatTypesRoundTrip) {
  for (GgmlType type : kFloat) {
    for (const EdgeRow& row : edge_rows()) {
      const std::vector<float> y = dequantize(type, quantize(type, row.x), row.x.size());
      for (size_t i = 0; i < y.size(); ++i) {
        const double x = row.x[i];
        // Round to nearest: half an ulp. F32 exact; F16 2^-11 relative, 2^-25
        // absolute below its normals; BF16 2^-8 relative, 2^-134 absolute
        // among fp32 subnormals (its ulp there is 2^-133).
        const double bound = type == GgmlType::F32   ? 0
                             : type == GgmlType::F16 ? fp16_store_error(x)
                                                     : std::max(std::fabs(x) * 0x1p-8, 0x1p-134);
        ASSERT_LE(std::fabs(y[i] - x), bound) << name(type) << " " << row.what << " element " << i;
      }
    }
  }
}

}  // namespace
