// The forward pass's row operations against their scalar definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/mixers/delta_net.h"
#include "engine/mixers/shortconv.h"
#include "engine/ops/ops.h"
#include "engine/ops/ops_isa.h"
#include "kernels/cpu_features.h"
#include "kernels/ref/fp16.h"
#include "kernels/tier.h"

namespace {

// Each test of the row operations in ops_isa.h runs every instruction set this
// CPU can run (engine/ops/ops_isa.h), not only the one the engine picks.
#define FOR_EACH_OPS_ISA(v)                                           \
  for (const engine::ops::IsaOps* v : engine::ops::isa_ops_variants()) \
    if (SCOPED_TRACE(std::string("isa ") + v->isa); true)

TEST(Ops, TheBestAttentionIsaRunsAndTheBaselineIsAlwaysThere) {
  const auto variants = engine::ops::isa_ops_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(&engine::ops::isa_ops(), variants.front());
  EXPECT_STREQ(variants.back()->isa, "baseline");
  std::string names;
  for (const auto* v : variants) names += std::string(" ") + v->isa;
  std::printf("row operations compiled and runnable here:%s\n", names.c_str());
}

// The row operations are chosen as the matmul kernels are (kernels/choose.h):
// ENGINE_MAX_TIER=ref caps them to the baseline, and the log line has the
// kernels' format, rejections and reasons included.
TEST(Ops, TheTierCapAppliesToTheRowOperationsAsToTheKernels) {
  const kernels::CpuFeatures& cpu = kernels::host_cpu_features();
  const auto variants = engine::ops::isa_ops_variants();
  EXPECT_EQ(&engine::ops::choose_isa_ops(cpu, std::nullopt), variants.front());
  EXPECT_STREQ(engine::ops::choose_isa_ops(cpu, kernels::Tier::ref).isa, "baseline");
  const std::string capped = engine::ops::describe_isa_ops_choice(cpu, kernels::Tier::ref);
  EXPECT_EQ(capped.rfind("baseline [ref]", 0), 0u) << capped;
  for (const auto* v : variants.first(variants.size() - 1)) {
    EXPECT_NE(capped.find(std::string(v->isa) + " (above ENGINE_MAX_TIER=ref)"), std::string::npos) << capped;
  }
  const std::string best = engine::ops::describe_isa_ops_choice(cpu, std::nullopt);
  EXPECT_EQ(best.rfind(std::string(variants.front()->isa) + " [", 0), 0u) << best;
}

#if defined(__aarch64__)
// The delta rule's SVE variants are compiled for one vector length each: an
// SVE CPU of that length gets it, one of another length gets NEON's, and the
// log says why (the choice is made from the features alone: no CPU runs here).
TEST(Ops, TheSveVariantsAreChosenOnlyAtTheirOwnVectorLength) {
  using kernels::Feature;
  kernels::CpuFeatures cpu = kernels::features_of(kernels::Arch::aarch64, {Feature::asimd, Feature::sve});
  for (const uint32_t bits : {256u, 512u}) {
    cpu.sve_vector_bits = bits;
    const std::string want = "aarch64_sve" + std::to_string(bits);
    EXPECT_EQ(engine::ops::choose_isa_ops(cpu, std::nullopt).isa, want);
    EXPECT_STREQ(engine::ops::choose_isa_ops(cpu, kernels::Tier::neon).isa, "baseline");
  }
  cpu.sve_vector_bits = 128;
  EXPECT_STREQ(engine::ops::choose_isa_ops(cpu, std::nullopt).isa, "baseline");
  const std::string line = engine::ops::describe_isa_ops_choice(cpu, std::nullopt);
  EXPECT_EQ(line, "baseline [ref]; rejected: aarch64_sve512 (compiled for 512-bit SVE, cpu has 128-bit) "
                  "aarch64_sve256 (compiled for 256-bit SVE, cpu has 128-bit)");
  cpu = kernels::features_of(kernels::Arch::aarch64, {Feature::asimd, Feature::dotprod});
  EXPECT_NE(engine::ops::describe_isa_ops_choice(cpu, std::nullopt).find("aarch64_sve256 (cpu lacks sve)"),
            std::string::npos);
}
#endif

TEST(Ops, Fp16RowConversionIsTheReferenceBitForBitOnEveryHalf) {
  FOR_EACH_OPS_ISA(v) {
    std::vector<uint16_t> halves(65536);
    for (uint32_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
    std::vector<float> out(halves.size());
    v->fp16_to_fp32(halves.data(), out.data(), halves.size());
    size_t mismatches = 0;
    for (uint32_t i = 0; i < halves.size(); ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(kernels::ref::fp16_to_fp32(halves[i]));
      const uint32_t got = std::bit_cast<uint32_t>(out[i]);
      if (want != got && ++mismatches <= 5) ADD_FAILURE() << std::hex << "half 0x" << i << ": 0x" << got << ", want 0x" << want;
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

TEST(Ops, Fp16RowConversionHandlesEveryLengthAndOffset) {
  // Vector bodies and scalar tails: lengths 0..40 from unaligned starts.
  std::vector<uint16_t> halves(64);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(0x3c00 + 37 * i);
  FOR_EACH_OPS_ISA(v)
    for (size_t start = 0; start < 3; ++start) {
      for (size_t n = 0; n <= 40; ++n) {
        std::vector<float> out(n + 1, -7.0f);
        v->fp16_to_fp32(halves.data() + start, out.data(), n);
        for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], kernels::ref::fp16_to_fp32(halves[start + i]));
        EXPECT_EQ(out[n], -7.0f) << "wrote past the end, n = " << n;
      }
    }
}


// Every float whose low 13 bits (the ones rounding drops) are one of the
// patterns that decide rounding: zero, just below / at / above the half-way
// point with an even and an odd last kept bit, all ones; with all 2^19 sign,
// exponent and kept-mantissa combinations: infinities, NaNs with payloads,
// overflow to infinity, normals, subnormal halves and underflow to zero.
TEST(Ops, Fp32ToFp16RowConversionIsTheReferenceBitForBit) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0800, 0x0abc};
  std::vector<float> floats;
  floats.reserve(size_t{1} << 22);
  for (uint32_t high = 0; high < (1u << 19); ++high) {
    for (uint32_t low : lows) floats.push_back(std::bit_cast<float>(high << 13 | low));
  }
  std::vector<uint16_t> out(floats.size());
  engine::ops::fp32_to_fp16(floats.data(), out.data(), floats.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < floats.size(); ++i) {
    const uint16_t want = kernels::ref::fp32_to_fp16(floats[i]);
    if (out[i] != want && ++mismatches <= 5) {
      ADD_FAILURE() << std::hex << "float 0x" << std::bit_cast<uint32_t>(floats[i]) << ": 0x" << out[i] << ", want 0x"
                    << want;
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// dot_rows and weighted_rows against sums in double, on every query count,
// position count and row length around the tiles (lanes 4 or 8, tiles of 2 or
// 4 queries, 4 vectors per pass), with strides wider than the rows.
TEST(Ops, AttentionRowProductsMatchTheirDefinitionOnEveryShape) {
  FOR_EACH_OPS_ISA(v)
    for (size_t d : {1, 3, 4, 7, 8, 16, 31, 64, 67, 128}) {
      for (size_t n_q = 1; n_q <= 6; ++n_q) {
        for (size_t n_k : {1, 2, 3, 4, 5, 8, 9, 13, 17}) {
          SCOPED_TRACE("d=" + std::to_string(d) + " queries=" + std::to_string(n_q) + " positions=" + std::to_string(n_k));
          const size_t q_stride = d + 2, k_stride = d + 3, s_stride = n_k + 1, o_stride = d + 1;
          const std::vector<float> q = random_floats(n_q * q_stride, 1), k = random_floats(n_k * k_stride, 2);
          std::vector<float> scores(n_q * s_stride, -7.0f), out(n_q * o_stride, -7.0f);
          v->dot_rows(q.data(), q_stride, n_q, k.data(), k_stride, n_k, d, 0.5f, scores.data(), s_stride);
          v->weighted_rows(scores.data(), s_stride, n_q, k.data(), k_stride, n_k, d, out.data(), o_stride);
          for (size_t i = 0; i < n_q; ++i) {
            for (size_t p = 0; p < n_k; ++p) {
              double exact = 0;
              for (size_t t = 0; t < d; ++t) exact += double{q[i * q_stride + t]} * k[p * k_stride + t];
              EXPECT_NEAR(scores[i * s_stride + p], 0.5 * exact, 1e-6 * static_cast<double>(d));
            }
            EXPECT_EQ(scores[i * s_stride + n_k], -7.0f) << "wrote past the positions";
            for (size_t t = 0; t < d; ++t) {
              double exact = 0;
              for (size_t p = 0; p < n_k; ++p) exact += double{scores[i * s_stride + p]} * k[p * k_stride + t];
              EXPECT_NEAR(out[i * o_stride + t], exact, 1e-6 * static_cast<double>(n_k * d));
            }
            EXPECT_EQ(out[i * o_stride + d], -7.0f) << "wrote past the row";
          }
        }
      }
    }
}

// The F16 variants (decode reads the KV cache through them) against the F32
// ones on the same rows converted first, bit for bit: the widening is exact and
// the sums run in the same order. Shapes around the tiles and the scalar
// tails, an F16 subnormal among the halves.
TEST(Ops, AttentionOverF16RowsEqualsConvertingThemFirst) {
  FOR_EACH_OPS_ISA(v)
    for (size_t d : {1, 3, 4, 7, 8, 16, 31, 64, 67, 128}) {
      for (size_t n_q : {1, 2, 3, 4, 5, 8, 9}) {
        for (size_t n_k : {1, 3, 4, 5, 9, 17, 130}) {
          SCOPED_TRACE("d=" + std::to_string(d) + " queries=" + std::to_string(n_q) + " positions=" + std::to_string(n_k));
          const size_t q_stride = d + 2, k_stride = d + 3, s_stride = n_k + 1, o_stride = d + 1;
          const std::vector<float> q = random_floats(n_q * q_stride, 5);
          std::vector<float> rows = random_floats(n_k * k_stride, 6);
          rows[0] = 3e-6f;  // an F16 subnormal
          std::vector<uint16_t> halves(rows.size());
          engine::ops::fp32_to_fp16(rows.data(), halves.data(), rows.size());
          std::vector<float> widened(rows.size());
          v->fp16_to_fp32(halves.data(), widened.data(), halves.size());

          std::vector<float> want_scores(n_q * s_stride, -7.0f), got_scores(want_scores);
          v->dot_rows(q.data(), q_stride, n_q, widened.data(), k_stride, n_k, d, 0.5f, want_scores.data(), s_stride);
          v->dot_rows_f16(q.data(), q_stride, n_q, halves.data(), k_stride, n_k, d, 0.5f, got_scores.data(), s_stride);
          std::vector<float> want_out(n_q * o_stride, -7.0f), got_out(want_out);
          v->weighted_rows(want_scores.data(), s_stride, n_q, widened.data(), k_stride, n_k, d, want_out.data(),
                           o_stride);
          v->weighted_rows_f16(want_scores.data(), s_stride, n_q, halves.data(), k_stride, n_k, d, got_out.data(),
                               o_stride);
          for (size_t i = 0; i < want_scores.size(); ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(got_scores[i]), std::bit_cast<uint32_t>(want_scores[i])) << "score " << i;
          }
          for (size_t i = 0; i < want_out.size(); ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(got_out[i]), std::bit_cast<uint32_t>(want_out[i])) << "output " << i;
          }
        }
      }
    }
}

// A query's results do not depend on the other queries of the call: a token
// gives the same attention alone as in a batch, bit for bit.
TEST(Ops, AttentionRowProductsDoNotDependOnTheOtherQueries) {
  // Rows of whole vectors and with scalar tails (4, 8 and 16 lanes).
  for (const size_t d : {64, 67, 3, 128}) {
    SCOPED_TRACE("d=" + std::to_string(d));
    const size_t n_k = 23, n_q = 5;
    const std::vector<float> q = random_floats(n_q * d, 3), k = random_floats(n_k * d, 4);
    FOR_EACH_OPS_ISA(v) {
      std::vector<float> all(n_q * n_k), all_out(n_q * d);
      v->dot_rows(q.data(), d, n_q, k.data(), d, n_k, d, 0.125f, all.data(), n_k);
      v->weighted_rows(all.data(), n_k, n_q, k.data(), d, n_k, d, all_out.data(), d);
      for (size_t i = 0; i < n_q; ++i) {
        std::vector<float> one(n_k), one_out(d);
        v->dot_rows(q.data() + i * d, d, 1, k.data(), d, n_k, d, 0.125f, one.data(), n_k);
        v->weighted_rows(all.data() + i * n_k, n_k, 1, k.data(), d, n_k, d, one_out.data(), d);
        for (size_t p = 0; p < n_k; ++p) EXPECT_EQ(std::bit_cast<uint32_t>(one[p]), std::bit_cast<uint32_t>(all[i * n_k + p]));
        for (size_t t = 0; t < d; ++t) {
          EXPECT_EQ(std::bit_cast<uint32_t>(one_out[t]), std::bit_cast<uint32_t>(all_out[i * d + t]));
        }
      }
    }
  }
}

// softmax and SwiGLU (through the engine's vector exp) against their
// definitions in double, over exp's whole range and on every tail length.
TEST(Ops, SoftmaxAndSiluMatchTheirDefinitions) {
  FOR_EACH_OPS_ISA(v) {
    for (size_t n : {1, 2, 3, 5, 8, 17, 64, 1000}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<float> x = random_floats(n, static_cast<uint32_t>(n));
      for (float& value : x) value *= 90.0f;  // -90 .. 90: past both ends of exp's range
      std::vector<float> soft = x;
      v->softmax(soft.data(), n);
      double max = x[0], sum = 0;
      for (float value : x) max = std::max<double>(max, value);
      for (float value : x) sum += std::exp(double{value} - max);
      for (size_t i = 0; i < n; ++i) {
        const double exact = std::exp(double{x[i]} - max) / sum;
        // x - max is rounded to float first: a relative error of |x - max| 2^-24
        // in the exponent, on top of exp's few ulp.
        const double rel = 1e-6 + (max - x[i]) * 0x1p-23;
        EXPECT_NEAR(soft[i], exact, rel * exact + 1e-30) << "i=" << i;
      }
      // Out of place (a fused gate/up row's halves into a row of its own):
      // the gate is read, not written.
      const std::vector<float> gate = x;
      const std::vector<float> up = random_floats(n, 99);
      std::vector<float> out(n, -1.0f);
      v->silu_mul(out.data(), gate.data(), up.data(), n);
      EXPECT_EQ(gate, x);
      for (size_t i = 0; i < n; ++i) {
        const double exact = double{x[i]} / (1.0 + std::exp(-double{x[i]})) * up[i];
        EXPECT_NEAR(out[i], exact, 1e-6 * std::abs(exact) + 1e-30) << "i=" << i << " x=" << x[i];
      }
    }
  }
}

// GeGLU (the tanh approximation of GELU, as gemma's layers use it) against its
// definition in double, from -90 to 90: past where tanh saturates either way.
TEST(Ops, GeluMatchesItsDefinition) {
  FOR_EACH_OPS_ISA(v) {
    for (size_t n : {1, 3, 8, 17, 1000}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      std::vector<float> x = random_floats(n, static_cast<uint32_t>(n) + 7);
      for (size_t i = 0; i < n; ++i) x[i] *= i % 2 == 0 ? 90.0f : 4.0f;
      std::vector<float> gate = x;
      const std::vector<float> up = random_floats(n, 98);
      v->gelu_mul(gate.data(), gate.data(), up.data(), n);  // in place
      for (size_t i = 0; i < n; ++i) {
        const double g = x[i];
        const double exact = 0.5 * g * (1.0 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g))) * up[i];
        // tanh is 1 - 2 / (exp(2y) + 1) in float: an absolute error of a few
        // 2^-24 in 1 + tanh, which is relative only where it is near 2.
        EXPECT_NEAR(gate[i], exact, 1e-6 * std::abs(exact) + 4e-7 * std::abs(g * up[i]) + 1e-30) << "i=" << i << " x=" << x[i];
      }
    }
  }
}

