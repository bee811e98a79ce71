#include "engine/grammar/parse_states.h"

#include <algorithm>

#include "engine/support/text.h"

namespace engine::grammar {

ParseStates::ParseStates(Grammar g) : g_(std::move(g)) {
  std::vector<Stack> stacks;
  for (uint32_t a = 0; a < g_.rules[g_.root].alternatives.size(); ++a) expand({{g_.root, a, 0}}, stacks);
  start_ = intern(std::move(stacks));
}

// The grammar has no left recursion (parse_gbnf refuses it), so entering
// rules without consuming ends: each step down enters a rule not yet entered
// since the last code point. A rule entered as the last element of a sequence
// replaces that sequence's frame (which would only be popped after it), so a
// repetition, x* being R ::= x R |, loops in a stack of constant height and
// its states repeat.
void ParseStates::expand(Stack stack, std::vector<Stack>& out) const {
  // Copies are removed later (intern); nested rules that match nothing in
  // many ways can make many before that.
  if (out.size() >= 4 * kMaxStacks) {
    throw GrammarError("a code point leads to more than " + std::to_string(4 * kMaxStacks) +
                           " ways through the grammar (nested rules that can match nothing)",
                       0, 0);
  }
  while (true) {
    if (stack.empty()) {
      out.push_back(std::move(stack));
      return;
    }
    const Pos top = stack.back();
    const Sequence& seq = g_.rules[top.rule].alternatives[top.alt];
    if (top.index == seq.size()) {  // this rule is done: back to the one that entered it
      stack.pop_back();
      continue;
    }
    const Element& e = seq[top.index];
    if (e.kind == Element::Kind::chars) {
      out.push_back(std::move(stack));
      return;
    }
    // Enter the rule: the caller goes on after it, each alternative a stack.
    if (++stack.back().index == seq.size()) stack.pop_back();
    const Rule& r = g_.rules[e.rule];
    for (uint32_t a = 0; a + 1 < r.alternatives.size(); ++a) {
      Stack alt = stack;
      alt.push_back({e.rule, a, 0});
      expand(std::move(alt), out);
    }
    stack.push_back({e.rule, static_cast<uint32_t>(r.alternatives.size() - 1), 0});
  }
}

uint32_t ParseStates::intern(std::vector<Stack> stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.size() > kMaxStacks) {
    throw GrammarError("the text reached more than " + std::to_string(kMaxStacks) +
                           " parse stacks at once (a highly ambiguous grammar)",
                       0, 0);
  }
  std::string key;
  for (const Stack& s : stacks) {
    for (const Pos& p : s) key.append(reinterpret_cast<const char*>(&p), sizeof p);
    key.append(sizeof(Pos), '\xFF');  // a stack's end: no Pos is all ones
  }
  if (const auto it = ids_.find(key); it != ids_.end()) return it->second;
  if (sets_.size() >= kMaxSets) {
    throw GrammarError("the grammar reached more than " + std::to_string(kMaxSets) +
                           " parse states (a very large repetition or a highly ambiguous grammar)",
                       0, 0);
  }
  const auto id = static_cast<uint32_t>(sets_.size());
  ids_.emplace(std::move(key), id);
  StackSet set;
  for (const Stack& s : stacks) {
    if (s.empty()) {
      set.tops.push_back(nullptr);
      set.can_end = true;
    } else {
      set.tops.push_back(&g_.rules[s.back().rule].alternatives[s.back().alt][s.back().index]);
      set.can_continue = true;
    }
  }
  set.stacks = std::move(stacks);
  sets_.push_back(std::move(set));
  ascii_.resize(ascii_.size() + 128, kUnknown);
  return id;
}

uint32_t ParseStates::advance(uint32_t set, uint32_t cp) {
  std::vector<uint32_t> took;
  const std::vector<const Element*>& tops = sets_[set].tops;
  for (uint32_t i = 0; i < tops.size(); ++i) {
    if (tops[i] != nullptr && tops[i]->matches(cp)) took.push_back(i);
  }
  if (took.empty()) return kDead;
  if (const auto it = sets_[set].successors.find(took); it != sets_[set].successors.end()) return it->second;
  std::vector<Stack> next;
  for (const uint32_t i : took) {
    Stack moved = sets_[set].stacks[i];
    moved.back().index++;
    expand(std::move(moved), next);
  }
  const uint32_t id = intern(std::move(next));  // sets_ may grow: index it again
  sets_[set].successors.emplace(std::move(took), id);
  return id;
}

namespace {

// The smallest code point each sequence length may encode: below it the
// form is overlong.
constexpr uint32_t kMinCodePoint[5] = {0, 0, 0x80, 0x800, 0x10000};

bool well_formed(uint32_t cp, uint32_t length) {
  return cp >= kMinCodePoint[length] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
}

}  // namespace

bool ParseStates::partial_possible(uint32_t set, uint32_t partial, uint32_t left, uint32_t length) const {
  const uint32_t shift = 6 * left;
  const uint32_t lo = std::max(partial << shift, kMinCodePoint[length]);
  const uint32_t hi = std::min(partial << shift | ((1u << shift) - 1), 0x10FFFFu);
  if (lo > hi || (lo >= 0xD800 && hi <= 0xDFFF)) return false;
  const std::vector<const Element*>& tops = sets_[set].tops;
  return std::any_of(tops.begin(), tops.end(), [&](const Element* e) { return e != nullptr && e->may_match(lo, hi); });
}

bool ParseStates::step_code_point(MatchState& s, uint32_t cp) {
  if (s.left != 0) return false;
  const uint32_t next = advance(s.set, cp);
  if (next == kDead) return false;
  s.set = next;
  return true;
}

bool ParseStates::step_slow(MatchState& s, uint8_t b) {
  if (s.left > 0) {
    if ((b & 0xC0) != 0x80) return false;
    const uint32_t partial = (s.partial << 6) | (b & 0x3F);
    if (s.left > 1) {
      if (!partial_possible(s.set, partial, s.left - 1u, s.length)) return false;
      s.partial = partial;
      s.left--;
      return true;
    }
    if (!well_formed(partial, s.length)) return false;
    const uint32_t next = advance(s.set, partial);
    if (next == kDead) return false;
    s = {next, 0, 0, 0};
    return true;
  }
  if (b < 0x80) {
    const uint32_t next = advance(s.set, b);
    ascii_[s.set * 128 + b] = next;
    if (next == kDead) return false;
    s.set = next;
    return true;
  }
  const int len = utf8_sequence_length(b);
  if (len < 2) return false;
  const uint32_t partial = b & (0x7Fu >> len);
  if (!partial_possible(s.set, partial, static_cast<uint32_t>(len - 1), static_cast<uint32_t>(len))) return false;
  s.partial = partial;
  s.left = static_cast<uint8_t>(len - 1);
  s.length = static_cast<uint8_t>(len);
  return true;
}

}  // namespace engine::grammar
