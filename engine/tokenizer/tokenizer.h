// engine::Tokenizer: text <-> token ids for a GGUF model, from its
// `tokenizer.*` metadata.
//
// Supported vocabularies: SentencePiece-style BPE (`tokenizer.ggml.model` =
// "llama": score-ordered merges with <0xNN> byte fallback) and byte-level BPE
// ("gpt2": ranked merges over GPT-2's byte alphabet, after the pre-tokenizer
// named by `tokenizer.ggml.pre`). The ids match the reference GGUF tokenizer
// (llama.cpp) on its test vectors.
//
// A Tokenizer is immutable after from_gguf(): every const method may run on
// several threads at once. Copies share the vocabulary. A StreamDecoder is one
// stream's state: use it from one thread at a time.
//
// Choices where the reference leaves room:
// - encode(parse_special = false) still matches user-defined tokens (type 4)
//   as whole tokens, as HF tokenizers and llama.cpp do for added tokens; only
//   control and unknown tokens are left as plain text.
// - Ill-formed UTF-8 in the input never fails: SentencePiece spells it with byte
//   tokens, byte-level BPE keeps every byte (the reference turns each bad byte
//   into U+FFFD first, so its ids differ on such input; ours round-trip).
// - Detokenization does not undo the reference's "clean up spaces" rules
//   (" ," -> ","): decode(encode(text)) gives back text exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguf {
class File;
}

namespace engine {

namespace tokenizer_detail {
struct Vocab;
}

class Tokenizer {
 public:
  // Reads the vocabulary of `file` (which may be closed afterwards). Throws
  // engine::Error naming the file and the key for a missing, malformed or
  // unsupported vocabulary.
  static Tokenizer from_gguf(const gguf::File& file);

  // Text (any bytes: ill-formed UTF-8 and NULs are fine) to ids. add_bos puts
  // the BOS token first (throws engine::Error when the vocabulary has none);
  // pass add_bos() for the model's default. parse_special: texts of control
  // and unknown tokens in `text` (e.g. "<|im_start|>") become those tokens,
  // longest first; otherwise they are ordinary text. User-defined tokens are
  // matched either way (see above). No EOS is appended: see add_eos(). Throws
  // engine::Error for a text over 1 GiB (ids are 32-bit indices inside).
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;

  // The bytes token `id` stands for (SentencePiece "▁" becomes a space; GPT-2
  // alphabet characters become their bytes). Control and unknown tokens give
  // "" unless render_special, which gives their text ("<|im_end|>"). A piece
  // may be part of a UTF-8 sequence; StreamDecoder reassembles them. Throws
  // engine::Error for an id outside 0..n_vocab()-1.
  std::string token_piece(int32_t id, bool render_special = false) const;
  // The token's text as stored in the vocabulary (no decoding).
  std::string_view token_text(int32_t id) const;

  // Whole-sequence detokenization: the concatenation a StreamDecoder emits for
  // `ids` followed by flush().
  std::string decode(std::span<const int32_t> ids) const;

  int32_t n_vocab() const;
  int32_t bos() const;  // -1 when absent
  int32_t eos() const;  // -1 when absent
  int32_t eot() const;  // end of turn (<|eot_id|>, <|im_end|>, ...), -1 when absent
  bool add_bos() const;  // the model's default for encode(add_bos)
  bool add_eos() const;  // whether the model expects EOS after a prompt
  // EOS, EOT, EOM and the end-of-turn control tokens chat models use.
  bool is_end_of_generation(int32_t id) const;
  // Control or unknown: a piece that is not text.
  bool is_control(int32_t id) const;

  // "spm" or "bpe"; for BPE also the pre-tokenizer family ("llama3", "qwen2", ...).
  std::string_view model_name() const;
  std::string_view pre_tokenizer() const;

  // Streaming detokenization for generation: push() each id as it is sampled
  // and print what it returns; it holds back the bytes of a UTF-8 character
  // split across tokens until the character is complete, and turns ill-formed
  // sequences into U+FFFD, so every returned string is valid UTF-8. flush() at
  // the end returns what is still held (as U+FFFD: an unfinished character).
  // For SentencePiece vocabularies that add a space prefix, the first text
  // piece loses its leading space (as sentencepiece decodes); push the prompt
  // ids through the same decoder to keep the spaces of a continuation.
  class StreamDecoder {
   public:
    std::string push(int32_t id);  // throws engine::Error for an invalid id
    std::string flush();

   private:
    friend class Tokenizer;
    explicit StreamDecoder(std::shared_ptr<const tokenizer_detail::Vocab> vocab);
    std::shared_ptr<const tokenizer_detail::Vocab> vocab_;
    std::string pending_;  // start of an unfinished UTF-8 sequence (at most 3 bytes)
    bool strip_leading_space_;
  };
  StreamDecoder stream_decoder() const;

 private:
  explicit Tokenizer(std::shared_ptr<const tokenizer_detail::Vocab> vocab);
  void check_id(int32_t id) const;
  std::shared_ptr<const tokenizer_detail::Vocab> vocab_;
};

}  // namespace engine
