// load_vocab(): the GGUF tokenizer.* keys, validated. Defaults and special-token
// conventions follow the reference loader (llama.cpp's llama_vocab::load).
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab.h"
#include "gguf/file.h"

namespace engine::tokenizer_detail {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

[[noreturn]] void fail(const gguf::File& f, std::string_view key, const std::string& what) {
  throw Error(f.path() + ": " + std::string(key) + ": " + what);
}

}  // namespace

std::string shown(std::string_view text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'') {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (text.size() > 40) out += "...";
  return out + "'";
}

namespace {

bool is_valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const unicode::Utf8Step step = unicode::decode_utf8(s, pos);
    if (step.kind != unicode::Utf8Step::complete) return false;
    pos += step.length;
  }
  return true;
}

}  // namespace

int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (char c : text.substr(3, 2)) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return -1;
    value = value * 16 + d;
  }
  return value;
}

namespace {

const gguf::Value& array_of(const gguf::File& f, std::string_view key, const gguf::Value& v, uint64_t n,
                            bool numeric) {
  if (numeric ? (v.array_type() == gguf::ValueType::STRING || v.array_type() == gguf::ValueType::ARRAY ||
                 v.array_type() == gguf::ValueType::BOOL)
              : v.array_type() != gguf::ValueType::STRING) {
    fail(f, key, "is an array of " + std::string(gguf::value_type_name(v.array_type())) + ", expected " +
                     (numeric ? "numbers" : "strings"));
  }
  if (v.array_size() != n) {
    fail(f, key, "has " + std::to_string(v.array_size()) + " entries but " + std::string(kTokensKey) + " has " +
                     std::to_string(n));
  }
  return v;
}

void read_tokens(const gguf::File& f, Vocab& v) {
  const gguf::Value* tokens = f.find_array(kTokensKey);
  if (tokens == nullptr) fail(f, kTokensKey, "missing: the file has no vocabulary");
  const uint64_t n = tokens->array_size();
  if (n == 0) fail(f, kTokensKey, "the vocabulary is empty");
  if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    fail(f, kTokensKey, std::to_string(n) + " tokens do not fit 32-bit ids");
  }
  array_of(f, kTokensKey, *tokens, n, false);
  v.offsets.reserve(n + 1);
  v.offsets.push_back(0);
  size_t n_empty = 0;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view text = *tokens->at(i).to_string();
    std::string placeholder;
    if (text.empty()) {
      // Some converted files have holes; the reference names them like this.
      placeholder = "[EMPTY_" + std::to_string(i) + "]";
      text = placeholder;
      ++n_empty;
    }
    if (!is_valid_utf8(text)) fail(f, kTokensKey, "token " + std::to_string(i) + " " + shown(text) + " is not UTF-8");
    v.blob.append(text);
    v.offsets.push_back(v.blob.size());
  }
  if (n_empty > 0) {
    log_warning("tokenizer: " + f.path() + ": " + std::to_string(n_empty) + " empty tokens, named [EMPTY_<id>]");
  }

  v.scores.assign(n, 0.0f);
  if (const gguf::Value* scores = f.find_array(kScoresKey)) {
    array_of(f, kScoresKey, *scores, n, true);
    for (uint64_t i = 0; i < n; ++i) {
      const gguf::Value s = scores->at(i);
      if (s.is_float()) {
        v.scores[i] = static_cast<float>(*s.to_double());
      } else if (const std::optional<int64_t> x = s.to_int()) {
        v.scores[i] = static_cast<float>(*x);
      }
      // The SentencePiece merge queue orders by score: NaN has no order.
      if (std::isnan(v.scores[i])) fail(f, kScoresKey, "token " + std::to_string(i) + " has the score NaN");
    }
  }

  v.types.assign(n, TokenType::normal);
  if (const gguf::Value* types = f.find_array(kTypesKey)) {
    array_of(f, kTypesKey, *types, n, true);
    for (uint64_t i = 0; i < n; ++i) {
      const std::optional<int64_t> t = types->at(i).to_int();
      if (!t || *t < 0 || *t > 6) {
        fail(f, kTypesKey, "token " + std::to_string(i) + " has type " + types->at(i).to_display() +
                               ", expected 0..6 (normal 1, unknown 2, control 3, user-defined 4, unused 5, byte 6)");
      }
      v.types[i] = static_cast<TokenType>(*t);
      if (v.types[i] == TokenType::byte && parse_byte_token(v.text(static_cast<int32_t>(i))) < 0) {
        fail(f, kTypesKey, "token " + std::to_string(i) + " " + shown(v.text(static_cast<int32_t>(i))) +
                               " has type byte (6) but is not of the form <0xNN>");
      }
    }
  }
}