// Qwen3.5's DeltaNet convolution in vectors against its scalar twin: channel
// ranges with tails, batches shorter and longer than the window, two batches
// carrying it.
TEST(Ops, DeltaNetConvolutionMatchesItsScalarTwin) {
  FOR_EACH_OPS_ISA(v) {
    for (const uint32_t taps : {2u, 4u, 17u}) {
      for (const uint32_t d : {1u, 7u, 37u, 100u}) {
        for (const uint32_t n : {1u, 2u, 23u}) {
          SCOPED_TRACE("taps " + std::to_string(taps) + ", d " + std::to_string(d) + ", n " + std::to_string(n));
          const std::vector<float> kernel = random_floats(size_t{d} * taps, taps * 1000 + d);
          std::vector<float> window_want = random_floats(size_t{taps - 1} * d, taps + n), window_got = window_want;
          for (int batch = 0; batch < 2; ++batch) {
            const std::vector<float> in = random_floats(size_t{n} * d, n + d + batch);
            std::vector<float> want(size_t{n} * d, -1.0f), got(size_t{n} * d, -2.0f);
            const uint32_t split = d / 3;
            for (const auto& [first, last] : {std::pair{0u, split}, std::pair{split, d}}) {
              engine::delta_net_conv_ref(kernel.data(), taps, d, first, last, window_want.data(), in.data(), n,
                                         want.data());
              v->delta_net_conv(kernel.data(), taps, d, first, last, window_got.data(), in.data(), n, got.data());
            }
            ASSERT_EQ(window_got, window_want);
            // The taps' sum may be fused (FMA) in the vectors; silu's exp is
            // the vectors' polynomial (2 ulp).
            for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f * (1.0f + std::fabs(want[i]))) << i;
          }
        }
      }
    }
  }
}

