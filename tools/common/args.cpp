#include "tools/common/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tools {

bool Args::match(std::initializer_list<std::string_view> names, std::string* value) {
  if (done()) return false;
  const std::string& a = args_[i_];
  for (std::string_view name : names) {
    if (a == name) {
      if (value == nullptr) {
        ++i_;
        return true;
      }
      if (i_ + 1 >= args_.size()) throw ArgError(std::string(name) + " needs a value");
      *value = args_[i_ + 1];
      i_ += 2;
      return true;
    }
    if (value != nullptr && a.size() > name.size() + 1 && a.compare(0, name.size(), name) == 0 &&
        a[name.size()] == '=') {
      *value = a.substr(name.size() + 1);
      ++i_;
      return true;
    }
  }
  return false;
}

bool Args::flag(std::initializer_list<std::string_view> names) { return match(names, nullptr); }

bool Args::option(std::initializer_list<std::string_view> names, std::string& value) { return match(names, &value); }

bool Args::option(std::initializer_list<std::string_view> names, int64_t& value) {
  std::string text;
  if (!match(names, &text)) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    throw ArgError(std::string(*names.begin()) + ": '" + text + "' is not an integer");
  }
  value = v;
  return true;
}

bool Args::option(std::initializer_list<std::string_view> names, float& value) {
  std::string text;
  if (!match(names, &text)) return false;
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || std::isnan(v)) {
    throw ArgError(std::string(*names.begin()) + ": '" + text + "' is not a number");
  }
  value = v;
  return true;
}

std::vector<int32_t> parse_int_list(std::string_view text) {
  std::vector<int32_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX) {
      throw ArgError("'" + item + "' in '" + std::string(text) + "' is not an integer");
    }
    out.push_back(static_cast<int32_t>(v));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace tools
