#include "engine/grammar/token_mask.h"

#include <algorithm>

namespace engine::grammar {

TokenTrie::TokenTrie(const std::vector<std::string>& pieces) : nodes_(1), n_tokens_(pieces.size()) {
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (pieces[id].empty()) continue;
    uint32_t node = 0;
    for (const char ch : pieces[id]) {
      const auto b = static_cast<uint8_t>(ch);
      auto& kids = nodes_[node].children;
      const auto at = std::lower_bound(kids.begin(), kids.end(), b,
                                       [](const std::pair<uint8_t, uint32_t>& c, uint8_t v) { return c.first < v; });
      if (at != kids.end() && at->first == b) {
        node = at->second;
        continue;
      }
      const auto child = static_cast<uint32_t>(nodes_.size());
      kids.insert(at, {b, child});
      nodes_.emplace_back();  // after the insert: `kids` may move with nodes_
      node = child;
    }
    nodes_[node].tokens.push_back(static_cast<int32_t>(id));
  }
}

void TokenTrie::walk(uint32_t node, const GrammarMatcher& state, std::vector<uint8_t>& allowed, size_t& n) const {
  for (const auto& [byte, child] : nodes_[node].children) {
    GrammarMatcher next = state;
    if (!next.accept_byte(byte)) continue;
    for (const int32_t id : nodes_[child].tokens) {
      allowed[static_cast<size_t>(id)] = 1;
      ++n;
    }
    walk(child, next, allowed, n);
  }
}

size_t TokenTrie::allowed(const GrammarMatcher& matcher, std::vector<uint8_t>& allowed) const {
  allowed.assign(n_tokens_, 0);
  size_t n = 0;
  walk(0, matcher, allowed, n);
  return n;
}

}  // namespace engine::grammar