// The convolution's silu at the exponential's edges, in whole vectors and a
// tail on every variant (each has its own exponential: NEON's, AVX's, SVE's):
// a NaN stays NaN, far below zero gives zero, far above the input itself.
TEST(Ops, DeltaNetConvolutionSiluKeepsNaNAndSaturates) {
  const std::vector<float> edges = {std::nanf(""), -200.0f, -88.0f, -20.0f, -1.0f, -0.0f, 0.5f, 20.0f, 88.0f, 200.0f};
  constexpr uint32_t kChannels = 37;
  std::vector<float> kernel(2 * kChannels), in(kChannels);
  for (uint32_t ch = 0; ch < kChannels; ++ch) {
    kernel[2 * ch] = 0.0f;  // the window's tap
    kernel[2 * ch + 1] = 1.0f;
    in[ch] = edges[ch % edges.size()];
  }
  FOR_EACH_OPS_ISA(v) {
    std::vector<float> window(kChannels, 0.0f), out(kChannels);
    v->delta_net_conv(kernel.data(), 2, kChannels, 0, kChannels, window.data(), in.data(), 1, out.data());
    for (uint32_t ch = 0; ch < kChannels; ++ch) {
      const double x = in[ch];
      if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(out[ch])) << ch;
        continue;
      }
      const double silu = x / (1.0 + std::exp(-x));
      EXPECT_NEAR(out[ch], silu, 1e-6 * std::fabs(silu) + 1e-30) << "x=" << x;
    }
  }
}

