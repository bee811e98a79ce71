// The family-shaped vocabularies of family_vocabs.h. Token layouts, types and
// keys follow what llama.cpp's converter writes for each family
// (convert_hf_to_gguf.py: _set_vocab_sentencepiece for Gemma 2/3 and Phi-3,
// Gemma4Model.set_vocab, _set_vocab_gpt2 with the pre-tokenizer its hash
// table gives: gpt-4o for Phi-4-mini, smaug-bpe for SmolLM3, refact for
// Granite 3); the merges are learned here, so the ids are not the real models'.
#include "tests/tokenizer/family_vocabs.h"

#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "engine/tokenizer/unicode.h"
#include "gguf/writer.h"

namespace tokenizer_test {
namespace {

// What the merges are learned from: English prose and code, some accents, a
// little CJK, runs of spaces and newlines. Characters outside it reach the
// tokenizers' byte fallback.
constexpr std::string_view kCorpus =
    "The quick brown fox jumps over the lazy dog. The dog didn't care; it's been there before.\n"
    "We've said it before and we'll say it again: they're here, I'm sure, and you'd better listen.\n\n"
    "Hello world! Hello there, WORLD. HTTPServer and XMLHttpRequest are names, CamelCase too.\n"
    "In 2024 there were 1234 users, 56 of them new; 3.14 and 2.718 are numbers.\n"
    "def tokenize(text):\n    return [t for t in text.split() if t]  # the words\n\n"
    "for (int i = 0; i < n; ++i) {\n        total += values[i];\n    }\n"
    "Les élèves étudient à l'école; naïve café, déjà vu, Über straße.\n"
    "我想在工作 apple 我们 工作 天气很好。\n"
    "user assistant system model turn the end of the text, start of the role.\n"
    "    indented    text    with    many    spaces\n\n\n"
    "the theory then there these those other another mother brother\n";

constexpr std::string_view kSpace = "\xE2\x96\x81";  // SentencePiece's "▁"

std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < s.size();) {
    const size_t n = engine::unicode::decode_utf8(s, pos).length;
    out.emplace_back(s.substr(pos, n));
    pos += n;
  }
  return out;
}

// Training words: a run of spaces, a run of newlines, or one optional space and
// what follows up to the next space or newline.
std::vector<std::string> corpus_words() {
  std::vector<std::string> words;
  const std::string_view t = kCorpus;
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    if (t[i] == '\n') {
      while (j < t.size() && t[j] == '\n') ++j;
    } else if (t[i] == ' ' && (i + 1 >= t.size() || t[i + 1] == ' ' || t[i + 1] == '\n')) {
      while (j < t.size() && t[j] == ' ') ++j;
    } else {
      j = i + 1;
      while (j < t.size() && t[j] != ' ' && t[j] != '\n') ++j;
    }
    words.emplace_back(t.substr(i, j - i));
    i = j;
  }
  return words;
}

using Merge = std::pair<std::string, std::string>;

// BPE training: repeatedly merge the most frequent adjacent pair (ties: the
// smallest pair), `n` times or until every word is one symbol. Pairs seen
// once are merged too, once the repeated ones are done: whole words become
// tokens, as in a real vocabulary.
std::vector<Merge> learn_merges(const std::vector<std::vector<std::string>>& words, size_t n) {
  std::map<std::vector<std::string>, int> counts;
  for (const auto& w : words) ++counts[w];
  std::vector<Merge> merges;
  while (merges.size() < n) {
    std::map<Merge, int> pairs;
    for (const auto& [w, count] : counts) {
      for (size_t i = 0; i + 1 < w.size(); ++i) pairs[{w[i], w[i + 1]}] += count;
    }
    const Merge* best = nullptr;
    int best_count = 0;
    for (const auto& [pair, count] : pairs) {
      if (count > best_count) best = &pair, best_count = count;
    }
    if (best == nullptr) break;
    const Merge m = *best;
    merges.push_back(m);
    std::map<std::vector<std::string>, int> next;
    for (const auto& [w, count] : counts) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == m.first && w[i + 1] == m.second) {
          merged.push_back(m.first + m.second);
          ++i;
        } else {
          merged.push_back(w[i]);
        }
      }
      next[merged] += count;
    }
    counts.swap(next);
  }
  return merges;
}