size_t hash_text(std::string_view text) { return std::hash<std::string_view>{}(text); }

void build_index(const gguf::File& f, Vocab& v) {
  size_t capacity = 16;
  while (capacity < static_cast<size_t>(v.size()) * 2) capacity *= 2;
  v.index_slots.assign(capacity, -1);
  const size_t mask = capacity - 1;
  for (int32_t id = 0; id < v.size(); ++id) {
    const std::string_view text = v.text(id);
    for (size_t slot = hash_text(text) & mask;; slot = (slot + 1) & mask) {
      const int32_t other = v.index_slots[slot];
      if (other < 0) {
        v.index_slots[slot] = id;
        break;
      }
      if (v.text(other) == text) {
        fail(f, kTokensKey, "tokens " + std::to_string(other) + " and " + std::to_string(id) + " are both " +
                                shown(text) + " (duplicate tokens)");
      }
    }
  }
}

}  // namespace

std::optional<int32_t> read_id(const gguf::File& f, const std::string& key, int32_t n) {
  const std::optional<int64_t> id = f.find_int(key);
  if (!id) return std::nullopt;
  if (*id < 0 || *id >= n) {
    if (*id != 0xFFFFFFFFll && *id != -1) {
      log_warning("tokenizer: " + f.path() + ": " + key + " = " + std::to_string(*id) + " is outside the " +
                  std::to_string(n) + "-token vocabulary; ignored");
    }
    return std::nullopt;
  }
  return static_cast<int32_t>(*id);
}

namespace {

const PreTokenizerName& gemma4_pre_tokenizer() {
  for (const PreTokenizerName& name : pre_tokenizer_names()) {
    if (name.pre == PreTokenizer::gemma4) return name;
  }
  throw Error("tokenizer: no gemma4 pre-tokenizer");  // the table has one
}

const PreTokenizerName& find_pre_tokenizer(const gguf::File& f) {
  const std::optional<std::string_view> pre = f.find_string(kPreKey);
  if (!pre) {
    log_warning("tokenizer: " + f.path() + ": " + std::string(kPreKey) +
                " is missing; using the 'default' pre-tokenizer (token ids may differ from the model's training: "
                "regenerate the GGUF with a current converter)");
    return pre_tokenizer_names()[0];
  }
  std::string supported;
  for (const PreTokenizerName& name : pre_tokenizer_names()) {
    if (name.name == *pre) return name;
    supported += (supported.empty() ? "" : ", ") + std::string(name.name);
  }
  // An error, not a fallback: another pre-tokenizer silently gives other ids.
  fail(f, kPreKey, shown(*pre) + " is not a supported pre-tokenizer (supported: " + supported + ")");
}

void read_merges(const gguf::File& f, Vocab& v) {
  const gguf::Value* merges = f.find_array(kMergesKey);
  if (merges == nullptr) fail(f, kMergesKey, "missing: a byte-level BPE vocabulary needs its merges");
  array_of(f, kMergesKey, *merges, merges->array_size(), false);
  if (merges->array_size() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    fail(f, kMergesKey, "too many merges");
  }
  v.merges.reserve(merges->array_size());
  std::string joined;
  for (uint64_t i = 0; i < merges->array_size(); ++i) {
    const std::string_view merge = *merges->at(i).to_string();
    const size_t space = merge.find(' ', 1);
    if (space == std::string_view::npos || space + 1 >= merge.size()) {
      fail(f, kMergesKey, "merge " + std::to_string(i) + " " + shown(merge) + " is not two tokens separated by a space");
    }
    const std::string_view left = merge.substr(0, space), right = merge.substr(space + 1);
    const int32_t left_id = v.find(left), right_id = v.find(right);
    for (auto [part, id] : {std::pair{left, left_id}, std::pair{right, right_id}}) {
      if (id < 0) {
        fail(f, kMergesKey, "merge " + std::to_string(i) + " " + shown(merge) + " names " + shown(part) +
                                ", which is not a token");
      }
    }
    joined.assign(left).append(right);
    const uint64_t key = (static_cast<uint64_t>(left_id) << 32) | static_cast<uint32_t>(right_id);
    v.merges.emplace(key, MergeResult{static_cast<int32_t>(i), v.find(joined)});  // the first rank wins
  }
}

void find_byte_tokens(Vocab& v) {
  v.byte_token.fill(-1);
  for (int b = 0; b < 256; ++b) {
    std::string text;
    if (v.model == Model::spm || !v.byte_level) {
      static const char* hex = "0123456789ABCDEF";
      text = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
    } else {
      unicode::append_utf8(text, unicode::byte_to_codepoint(static_cast<uint8_t>(b)));
    }
    v.byte_token[b] = v.find(text);
  }
}

}  // namespace

