// engine::Tokenizer: the public face of the vocabulary, encoders and pieces.
#include "engine/tokenizer/tokenizer.h"

#include "engine/support/error.h"
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab.h"

namespace engine {

namespace {
// The encoders index symbols with int32; SentencePiece's escaping can triple
// the text (a space becomes "▁"), so stay well below 2^31.
constexpr size_t kMaxTextBytes = size_t{1} << 30;
}  // namespace

using tokenizer_detail::Model;
using tokenizer_detail::TokenType;
using tokenizer_detail::Vocab;

namespace tokenizer_detail {

std::string token_piece(const Vocab& vocab, int32_t id, bool render_special) {
  const std::string_view text = vocab.text(id);
  switch (vocab.types[id]) {
    case TokenType::normal:
      break;
    case TokenType::user_defined:
      return std::string(text);  // added tokens are stored as plain text
    case TokenType::byte:
      return std::string(1, static_cast<char>(parse_byte_token(text)));
    case TokenType::control:
    case TokenType::unknown:
    case TokenType::unused:
    case TokenType::undefined:
      return render_special ? std::string(text) : std::string();
  }
  std::string piece;
  piece.reserve(text.size());
  if (vocab.model == Model::spm || !vocab.byte_level) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "\xE2\x96\x81") == 0) {  // "▁" stands for a space
        piece += ' ';
        i += 2;
      } else {
        piece += text[i];
      }
    }
    return piece;
  }
  // Byte-level BPE: each character of the GPT-2 alphabet is one byte. Other
  // characters (an added token spelled in plain text) stay as they are; token
  // texts were checked to be UTF-8 at load.
  for (size_t pos = 0; pos < text.size();) {
    const unicode::Utf8Step step = unicode::decode_utf8(text, pos);
    const int byte = unicode::codepoint_to_byte(step.cp);
    if (byte >= 0) {
      piece += static_cast<char>(byte);
    } else {
      piece.append(text.substr(pos, step.length));
    }
    pos += step.length;
  }
  return piece;
}

}  // namespace tokenizer_detail

Tokenizer::Tokenizer(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {}

Tokenizer Tokenizer::from_gguf(const gguf::File& file) {
  return Tokenizer(std::make_shared<const Vocab>(tokenizer_detail::load_vocab(file)));
}

void Tokenizer::check_id(int32_t id) const {
  if (!vocab_->valid(id)) {
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " + vocab_->source + " (0.." +
                std::to_string(vocab_->size() - 1) + ")");
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  const Vocab& v = *vocab_;
  if (text.size() > kMaxTextBytes) {
    throw Error("cannot tokenize " + std::to_string(text.size()) + " bytes at once (limit " +
                std::to_string(kMaxTextBytes) + ")");
  }
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos) {
    if (v.bos < 0) throw Error("cannot add BOS: the vocabulary of " + v.source + " has no BOS token");
    out.push_back(v.bos);
  }
  bool after_special = true;  // the text start counts as one: SentencePiece puts a space there
  std::string escaped;
  for (const tokenizer_detail::Fragment& f : tokenizer_detail::split_special_tokens(v, text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    const std::string_view piece = text.substr(f.begin, f.end - f.begin);
    if (v.model == Model::spm || !v.byte_level) {
      // SentencePiece spells a space "▁" (SentencePiece-style BPE too).
      escaped.clear();
      if (v.model == Model::spm && v.add_space_prefix && after_special) escaped += "\xE2\x96\x81";
      for (char c : piece) {
        if (c == ' ') {
          escaped += "\xE2\x96\x81";
        } else {
          escaped += c;
        }
      }
      if (v.model == Model::spm) {
        tokenizer_detail::encode_spm(v, escaped, out);
      } else {
        tokenizer_detail::encode_bpe(v, escaped, out);
      }
    } else {
      tokenizer_detail::encode_bpe(v, piece, out);
    }
    after_special = false;
  }
  return out;
}

std::string Tokenizer::token_piece(int32_t id, bool render_special) const {
  check_id(id);
  return tokenizer_detail::token_piece(*vocab_, id, render_special);
}

std::string_view Tokenizer::token_text(int32_t id) const {
  check_id(id);
  return vocab_->text(id);
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  StreamDecoder decoder = stream_decoder();
  std::string out;
  for (int32_t id : ids) out += decoder.push(id);
  out += decoder.flush();
  return out;
}

int32_t Tokenizer::n_vocab() const { return vocab_->size(); }
int32_t Tokenizer::bos() const { return vocab_->bos; }
int32_t Tokenizer::eos() const { return vocab_->eos; }
int32_t Tokenizer::eot() const { return vocab_->eot; }
bool Tokenizer::add_bos() const { return vocab_->add_bos; }
bool Tokenizer::add_eos() const { return vocab_->add_eos; }

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return vocab_->valid(id) && vocab_->end_of_generation[id];
}

bool Tokenizer::is_control(int32_t id) const {
  return vocab_->valid(id) &&
         (vocab_->types[id] == TokenType::control || vocab_->types[id] == TokenType::unknown);
}

std::string_view Tokenizer::model_name() const { return vocab_->model == Model::spm ? "spm" : "bpe"; }

std::string_view Tokenizer::pre_tokenizer() const {
  return vocab_->model == Model::spm ? std::string_view() : pre_tokenizer_family_name(vocab_->pre);
}

Tokenizer::StreamDecoder Tokenizer::stream_decoder() const { return StreamDecoder(vocab_); }

}  // namespace engine
