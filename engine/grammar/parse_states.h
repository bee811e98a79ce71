// The parse states of one grammar, found as texts reach them and kept.
//
// Where a text is in a grammar is the set of parse stacks it leaves open. A
// stack lists, from the bottom, the positions still to be matched in each rule
// entered; its top is always a code-point set (or the stack is empty: the
// grammar is complete). A code point keeps the stacks whose top matches it and
// expands what follows each.
//
// Each set of stacks is interned: a text that comes back to the same place (a
// string's or a number's loop) finds it by id, with its successors already
// worked out: an ASCII byte's in a table, another code point's by which stacks
// took it. The token mask walks the vocabulary's trie through these tables,
// so a byte costs a lookup, not a copy and an expansion of stacks
// (docs/grammar.md has the measurement). Not thread-safe: one generation at a
// time uses a ParseStates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/grammar/gbnf.h"

namespace engine::grammar {

// A point in the grammar: a set of stacks and, between the bytes of a UTF-8
// sequence, the code point begun.
struct MatchState {
  uint32_t set = 0;      // an index into ParseStates' stack sets
  uint32_t partial = 0;  // the bits of a begun code point
  uint8_t left = 0;      // the continuation bytes it still needs (0: none begun)
  uint8_t length = 0;    // its sequence's length in bytes
};

class ParseStates {
 public:
  explicit ParseStates(Grammar g);
  ParseStates(const ParseStates&) = delete;
  ParseStates& operator=(const ParseStates&) = delete;

  const Grammar& grammar() const { return g_; }
  MatchState start() const { return {start_, 0, 0, 0}; }

  // Advances s over one byte of UTF-8; false, and s unchanged, when the byte
  // leaves the grammar: a code point no stack takes, a begun one that no code
  // point it could become is taken by, or bytes that are not well-formed
  // UTF-8 (overlong forms, surrogates and code points past U+10FFFF too: an
  // overlong "\xC1\xA1" is not a way to spell "a").
  bool step(MatchState& s, uint8_t b) {
    if (b < 0x80 && s.left == 0) {
      {
        const uint32_t next = ascii_[s.set * 128 + b];
        if (next == kDead) return false;
        if (next != kUnknown) {
          s.set = next;
          return true;
        }
      }
    }
    return step_slow(s, b);
  }
  // Advances s (no code point begun) over a whole code point.
  bool step_code_point(MatchState& s, uint32_t cp);

  // Whether the text so far is a whole sentence (generation may stop here),
  // and whether it may go on.
  bool can_end(const MatchState& s) const { return s.left == 0 && sets_[s.set].can_end; }
  bool can_continue(const MatchState& s) const { return sets_[s.set].can_continue; }
  size_t n_stacks(const MatchState& s) const { return sets_[s.set].stacks.size(); }
  // How many stack sets have been found so far.
  size_t n_sets() const { return sets_.size(); }

  // A grammar that keeps reaching new stack sets (counting with a huge
  // repetition, say) is stopped with a GrammarError rather than taking all
  // memory and time.
  static constexpr size_t kMaxSets = size_t{1} << 20;
  // Nor may one point of a text hold more parse stacks than this: an
  // ambiguous grammar can double them at every code point.
  static constexpr size_t kMaxStacks = 4096;

 private:
  static constexpr uint32_t kUnknown = 0xFFFFFFFFu;
  static constexpr uint32_t kDead = 0xFFFFFFFEu;

  struct Pos {
    uint32_t rule, alt, index;  // the next element: rules[rule].alternatives[alt][index]
    auto operator<=>(const Pos&) const = default;
  };
  using Stack = std::vector<Pos>;
  struct StackSet {
    std::vector<Stack> stacks;         // sorted, no two alike
    std::vector<const Element*> tops;  // each stack's top (nullptr: the empty stack)
    bool can_end = false, can_continue = false;
    // The successor by which stacks took a non-ASCII code point.
    std::map<std::vector<uint32_t>, uint32_t> successors;
  };

  bool step_slow(MatchState& s, uint8_t b);
  // The set after code point cp, or kDead.
  uint32_t advance(uint32_t set, uint32_t cp);
  // Whether some stack's top may take a well-formed code point of a `length`-
  // byte sequence that begins with the bits `partial` and has `left`
  // continuation bytes to come.
  bool partial_possible(uint32_t set, uint32_t partial, uint32_t left, uint32_t length) const;
  // Expands a stack until its top is a code-point set, adding each result.
  void expand(Stack stack, std::vector<Stack>& out) const;
  uint32_t intern(std::vector<Stack> stacks);

  Grammar g_;
  std::vector<StackSet> sets_;
  std::vector<uint32_t> ascii_;  // 128 successors per set
  std::unordered_map<std::string, uint32_t> ids_;   // a set's stacks, as bytes -> its index
  uint32_t start_ = 0;
};

}  // namespace engine::grammar
