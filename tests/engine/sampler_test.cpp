#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "engine/support/error.h"
#include "engine/runtime/sampler.h"

namespace {

using engine::Sampler;
using engine::SamplerParams;

SamplerParams only_temperature(float t, uint32_t seed) {
  return {.temperature = t, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = seed};
}

TEST(Sampler, GreedyTakesTheLowestIdOfTheMaximum) {
  Sampler s({.temperature = 0.0f});
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.sample(logits), 1);
}

TEST(Sampler, TheSameSeedGivesTheSameSequence) {
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i)) * 3.0f;
  auto run = [&](uint32_t seed) {
    Sampler s({.temperature = 1.0f, .seed = seed});
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) {
      out.push_back(s.sample(logits));
      s.accept(out.back());
    }
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(Sampler, FrequenciesFollowTheTemperedDistribution) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(5.0f)};  // p = 1/8, 2/8, 5/8
  Sampler s(only_temperature(1.0f, 7));
  std::map<int32_t, int> counts;
  const int n = 40000;
  for (int i = 0; i < n; ++i) ++counts[s.sample(logits)];
  // Binomial standard deviation at p = 5/8, n = 40000 is ~97: 5 sigma ~ 0.012.
  EXPECT_NEAR(counts[0] / double(n), 1.0 / 8, 0.012);
  EXPECT_NEAR(counts[1] / double(n), 2.0 / 8, 0.012);
  EXPECT_NEAR(counts[2] / double(n), 5.0 / 8, 0.012);
}

TEST(Sampler, TopKTopPAndMinPRestrictTheChoices) {
  const std::vector<float> logits = {5.0f, 4.9f, 4.8f, 0.0f, -3.0f};
  for (uint32_t seed = 0; seed < 200; ++seed) {
    Sampler k({.temperature = 5.0f, .top_k = 2, .top_p = 1.0f, .min_p = 0.0f, .seed = seed});
    EXPECT_LE(k.sample(logits), 1);
    Sampler p({.temperature = 5.0f, .top_k = 0, .top_p = 0.5f, .min_p = 0.0f, .seed = seed});
    EXPECT_LE(p.sample(logits), 1);  // the first two hold more than half
    Sampler m({.temperature = 5.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.1f, .seed = seed});
    EXPECT_LE(m.sample(logits), 2);  // exp(-5) / 1 < 0.1
  }
}

// top-k's one-pass heap against its twin, sorting every token: the same ids in
// the same order, with ties (logits on a coarse grid), masked tokens, the best
// at either end, and k from 1 to n - 1.
TEST(Sampler, TopKMatchesSortingEveryToken) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t n = trial % 3 == 0 ? 50 : trial % 3 == 1 ? 1000 : 32000;
    std::vector<float> logits(n);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (size_t i = 0; i < n; ++i) {
      float x = normal(rng);
      if (trial % 2 == 0) x = std::round(x * 2.0f) / 2.0f;  // many ties
      if (trial % 5 == 0 && i % 7 == 0) x = -INFINITY;
      logits[i] = x;
    }
    if (trial % 4 == 1) std::sort(logits.begin(), logits.end());  // ascending: every block replaces
    if (trial % 4 == 2) std::sort(logits.rbegin(), logits.rend());
    std::vector<Sampler::Candidate> all;
    for (size_t i = 0; i < n; ++i) all.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    });
    for (size_t k : {size_t{1}, size_t{2}, size_t{40}, size_t{17}, n / 2, n - 1}) {
      std::vector<Sampler::Candidate> top;
      Sampler::top_k(logits, k, top);
      ASSERT_EQ(top.size(), k);
      for (size_t i = 0; i < k; ++i) {
        ASSERT_EQ(top[i].id, all[i].id) << "trial " << trial << " n " << n << " k " << k << " rank " << i;
        ASSERT_EQ(top[i].logit, all[i].logit);
      }
    }
  }
}

TEST(Sampler, RepetitionPenaltyLowersRecentTokens) {
  const std::vector<float> logits = {1.0f, 1.1f};
  Sampler s({.temperature = 0.0f, .repeat_penalty = 1.5f});
  EXPECT_EQ(s.sample(logits), 1);
  s.accept(1);
  EXPECT_EQ(s.sample(logits), 0);  // 1.1 / 1.5 < 1.0
}

TEST(Sampler, BadParametersAreErrors) {
  EXPECT_THROW(Sampler({.temperature = NAN}), engine::Error);
  EXPECT_THROW(Sampler({.top_p = -0.5f}), engine::Error);
  EXPECT_THROW(Sampler({.min_p = 2.0f}), engine::Error);
  EXPECT_THROW(Sampler({.repeat_penalty = 0.0f}), engine::Error);
  EXPECT_THROW(Sampler({.repeat_last_n = -1}), engine::Error);
  Sampler s({});
  EXPECT_THROW(s.sample({}), engine::Error);
}

// Logits from a broken model or a careless caller: refused by name, never a
// crash inside the sort (NaN breaks its ordering) or a NaN distribution.
TEST(Sampler, NonFiniteLogitsAreErrors) {
  Sampler s({.seed = 1});
  try {
    s.sample(std::vector<float>{0.5f, NAN, 1.0f});
    FAIL();
  } catch (const engine::Error& e) {
    EXPECT_STREQ(e.what(), "sampler: the logit of token 1 is NaN");
  }
  EXPECT_THROW(s.sample(std::vector<float>{INFINITY, 0.0f}), engine::Error);
  EXPECT_THROW(s.sample(std::vector<float>{-INFINITY, -INFINITY}), engine::Error);
  // -Inf masks a token; the others are still drawn.
  for (int i = 0; i < 50; ++i) EXPECT_NE(s.sample(std::vector<float>{-INFINITY, 0.0f, 0.1f}), 0);
}

// Extreme but valid parameters give a token, not garbage: a tiny temperature
// is greedy, a tiny penalty cannot turn a logit into Inf.
TEST(Sampler, ExtremeParametersStayFinite) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f};
  Sampler cold({.temperature = 1e-30f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 3});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(cold.sample(logits), 1);
  Sampler hot({.temperature = INFINITY, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 3});
  for (int i = 0; i < 20; ++i) EXPECT_LT(hot.sample(logits), 3);
  Sampler penalty({.temperature = 1.0f, .repeat_penalty = 1e-30f, .seed = 3});
  penalty.accept(0);
  EXPECT_EQ(penalty.sample(logits), 0);  // 1 / 1e-30 is clamped to FLT_MAX, not Inf
}

}  // namespace
