// Log-probabilities of tokens under the model's own distribution: the
// log-softmax of the logits, before temperature, penalties or a grammar,
// which is what OpenAI's `logprobs` reports.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engine {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

// log(sum(exp(logits))), computed stably (the largest logit first).
float log_sum_exp(std::span<const float> logits);

// The k most likely tokens, most likely first (lower id first on ties), with
// their log-probabilities; `log_norm` is log_sum_exp(logits).
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, size_t k, float log_norm);

}  // namespace engine
