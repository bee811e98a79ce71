// A small JSON reader for `bench --compare` (reports written by this or an
// older bench) and for the schema test. Objects keep their key order.
// Throws std::runtime_error with the byte offset on malformed input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench {

class JsonValue {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  static JsonValue parse(std::string_view text);
  static JsonValue parse_file(const std::string& path);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_object() const { return kind_ == Kind::object; }
  bool is_array() const { return kind_ == Kind::array; }

  // Lenient accessors: a missing key or another kind gives the fallback, so a
  // report from an older bench still compares.
  const JsonValue* find(std::string_view key) const;
  const JsonValue& operator[](std::string_view key) const;  // a null value when missing
  double number(double fallback) const;                      // null -> fallback
  std::string string(const std::string& fallback = "") const;
  bool boolean(bool fallback = false) const;
  const std::vector<JsonValue>& items() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return object_; }

 private:
  friend class JsonReader;
  Kind kind_ = Kind::null;
  bool boolean_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> object_;
};

}  // namespace bench