struct Token {
  std::string text;
  int32_t type;  // tokenizer.ggml.token_type
  float score;
};

enum : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6 };

struct Vocab {
  std::vector<Token> tokens;
  std::set<std::string> texts;
  void add(std::string text, int32_t type, float score = 0.0f) {
    if (texts.insert(text).second) tokens.push_back({std::move(text), type, score});
  }
  uint32_t id(std::string_view text) const {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].text == text) return static_cast<uint32_t>(i);
    }
    throw std::logic_error("no token " + std::string(text));
  }
};

void add_specials(Vocab& v, const std::vector<std::pair<std::string, int32_t>>& specials) {
  for (const auto& [text, type] : specials) v.add(text, type);
}

void add_byte_fallback(Vocab& v) {
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.add(buf, kByte);
  }
}

// Words in SentencePiece's spelling ("▁" for a space), as characters.
std::vector<std::vector<std::string>> sentencepiece_words() {
  std::vector<std::vector<std::string>> words;
  for (const std::string& w : corpus_words()) {
    if (w[0] == '\n') continue;  // newline runs are tokens of their own where a family has them
    std::string escaped;
    for (char c : w) escaped += c == ' ' ? std::string(kSpace) : std::string(1, c);
    words.push_back(utf8_chars(escaped));
  }
  return words;
}

// The pieces: every corpus character, then each merge's result, scored so that
// earlier merges win (SentencePiece merges the highest score first).
std::vector<Merge> add_sentencepiece_pieces(Vocab& v, size_t n_merges) {
  const auto words = sentencepiece_words();
  std::set<std::string> chars;
  for (const auto& w : words) chars.insert(w.begin(), w.end());
  chars.insert("\n");
  for (const std::string& c : chars) v.add(c, kNormal, -1000.0f);
  const std::vector<Merge> merges = learn_merges(words, n_merges);
  for (size_t r = 0; r < merges.size(); ++r) {
    v.add(merges[r].first + merges[r].second, kNormal, -static_cast<float>(r));
  }
  return merges;
}

// Byte-level BPE: the 256 GPT-2 alphabet characters in byte order, then the
// merges' results.
std::vector<Merge> add_byte_level_pieces(Vocab& v, size_t n_merges) {
  std::vector<std::vector<std::string>> words;
  for (const std::string& w : corpus_words()) {
    std::vector<std::string> symbols;
    for (unsigned char b : w) {
      std::string s;
      engine::unicode::append_utf8(s, engine::unicode::byte_to_codepoint(b));
      symbols.push_back(s);
    }
    words.push_back(std::move(symbols));
  }
  for (int b = 0; b < 256; ++b) {
    std::string s;
    engine::unicode::append_utf8(s, engine::unicode::byte_to_codepoint(static_cast<uint8_t>(b)));
    v.add(s, kNormal);
  }
  const std::vector<Merge> merges = learn_merges(words, n_merges);
  for (const Merge& m : merges) v.add(m.first + m.second, kNormal);
  return merges;
}

void write_common(gguf::Writer& w, std::string_view name, std::string_view model, std::string_view pre) {
  // A vocabulary-only file as llama.cpp loads one: an architecture and the
  // hyperparameters its loader insists on.
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", name);
  w.set_u32("llama.context_length", 4096);
  w.set_u32("llama.embedding_length", 64);
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.feed_forward_length", 128);
  w.set_u32("llama.attention.head_count", 1);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_string("tokenizer.ggml.model", model);
  w.set_string("tokenizer.ggml.pre", pre);
}

void write_tokens(gguf::Writer& w, const Vocab& v, bool scores) {
  std::vector<std::string> texts;
  std::vector<int32_t> types;
  std::vector<float> score_values;
  for (const Token& t : v.tokens) {
    texts.push_back(t.text);
    types.push_back(t.type);
    score_values.push_back(t.score);
  }
  w.set_array_strings("tokenizer.ggml.tokens", texts);
  if (scores) w.set_array_f32("tokenizer.ggml.scores", score_values);
  w.set_array_i32("tokenizer.ggml.token_type", types);
}

