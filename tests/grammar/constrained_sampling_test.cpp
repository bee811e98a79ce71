// Sampling under a grammar (engine::Sampler with a grammar::TokenConstraint)
// on a vocabulary of bytes, multi-byte pieces and an end-of-generation token:
// every sampler setting gives a whole sentence of the grammar ended by the
// end token; greedy's shortcut (the best token when the grammar takes it)
// picks what masking every token would; the draw follows the distribution
// renormalised over the allowed tokens; the kept masks equal fresh walks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/token_constraint.h"
#include "engine/runtime/sampler.h"
#include "engine/support/error.h"
#include "tests/grammar/reference_matcher.h"

namespace {

using engine::grammar::Grammar;
using engine::grammar::parse_gbnf;
using engine::grammar::TokenConstraint;
using engine::grammar::TokenVocabulary;
using engine::grammar::testing::ReferenceMatcher;

constexpr int32_t kEnd = 1;  // the end-of-generation token; 0 is another control token

std::shared_ptr<const TokenVocabulary> vocabulary() {
  std::vector<std::string> pieces{"", ""};
  for (int b = 1; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
  for (const char* s : {"{\"", "\": ", "\"n\": ", ", \"s\": \"", "\"}", "12", "345", "ab", " c", "xyz", "\xC3\xA9",
                        "\xC3", "\xA9\"}", "00", "\"", "{"}) {
    pieces.emplace_back(s);
  }
  return std::make_shared<TokenVocabulary>(std::move(pieces), std::vector<int32_t>{kEnd});
}

constexpr const char* kRecord = R"(root ::= "{" "\"n\": " [0-9]{1,4} ", \"s\": \"" ([a-z ] | "\u00e9"){0,10} "\"}")";

// The allowed tokens by brute force: each token's bytes through the plain matcher.
std::vector<bool> brute_mask(const ReferenceMatcher& at, const TokenVocabulary& v) {
  std::vector<bool> ok(v.pieces.size());
  for (size_t id = 0; id < v.pieces.size(); ++id) {
    if (static_cast<int32_t>(id) == kEnd) {
      ok[id] = at.can_end();
    } else if (!v.pieces[id].empty()) {
      ReferenceMatcher copy = at;
      ok[id] = copy.accept_bytes(v.pieces[id]);
    }
  }
  return ok;
}

std::vector<float> random_logits(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> logits(n);
  for (float& x : logits) x = d(rng);
  return logits;
}

TEST(ConstrainedSampling, EverySettingGivesAWholeSentenceEndedByTheEndToken) {
  const auto v = vocabulary();
  const Grammar g = parse_gbnf(kRecord);
  std::vector<engine::SamplerParams> settings(8);
  settings[0].temperature = 0.0f;
  settings[1].temperature = 0.8f;  // the defaults: top-k 40, top-p 0.95, min-p 0.05
  settings[2] = {1.5f, 0, 1.0f, 0.0f, 1.0f, 64, 0};
  settings[3] = {1.0f, 0, 0.5f, 0.0f, 1.0f, 64, 0};
  settings[4] = {1.0f, 0, 1.0f, 0.3f, 1.0f, 64, 0};
  settings[5] = {1.0f, 1, 1.0f, 0.0f, 1.0f, 64, 0};
  settings[6] = {0.7f, 40, 0.95f, 0.05f, 1.5f, 16, 0};
  settings[7] = {0.0f, 40, 0.95f, 0.05f, 1.3f, 64, 0};
  std::mt19937 rng(5);
  for (size_t k = 0; k < settings.size(); ++k) {
    for (uint32_t seed = 0; seed < 10; ++seed) {
      SCOPED_TRACE("setting " + std::to_string(k) + ", seed " + std::to_string(seed));
      engine::SamplerParams p = settings[k];
      p.seed = seed;
      engine::Sampler sampler(p);
      sampler.set_grammar(std::make_unique<TokenConstraint>(g, v));
      std::string text;
      bool ended = false;
      for (int step = 0; step < 200 && !ended; ++step) {
        const std::vector<float> logits = random_logits(rng, v->pieces.size());
        const int32_t t = sampler.sample(logits);
        sampler.accept(t);
        ended = t == kEnd;
        if (!ended) text += v->pieces[static_cast<size_t>(t)];
      }
      ASSERT_TRUE(ended) << text;
      ReferenceMatcher m(g);
      EXPECT_TRUE(m.accept_bytes(text) && m.can_end()) << text;
    }
  }
}

// Greedy looks at the best token first; whether it is taken or refused, the
// token is the best of the allowed ones (the lowest id on a tie).
TEST(ConstrainedSampling, GreedyPicksTheBestAllowedToken) {
  const auto v = vocabulary();
  const Grammar g = parse_gbnf(kRecord);
  engine::SamplerParams p;
  p.temperature = 0.0f;
  engine::Sampler sampler(p);
  sampler.set_grammar(std::make_unique<TokenConstraint>(g, v));
  ReferenceMatcher at(g);
  std::mt19937 rng(11);
  int refused_best = 0;
  for (int step = 0; step < 60; ++step) {
    std::vector<float> logits = random_logits(rng, v->pieces.size());
    if (step % 3 == 0) logits[1 + '{'] = logits[3] = 100.0f;  // a tie on top, sometimes allowed
    const std::vector<bool> ok = brute_mask(at, *v);
    int32_t want = -1, best = 0;
    for (size_t id = 0; id < ok.size(); ++id) {
      if (ok[id] && (want < 0 || logits[id] > logits[static_cast<size_t>(want)])) want = static_cast<int32_t>(id);
      if (logits[id] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(id);
    }
    refused_best += ok[static_cast<size_t>(best)] ? 0 : 1;
    const int32_t got = sampler.sample(logits);
    ASSERT_EQ(got, want) << "step " << step;
    if (got == kEnd) break;
    ASSERT_TRUE(at.accept_bytes(v->pieces[static_cast<size_t>(got)]));
  }
  EXPECT_GT(refused_best, 10);  // both ways were exercised
}

// With no truncation, the tokens drawn follow softmax(logits / T) over the
// allowed tokens: the grammar masks before the chain.
TEST(ConstrainedSampling, DrawsFollowTheDistributionOverTheAllowedTokens) {
  const auto v = vocabulary();
  const Grammar g = parse_gbnf(R"(root ::= [a-e] "x")");
  engine::SamplerParams p{1.0f, 0, 1.0f, 0.0f, 1.0f, 64, 3};
  engine::Sampler sampler(p);
  sampler.set_grammar(std::make_unique<TokenConstraint>(g, v));
  std::vector<float> logits(v->pieces.size(), 2.0f);
  const std::string letters = "abcde";
  for (size_t i = 0; i < letters.size(); ++i) logits[static_cast<size_t>(1 + letters[i])] = static_cast<float>(i) * 0.5f;
  double z = 0.0;
  for (size_t i = 0; i < letters.size(); ++i) z += std::exp(static_cast<double>(i) * 0.5);
  std::vector<int> counts(letters.size(), 0);
  constexpr int kDraws = 20000;
  for (int n = 0; n < kDraws; ++n) {
    sampler.grammar()->reset();
    const int32_t t = sampler.sample(logits);
    const auto at = letters.find(v->pieces[static_cast<size_t>(t)]);
    ASSERT_NE(at, std::string::npos) << "token " << t;
    counts[at]++;
  }
  for (size_t i = 0; i < letters.size(); ++i) {
    const double want = std::exp(static_cast<double>(i) * 0.5) / z;
    EXPECT_NEAR(counts[i] / static_cast<double>(kDraws), want, 4.0 * std::sqrt(want * (1 - want) / kDraws)) << letters[i];
  }
}

// The masks a constraint keeps (and reuses when a state comes back) equal the
// brute force at every step of a text that loops through repeated states.
TEST(ConstrainedSampling, KeptMasksEqualTheBruteForce) {
  const auto v = vocabulary();
  const Grammar g = parse_gbnf(kRecord);
  TokenConstraint c(g, v);
  ReferenceMatcher at(g);
  const std::vector<int32_t> text_tokens = [&] {
    std::vector<int32_t> ids;
    for (const char ch : std::string("{\"n\": 1234, \"s\": \"ab c ab\"}")) ids.push_back(1 + static_cast<uint8_t>(ch));
    ids.push_back(kEnd);
    return ids;
  }();
  for (const int32_t t : text_tokens) {
    const std::vector<bool> want = brute_mask(at, *v);
    const engine::grammar::TokenBits& got = c.allowed();
    for (size_t id = 0; id < want.size(); ++id) {
      ASSERT_EQ(engine::grammar::token_bit(got, id), want[id]) << "token " << id;
    }
    c.accept(t);
    if (t != kEnd) at.accept_bytes(v->pieces[static_cast<size_t>(t)]);
  }
  EXPECT_FALSE(c.can_continue());
  EXPECT_THROW(c.accept(1 + 'a'), engine::Error);  // nothing may follow: refused by name
}

TEST(ConstrainedSampling, AVocabularyThatCannotContinueIsAClearError) {
  const auto v = vocabulary();
  engine::Sampler sampler(engine::SamplerParams{});
  sampler.set_grammar(std::make_unique<TokenConstraint>(parse_gbnf(R"(root ::= "\x00")"), v));
  const std::vector<float> logits(v->pieces.size(), 0.0f);
  try {
    sampler.sample(logits);
    FAIL() << "no error";
  } catch (const engine::Error& e) {
    EXPECT_STREQ(e.what(), "sampler: no token of the vocabulary continues the grammar here");
  }
}

}  // namespace
