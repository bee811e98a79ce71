// SentencePiece-style BPE over a piece of text whose spaces are already "▁":
// start from one symbol per UTF-8 character, repeatedly merge the adjacent
// pair whose concatenation is the vocabulary token with the highest score
// (ties: leftmost), and spell what never became a token with <0xNN> byte tokens.
// This is the reference (llama.cpp llm_tokenizer_spm) algorithm.
#include <queue>

#include "engine/tokenizer/vocab.h"

namespace engine::tokenizer_detail {
namespace {

struct Symbol {
  size_t begin;  // byte range in the text
  size_t size;   // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
  int32_t id;  // token whose text this symbol is, or -1
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  size_t size;  // bytes of both symbols when queued: detects stale entries
  int32_t id;
};

struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

// Length of the UTF-8 sequence a lead byte announces. Continuation and invalid
// bytes count as one-byte characters, so any byte string splits (the reference
// splits the same way, which keeps the ids identical on ill-formed input).
size_t utf8_length(unsigned char lead) {
  static constexpr uint8_t kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLength[lead >> 4];
}

void push_bytes(const Vocab& vocab, std::string_view bytes, std::vector<int32_t>& out) {
  for (unsigned char b : bytes) {
    int32_t id = vocab.byte_token[b];
    if (id < 0) id = vocab.find(std::string_view(reinterpret_cast<const char*>(&b), 1));
    if (id < 0) id = vocab.unk;
    if (id >= 0) out.push_back(id);  // a vocabulary without bytes or <unk> cannot spell it
  }
}

}  // namespace

void encode_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = std::min(utf8_length(static_cast<unsigned char>(text[pos])), text.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({pos, n, index - 1, pos + n == text.size() ? -1 : index + 1, vocab.find(text.substr(pos, n))});
    pos += n;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const size_t size = l.size + symbols[right].size;
    const int32_t id = vocab.find(text.substr(l.begin, size));
    if (id >= 0) queue.push({vocab.scores[id], left, right, size, id});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != top.size) continue;  // stale
    left.size += right.size;
    left.id = top.id;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    try_add(left.prev, top.left);
    try_add(top.left, left.next);
  }

  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {
      push_bytes(vocab, text.substr(s.begin, s.size), out);  // byte fallback
    }
  }
}

}  // namespace engine::tokenizer_detail
