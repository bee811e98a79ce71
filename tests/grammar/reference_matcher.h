// The plain twin of ParseStates / GrammarMatcher for the tests: the set of
// parse stacks copied and expanded at every code point, nothing interned or
// cached, and without the tail-call step that keeps a repetition's stack
// flat. The mask and the matcher are checked against it.
//
// Without the tail calls its stacks grow with the text, and on an ambiguous
// grammar (nested repetitions that match nothing, "(x*)+") their number can
// grow at every code point, each longer: when the stacks one code point
// offers (copies included) hold more than kMaxPositions positions in all, it
// throws TooManyStacks, and the caller compares no further (a fuzz input
// once took minutes here, 4096 stacks of up to 64 positions at each step).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/support/text.h"
#include "engine/tokenizer/unicode.h"

namespace engine::grammar::testing {

class ReferenceMatcher {
 public:
  static constexpr size_t kMaxPositions = size_t{1} << 16;
  struct TooManyStacks {};

  explicit ReferenceMatcher(const Grammar& g);
  bool accept(uint32_t cp);
  bool accept_bytes(std::string_view bytes);
  bool can_end() const;
  bool can_continue() const;

 private:
  struct Pos {
    uint32_t rule, alt, index;
    auto operator<=>(const Pos&) const = default;
  };
  using Stack = std::vector<Pos>;

  bool accept_byte(uint8_t b);
  // work counts the positions of the stacks offered to out, copies too.
  void expand(Stack stack, std::set<Stack>& out, size_t& work) const;
  static void add_unique(std::set<Stack>& stacks, Stack s, size_t& work);
  bool partial_possible() const;

  const Grammar* g_;
  std::set<Stack> stacks_;
  std::string begun_;  // the bytes of a code point begun
};

inline ReferenceMatcher::ReferenceMatcher(const Grammar& g) : g_(&g) {
  size_t work = 0;
  for (uint32_t a = 0; a < g.rules[g.root].alternatives.size(); ++a) expand({{g.root, a, 0}}, stacks_, work);
}

inline void ReferenceMatcher::add_unique(std::set<Stack>& stacks, Stack s, size_t& work) {
  work += s.size() + 1;
  if (work > kMaxPositions) throw TooManyStacks{};
  stacks.insert(std::move(s));
}

// The grammar has no left recursion (parse_gbnf refuses it), so entering
// rules without consuming ends: each step down enters a rule not yet entered
// since the last code point.
inline void ReferenceMatcher::expand(Stack stack, std::set<Stack>& out, size_t& work) const {
  while (true) {
    if (stack.empty()) {
      add_unique(out, std::move(stack), work);
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
      add_unique(out, std::move(stack), work);
      return;
    }
    // Enter the rule: the caller goes on after it, each alternative a stack.
    stack.back().index++;
    const Rule& r = g_->rules[e.rule];
    for (uint32_t a = 0; a + 1 < r.alternatives.size(); ++a) {
      Stack alt = stack;
      alt.push_back({e.rule, a, 0});
      expand(std::move(alt), out, work);
    }
    stack.push_back({e.rule, static_cast<uint32_t>(r.alternatives.size() - 1), 0});
  }
}

inline bool ReferenceMatcher::accept(uint32_t cp) {
  std::set<Stack> next;
  size_t work = 0;
  for (const Stack& s : stacks_) {
    if (s.empty()) continue;
    const Pos top = s.back();
    if (!g_->rules[top.rule].alternatives[top.alt][top.index].matches(cp)) continue;
    Stack moved = s;
    moved.back().index++;
    expand(std::move(moved), next, work);
  }
  if (next.empty()) return false;
  stacks_ = std::move(next);
  return true;
}

// The UTF-8 of a code point (the tokenizer's encoder), or "" for one that
// has none (a surrogate, past U+10FFFF).
inline std::string utf8_of(uint32_t cp) {
  std::string s;
  if (cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF)) engine::unicode::append_utf8(s, cp);
  return s;
}

// By enumeration: some code point whose UTF-8 begins with the bytes begun is
// taken by a stack's top (what the engine works out with ranges).
inline bool ReferenceMatcher::partial_possible() const {
  // The candidates: every code point of a sequence of this length that has
  // the begun bits (its encoding is checked, so an overlong or surrogate
  // candidate is none).
  const int len = utf8_sequence_length(static_cast<uint8_t>(begun_[0]));
  uint32_t bits = static_cast<uint8_t>(begun_[0]) & (0x7Fu >> len);
  for (size_t i = 1; i < begun_.size(); ++i) bits = (bits << 6) | (static_cast<uint8_t>(begun_[i]) & 0x3F);
  const uint32_t shift = 6 * static_cast<uint32_t>(len - static_cast<int>(begun_.size()));
  const uint32_t lo = bits << shift, hi = std::min(lo | ((1u << shift) - 1), 0x10FFFFu);
  auto begins = [&](uint32_t cp) { return utf8_of(cp).starts_with(begun_); };
  for (const Stack& s : stacks_) {
    if (s.empty()) continue;
    const Element& e = g_->rules[s.back().rule].alternatives[s.back().alt][s.back().index];
    if (e.negated) {  // the first candidate outside its ranges, if any
      for (uint32_t cp = lo; cp <= hi; ++cp) {
        if (e.matches(cp) && begins(cp)) return true;
      }
      continue;
    }
    for (const CodeRange& r : e.ranges) {  // the candidates inside its ranges
      for (uint32_t cp = std::max(lo, r.lo); cp <= std::min(hi, r.hi); ++cp) {
        if (begins(cp)) return true;
      }
    }
  }
  return false;
}

inline bool ReferenceMatcher::accept_byte(uint8_t b) {
  if (begun_.empty() && b < 0x80) return accept(b);
  if (!begun_.empty() && (b & 0xC0) != 0x80) return false;
  begun_ += static_cast<char>(b);
  const int len = utf8_sequence_length(static_cast<uint8_t>(begun_[0]));
  if (len < 2) return false;
  if (static_cast<int>(begun_.size()) < len) return partial_possible();
  uint32_t cp = static_cast<uint8_t>(begun_[0]) & (0x7Fu >> len);
  for (size_t i = 1; i < begun_.size(); ++i) cp = (cp << 6) | (static_cast<uint8_t>(begun_[i]) & 0x3F);
  const bool ok = utf8_of(cp) == begun_ && accept(cp);
  begun_.clear();
  return ok;
}

inline bool ReferenceMatcher::accept_bytes(std::string_view bytes) {
  const ReferenceMatcher before = *this;
  for (const char ch : bytes) {
    if (!accept_byte(static_cast<uint8_t>(ch))) {
      *this = before;
      return false;
    }
  }
  return true;
}

inline bool ReferenceMatcher::can_end() const {
  return begun_.empty() && std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

inline bool ReferenceMatcher::can_continue() const {
  return std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return !s.empty(); });
}

}  // namespace engine::grammar::testing
