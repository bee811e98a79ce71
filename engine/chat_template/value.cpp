#include "engine/chat_template/value.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace engine::chat_template {

const Value* ValueDict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.is_string() && k.as_string() == key) return &v;
  return nullptr;
}

const Value* ValueDict::find_key(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (equals(k, key)) return &v;
  return nullptr;
}

void ValueDict::set(const std::string& key, Value value) { set_key(Value(key), std::move(value)); }

void ValueDict::set_key(const Value& key, Value value) {
  for (auto& [k, v] : entries)
    if (equals(k, key)) { v = std::move(value); return; }
  entries.emplace_back(key, std::move(value));
}

const Value* CallArgs::get(size_t index, std::string_view name) const {
  for (const auto& [k, v] : named)
    if (k == name) return &v;
  return index < positional.size() ? &positional[index] : nullptr;
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: case Value::Kind::none: return false;
    case Value::Kind::boolean: case Value::Kind::integer: return v.as_int() != 0;
    case Value::Kind::floating: return v.as_float() != 0;
    case Value::Kind::string: return !v.as_string().empty();
    case Value::Kind::list: return !v.list().empty();
    case Value::Kind::dict: return !v.dict().entries.empty();
    case Value::Kind::callable: return true;
  }
  return false;
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // shortest round-trip digits: [-]d[.ddd]e[+-]XX
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t i = sign.size(); i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  if (exponent >= -4 && exponent < 16) {  // Python's repr switches at 1e-4 and 1e16
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." + digits.substr(static_cast<size_t>(exponent) + 1);
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + mantissa + exp;
}

static std::string string_repr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

static void check_size(const std::string& out, size_t max_bytes) {
  if (out.size() > max_bytes) throw LimitError("a string over max_output_bytes (" + std::to_string(max_bytes) + ")");
}

// A namespace may hold itself, so the depth is bounded.
static std::string repr_at(const Value& v, size_t max_bytes, int depth) {
  if (depth > 512) throw LimitError("a value nests deeper than 512 levels");
  switch (v.kind()) {
    case Value::Kind::string: return string_repr(v.as_string());
    case Value::Kind::list: {
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t i = 0; i < v.list().size(); ++i) {
        out += (i ? ", " : "") + repr_at(v.list()[i], max_bytes, depth + 1);
        check_size(out, max_bytes);
      }
      if (v.is_tuple() && v.list().size() == 1) out += ",";
      return out + (v.is_tuple() ? ")" : "]");
    }
    case Value::Kind::dict: {
      std::string out = v.dict().is_namespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, item] : v.dict().entries) {
        out += (first ? "" : ", ") + repr(k) + ": " + repr_at(item, max_bytes, depth + 1);
        check_size(out, max_bytes);
        first = false;
      }
      return out + (v.dict().is_namespace ? "}>" : "}");
    }
    default: return to_str(v);
  }
}

std::string repr(const Value& v, size_t max_bytes) { return repr_at(v, max_bytes, 0); }

std::string to_str(const Value& v, size_t max_bytes) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.as_bool() ? "True" : "False";
    case Value::Kind::integer: return std::to_string(v.as_int());
    case Value::Kind::floating: return float_repr(v.as_float());
    case Value::Kind::string: return v.as_string();
    case Value::Kind::callable: return "<function " + v.callable().name + ">";
    default: return repr(v, max_bytes);
  }
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::floating: return "float";
    case Value::Kind::string: return "str";
    case Value::Kind::list: return v.is_tuple() ? "tuple" : "list";
    case Value::Kind::dict: return v.dict().is_namespace ? "Namespace" : "dict";
    case Value::Kind::callable: return "function";
  }
  return "object";
}

static bool numeric(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }

bool equals(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (!a.is_float() && !b.is_float()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined: case Value::Kind::none: return true;
    case Value::Kind::string: return a.as_string() == b.as_string();
    case Value::Kind::list: {
      if (a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i)
        if (!equals(a.list()[i], b.list()[i])) return false;
      return true;
    }
    case Value::Kind::dict: {
      if (a.dict_ptr() == b.dict_ptr()) return true;
      if (a.dict().is_namespace || b.dict().is_namespace) return false;
      if (a.dict().entries.size() != b.dict().entries.size()) return false;
      for (const auto& [k, item] : a.dict().entries) {
        const Value* other = b.dict().find_key(k);
        if (!other || !equals(item, *other)) return false;
      }
      return true;
    }
    case Value::Kind::callable: return &a.callable() == &b.callable();
    default: return false;
  }
}

int compare(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (!a.is_float() && !b.is_float()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() != b.as_string();
  if (a.is_list() && b.is_list()) {
    for (size_t i = 0; i < a.list().size() && i < b.list().size(); ++i)
      if (int c = compare(a.list()[i], b.list()[i])) return c;
    return a.list().size() < b.list().size() ? -1 : a.list().size() > b.list().size();
  }
  throw ValueError("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xf0) n = 4;
    else if (c >= 0xe0) n = 3;
    else if (c >= 0xc0) n = 2;
    n = std::min(n, s.size() - i);
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

}  // namespace engine::chat_template
