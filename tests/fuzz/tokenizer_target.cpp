// Tokenization of arbitrary bytes with two real vocabularies, and the promises
// of engine/tokenizer/tokenizer.h: ids inside the vocabulary, decoding that is
// always valid UTF-8, UTF-8 text that comes back exactly, and (byte-level BPE)
// pieces that give back every input byte.
//
// Input: one byte of flags (add BOS, parse special tokens, a repeat count for
// long inputs), then the text (libFuzzer's -max_len bounds it: 256).
#include <filesystem>
#include <memory>
#include <string>

#include "engine/support/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "gguf/file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/targets.h"

namespace engine_fuzz {
namespace {

bool valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const auto step = engine::unicode::decode_utf8(s, pos);
    if (step.kind != engine::unicode::Utf8Step::complete) return false;
    pos += step.length;
  }
  return true;
}

// Loaded once per process: the vocabularies are large and read-only.
const engine::Tokenizer& vocabulary(const char* file) {
  static std::unique_ptr<engine::Tokenizer> spm, bpe;
  std::unique_ptr<engine::Tokenizer>& slot = std::string_view(file).find("spm") != std::string_view::npos ? spm : bpe;
  if (!slot) {
    const std::string path = shared_dir() + "/models/vocab/" + file;
    // The regression suite skips before it gets here; a fuzzer has no other way.
    if (!std::filesystem::exists(path)) skip_without(path);
    try {
      const gguf::File f = gguf::File::open(path);
      slot = std::make_unique<engine::Tokenizer>(engine::Tokenizer::from_gguf(f));
    } catch (const std::exception& e) {
      broken(std::string("cannot load the vocabulary (set ENGINE_SHARED_DIR to ../shared): ") + e.what());
    }
  }
  return *slot;
}

int tokenize(const engine::Tokenizer& tok, const uint8_t* data, size_t size) {
  FuzzInput in({data, size});
  const uint8_t flags = in.byte();
  const bool add_bos = (flags & 1) != 0 && tok.bos() >= 0;
  const bool special = (flags & 2) != 0;
  const auto rest = in.rest();
  std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());
  // Long inputs without long fuzz inputs: with the top four bits set, the
  // text repeated up to 2^k times, at most 4 KiB. Rare on purpose: a 4 KiB
  // input costs as much as 16 of the usual ones, and inputs of hundreds of
  // KiB are the unit tests' job (HostileText.LongInputs).
  const size_t repeat = (flags & 0xF0) == 0xF0 ? size_t{1} << ((flags >> 1) & 7) : 1;
  if (repeat > 1 && !text.empty()) {
    const std::string unit = text;
    while (text.size() + unit.size() <= (size_t{4} << 10) && text.size() < unit.size() * repeat) text += unit;
  }

  const std::vector<int32_t> ids = tok.encode(text, add_bos, special);
  std::string pieces;
  for (int32_t id : ids) {
    if (id < 0 || id >= tok.n_vocab()) broken("id " + std::to_string(id) + " outside the vocabulary");
    pieces += tok.token_piece(id);
    (void)tok.token_piece(id, /*render_special=*/true);
  }
  const std::string back = tok.decode(ids);
  if (!valid_utf8(back)) broken("decode() gave ill-formed UTF-8");
  // SentencePiece writes spaces as U+2581 and decodes every U+2581 as a space,
  // so a text that contains the character itself cannot come back (as in the
  // reference; the first fuzz run found this).
  const bool spm_meta = tok.model_name() == "spm" && text.find("\xE2\x96\x81") != std::string::npos;
  if (!special && !add_bos && !spm_meta && valid_utf8(text) && back != text) {
    broken("UTF-8 text did not come back from decode()");
  }
  if (!special && !add_bos && tok.model_name() == "bpe" && pieces != text) broken("BPE pieces lost input bytes");
  return 0;
}

}  // namespace

int tokenizer_spm(const uint8_t* data, size_t size) {
  return tokenize(vocabulary("ggml-vocab-llama-spm.gguf"), data, size);
}

int tokenizer_bpe(const uint8_t* data, size_t size) {
  return tokenize(vocabulary("ggml-vocab-gpt-2.gguf"), data, size);
}

}  // namespace engine_fuzz
