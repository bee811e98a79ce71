// Pre-tokenizers of byte-level BPE vocabularies: the regex splits a GGUF file
// names in `tokenizer.ggml.pre`, written as small hand matchers over code point
// classes (std::regex cannot do \p{L}, and phones have no ICU).
//
// A pre-tokenizer is a list of patterns applied one after the other, as the
// reference tokenizer (llama.cpp) does: the first pattern splits the text into
// its matches and the unmatched runs between them, the next pattern splits each
// of those pieces the same way, and so on. Each matcher reproduces the
// leftmost-first (ECMAScript / Oniguruma) semantics of its regex, including
// backtracking into optional and repeated parts; the comments show the regex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace engine::tokenizer_detail {

enum class PreTokenizer {
  default_bpe,     // "default" and files without tokenizer.ggml.pre
  gpt2,            // gpt-2, mpt, gpt-neox, olmo, phi-2, ...
  llama3,          // llama3 / llama-bpe, dbrx, smaug-bpe
  qwen2,           // qwen2, stablelm2, deepseek-r1-qwen, ...
  deepseek_llm,    // deepseek-llm
  deepseek_coder,  // deepseek-coder
  falcon,          // falcon
  starcoder,       // starcoder, refact (Granite 3), command-r, smollm, ...
  gpt4o,           // gpt-4o (Phi-4-mini), llama4, ...: o200k's cased-word regex
  gemma4,          // gemma4: SentencePiece-style BPE, split at newline runs only
};

struct PreTokenizerName {
  std::string_view name;      // the tokenizer.ggml.pre value
  PreTokenizer pre;
  bool ignore_merges;         // a word that is itself a token is not merged (llama3)
  bool add_bos_default;       // add_bos_token when the file does not say
};
// Every tokenizer.ggml.pre value this engine accepts.
std::span<const PreTokenizerName> pre_tokenizer_names();
std::string_view pre_tokenizer_family_name(PreTokenizer pre);

// Text decoded for splitting: one unit per code point, and one unit per byte of
// ill-formed UTF-8 (classified as U+FFFD, but the word keeps the original byte).
struct DecodedText {
  std::vector<uint32_t> cps;     // code point (U+FFFD for an ill-formed byte)
  std::vector<size_t> offsets;   // byte offset of each unit, plus the end: size cps.size() + 1
};
DecodedText decode_for_split(std::string_view text);

// Half-open range of units.
struct UnitSpan {
  size_t begin;
  size_t end;
};

// Splits `text` into words (unit ranges, in order, covering the whole text).
std::vector<UnitSpan> pre_tokenize(PreTokenizer pre, const DecodedText& text);

}  // namespace engine::tokenizer_detail
