// A grammar applied to a model's tokens, for constrained sampling: which
// tokens may come next, and the grammar advanced over each token generated.
//
// The mask at a parse state is the vocabulary trie's walk from it
// (token_mask.h), kept for the states a generation meets most recently: inside
// a string or a number the state repeats at every token, so after the first
// token there the mask is a copy. End-of-generation tokens are allowed exactly
// when the text so far is a whole sentence of the grammar; when the grammar
// can only end, they are all that is allowed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/token_mask.h"

namespace engine {
class Tokenizer;
}

namespace engine::grammar {

// A model's tokens as a grammar sees them: each one's bytes in a trie, and
// which end generation. Built once per model and shared by its constraints.
struct TokenVocabulary {
  explicit TokenVocabulary(const Tokenizer& tokenizer);
  TokenVocabulary(std::vector<std::string> pieces, std::vector<int32_t> end_of_generation);

  std::vector<std::string> pieces;          // a control token: ""
  std::vector<int32_t> end_of_generation;   // sorted
  TokenTrie trie;
};

class TokenConstraint {
 public:
  TokenConstraint(Grammar g, std::shared_ptr<const TokenVocabulary> vocabulary);

  // The tokens allowed next, a bit each (token_bit). Valid until the next
  // call that changes the constraint.
  const TokenBits& allowed();
  // Whether one token is allowed: a walk of its bytes, no mask.
  bool allows(int32_t token);
  // Advances over a token (an end-of-generation token changes nothing).
  // Throws engine::Error when the grammar does not allow it.
  void accept(int32_t token);
  // Back to the grammar's start (the parse states found are kept).
  void reset();

  bool can_end() const { return matcher_.can_end(); }
  bool can_continue() const { return matcher_.can_continue(); }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }

  // Masks kept; a mask is n_vocab bits (19 KiB for 150k tokens).
  static constexpr size_t kCachedMasks = 64;

 private:
  bool is_end(int32_t token) const;

  std::shared_ptr<const TokenVocabulary> vocabulary_;
  std::unique_ptr<ParseStates> states_;  // matchers point into it: its address must not move
  GrammarMatcher matcher_;
  struct Cached {
    TokenBits bits;
    uint64_t last_used = 0;
  };
  std::unordered_map<uint64_t, Cached> cache_;  // by the packed MatchState
  uint64_t clock_ = 0;
};

}  // namespace engine::grammar
