// Tokenizer::StreamDecoder: pieces in, valid UTF-8 out. A character can be
// split across tokens (SentencePiece byte fallback, byte-level BPE pieces of a
// multi-byte character), so the bytes of an unfinished sequence wait for the
// next piece; an ill-formed sequence becomes U+FFFD (one per maximal ill-formed
// subpart, the Unicode recommendation) instead of reaching the output broken.
#include "engine/support/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab.h"

namespace engine {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}

Tokenizer::StreamDecoder::StreamDecoder(std::shared_ptr<const tokenizer_detail::Vocab> vocab)
    : vocab_(std::move(vocab)),
      strip_leading_space_(vocab_->model == tokenizer_detail::Model::spm && vocab_->add_space_prefix) {}

std::string Tokenizer::StreamDecoder::push(int32_t id) {
  if (!vocab_->valid(id)) {
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " + vocab_->source + " (0.." +
                std::to_string(vocab_->size() - 1) + ")");
  }
  std::string piece = tokenizer_detail::token_piece(*vocab_, id, false);
  if (strip_leading_space_ && !piece.empty()) {
    // The space SentencePiece put before the text is not part of it.
    if (piece[0] == ' ') piece.erase(0, 1);
    strip_leading_space_ = false;
  }
  pending_ += piece;

  std::string out;
  const size_t pos = unicode::append_complete_utf8(pending_, out);
  pending_.erase(0, pos);
  return out;
}

std::string Tokenizer::StreamDecoder::flush() {
  if (pending_.empty()) return {};
  pending_.clear();
  return std::string(kReplacement);  // the stream ended inside a character
}

}  // namespace engine