// The delta rule in vectors against its scalar twins, token by token and in
// chunks: head sizes with vector tails, chunks of 1, 5 and 64 over prompts
// shorter and longer than a chunk, the state carried between calls.
TEST(Ops, DeltaRuleMatchesItsScalarTwins) {
  FOR_EACH_OPS_ISA(v) {
    for (const uint32_t dk : {3u, 16u, 37u, 128u}) {
      for (const auto& [n, chunk] : {std::pair{1u, 64u}, std::pair{9u, 5u}, std::pair{70u, 64u}, std::pair{6u, 1u}}) {
        SCOPED_TRACE("dk " + std::to_string(dk) + ", n " + std::to_string(n) + ", chunk " + std::to_string(chunk));
        const uint32_t dv = dk;
        std::vector<float> q = random_floats(size_t{n} * dk, dk + n), k = random_floats(size_t{n} * dk, dk + n + 1);
        for (std::vector<float>* x : {&q, &k}) {  // unit rows, as the mixer gives them
          for (uint32_t t = 0; t < n; ++t) {
            float ss = 0;
            for (uint32_t i = 0; i < dk; ++i) ss += (*x)[t * dk + i] * (*x)[t * dk + i];
            for (uint32_t i = 0; i < dk; ++i) (*x)[t * dk + i] /= std::sqrt(ss);
          }
        }
        const std::vector<float> val = random_floats(size_t{n} * dv, dk + n + 2);
        std::vector<float> beta(n), g(n);
        for (uint32_t t = 0; t < n; ++t) {
          beta[t] = 0.5f + 0.4f * std::sin(float(t));
          g[t] = -0.05f - 0.5f * (1.0f + std::cos(float(3 * t)));
        }
        const std::vector<float> start = random_floats(size_t{dk} * dv, dk * 7 + n);
        const auto rows = [&](std::vector<float>& out) {
          return engine::ops::DeltaRuleRows{q.data(), k.data(), dk, val.data(), dv, beta.data(), g.data(), 1, out.data(), dv};
        };
        const auto close = [](const std::vector<float>& got, const std::vector<float>& want, const char* what) {
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 3e-5f * (1.0f + std::fabs(want[i]))) << what << " " << i;
          }
        };
        std::vector<float> out_want(size_t{n} * dv), out_got(size_t{n} * dv);
        std::vector<float> state_want = start, state_got = start;
        engine::delta_rule_token_ref(rows(out_want), n, dk, dv, state_want.data());
        v->delta_rule_token(rows(out_got), n, dk, dv, state_got.data());
        close(out_got, out_want, "token out");
        close(state_got, state_want, "token state");
        std::vector<float> scratch(engine::delta_rule_chunk_scratch(chunk, dk, dv));
        state_want = state_got = start;
        engine::delta_rule_chunk_ref(rows(out_want), n, dk, dv, chunk, state_want.data(), scratch.data());
        v->delta_rule_chunk(rows(out_got), n, dk, dv, chunk, state_got.data(), scratch.data());
        close(out_got, out_want, "chunk out");
        close(state_got, state_want, "chunk state");
      }
    }
  }
}

