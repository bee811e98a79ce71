#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/targets.h"

namespace engine_fuzz {

void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

std::string shared_dir() {
  if (const char* env = std::getenv("ENGINE_SHARED_DIR"); env != nullptr && *env != '\0') return env;
  return ENGINE_DEFAULT_SHARED_DIR;
}

}  // namespace engine_fuzz
