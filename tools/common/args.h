// Command-line parsing shared by the tools: "-x VALUE" / "--long VALUE" /
// "--long=VALUE" options with typed values and clear errors.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tools {

class ArgError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(int argc, char** argv) : args_(argv + 1, argv + argc) {}

  bool done() const { return i_ >= args_.size(); }
  // True (and consumes it) when the next argument is one of the names.
  bool flag(std::initializer_list<std::string_view> names);
  // True when the next argument is one of the names; its value goes to `value`.
  bool option(std::initializer_list<std::string_view> names, std::string& value);
  bool option(std::initializer_list<std::string_view> names, int64_t& value);
  bool option(std::initializer_list<std::string_view> names, float& value);
  // The next argument, unconsumed (for "unknown option" messages).
  const std::string& peek() const { return args_[i_]; }
  std::string take() { return args_[i_++]; }

 private:
  bool match(std::initializer_list<std::string_view> names, std::string* value);
  std::vector<std::string> args_;
  size_t i_ = 0;
};

// "1,403,407" -> {1, 403, 407}; throws ArgError naming the bad item.
std::vector<int32_t> parse_int_list(std::string_view text);

}  // namespace tools
