// Which tokens may come next under a grammar: the vocabulary's byte strings
// in a trie, walked from the matcher's state. A token is allowed when every
// byte of it keeps at least one parse stack open (a token ending inside a
// code point: when some code point it could become is taken); a shared
// prefix of many tokens is matched once, and a refused byte prunes every
// token under it. End-of-generation tokens are allowed when the grammar is
// complete (GrammarMatcher::can_end), never otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/grammar_matcher.h"

namespace engine::grammar {

class TokenTrie {
 public:
  // pieces[id]: the bytes token id stands for; an empty piece (a control
  // token) is never allowed.
  explicit TokenTrie(const std::vector<std::string>& pieces);

  size_t n_tokens() const { return n_tokens_; }
  size_t n_nodes() const { return nodes_.size(); }

  // allowed[id] = whether token id may follow matcher's text (resized to
  // n_tokens()). Returns the number allowed.
  size_t allowed(const GrammarMatcher& matcher, std::vector<uint8_t>& allowed) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, uint32_t>> children;  // byte, node; sorted by byte
    std::vector<int32_t> tokens;                         // the tokens whose bytes end here
  };
  void walk(uint32_t node, const GrammarMatcher& state, std::vector<uint8_t>& allowed, size_t& n) const;

  std::vector<Node> nodes_;
  size_t n_tokens_ = 0;
};

}  // namespace engine::grammar
