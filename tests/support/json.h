// A small JSON reader for test data (reference logits, expected outputs):
// objects, arrays, strings (with \u escapes), numbers, true/false/null.
// Throws std::runtime_error with the byte offset on malformed input.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace engine_test {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  static Json parse(std::string_view text);
  static Json parse_file(const std::filesystem::path& path);

  Kind kind() const { return kind_; }
  double number() const;
  const std::string& string() const;
  bool boolean() const;
  const std::vector<Json>& array() const;
  const Json& operator[](const std::string& key) const;  // throws when missing
  const Json& operator[](size_t i) const { return array().at(i); }
  bool has(const std::string& key) const;
  size_t size() const;

  std::vector<float> floats() const;   // array of numbers
  std::vector<int32_t> ints() const;   // array of integers

 private:
  friend class JsonParser;
  Kind kind_ = Kind::null;
  double number_ = 0;
  bool boolean_ = false;
  std::string string_;
  std::vector<Json> array_;
  std::map<std::string, Json> object_;
};

}  // namespace engine_test
