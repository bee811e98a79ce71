// The vocabulary behind engine::Tokenizer: token texts, scores and types from
// the GGUF `tokenizer.*` keys, an index from text to id, the special ids and
// flags, and the BPE merge ranks. Built once by load_vocab(), then read-only
// (safe to share between threads).
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/tokenizer/pretokenizer.h"

namespace gguf {
class File;
}

namespace engine::tokenizer_detail {

// tokenizer.ggml.token_type values.
enum class TokenType : uint8_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

enum class Model { spm, bpe };

struct MergeResult {
  int32_t rank;    // position in tokenizer.ggml.merges: lower merges first
  int32_t result;  // id of the merged text, or -1 when it is not a token
};

// A byte trie of the special token texts, to find which of them occur in a
// text in one pass.
struct SpecialTrie {
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // (byte, node), sorted by byte
    int32_t token = -1;
  };
  std::vector<Node> nodes;  // nodes[0] is the root

  void insert(std::string_view text, int32_t token);
  // Calls found(token) for each special token whose text starts at text[pos].
  template <class F>
  void match_at(std::string_view text, size_t pos, F&& found) const;
};

struct Vocab {
  Model model = Model::spm;
  std::string source;  // file name, for messages

  // Token texts, back to back: token i is blob[offsets[i], offsets[i + 1]).
  std::string blob;
  std::vector<size_t> offsets;
  std::vector<float> scores;     // SPM merge priority (higher first)
  std::vector<TokenType> types;
  // Open-addressing hash index from text to id: -1 = empty slot; the size is a
  // power of two at least twice the vocabulary.
  std::vector<int32_t> index_slots;

  int32_t bos = -1, eos = -1, unk = -1, eot = -1, eom = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: a space before the text (and after each special token)
  std::vector<bool> end_of_generation;  // per id
  // Per id: whitespace after this special token in the input is dropped (the
  // reference's RSTRIP attribute, which it gives Phi-3's special tokens).
  std::vector<bool> strip_space_after;

  // Control, user-defined and unknown tokens, longest text first: the texts
  // matched as whole tokens before the rest of the text is tokenized.
  std::vector<int32_t> special_by_length;
  std::vector<int32_t> special_rank;  // per id: position in special_by_length, or -1
  SpecialTrie special_trie;

  // SPM and SentencePiece-style BPE: the <0xNN> token of each byte; byte-level
  // BPE: the token of each byte's GPT-2 code point. -1 when the vocabulary lacks it.
  std::array<int32_t, 256> byte_token{};

  // BPE only.
  // false for SentencePiece-style BPE (Gemma 4, `tokenizer.ggml.model` "gemma4"):
  // tokens are plain UTF-8 with "▁" for a space, merged per character, with
  // <0xNN> byte fallback, instead of GPT-2's byte alphabet.
  bool byte_level = true;
  PreTokenizer pre = PreTokenizer::default_bpe;
  std::string pre_name;
  bool ignore_merges = false;
  std::unordered_map<uint64_t, MergeResult> merges;  // key: left id << 32 | right id

  int32_t size() const { return static_cast<int32_t>(types.size()); }
  bool valid(int32_t id) const { return id >= 0 && id < size(); }
  std::string_view text(int32_t id) const {
    return std::string_view(blob).substr(offsets[id], offsets[id + 1] - offsets[id]);
  }
  // The id of the token with this exact text, or -1.
  int32_t find(std::string_view text) const;
  const MergeResult* find_merge(int32_t left, int32_t right) const {
    const auto it = merges.find((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
                                static_cast<uint32_t>(right));
    return it == merges.end() ? nullptr : &it->second;
  }
};

template <class F>
void SpecialTrie::match_at(std::string_view text, size_t pos, F&& found) const {
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto& children = nodes[node].children;
    const auto byte = static_cast<uint8_t>(text[i]);
    const auto it = std::lower_bound(children.begin(), children.end(), byte,
                                     [](const std::pair<uint8_t, int32_t>& c, uint8_t b) { return c.first < b; });
    if (it == children.end() || it->first != byte) return;
    node = it->second;
    if (nodes[node].token >= 0) found(nodes[node].token);
  }
}

// "<0xNN>" -> NN, else -1.
int parse_byte_token(std::string_view text);

// Splits text into runs of plain text and special tokens (see Tokenizer::encode).
struct Fragment {
  size_t begin;   // byte range in the text
  size_t end;
  int32_t token;  // the special token, or -1 for plain text
};
std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special);

// Reads and validates the vocabulary. Throws engine::Error naming the file and key.
Vocab load_vocab(const gguf::File& file);

// The last step of load_vocab(): the end-of-generation set, the token types
// the reference overrides, the special tokens by length and the whitespace
// they strip (special_marking.cpp).
void mark_special_tokens(const gguf::File& file, Vocab& v);

// tokenizer.ggml.<name>_token_id, or nullopt when absent or outside the
// vocabulary (the reference ignores such ids with a warning; files use
// 0xFFFFFFFF for "none").
std::optional<int32_t> read_id(const gguf::File& file, const std::string& key, int32_t n);

// A token text for messages: printable ASCII as is, the rest escaped, truncated.
std::string shown(std::string_view text);

// Encoders of one piece of plain text (no special tokens inside), appending ids.
void encode_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);
void encode_bpe(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

// The bytes token `id` stands for when detokenizing (id must be valid). Control
// and unknown tokens give "" unless render_special.
std::string token_piece(const Vocab& vocab, int32_t id, bool render_special);

}  // namespace engine::tokenizer_detail
