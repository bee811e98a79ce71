// Where a text is in a grammar (gbnf.h), advanced by code points or by UTF-8
// bytes split anywhere: a point in the grammar's ParseStates (parse_states.h),
// small to copy. An empty set of stacks means the text left the grammar, and
// every call that would lead there is refused and changes nothing. This is the
// state a sampler consults to mask the tokens that would leave the grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/grammar/parse_states.h"

namespace engine::grammar {

class GrammarMatcher {
 public:
  // The matcher at the start of the grammar's root rule. states must outlive
  // it; matchers of one ParseStates share its cache (one thread at a time).
  explicit GrammarMatcher(ParseStates& states) : states_(&states), state_(states.start()) {}

  // Advances over one code point; false (and nothing changed) when no stack
  // takes it or a UTF-8 sequence is begun.
  bool accept(uint32_t cp) { return states_->step_code_point(state_, cp); }
  // Advances over UTF-8 bytes, which may end inside a code point (the rest
  // comes with the next call, as a token's bytes do); false, and nothing
  // changed, when a code point is refused (a begun one as soon as no code
  // point it could become is taken) or the bytes are not UTF-8.
  bool accept_bytes(std::string_view bytes) {
    MatchState s = state_;
    for (const char ch : bytes) {
      if (!states_->step(s, static_cast<uint8_t>(ch))) return false;
    }
    state_ = s;
    return true;
  }
  // The same for one byte.
  bool accept_byte(uint8_t b) { return states_->step(state_, b); }
  // Whether the text so far is a whole sentence of the grammar (generation
  // may stop here), and whether it can still go on.
  bool can_end() const { return states_->can_end(state_); }
  bool can_continue() const { return states_->can_continue(state_); }

  size_t n_stacks() const { return states_->n_stacks(state_); }
  ParseStates& states() const { return *states_; }
  const MatchState& state() const { return state_; }

 private:
  ParseStates* states_;
  MatchState state_;
};

}  // namespace engine::grammar
