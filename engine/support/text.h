// Small text helpers shared by the engine's parsers (system files, options, grammars).
#pragma once

#include <string_view>

namespace engine {

// s without leading and trailing spaces, tabs and line ends.
inline std::string_view trim_space(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The length of the UTF-8 sequence a lead byte begins (1-4), or 0 for a byte
// that cannot begin one (a continuation byte, 0xF8-0xFF).
inline int utf8_sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
}

}  // namespace engine
