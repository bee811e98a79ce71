#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/targets.h"

namespace engine_fuzz {

void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

void skip_without(const std::string& path) {
  std::fprintf(stderr, "fuzz target skipped: %s is missing (set ENGINE_SHARED_DIR to ../shared)\n", path.c_str());
  std::_Exit(kSkippedExitCode);
}

std::string shared_dir() {
  if (const char* env = std::getenv("ENGINE_SHARED_DIR"); env != nullptr && *env != '\0') return env;
  return ENGINE_DEFAULT_SHARED_DIR;
}

}  // namespace engine_fuzz
