// Picks the next token from a row of logits. The chain follows llama.cpp's
// default order: repetition penalty, top-k, top-p, min-p (on the untempered
// distribution), temperature, then a draw from a seeded generator whose output
// is defined bit for bit (std::mt19937 and our own float conversion), so the
// same seed gives the same text on every platform. temperature <= 0 is greedy.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace engine {

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

  // The next token for these logits (n_vocab floats). Does not record it.
  int32_t sample(std::span<const float> logits);
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

  SamplerParams params_;
  uint32_t seed_;
  std::mt19937 rng_;
  std::deque<int32_t> recent_;
  std::vector<Candidate> candidates_;
  std::vector<float> penalized_;  // the logits with the repetition penalty applied
};

}  // namespace engine