// LFM2's short convolution in vectors against its scalar twin: channel ranges
// with tails of every length, decode (one token), batches shorter and longer
// than the state, more taps than the vector form keeps on its stack; the
// outputs, B * x written back and the state carried into the next batch.
TEST(Ops, ShortConvolutionMatchesItsScalarTwin) {
  FOR_EACH_OPS_ISA(v) {
    for (const uint32_t taps : {2u, 3u, 4u, 17u}) {
      for (const uint32_t d : {1u, 7u, 16u, 37u, 100u}) {
        for (const uint32_t n : {1u, 2u, 5u, 23u}) {
          SCOPED_TRACE("taps " + std::to_string(taps) + ", d " + std::to_string(d) + ", n " + std::to_string(n));
          const std::vector<float> kernel = random_floats(size_t{d} * taps, taps * 1000 + d);
          std::vector<float> bcx_want = random_floats(size_t{n} * 3 * d, n + d);
          std::vector<float> state_want = random_floats(size_t{taps - 1} * d, taps + n);
          std::vector<float> bcx_got = bcx_want, state_got = state_want;
          std::vector<float> y_want(size_t{n} * d, -1.0f), y_got(size_t{n} * d, -2.0f);
          // Two batches, each in two channel ranges (as the pool's tasks cut them).
          for (int batch = 0; batch < 2; ++batch) {
            const uint32_t split = d / 3;
            for (const auto& [first, last] : {std::pair{0u, split}, std::pair{split, d}}) {
              engine::shortconv_rows_ref(kernel.data(), taps, d, first, last, state_want.data(), bcx_want.data(), n,
                                         y_want.data());
              v->shortconv_rows(kernel.data(), taps, d, first, last, state_got.data(), bcx_got.data(), n,
                                y_got.data());
            }
            // B * x is one rounded product either way; the taps' sum may be
            // fused (FMA) in the vectors and not in the scalar form.
            for (size_t i = 0; i < bcx_want.size(); ++i) ASSERT_EQ(bcx_got[i], bcx_want[i]) << "bcx " << i;
            for (size_t i = 0; i < state_want.size(); ++i) ASSERT_EQ(state_got[i], state_want[i]) << "state " << i;
            for (size_t i = 0; i < y_want.size(); ++i) {
              ASSERT_NEAR(y_got[i], y_want[i], 1e-5f * (1.0f + std::fabs(y_want[i]))) << "y " << i;
            }
            for (size_t t = 0; t < n; ++t) {  // the next batch: new B, C and x
              for (size_t i = 0; i < 3 * size_t{d}; ++i) bcx_want[t * 3 * d + i] = std::sin(float(t * 31 + i));
            }
            bcx_got = bcx_want;
          }
        }
      }
    }
  }
}

