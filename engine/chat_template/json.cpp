#include "engine/chat_template/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace engine::chat_template {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (i_ != s_.size()) error("trailing characters");
    return v;
  }
  Value prefix(size_t& end) {
    Value v = value(0);
    end = i_;
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw ValueError("JSON: " + what + " at byte " + std::to_string(i_));
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > 512) error("nesting deeper than 512");
    skip_space();
    if (i_ >= s_.size()) error("unexpected end");
    char c = s_[i_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (literal("true")) return Value(true);
    if (literal("false")) return Value(false);
    if (literal("null")) return Value::none();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    error(std::string("unexpected character '") + c + "'");
  }

  Value object(int depth) {
    auto dict = std::make_shared<ValueDict>();
    ++i_;
    skip_space();
    if (i_ < s_.size() && s_[i_] == '}') { ++i_; return Value(dict); }
    for (;;) {
      skip_space();
      if (i_ >= s_.size() || s_[i_] != '"') error("expected a string key");
      std::string key = string();
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ':') error("expected ':'");
      ++i_;
      dict->set(key, value(depth + 1));
      skip_space();
      if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
      if (i_ < s_.size() && s_[i_] == '}') { ++i_; return Value(dict); }
      error("expected ',' or '}'");
    }
  }

  Value array(int depth) {
    ValueList items;
    ++i_;
    skip_space();
    if (i_ < s_.size() && s_[i_] == ']') { ++i_; return Value(std::move(items)); }
    for (;;) {
      items.push_back(value(depth + 1));
      skip_space();
      if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
      if (i_ < s_.size() && s_[i_] == ']') { ++i_; return Value(std::move(items)); }
      error("expected ',' or ']'");
    }
  }

  Value number() {
    size_t start = i_;
    bool integral = true;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::string_view("0123456789.eE+-").find(s_[i_]) != std::string_view::npos) {
      if (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E') integral = false;
      ++i_;
    }
    std::string_view text = s_.substr(start, i_ - start);
    if (integral) {
      int64_t v = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return Value(v);
    }
    double d = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), d);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) { i_ = start; error("malformed number"); }
    return Value(d);
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) error("short \\u escape");
    unsigned v = 0;
    auto r = std::from_chars(s_.data() + i_, s_.data() + i_ + 4, v, 16);
    if (r.ptr != s_.data() + i_ + 4) error("malformed \\u escape");
    i_ += 4;
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) { out += static_cast<char>(0xc0 | cp >> 6); out += static_cast<char>(0x80 | (cp & 0x3f)); }
    else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | cp >> 18);
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::string string() {
    std::string out;
    ++i_;
    for (;;) {
      if (i_ >= s_.size()) error("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) { --i_; error("control character in string"); }
      if (c != '\\') { out += c; continue; }
      if (i_ >= s_.size()) error("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && s_.substr(i_, 2) == "\\u") {
            i_ += 2;
            unsigned low = hex4();
            if (low < 0xdc00 || low >= 0xe000) error("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, cp);
          break;
        }
        default: --i_; error(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write(std::string& out, const Value& v, const JsonStyle& style, int level) {
  const std::optional<int>& indent = style.indent;
  if (level > 512) throw ValueError("tojson: nesting deeper than 512");
  if (out.size() > style.max_bytes)
    throw LimitError("tojson would build a string over max_output_bytes (" + std::to_string(style.max_bytes) + ")");
  auto newline = [&](int lvl) {
    if (indent) out += "\n" + std::string(static_cast<size_t>(std::max(*indent, 0) * lvl), ' ');
  };
  // json.dumps: ", " and ": " without indent, "," and ": " with it.
  std::string item_sep = style.item_separator ? *style.item_separator : indent ? "," : ", ";
  const std::string& key_sep = style.key_separator ? *style.key_separator : ": ";
  switch (v.kind()) {
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::integer: out += std::to_string(v.as_int()); return;
    case Value::Kind::floating:
      out += std::isnan(v.as_float()) ? "NaN" : std::isinf(v.as_float()) ? (v.as_float() < 0 ? "-Infinity" : "Infinity")
                                                                         : float_repr(v.as_float());
      return;
    case Value::Kind::string: write_string(out, v.as_string()); return;
    case Value::Kind::list: {
      if (v.list().empty()) { out += "[]"; return; }
      out += '[';
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i) out += item_sep;
        newline(level + 1);
        write(out, v.list()[i], style, level + 1);
      }
      newline(level);
      out += ']';
      return;
    }
    case Value::Kind::dict: {
      if (v.dict().is_namespace) break;
      if (v.dict().entries.empty()) { out += "{}"; return; }
      // json.dumps writes number, bool and null keys as strings.
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [key, item] : v.dict().entries) {
        if (key.is_string()) entries.emplace_back(key.as_string(), &item);
        else if (key.is_none() || key.is_bool() || key.is_number()) entries.emplace_back(to_json(key), &item);
        else throw ValueError("keys must be str, int, float, bool or None, not " + type_name(key));
      }
      if (style.sort_keys) std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        newline(level + 1);
        write_string(out, entries[i].first);
        out += key_sep;
        write(out, *entries[i].second, style, level + 1);
      }
      newline(level);
      out += '}';
      return;
    }
    default: break;
  }
  throw ValueError("Object of type " + type_name(v) + " is not JSON serializable");
}

}  // namespace

Value parse_json(std::string_view text) { return Reader(text).document(); }

Value parse_json_prefix(std::string_view text, size_t& end) { return Reader(text).prefix(end); }

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  write(out, v, style, 0);
  return out;
}

}  // namespace engine::chat_template
