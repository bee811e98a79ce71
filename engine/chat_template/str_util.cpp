#include "engine/chat_template/str_util.h"

#include <algorithm>

#include "engine/chat_template/builtins.h"

namespace engine::chat_template {
namespace {

bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }
bool is_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char to_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }
char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

}  // namespace

std::string strip(const std::string& s, int sides) {
  size_t b = 0, e = s.size();
  if (sides & 1) while (b < e && is_space(static_cast<unsigned char>(s[b]))) ++b;
  if (sides & 2) while (e > b && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string strip(const std::string& s, const std::string& chars, int sides) {
  // chars is a set of code points.
  auto set = utf8_chars(chars);
  auto cs = utf8_chars(s);
  auto in_set = [&](const std::string& c) { return std::find(set.begin(), set.end(), c) != set.end(); };
  size_t b = 0, e = cs.size();
  if (sides & 1) while (b < e && in_set(cs[b])) ++b;
  if (sides & 2) while (e > b && in_set(cs[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += cs[i];
  return out;
}

std::string upper(std::string s) { std::transform(s.begin(), s.end(), s.begin(), to_upper); return s; }
std::string lower(std::string s) { std::transform(s.begin(), s.end(), s.begin(), to_lower); return s; }

std::string title(const std::string& s) {
  std::string out = s;
  bool prev_letter = false;
  for (char& c : out) {
    bool letter = is_alpha(static_cast<unsigned char>(c));
    if (letter) c = prev_letter ? to_lower(c) : to_upper(c);
    prev_letter = letter;
  }
  return out;
}

std::string capitalize(const std::string& s) {
  std::string out = lower(s);
  if (!out.empty()) out[0] = to_upper(out[0]);
  return out;
}

std::vector<std::string> split(const std::string& s, const std::string* sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> out;
  if (sep && sep->empty()) throw ValueError("empty separator");
  if (!from_right) {
    size_t i = 0;
    if (!sep) {
      for (;;) {
        while (i < s.size() && is_space(static_cast<unsigned char>(s[i]))) ++i;
        if (i == s.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
          out.push_back(strip(s.substr(i), 2));
          break;
        }
        size_t j = i;
        while (j < s.size() && !is_space(static_cast<unsigned char>(s[j]))) ++j;
        out.push_back(s.substr(i, j - i));
        i = j;
      }
      return out;
    }
    for (;;) {
      size_t at = maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit ? std::string::npos : s.find(*sep, i);
      if (at == std::string::npos) { out.push_back(s.substr(i)); return out; }
      out.push_back(s.substr(i, at - i));
      i = at + sep->size();
    }
  }
  // rsplit: split from the right, then reverse.
  if (!sep) {
    size_t e = s.size();
    for (;;) {
      while (e > 0 && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
      if (e == 0) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) { out.push_back(strip(s.substr(0, e), 1)); break; }
      size_t b = e;
      while (b > 0 && !is_space(static_cast<unsigned char>(s[b - 1]))) --b;
      out.push_back(s.substr(b, e - b));
      e = b;
    }
  } else {
    size_t e = s.size();
    for (;;) {
      size_t at = (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) || e < sep->size()
                      ? std::string::npos : s.rfind(*sep, e - sep->size());
      if (at == std::string::npos) { out.push_back(s.substr(0, e)); break; }
      out.push_back(s.substr(at + sep->size(), e - at - sep->size()));
      e = at;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

size_t count(const std::string& s, const std::string& needle) {
  if (needle.empty()) return utf8_length(s) + 1;
  size_t n = 0;
  for (size_t i = s.find(needle); i != std::string::npos; i = s.find(needle, i + needle.size())) ++n;
  return n;
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t limit, size_t max_bytes) {
  size_t n = count(s, from);
  if (limit >= 0) n = std::min(n, static_cast<size_t>(limit));
  size_t removed = from.empty() ? 0 : n * from.size();
  if (to.size() && n > (max_bytes + removed) / to.size())
    throw LimitError("replace() would build a string over max_output_bytes (" + std::to_string(max_bytes) + ")");
  std::string out;
  if (from.empty()) {  // Python inserts `to` between characters and at both ends
    auto chars = utf8_chars(s);
    size_t done = 0;
    for (size_t i = 0; i <= chars.size(); ++i) {
      if (done < n) { out += to; ++done; }
      if (i < chars.size()) out += chars[i];
    }
    return out;
  }
  size_t i = 0, done = 0;
  for (size_t at; done < n && (at = s.find(from, i)) != std::string::npos; ++done) {
    out.append(s, i, at - i);
    out += to;
    i = at + from.size();
  }
  out.append(s, i);
  return out;
}

std::vector<std::string> splitlines(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && s[j] != '\n' && s[j] != '\r' && s[j] != '\v' && s[j] != '\f') ++j;
    out.push_back(s.substr(i, j - i));
    if (j < s.size() && s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n') ++j;
    i = j + 1;
  }
  return out;
}

}  // namespace engine::chat_template
