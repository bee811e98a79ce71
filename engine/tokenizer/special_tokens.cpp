// Special tokens in the input: texts of control, user-defined and unknown
// tokens become those tokens before the rest is tokenized. The order follows
// the reference (llama.cpp tokenizer_st_partition): token by token, longest
// text first, each splitting every remaining run of plain text at all its
// occurrences, left to right. A trie pass first finds which special tokens
// occur at all, so a vocabulary with thousands of them costs one scan. A
// token marked strip_space_after also takes the whitespace after it.
#include <algorithm>

#include "engine/tokenizer/vocab.h"

namespace engine::tokenizer_detail {

void SpecialTrie::insert(std::string_view text, int32_t token) {
  int32_t node = 0;
  for (char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    auto& children = nodes[node].children;
    auto it = std::lower_bound(children.begin(), children.end(), std::pair<uint8_t, int32_t>{byte, -1});
    if (it == children.end() || it->first != byte) {
      const auto child = static_cast<int32_t>(nodes.size());
      children.insert(it, {byte, child});
      nodes.emplace_back();  // invalidates `children`
      node = child;
    } else {
      node = it->second;
    }
  }
  if (nodes[node].token < 0) nodes[node].token = token;
}

std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({0, text.size(), -1});

  // Which special tokens occur, in processing order.
  std::vector<int32_t> present;
  const auto allowed = [&](int32_t id) {
    // Without parse_special only user-defined tokens are split off (added
    // tokens that are not "special", as HF tokenizers treat them).
    return parse_special || vocab.types[id] == TokenType::user_defined;
  };
  for (size_t pos = 0; pos < text.size(); ++pos) {
    vocab.special_trie.match_at(text, pos, [&](int32_t id) {
      if (allowed(id)) present.push_back(id);
    });
  }
  if (present.empty()) return fragments;
  std::sort(present.begin(), present.end(),
            [&](int32_t a, int32_t b) { return vocab.special_rank[a] < vocab.special_rank[b]; });
  present.erase(std::unique(present.begin(), present.end()), present.end());

  std::vector<Fragment> next;
  for (int32_t id : present) {
    const std::string_view special = vocab.text(id);
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view run = text.substr(0, f.end);
      size_t pos = f.begin;
      for (size_t m = run.find(special, pos); m != std::string_view::npos; m = run.find(special, pos)) {
        if (m > pos) next.push_back({pos, m, -1});
        next.push_back({m, m + special.size(), id});
        pos = m + special.size();
        if (vocab.strip_space_after[id]) {
          // The reference's isspace(): the ASCII spaces only.
          while (pos < f.end && std::string_view(" \t\n\v\f\r").find(text[pos]) != std::string_view::npos) ++pos;
        }
      }
      if (pos < f.end) next.push_back({pos, f.end, -1});
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace engine::tokenizer_detail
