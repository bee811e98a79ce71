#include "engine/grammar/token_constraint.h"

#include <algorithm>

#include "engine/support/error.h"
#include "engine/tokenizer/tokenizer.h"

namespace engine::grammar {
namespace {

std::vector<std::string> token_pieces(const Tokenizer& tokenizer) {
  std::vector<std::string> pieces(static_cast<size_t>(tokenizer.n_vocab()));
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    if (!tokenizer.is_control(id)) pieces[static_cast<size_t>(id)] = tokenizer.token_piece(id);
  }
  return pieces;
}

std::vector<int32_t> end_tokens(const Tokenizer& tokenizer) {
  std::vector<int32_t> ends;
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    if (tokenizer.is_end_of_generation(id)) ends.push_back(id);
  }
  return ends;
}

// A MatchState in one word: the set, the sequence's length and the
// continuation bytes left (0-4 each) and the begun code point's bits (at most
// 15 of them before the last byte).
uint64_t key_of(const MatchState& s) {
  return uint64_t{s.set} << 32 | uint64_t{s.length} << 28 | uint64_t{s.left} << 24 | s.partial;
}

}  // namespace

TokenVocabulary::TokenVocabulary(const Tokenizer& tokenizer) : TokenVocabulary(token_pieces(tokenizer), end_tokens(tokenizer)) {}

TokenVocabulary::TokenVocabulary(std::vector<std::string> pieces_in, std::vector<int32_t> ends)
    : pieces(std::move(pieces_in)), end_of_generation(std::move(ends)), trie(pieces) {
  std::sort(end_of_generation.begin(), end_of_generation.end());
}

TokenConstraint::TokenConstraint(Grammar g, std::shared_ptr<const TokenVocabulary> vocabulary)
    : vocabulary_(std::move(vocabulary)),
      states_(std::make_unique<ParseStates>(std::move(g))),
      matcher_(*states_) {}

bool TokenConstraint::is_end(int32_t token) const {
  return std::binary_search(vocabulary_->end_of_generation.begin(), vocabulary_->end_of_generation.end(), token);
}

const TokenBits& TokenConstraint::allowed() {
  ++clock_;
  const uint64_t key = key_of(matcher_.state());
  if (const auto it = cache_.find(key); it != cache_.end()) {
    it->second.last_used = clock_;
    return it->second.bits;
  }
  if (cache_.size() >= kCachedMasks) {
    const auto oldest = std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
      return a.second.last_used < b.second.last_used;
    });
    cache_.erase(oldest);
  }
  Cached& c = cache_[key];
  c.last_used = clock_;
  vocabulary_->trie.allowed(matcher_, c.bits);
  const bool ends = matcher_.can_end();
  for (const int32_t t : vocabulary_->end_of_generation) {
    const auto id = static_cast<size_t>(t);
    if (ends) c.bits[id / 64] |= uint64_t{1} << (id % 64);
    else c.bits[id / 64] &= ~(uint64_t{1} << (id % 64));
  }
  return c.bits;
}

bool TokenConstraint::allows(int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= vocabulary_->pieces.size()) return false;
  if (is_end(token)) return matcher_.can_end();
  const std::string& piece = vocabulary_->pieces[static_cast<size_t>(token)];
  GrammarMatcher copy = matcher_;
  return !piece.empty() && copy.accept_bytes(piece);
}

void TokenConstraint::accept(int32_t token) {
  if (!allows(token)) {
    throw Error("grammar: token " + std::to_string(token) + " does not follow the grammar here");
  }
  if (!is_end(token)) matcher_.accept_bytes(vocabulary_->pieces[static_cast<size_t>(token)]);
}

void TokenConstraint::reset() { matcher_ = GrammarMatcher(*states_); }

}  // namespace engine::grammar