int32_t Vocab::find(std::string_view text) const {
  const size_t mask = index_slots.size() - 1;
  for (size_t slot = hash_text(text) & mask;; slot = (slot + 1) & mask) {
    const int32_t id = index_slots[slot];
    if (id < 0 || this->text(id) == text) return id;
  }
}

Vocab load_vocab(const gguf::File& f) {
  try {
    Vocab v;
    v.source = f.path();
    const std::optional<std::string_view> model = f.find_string(kModelKey);
    if (!model) fail(f, kModelKey, "missing: the file has no tokenizer");
    constexpr std::string_view kSupported =
        "supported: 'llama' (SentencePiece), 'gpt2' (byte-level BPE) and 'gemma4' (SentencePiece-style BPE)";
    const bool gemma4 = *model == "gemma4";
    if (*model == "llama") {
      v.model = Model::spm;
    } else if (*model == "gpt2" || gemma4) {
      v.model = Model::bpe;
    } else if (*model == "bert") {
      fail(f, kModelKey, "'bert' (WordPiece) vocabularies are not supported; " + std::string(kSupported));
    } else {
      fail(f, kModelKey, shown(*model) + " is not a supported tokenizer; " + std::string(kSupported));
    }

    read_tokens(f, v);
    build_index(f, v);
    const int32_t n = v.size();

    if (v.model == Model::spm) {
      // SentencePiece conventions: <unk> 0, <s> 1, </s> 2, BOS added, a space before the text.
      v.unk = n > 0 ? 0 : -1;
      v.bos = n > 1 ? 1 : -1;
      v.eos = n > 2 ? 2 : -1;
      v.add_bos = true;
      v.add_space_prefix = true;
    } else {
      // A "gemma4" model is that pre-tokenizer whatever tokenizer.ggml.pre says.
      const PreTokenizerName& pre = gemma4 ? gemma4_pre_tokenizer() : find_pre_tokenizer(f);
      v.pre = pre.pre;
      v.pre_name = std::string(pre.name);
      v.ignore_merges = pre.ignore_merges;
      v.add_bos = pre.add_bos_default;
      v.byte_level = pre.pre != PreTokenizer::gemma4;
      read_merges(f, v);
    }
    find_byte_tokens(v);

    if (auto id = read_id(f, "tokenizer.ggml.bos_token_id", n)) v.bos = *id;
    if (auto id = read_id(f, "tokenizer.ggml.eos_token_id", n)) v.eos = *id;
    if (auto id = read_id(f, "tokenizer.ggml.unknown_token_id", n)) v.unk = *id;
    if (auto id = read_id(f, "tokenizer.ggml.eot_token_id", n)) v.eot = *id;
    if (auto id = read_id(f, "tokenizer.ggml.eom_token_id", n)) v.eom = *id;
    v.add_bos = f.find_bool("tokenizer.ggml.add_bos_token").value_or(v.add_bos);
    v.add_eos = f.find_bool("tokenizer.ggml.add_eos_token").value_or(v.add_eos);
    v.add_space_prefix = f.find_bool("tokenizer.ggml.add_space_prefix").value_or(v.add_space_prefix);
    // Gemma 4 needs its BOS; the reference adds it even when the file says not to.
    if (v.pre == PreTokenizer::gemma4) v.add_bos = true;
    if (v.add_bos && v.bos < 0) fail(f, "tokenizer.ggml.add_bos_token", "is true but the vocabulary has no BOS token");
    if (v.add_eos && v.eos < 0) fail(f, "tokenizer.ggml.add_eos_token", "is true but the vocabulary has no EOS token");
    mark_special_tokens(f, v);

    std::string info = "tokenizer: " + std::string(v.model == Model::spm ? "SentencePiece" : "byte-level BPE") +
                       ", " + std::to_string(n) + " tokens";
    if (v.model == Model::bpe) info += ", " + std::to_string(v.merges.size()) + " merges, pre-tokenizer " + v.pre_name;
    if (v.bos >= 0) info += ", BOS " + std::to_string(v.bos) + " " + shown(v.text(v.bos));
    if (v.eos >= 0) info += ", EOS " + std::to_string(v.eos) + " " + shown(v.text(v.eos));
    if (v.eot >= 0 && v.eot != v.eos) info += ", EOT " + std::to_string(v.eot) + " " + shown(v.text(v.eot));
    info += v.add_bos ? ", adds BOS" : ", no BOS";
    log_info(info);
    return v;
  } catch (const gguf::Error& e) {
    throw Error(e.what());  // already names the file and the key
  }
}

}  // namespace engine::tokenizer_detail
