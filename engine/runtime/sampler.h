// Picks the next token from a row of logits. The chain follows llama.cpp's
// default order: repetition penalty, top-k, top-p, min-p (on the untempered
// distribution), temperature, then a draw from a seeded generator whose output
// is defined bit for bit (std::mt19937 and our own float conversion), so the
// same seed gives the same text on every platform. temperature <= 0 is greedy.
// A grammar (grammar/token_constraint.h), when set, masks the tokens it does
// not allow before the chain, after the penalty.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace engine {
namespace grammar {
class TokenConstraint;
}

struct SamplerParams {
  float temperature = 0.8f;     // <= 0: greedy (argmax, lowest id on ties)
  int32_t top_k = 40;           // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int32_t repeat_last_n = 64;   // how many recent tokens the penalty looks at
  uint32_t seed = 0xFFFFFFFFu;  // 0xFFFFFFFF: a random seed (reported by seed())

  // Throws engine::Error naming the bad parameter (NaN, negative top_p, ...).
  void validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params);
  ~Sampler();

  // The next token for these logits (n_vocab floats). Does not record it for
  // the penalty; with a grammar, advances the grammar over it.
  int32_t sample(std::span<const float> logits);
  // Constrains the tokens sample() picks to a grammar's (nullptr: none).
  // Greedy sampling looks at the best token first and masks only when the
  // grammar refuses it, which gives the same token.
  void set_grammar(std::unique_ptr<grammar::TokenConstraint> constraint);
  grammar::TokenConstraint* grammar() const { return grammar_.get(); }
  // Records a token of the context (prompt or generated) for the penalty.
  void accept(int32_t token);
  void reset();
  uint32_t seed() const { return seed_; }
  const SamplerParams& params() const { return params_; }

  struct Candidate {
    int32_t id;
    float logit;
    float p;
  };
  // The k highest logits, best first, ties to the lower id: what sorting every
  // token would give, in one pass that keeps the k best in a heap (top-k's
  // step; public for its test). 0 < k <= logits.size(); no NaN.
  static void top_k(std::span<const float> logits, size_t k, std::vector<Candidate>& out);

 private:
  float uniform01();  // [0, 1), 24 random bits
  int32_t pick(std::span<const float> logits);  // the chain after the penalty

  SamplerParams params_;
  uint32_t seed_;
  std::mt19937 rng_;
  std::deque<int32_t> recent_;
  std::vector<Candidate> candidates_;
  std::vector<float> penalized_;  // the logits with the repetition penalty applied
  std::unique_ptr<grammar::TokenConstraint> grammar_;
  std::vector<float> masked_;  // the logits with the grammar's refusals at -Inf
};

}  // namespace engine
