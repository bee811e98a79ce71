#include "tests/support/json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace engine_test {

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: offset " + std::to_string(pos_) + ": " + what);
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  char peek() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Json value(int depth) {
    if (depth > 64) fail("nested too deeply");
    Json v;
    const char c = peek();
    if (c == '{') {
      v.kind_ = Json::Kind::object;
      ++pos_;
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      while (true) {
        std::string key = string();
        expect(':');
        v.object_.emplace(std::move(key), value(depth + 1));
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind_ = Json::Kind::array;
      ++pos_;
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      while (true) {
        v.array_.push_back(value(depth + 1));
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind_ = Json::Kind::string;
      v.string_ = string();
      return v;
    }
    if (literal("true") || literal("false")) {
      v.kind_ = Json::Kind::boolean;
      v.boolean_ = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
      return v;
    }
    if (literal("null")) return v;
    v.kind_ = Json::Kind::number;
    const std::string text(s_.substr(pos_, std::min<size_t>(64, s_.size() - pos_)));
    char* end = nullptr;
    v.number_ = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) fail("expected a value");
    pos_ += static_cast<size_t>(end - text.c_str());
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    const std::string h(s_.substr(pos_, 4));
    pos_ += 4;
    return static_cast<uint32_t>(std::strtoul(h.c_str(), nullptr, 16));
  }

  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4() - 0xdc00);
          }
          append_utf8(out, cp);
          break;
        }
        default: out += e;
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Json Json::parse(std::string_view text) { return JsonParser(text).document(); }

Json Json::parse_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

double Json::number() const {
  if (kind_ != Kind::number) throw std::runtime_error("JSON value is not a number");
  return number_;
}
const std::string& Json::string() const {
  if (kind_ != Kind::string) throw std::runtime_error("JSON value is not a string");
  return string_;
}
bool Json::boolean() const {
  if (kind_ != Kind::boolean) throw std::runtime_error("JSON value is not a boolean");
  return boolean_;
}
const std::vector<Json>& Json::array() const {
  if (kind_ != Kind::array) throw std::runtime_error("JSON value is not an array");
  return array_;
}
const Json& Json::operator[](const std::string& key) const {
  auto it = object_.find(key);
  if (kind_ != Kind::object || it == object_.end()) throw std::runtime_error("JSON key '" + key + "' is missing");
  return it->second;
}
bool Json::has(const std::string& key) const { return kind_ == Kind::object && object_.count(key) != 0; }
size_t Json::size() const { return kind_ == Kind::object ? object_.size() : array().size(); }

std::vector<float> Json::floats() const {
  std::vector<float> out;
  for (const Json& v : array()) out.push_back(static_cast<float>(v.number()));
  return out;
}
std::vector<int32_t> Json::ints() const {
  std::vector<int32_t> out;
  for (const Json& v : array()) out.push_back(static_cast<int32_t>(v.number()));
  return out;
}

}  // namespace engine_test
