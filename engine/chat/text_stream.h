// Streaming a reply's text as it is generated: token pieces in, text safe to
// show out. Two things are held back until they are decided:
// - the bytes of a UTF-8 character split across tokens (a byte-fallback or
//   byte-level BPE piece), until the character completes; an ill-formed
//   sequence becomes U+FFFD, so every string returned is valid UTF-8;
// - the end of the text that could be the start of a stop string, until the
//   next pieces either complete the stop (then it and everything after it are
//   dropped and the stream is stopped) or rule it out (then it is released).
// A stop string may be split across any number of tokens, and may end in the
// middle of a token (the rest of that token is dropped with it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engine::chat {

class TextStream {
 public:
  // Empty strings among `stops` are ignored (they would match everywhere).
  explicit TextStream(std::vector<std::string> stops = {});

  // Appends the bytes of one token; returns the text that is now certain
  // (possibly empty). After a stop string matched, returns only the text
  // before it, and "" for every later push.
  std::string push(std::string_view piece);
  // The end of the reply (no stop matched): releases what was held, an
  // unfinished UTF-8 character as U+FFFD.
  std::string finish();

  bool stopped() const { return stopped_index_ >= 0; }
  // The stop string that matched ("" before one did).
  std::string_view matched_stop() const;

 private:
  std::vector<std::string> stops_;
  std::string raw_;   // the start of an unfinished UTF-8 character (at most 3 bytes)
  std::string held_;  // valid text that may begin a stop string
  int stopped_index_ = -1;
};

}  // namespace engine::chat
