#include "engine/grammar/grammar_matcher.h"

#include <algorithm>

namespace engine::grammar {

GrammarMatcher::GrammarMatcher(const Grammar& g) : g_(&g) {
  for (uint32_t a = 0; a < g.rules[g.root].alternatives.size(); ++a) expand({{g.root, a, 0}}, stacks_);
}

void GrammarMatcher::add_unique(std::vector<Stack>& stacks, Stack s) {
  if (std::find(stacks.begin(), stacks.end(), s) == stacks.end()) stacks.push_back(std::move(s));
}

// The grammar has no left recursion (parse_gbnf refuses it), so entering
// rules without consuming ends: each step down enters a rule not yet entered
// since the last code point.
void GrammarMatcher::expand(Stack stack, std::vector<Stack>& out) const {
  while (true) {
    if (stack.empty()) {
      add_unique(out, std::move(stack));
      return;
    }
    const Pos top = stack.back();
    const Sequence& seq = g_->rules[top.rule].alternatives[top.alt];
    if (top.index == seq.size()) {  // this rule is done: back to the one that entered it
      stack.pop_back();
      continue;
    }
    const Element& e = seq[top.index];
    if (e.kind == Element::Kind::chars) {
      add_unique(out, std::move(stack));
      return;
    }
    // Enter the rule: the caller goes on after it, each alternative a stack.
    stack.back().index++;
    const Rule& r = g_->rules[e.rule];
    for (uint32_t a = 0; a + 1 < r.alternatives.size(); ++a) {
      Stack alt = stack;
      alt.push_back({e.rule, a, 0});
      expand(std::move(alt), out);
    }
    stack.push_back({e.rule, static_cast<uint32_t>(r.alternatives.size() - 1), 0});
  }
}

bool GrammarMatcher::accept(uint32_t cp) {
  std::vector<Stack> next;
  for (const Stack& s : stacks_) {
    if (s.empty()) continue;
    const Pos top = s.back();
    if (!g_->rules[top.rule].alternatives[top.alt][top.index].matches(cp)) continue;
    Stack moved = s;
    moved.back().index++;
    expand(std::move(moved), next);
  }
  if (next.empty()) return false;
  stacks_ = std::move(next);
  return true;
}

bool GrammarMatcher::partial_possible() const {
  const auto shift = static_cast<uint32_t>(6 * partial_left_);
  const uint32_t lo = partial_ << shift, hi = lo | ((1u << shift) - 1);
  return std::any_of(stacks_.begin(), stacks_.end(), [&](const Stack& s) {
    if (s.empty()) return false;
    const Pos top = s.back();
    return g_->rules[top.rule].alternatives[top.alt][top.index].may_match(lo, hi);
  });
}

bool GrammarMatcher::accept_byte(uint8_t b) {
  if (partial_left_ > 0) {
    if ((b & 0xC0) != 0x80) return false;
    partial_ = (partial_ << 6) | (b & 0x3F);
    if (--partial_left_ > 0) return partial_possible();
    return accept(partial_);
  }
  if (b < 0x80) return accept(b);
  const int len = (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0) return false;
  partial_ = b & (0x7Fu >> len);
  partial_left_ = len - 1;
  return partial_possible();
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  const GrammarMatcher before = *this;
  for (const char ch : bytes) {
    if (!accept_byte(static_cast<uint8_t>(ch))) {
      *this = before;
      return false;
    }
  }
  return true;
}

bool GrammarMatcher::can_end() const {
  return partial_left_ == 0 && std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::can_continue() const {
  return std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return !s.empty(); });
}

}  // namespace engine::grammar
