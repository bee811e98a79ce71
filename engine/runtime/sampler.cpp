#include "engine/runtime/sampler.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>

#include "engine/grammar/token_constraint.h"
#include "engine/support/error.h"

namespace engine {
namespace {

// The first index of the largest logit (no NaN: sample() refuses them). Two
// passes, the maximum in 16 independent lanes (a vector max) and then its
// first index, instead of one whose every step waits on the last comparison:
// 151,936 logits took 0.7 ms the old way (grammar_bench, reply/greedy_free).
int32_t argmax(std::span<const float> logits) {
  constexpr size_t kLanes = 16;
  float lane[kLanes];
  std::fill_n(lane, kLanes, logits[0]);
  size_t i = 0;
  for (; i + kLanes <= logits.size(); i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lane[j] = logits[i + j] > lane[j] ? logits[i + j] : lane[j];
  }
  float best = *std::max_element(lane, lane + kLanes);
  for (; i < logits.size(); ++i) best = std::max(best, logits[i]);
  return static_cast<int32_t>(std::find(logits.begin(), logits.end(), best) - logits.begin());
}

// p = softmax(logit / temperature), computed as exp((logit - max) / temperature)
// so that a tiny temperature gives 0 for the others instead of Inf / Inf.
template <class C>
void softmax(std::vector<C>& cs, float temperature = 1.0f) {
  float max = -INFINITY;
  for (const C& c : cs) max = std::max(max, c.logit);
  double sum = 0.0;
  for (C& c : cs) {
    c.p = c.logit == max ? 1.0f : std::exp((c.logit - max) / temperature);
    sum += c.p;
  }
  for (C& c : cs) c.p = static_cast<float>(c.p / sum);
}

// The candidates' order: best first, ties to the lower id. A lambda, so that
// the heap and sort calls inline it (a function pointer did not).
constexpr auto better = [](const Sampler::Candidate& a, const Sampler::Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
};

// How many of x[0, n) are above `than`: a count rather than a flag, so the
// loop vectorizes (a bool |= did not).
uint32_t count_above(const float* x, size_t n, float than) {
  uint32_t count = 0;  // 32-bit lanes: four to an SSE2 vector
  for (size_t i = 0; i < n; ++i) count += x[i] > than ? 1 : 0;
  return count;
}

}  // namespace

void SamplerParams::validate() const {
  auto bad = [](const std::string& what) { throw Error("sampler: " + what); };
  if (std::isnan(temperature)) bad("temperature is NaN");
  if (!(top_p >= 0.0f)) bad("top_p must be >= 0");
  if (!(min_p >= 0.0f && min_p <= 1.0f)) bad("min_p must be in [0, 1]");
  if (!(repeat_penalty > 0.0f) || std::isinf(repeat_penalty)) bad("repeat_penalty must be a positive number");
  if (repeat_last_n < 0) bad("repeat_last_n must be >= 0");
}

Sampler::Sampler(const SamplerParams& params) : params_(params) {
  params_.validate();
  seed_ = params.seed != 0xFFFFFFFFu ? params.seed : std::random_device{}();
  rng_.seed(seed_);
}

Sampler::~Sampler() = default;

void Sampler::reset() {
  rng_.seed(seed_);
  recent_.clear();
  if (grammar_) grammar_->reset();
}

void Sampler::set_grammar(std::unique_ptr<grammar::TokenConstraint> constraint) { grammar_ = std::move(constraint); }

void Sampler::accept(int32_t token) {
  if (params_.repeat_last_n == 0) return;
  recent_.push_back(token);
  while (recent_.size() > static_cast<size_t>(params_.repeat_last_n)) recent_.pop_front();
}

float Sampler::uniform01() { return static_cast<float>(rng_() >> 8) * (1.0f / 16777216.0f); }

void Sampler::top_k(std::span<const float> logits, size_t k, std::vector<Candidate>& out) {
  out.clear();
  for (size_t i = 0; i < k; ++i) out.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
  std::make_heap(out.begin(), out.end(), better);  // front: the worst kept
  float worst = out.front().logit;
  // A logit not above the worst kept is out (a tie comes later in id order, so
  // it is worse); blocks of 16 without one are passed over in a vector compare.
  constexpr size_t kBlock = 16;
  for (size_t b = k; b < logits.size(); b += kBlock) {
    const size_t e = std::min(logits.size(), b + kBlock);
    if (count_above(logits.data() + b, e - b, worst) == 0) continue;
    for (size_t i = b; i < e; ++i) {
      if (!(logits[i] > worst)) continue;
      std::pop_heap(out.begin(), out.end(), better);
      out.back() = {static_cast<int32_t>(i), logits[i], 0.0f};
      std::push_heap(out.begin(), out.end(), better);
      worst = out.front().logit;
    }
  }
  std::sort(out.begin(), out.end(), better);
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampler: no logits");
  // NaN would break the sort's ordering and +Inf the softmax; both mean the
  // logits are garbage, so they are refused by name. -Inf (a masked token) is
  // fine. Counted in one pass without an early exit, so that it vectorizes;
  // the first bad token is looked for only when there is one.
  uint32_t below_inf = 0;
  for (const float x : logits) below_inf += x < INFINITY ? 1 : 0;
  if (below_inf != logits.size()) {
    size_t i = 0;
    while (logits[i] < INFINITY) ++i;
    throw Error("sampler: the logit of token " + std::to_string(i) + " is " + (std::isnan(logits[i]) ? "NaN" : "+Inf"));
  }
  if (count_above(logits.data(), logits.size(), -INFINITY) == 0) {
    throw Error("sampler: every logit is -Inf, there is no token to pick");
  }

  // Repetition penalty (CTRL-style, as llama.cpp): shrink positive logits, grow
  // negative ones, once per distinct recent token.
  std::span<const float> view = logits;
  if (params_.repeat_penalty != 1.0f) {
    penalized_.assign(logits.begin(), logits.end());
    std::vector<int32_t> seen(recent_.begin(), recent_.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int32_t t : seen) {
      if (t < 0 || static_cast<size_t>(t) >= penalized_.size()) continue;
      float& l = penalized_[static_cast<size_t>(t)];
      // Clamped: a tiny or huge penalty must not turn a logit into +-Inf.
      l = std::clamp(l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty, -FLT_MAX, FLT_MAX);
    }
    view = penalized_;
  }
  if (!grammar_) return pick(view);
  if (view.size() != grammar_->vocabulary().pieces.size()) {
    throw Error("sampler: " + std::to_string(view.size()) + " logits for a grammar over " +
                std::to_string(grammar_->vocabulary().pieces.size()) + " tokens");
  }
  if (params_.temperature <= 0.0f) {
    const int32_t best = argmax(view);
    if (grammar_->allows(best)) {
      grammar_->accept(best);
      return best;
    }
  }
  // The mask 64 tokens at a time: a word is mostly allowed (inside a string)
  // or mostly refused (between values), so each is a copy or a fill and then
  // the few exceptions, found by counting trailing zeros. A select per token
  // took 150 us of a 151,936-token mask, this 40 (grammar_bench, reply).
  const grammar::TokenBits& allowed = grammar_->allowed();
  masked_.resize(view.size());
  for (size_t base = 0; base < view.size(); base += 64) {
    const size_t n = std::min<size_t>(64, view.size() - base);
    const uint64_t valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    const uint64_t word = allowed[base / 64] & valid;
    float* out = masked_.data() + base;
    if (std::popcount(word) * 2 >= static_cast<int>(n)) {
      std::copy_n(view.data() + base, n, out);
      for (uint64_t refused = ~word & valid; refused != 0; refused &= refused - 1) out[std::countr_zero(refused)] = -INFINITY;
    } else {
      std::fill_n(out, n, -INFINITY);
      for (uint64_t ok = word; ok != 0; ok &= ok - 1) out[std::countr_zero(ok)] = view[base + static_cast<size_t>(std::countr_zero(ok))];
    }
  }
  if (count_above(masked_.data(), masked_.size(), -INFINITY) == 0) {
    throw Error(grammar_->can_continue() ? "sampler: no token of the vocabulary continues the grammar here"
                                         : "sampler: the grammar is complete and the model has no end-of-generation token");
  }
  const int32_t token = pick(masked_);
  grammar_->accept(token);
  return token;
}

int32_t Sampler::pick(std::span<const float> view) {
  if (params_.temperature <= 0.0f) return argmax(view);

  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < view.size()) {
    top_k(view, static_cast<size_t>(params_.top_k), candidates_);
  } else {
    candidates_.clear();
    for (size_t i = 0; i < view.size(); ++i) candidates_.push_back({static_cast<int32_t>(i), view[i], 0.0f});
    std::sort(candidates_.begin(), candidates_.end(), better);
  }
  // Masked tokens (-Inf, best first puts them last) are never drawn, not even
  // when rounding leaves the draw above the last sum; one is finite.
  while (candidates_.size() > 1 && candidates_.back().logit == -INFINITY) candidates_.pop_back();
  softmax(candidates_);
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    size_t keep = candidates_.size();
    for (size_t i = 0; i < candidates_.size(); ++i) {
      cumulative += candidates_[i].p;
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    candidates_.resize(keep);
  }
  if (params_.min_p > 0.0f) {
    const float threshold = candidates_.front().p * params_.min_p;
    size_t keep = 1;
    while (keep < candidates_.size() && candidates_[keep].p >= threshold) ++keep;
    candidates_.resize(keep);
  }
  softmax(candidates_, params_.temperature);

  const float r = uniform01();
  float cumulative = 0.0f;
  for (const Candidate& c : candidates_) {
    cumulative += c.p;
    if (r < cumulative) return c.id;
  }
  return candidates_.back().id;  // rounding left r above the last sum
}

}  // namespace engine
