// BPE: pre-tokenize the text into words, start from one symbol per byte (its
// GPT-2 alphabet token; byte-level BPE) or per character (SentencePiece-style
// BPE), then repeatedly apply the merge with the lowest rank in
// tokenizer.ggml.merges (ties: leftmost). This is the reference (llama.cpp
// llm_tokenizer_bpe) algorithm, done on ids instead of strings.
#include <queue>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab.h"

namespace engine::tokenizer_detail {
namespace {

struct Symbol {
  size_t begin;  // byte range in the word
  size_t size;   // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
  int32_t id;  // -1: not a token (a byte missing from the vocabulary, or a merge without a token)
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  size_t size;  // bytes of both symbols when queued: detects stale entries
  int32_t result;
};

struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

void encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) {
  if (vocab.ignore_merges) {
    // Llama 3 style: a word that is a token as a whole is that token, whatever the merges say.
    std::string spelled;
    if (!vocab.byte_level) spelled = word;
    for (unsigned char b : vocab.byte_level ? word : std::string_view()) {
      unicode::append_utf8(spelled, unicode::byte_to_codepoint(b));
    }
    if (const int32_t id = vocab.find(spelled); id >= 0) {
      out.push_back(id);
      return;
    }
  }

  std::vector<Symbol> symbols;
  if (vocab.byte_level) {
    symbols.resize(word.size());
    for (size_t i = 0; i < word.size(); ++i) {
      symbols[i] = {i, 1, 0, 0, vocab.byte_token[static_cast<unsigned char>(word[i])]};
    }
  } else if (vocab.pre == PreTokenizer::gemma4 && word.find_first_not_of('\n') == std::string_view::npos &&
             vocab.find(word) >= 0) {
    symbols.push_back({0, word.size(), 0, 0, vocab.find(word)});  // a run of newlines that is a token
  } else {
    // One symbol per character (per byte of ill-formed UTF-8).
    for (size_t pos = 0; pos < word.size();) {
      const unicode::Utf8Step step = unicode::decode_utf8(word, pos);
      const size_t n = step.kind == unicode::Utf8Step::complete ? step.length : 1;
      symbols.push_back({pos, n, 0, 0, vocab.find(word.substr(pos, n))});
      pos += n;
    }
  }
  for (size_t i = 0; i < symbols.size(); ++i) {
    symbols[i].prev = static_cast<int32_t>(i) - 1;
    symbols[i].next = i + 1 == symbols.size() ? -1 : static_cast<int32_t>(i) + 1;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    if (l.id < 0 || r.id < 0) return;  // merges only name tokens
    if (const MergeResult* m = vocab.find_merge(l.id, r.id)) queue.push({m->rank, left, right, l.size + r.size, m->result});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != top.size) continue;  // stale
    left.size += right.size;
    left.id = top.result;
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
      continue;
    }
    // Spell it byte by byte; a byte the vocabulary lacks is dropped (as the
    // reference does).
    for (size_t j = s.begin; j < s.begin + s.size; ++j) {
      if (const int32_t id = vocab.byte_token[static_cast<unsigned char>(word[j])]; id >= 0) out.push_back(id);
    }
  }
}

}  // namespace

void encode_bpe(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  const DecodedText decoded = decode_for_split(text);
  for (const UnitSpan& w : pre_tokenize(vocab.pre, decoded)) {
    const size_t begin = decoded.offsets[w.begin];
    encode_word(vocab, text.substr(begin, decoded.offsets[w.end] - begin), out);
  }
}

}  // namespace engine::tokenizer_detail
