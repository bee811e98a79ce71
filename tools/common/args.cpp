#include "tools/common/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tools {
namespace {

// An option, not a plain argument (a path, a shape name, a type).
bool is_option(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

std::string_view without_dashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

bool Args::match(std::initializer_list<std::string_view> names, std::string* value) {
  for (std::string_view name : names) {
    if (std::find(known_.begin(), known_.end(), name) == known_.end()) known_.emplace_back(name);
  }
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

bool Args::positional(std::string& value) {
  if (done() || is_option(args_[i_])) return false;
  value = take();
  return true;
}

bool Args::model(std::string& path) {
  std::string given;
  if (!option({"-m", "--model"}, given) && !positional(given)) return false;
  if (!path.empty()) throw ArgError("more than one model given ('" + path + "', '" + given + "')");
  path = given;
  return true;
}

bool Args::model(std::vector<std::string>& paths) {
  std::string given;
  if (!option({"-m", "--model"}, given) && !positional(given)) return false;
  paths.push_back(given);
  return true;
}

void Args::unknown() const {
  const std::string& a = args_[i_];
  if (!is_option(a)) throw ArgError("unexpected argument '" + a + "'");
  const std::string near = nearest_option(a, known_);
  throw ArgError("unknown option '" + a + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
}

std::string nearest_option(std::string_view typed, const std::vector<std::string>& known) {
  const std::string_view name = without_dashes(typed.substr(0, typed.find('=')));
  if (name.size() < 2) return "";  // a single letter is near too many options to guess
  std::string best;
  size_t best_score = std::max<size_t>(1, (name.size() + 1) / 3) + 1;
  for (const std::string& k : known) {
    const std::string_view candidate = without_dashes(k);
    if (candidate.size() < 2) continue;
    const bool prefix = std::min(name.size(), candidate.size()) >= 3 &&
                        (candidate.starts_with(name) || name.starts_with(candidate));
    const size_t score = prefix ? 1 : edit_distance(name, candidate);
    if (score < best_score) {
      best_score = score;
      best = k;
    }
  }
  return best;
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

int tool_main(const char* name, void (*usage)(FILE*), int argc, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ArgError& e) {
    // One line, not the whole usage: the mistake is what the user needs to
    // see. Only a tool run with no arguments at all shows the usage.
    if (argc <= 1) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      usage(stderr);
    } else {
      std::fprintf(stderr, "%s: %s (%s --help lists the options)\n", name, e.what(), name);
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tools
