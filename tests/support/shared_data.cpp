#include "tests/support/shared_data.h"

#include <cstdlib>
#include <random>

namespace engine_test {

std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("ENGINE_SHARED_DIR"); env != nullptr && *env != '\0') return env;
  return ENGINE_DEFAULT_SHARED_DIR;
}

std::filesystem::path shared_file(const std::string& relative) {
  std::filesystem::path p = shared_dir() / relative;
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p : std::filesystem::path{};
}

std::filesystem::path default_model() { return ENGINE_DEFAULT_MODEL; }

std::filesystem::path temp_dir(const std::string& prefix) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto p = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(p, ec)) return p;
  }
  throw std::runtime_error("cannot create a temporary directory for " + prefix);
}

}  // namespace engine_test
