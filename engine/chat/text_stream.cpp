#include "engine/chat/text_stream.h"

#include <algorithm>

#include "engine/support/error.h"
#include "engine/tokenizer/unicode.h"

namespace engine::chat {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Moves the complete characters at the front of `raw` to `out` (ill-formed
// ones as U+FFFD), leaving the start of an unfinished one in `raw`.
void take_complete(std::string& raw, std::string& out) { raw.erase(0, unicode::append_complete_utf8(raw, out)); }

}  // namespace

TextStream::TextStream(std::vector<std::string> stops) {
  for (size_t i = 0; i < stops.size(); ++i) {
    // Text is matched after ill-formed bytes became U+FFFD, and a held-back
    // stop prefix must start on a character boundary: stops must be text.
    for (size_t pos = 0; pos < stops[i].size();) {
      const unicode::Utf8Step step = unicode::decode_utf8(stops[i], pos);
      if (step.kind != unicode::Utf8Step::complete) {
        throw Error("stop string " + std::to_string(i) + " is not valid UTF-8 (byte " + std::to_string(pos) + ")");
      }
      pos += step.length;
    }
    if (!stops[i].empty()) stops_.push_back(std::move(stops[i]));
  }
}

std::string_view TextStream::matched_stop() const {
  return stopped() ? std::string_view(stops_[static_cast<size_t>(stopped_index_)]) : std::string_view();
}

std::string TextStream::push(std::string_view piece) {
  if (stopped()) return {};
  raw_.append(piece);
  take_complete(raw_, held_);

  // The earliest stop string in the text (the first listed on a tie).
  size_t first = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t at = held_.find(stops_[i]);
    if (at < first) {
      first = at;
      stopped_index_ = static_cast<int>(i);
    }
  }
  if (first != std::string::npos) {
    std::string out = held_.substr(0, first);
    held_.clear();
    raw_.clear();
    return out;
  }

  // Keep the longest end of the text that some stop string begins with; it
  // starts at a character boundary, since stop strings are text.
  size_t keep = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string TextStream::finish() {
  if (stopped()) return {};
  std::string out = std::move(held_);
  held_.clear();
  take_complete(raw_, out);
  if (!raw_.empty()) out += kReplacement;  // a character the reply never finished
  raw_.clear();
  return out;
}

}  // namespace engine::chat
