// Which tokens are special: the end-of-generation set, the fill-in-the-middle
// tokens, the tokens matched as whole texts in the input and those that take
// the whitespace after them. The reference (llama.cpp's llama_vocab::load)
// finds many of them by their text as well as by the tokenizer.ggml.*_token_id
// keys, since converters do not always name them; this follows it.
#include <algorithm>
#include <cctype>

#include "engine/support/log.h"
#include "engine/tokenizer/vocab.h"
#include "gguf/file.h"

namespace engine::tokenizer_detail {
namespace {

// DeepSeek's <｜end▁of▁sentence｜>.
constexpr std::string_view kDeepseekEndOfSentence =
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";

// Every token with one of these texts ends generation.
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", kDeepseekEndOfSentence,
    "[e~[",
};
// Of those, the ones that name the end-of-turn token (eot()) when
// tokenizer.ggml.eot_token_id does not, in order of preference.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
    "_<EOT>", "[EOT]", kDeepseekEndOfSentence, "<end_of_utterance>",
};
// Fill-in-the-middle tokens: the id from the key, else the first token with
// one of the texts (then typed control, as the reference does). The pad,
// repository and file-separator ones also end generation.
struct FimToken {
  std::string_view key;
  bool ends_generation;
  std::initializer_list<std::string_view> texts;
};
const FimToken kFimTokens[] = {
    {"tokenizer.ggml.fim_pre_token_id", false,
     {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
      "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"}},
    {"tokenizer.ggml.fim_suf_token_id", false,
     {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
      "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"}},
    {"tokenizer.ggml.fim_mid_token_id", false,
     {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
      "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"}},
    {"tokenizer.ggml.fim_pad_token_id", true, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
    {"tokenizer.ggml.fim_rep_token_id", true,
     {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
    {"tokenizer.ggml.fim_sep_token_id", true, {"<|file_sep|>"}},
};

// A special token the reference finds by its text must be matched as special
// text and never printed: it becomes control whatever its type says.
void make_control(const gguf::File& f, Vocab& v, int32_t id) {
  if (v.types[id] == TokenType::control) return;
  log_warning("tokenizer: " + f.path() + ": special token " + std::to_string(id) + " " + shown(v.text(id)) +
              " is not typed control; treating it as control");
  v.types[id] = TokenType::control;
}

void mark_end_of_generation(const gguf::File& f, Vocab& v) {
  v.end_of_generation.assign(v.size(), false);
  if (v.eot < 0) {
    for (std::string_view text : kEndOfTurnTexts) {
      if ((v.eot = v.find(text)) >= 0) break;
    }
  }
  if (v.eom < 0) v.eom = v.find("<|eom_id|>");
  for (const FimToken& fim : kFimTokens) {
    std::optional<int32_t> id = read_id(f, std::string(fim.key), v.size());
    for (auto text = fim.texts.begin(); !id && text != fim.texts.end(); ++text) {
      if (const int32_t found = v.find(*text); found >= 0) {
        id = found;
        make_control(f, v, found);
      }
    }
    if (id && fim.ends_generation) v.end_of_generation[*id] = true;
  }
  for (std::string_view text : kEndOfGenerationTexts) {
    if (const int32_t id = v.find(text); id >= 0) {
      v.end_of_generation[id] = true;
      make_control(f, v, id);
    }
  }
  for (int32_t id : {v.eos, v.eot, v.eom}) {
    if (id >= 0) v.end_of_generation[id] = true;
  }
  // Exceptions the reference makes by vocabulary. gpt-oss's harmony format
  // (<|return|>, <|call|>) and Solar Open's (<|calls|>, <|flush|>) end a
  // message with <|end|> but keep generating: it becomes ordinary added text.
  const int32_t end = v.find("<|end|>");
  if (end >= 0 && ((v.find("<|return|>") >= 0 && v.find("<|call|>") >= 0) ||
                   (v.find("<|calls|>") >= 0 && v.find("<|flush|>") >= 0))) {
    v.end_of_generation[end] = false;
    v.types[end] = TokenType::user_defined;
  }
  // Gemma 4 (it has <|tool_response>) uses </s> as plain text.
  const int32_t s_end = v.find("</s>");
  if (s_end >= 0 && v.find("<|tool_response>") >= 0) {
    v.end_of_generation[s_end] = false;
    v.types[s_end] = TokenType::normal;
  }
}

}  // namespace

void mark_special_tokens(const gguf::File& f, Vocab& v) {
  mark_end_of_generation(f, v);
  for (int32_t id = 0; id < v.size(); ++id) {
    const TokenType t = v.types[id];
    if (t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown) {
      v.special_by_length.push_back(id);
    }
  }
  std::stable_sort(v.special_by_length.begin(), v.special_by_length.end(),
                   [&](int32_t a, int32_t b) { return v.text(a).size() > v.text(b).size(); });
  v.special_rank.assign(v.size(), -1);
  v.special_trie.nodes.assign(1, {});
  for (size_t r = 0; r < v.special_by_length.size(); ++r) {
    const int32_t id = v.special_by_length[r];
    v.special_rank[id] = static_cast<int32_t>(r);
    v.special_trie.insert(v.text(id), id);
  }

  // The reference drops the whitespace after Phi-3's special tokens, which it
  // recognises by general.name ("phi-3" or "phi3" in any case), all but <unk>,
  // <s> and <|endoftext|>; </s> too.
  v.strip_space_after.assign(v.size(), false);
  std::string name(f.find_string("general.name").value_or(""));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (int32_t id : v.special_by_length) v.strip_space_after[id] = true;
    if (const int32_t id = v.find("</s>"); id >= 0) v.strip_space_after[id] = true;
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const int32_t id = v.find(text); id >= 0) v.strip_space_after[id] = false;
    }
  }
}


}  // namespace engine::tokenizer_detail
