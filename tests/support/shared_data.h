// Access to the reference data in ../shared (models, vocabularies, expected
// outputs). Tests that need a file skip, naming it, when it is absent.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace engine_test {

// The ../shared folder: $ENGINE_SHARED_DIR, else the path configured at build time.
std::filesystem::path shared_dir();

// shared_dir() / relative if it exists, else an empty path.
std::filesystem::path shared_file(const std::string& relative);

// models/stories260K.gguf of the repository: the default model, there in every clone.
std::filesystem::path default_model();

// A directory for files a test writes (removed by the caller when done).
std::filesystem::path temp_dir(const std::string& prefix);

}  // namespace engine_test

// Skips the current test, naming the missing file, when it is absent.
#define ENGINE_REQUIRE_SHARED(var, relative)                                                   \
  const std::filesystem::path var = ::engine_test::shared_file(relative);                      \
  if (var.empty()) {                                                                           \
    GTEST_SKIP() << "missing shared file " << (::engine_test::shared_dir() / (relative)).string() \
                 << " (set ENGINE_SHARED_DIR to the ../shared folder)";                        \
  }
