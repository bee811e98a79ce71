#include "engine/runtime/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine {

float log_sum_exp(std::span<const float> logits) {
  if (logits.empty()) return -std::numeric_limits<float>::infinity();
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;  // 150k terms: a double keeps the last digits of a float
  for (const float l : logits) sum += std::exp(static_cast<double>(l - max));
  return max + static_cast<float>(std::log(sum));
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, size_t k, float log_norm) {
  k = std::min(k, logits.size());
  const auto more_likely = [](const TokenLogprob& a, const TokenLogprob& b) {
    return a.logprob != b.logprob ? a.logprob > b.logprob : a.token < b.token;
  };
  // A heap of the k best so far (its top the worst of them): one pass, no
  // copy of the vocabulary.
  std::vector<TokenLogprob> best;
  best.reserve(k + 1);
  for (size_t i = 0; i < logits.size() && k > 0; ++i) {
    const TokenLogprob c{static_cast<int32_t>(i), logits[i]};
    if (best.size() < k) {
      best.push_back(c);
      std::push_heap(best.begin(), best.end(), more_likely);
    } else if (more_likely(c, best.front())) {
      std::pop_heap(best.begin(), best.end(), more_likely);
      best.back() = c;
      std::push_heap(best.begin(), best.end(), more_likely);
    }
  }
  std::sort(best.begin(), best.end(), more_likely);
  for (TokenLogprob& t : best) t.logprob -= log_norm;
  return best;
}

}  // namespace engine
