// Small text helpers shared by the engine's parsers of system files and options.
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

}  // namespace engine