TEST(Ops, SoftcapBoundsByItsCapAndKeepsSmallValues) {
  std::vector<float> x = {0.0f, 1e-3f, -2.5f, 30.0f, -1e6f, 49.0f};
  const std::vector<float> in = x;
  engine::ops::softcap(x.data(), 50.0f, x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = 50.0 * std::tanh(double{in[i]} / 50.0);
    EXPECT_NEAR(x[i], exact, 1e-5 * std::abs(exact) + 1e-30) << "x=" << in[i];
    EXPECT_LE(std::abs(x[i]), 50.0f);
  }
  EXPECT_FLOAT_EQ(x[4], -50.0f);  // far past the cap: the cap itself
}

// A NaN stays NaN through softmax and SwiGLU, so the check for non-finite
// logits still sees what a bad model produced.
TEST(Ops, SoftmaxAndSiluKeepNaN) {
  FOR_EACH_OPS_ISA(v) {
    std::vector<float> x = {1.0f, std::nanf(""), 2.0f, 3.0f, 4.0f};
    v->softmax(x.data(), x.size());
    EXPECT_NE(engine::ops::first_non_finite(x.data(), x.size()), x.size());
    std::vector<float> gate = {std::nanf(""), 1.0f, 2.0f, 3.0f, 4.0f}, up(5, 1.0f);
    v->silu_mul(gate.data(), gate.data(), up.data(), gate.size());
    EXPECT_TRUE(std::isnan(gate[0]));
    EXPECT_FLOAT_EQ(gate[1], 1.0f / (1.0f + std::exp(-1.0f)));
  }
}

}  // namespace
