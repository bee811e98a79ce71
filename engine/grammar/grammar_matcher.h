// Where a text is in a grammar (gbnf.h), code point by code point: the set of
// parse stacks that the text so far leaves open. A stack lists, from the
// bottom, the positions still to be matched in each rule entered; its top is
// always a code-point set (or the stack is empty: the grammar is complete).
// accept() keeps the stacks whose top matches and expands what follows;
// an empty set means the text left the grammar. This is the state a sampler
// consults to mask the tokens that would leave it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/grammar/gbnf.h"

namespace engine::grammar {

class GrammarMatcher {
 public:
  // The matcher at the start of g's root rule. g must outlive it.
  explicit GrammarMatcher(const Grammar& g);

  // Advances over one code point; false (and nothing changed) when no stack
  // takes it.
  bool accept(uint32_t cp);
  // Advances over UTF-8 bytes, which may end inside a code point (the rest
  // comes with the next call, as a token's bytes do); false, and nothing
  // changed, when a code point is refused (a begun one as soon as no code
  // point it could become is taken) or the bytes are not UTF-8.
  bool accept_bytes(std::string_view bytes);
  // The same for one byte, without the copy that undoes a refusal: on false
  // the matcher is unusable (the token mask's walk drops it).
  bool accept_byte(uint8_t b);
  // Whether the text so far is a whole sentence of the grammar (generation
  // may stop here), and whether it can still go on.
  bool can_end() const;
  bool can_continue() const;

  size_t n_stacks() const { return stacks_.size(); }

 private:
  struct Pos {
    uint32_t rule, alt, index;  // the next element: rules[rule].alternatives[alt][index]
    bool operator==(const Pos&) const = default;
  };
  using Stack = std::vector<Pos>;

  // Expands stack until its top is a code-point set, adding each result to out.
  void expand(Stack stack, std::vector<Stack>& out) const;
  static void add_unique(std::vector<Stack>& stacks, Stack s);
  // Whether a stack's top may take a code point of the begun UTF-8 sequence.
  bool partial_possible() const;

  const Grammar* g_;
  std::vector<Stack> stacks_;
  // A code point begun by accept_bytes and not finished.
  uint32_t partial_ = 0;
  int partial_left_ = 0;
};

}  // namespace engine::grammar
