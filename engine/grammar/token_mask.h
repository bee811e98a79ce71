// Which tokens may come next under a grammar: the vocabulary's byte strings
// in a trie, walked from the matcher's state. A token is allowed when every
// byte of it keeps the text in the grammar (a token ending inside a code
// point: when some code point it could become is taken). A shared prefix of
// many tokens is matched once, and a refused byte skips every token under it.
// The trie is flat, in depth-first order, so the walk is one pass over an
// array whose steps are ParseStates' table lookups. Empty pieces (control
// tokens) are never allowed: end-of-generation is the caller's to allow when
// the grammar can end (GrammarMatcher::can_end).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/grammar_matcher.h"

namespace engine::grammar {

// One bit per token id: id / 64's word, bit id % 64.
using TokenBits = std::vector<uint64_t>;
inline bool token_bit(const TokenBits& bits, size_t id) { return (bits[id / 64] >> (id % 64)) & 1; }

class TokenTrie {
 public:
  // pieces[id]: the bytes token id stands for.
  explicit TokenTrie(const std::vector<std::string>& pieces);

  size_t n_tokens() const { return n_tokens_; }
  size_t n_nodes() const { return nodes_.size(); }

  // Sets token id's bit of `allowed` (resized to n_tokens() / 64 + 1 words)
  // when it may follow the matcher's text. Returns the number allowed. Grows
  // the matcher's ParseStates.
  size_t allowed(const GrammarMatcher& matcher, TokenBits& allowed) const;

 private:
  struct Node {
    uint32_t end;          // the index past this node's subtree
    uint32_t token_begin;  // its tokens: ids_[token_begin, token_end)
    uint32_t token_end;
    uint32_t depth : 24;   // bytes from the root (the root is node 0, depth 0)
    uint32_t byte : 8;     // the byte that leads here from the parent
  };

  std::vector<Node> nodes_;
  std::vector<int32_t> ids_;  // token ids sorted by their bytes
  size_t n_tokens_ = 0;
  size_t max_depth_ = 0;
};

}  // namespace engine::grammar
