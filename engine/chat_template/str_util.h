// Python's str operations on UTF-8 text, for the methods and filters.
// Whitespace and case are ASCII's (what chat templates touch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::chat_template {

// sides: 1 left, 2 right, 3 both.
std::string strip(const std::string& s, int sides);
std::string strip(const std::string& s, const std::string& chars, int sides);
std::string upper(std::string s);
std::string lower(std::string s);
std::string title(const std::string& s);
std::string capitalize(const std::string& s);
// str.split / str.rsplit: on runs of whitespace without a separator.
std::vector<std::string> split(const std::string& s, const std::string* sep, int64_t maxsplit, bool from_right);
size_t count(const std::string& s, const std::string& needle);
// str.replace; throws LimitError when the result would exceed max_bytes.
std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count, size_t max_bytes);
// str.splitlines().
std::vector<std::string> splitlines(const std::string& s);

}  // namespace engine::chat_template