void write_merges(gguf::Writer& w, const std::vector<Merge>& merges) {
  std::vector<std::string> lines;
  for (const Merge& m : merges) lines.push_back(m.first + " " + m.second);
  w.set_array_strings("tokenizer.ggml.merges", lines);
}

// A BPE vocabulary: the common keys, tokens and merges.
void write_bpe(gguf::Writer& w, const Vocab& v, const std::vector<Merge>& merges, std::string_view name,
               std::string_view model, std::string_view pre) {
  write_common(w, name, model, pre);
  write_tokens(w, v, model == "gemma4");  // SentencePiece-style BPE keeps its scores
  write_merges(w, merges);
}

void set_ids(gguf::Writer& w, const Vocab& v, const std::vector<std::pair<std::string, std::string>>& keys) {
  for (const auto& [key, text] : keys) w.set_u32("tokenizer.ggml." + key + "_token_id", v.id(text));
}

// Gemma 2/3: SentencePiece without a space prefix; <end_of_turn> is found by
// its text (the converter writes no eot id).
void gemma3(gguf::Writer& w) {
  Vocab v;
  add_specials(v, {{"<pad>", kControl}, {"<eos>", kControl}, {"<bos>", kControl}, {"<unk>", kUnknown},
                   {"<mask>", kUserDefined}, {"[multimodal]", kUserDefined}, {"<unused0>", kControl},
                   {"<unused1>", kControl}, {"<start_of_turn>", kControl}, {"<end_of_turn>", kControl},
                   {"<h1>", kUserDefined}, {"</h1>", kUserDefined}});
  add_byte_fallback(v);
  v.add("\n\n", kNormal, -500.0f);
  add_sentencepiece_pieces(v, 300);
  write_common(w, "Gemma 3 1b It", "llama", "default");
  write_tokens(w, v, true);
  set_ids(w, v, {{"bos", "<bos>"}, {"eos", "<eos>"}, {"unknown", "<unk>"}, {"padding", "<pad>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
}

// Phi-3.5: Llama 2's layout (<unk> <s> </s>, bytes) with the chat tokens after
// the pieces. Its general.name does not say "phi3", so the reference does not
// strip the spaces after special tokens (the older Phi-3 file in ../shared does).
void phi35(gguf::Writer& w) {
  Vocab v;
  add_specials(v, {{"<unk>", kUnknown}, {"<s>", kControl}, {"</s>", kUserDefined}});
  add_byte_fallback(v);
  add_sentencepiece_pieces(v, 300);
  add_specials(v, {{"<|endoftext|>", kControl}, {"<|assistant|>", kUserDefined}, {"<|system|>", kUserDefined},
                   {"<|end|>", kUserDefined}, {"<|user|>", kUserDefined}, {"<|placeholder1|>", kUserDefined}});
  write_common(w, "Phi 3.5 Mini Instruct", "llama", "default");
  write_tokens(w, v, true);
  set_ids(w, v, {{"bos", "<s>"}, {"eos", "<|endoftext|>"}, {"unknown", "<unk>"}, {"padding", "<|endoftext|>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
}

// Gemma 4: tokenizer model "gemma4", SentencePiece-style BPE with merges,
// <0xNN> byte fallback and newline-run tokens. add_bos_token is false here to
// check that BOS is added anyway, as the reference does for Gemma 4.
void gemma4(gguf::Writer& w) {
  Vocab v;
  add_specials(v, {{"<pad>", kControl}, {"<eos>", kControl}, {"<bos>", kControl}, {"<unk>", kUnknown},
                   {"<mask>", kControl}, {"<|turn>", kControl}, {"<turn|>", kControl}, {"</s>", kControl},
                   {"<|tool_response>", kUserDefined}, {"<tool_response|>", kUserDefined},
                   {"<|channel>", kUserDefined}});
  add_byte_fallback(v);
  for (const char* newlines : {"\n", "\n\n", "\n\n\n"}) v.add(newlines, kNormal);
  const std::vector<Merge> merges = add_sentencepiece_pieces(v, 300);
  write_bpe(w, v, merges, "Gemma 4 E2B It", "gemma4", "gemma4");
  set_ids(w, v, {{"bos", "<bos>"}, {"eos", "<eos>"}, {"unknown", "<unk>"}, {"padding", "<pad>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
}

// Phi-4-mini: o200k-style byte-level BPE ("gpt-4o"), chat tokens at the end.
void phi4_mini(gguf::Writer& w) {
  Vocab v;
  const std::vector<Merge> merges = add_byte_level_pieces(v, 400);
  add_specials(v, {{"<|endoftext|>", kControl}, {"<|assistant|>", kControl}, {"<|end|>", kControl},
                   {"<|system|>", kControl}, {"<|user|>", kControl}, {"<|tool|>", kUserDefined},
                   {"<|/tool|>", kUserDefined}});
  write_bpe(w, v, merges, "Phi 4 Mini Instruct", "gpt2", "gpt-4o");
  set_ids(w, v, {{"bos", "<|endoftext|>"}, {"eos", "<|endoftext|>"}, {"unknown", "<|endoftext|>"},
                 {"padding", "<|endoftext|>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", false);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
}

// SmolLM3: Llama 3's tokenizer ("smaug-bpe" by the converter's hash), ChatML
// turns; EOS is <|im_end|>, <|eot_id|> and <|end_of_text|> end generation by text.
void smollm3(gguf::Writer& w) {
  Vocab v;
  const std::vector<Merge> merges = add_byte_level_pieces(v, 400);
  add_specials(v, {{"<|begin_of_text|>", kControl}, {"<|end_of_text|>", kControl}, {"<|im_start|>", kControl},
                   {"<|im_end|>", kControl}, {"<|eot_id|>", kControl}, {"<think>", kUserDefined},
                   {"</think>", kUserDefined}});
  write_bpe(w, v, merges, "SmolLM3 3B", "gpt2", "smaug-bpe");
  set_ids(w, v, {{"bos", "<|begin_of_text|>"}, {"eos", "<|im_end|>"}, {"padding", "<|im_end|>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", false);
}

// Granite 3: StarCoder-style vocabulary ("refact") with its special tokens
// first. <reponame> is typed normal here: the reference finds it by text,
// makes it control and ends generation on it.
void granite(gguf::Writer& w) {
  Vocab v;
  add_specials(v, {{"<|end_of_text|>", kControl}, {"<fim_prefix>", kControl}, {"<fim_middle>", kControl},
                   {"<fim_suffix>", kControl}, {"<fim_pad>", kControl}, {"<filename>", kControl},
                   {"<gh_stars>", kControl}, {"<reponame>", kNormal}, {"<|start_of_role|>", kControl},
                   {"<|end_of_role|>", kControl}, {"<|tool_call|>", kControl}});
  const std::vector<Merge> merges = add_byte_level_pieces(v, 400);
  write_bpe(w, v, merges, "Granite 3.3 2b Instruct", "gpt2", "refact");
  set_ids(w, v, {{"bos", "<|end_of_text|>"}, {"eos", "<|end_of_text|>"}, {"unknown", "<|end_of_text|>"},
                 {"padding", "<|end_of_text|>"}});
  w.set_bool("tokenizer.ggml.add_bos_token", false);
}

struct Family {
  const char* name;
  void (*add)(gguf::Writer&);
};
constexpr Family kFamilies[] = {{"gemma3", gemma3},       {"gemma4", gemma4},   {"phi3.5", phi35},
                                {"phi4-mini", phi4_mini}, {"smollm3", smollm3}, {"granite", granite}};

}  // namespace

std::vector<std::string> family_vocab_names() {
  std::vector<std::string> names;
  for (const Family& f : kFamilies) names.emplace_back(f.name);
  return names;
}

void add_family_vocab(const std::string& name, gguf::Writer& w) {
  for (const Family& f : kFamilies) {
    if (name == f.name) return f.add(w);
  }
  throw std::invalid_argument("no family vocabulary '" + name + "'");
}

void write_family_vocab(const std::string& name, const std::string& path) {
  gguf::Writer w;
  add_family_vocab(name, w);
  w.write(path);
}

}  // namespace tokenizer_test
