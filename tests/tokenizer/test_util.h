// Helpers shared by the tokenizer tests: loading a vocabulary once per run,
// reading llama.cpp's vocab test vectors, checking UTF-8.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "gguf/file.h"

namespace tokenizer_test {

// The tokenizer of a GGUF file, loaded once per test binary (the big
// vocabularies take a while under qemu and sanitizers).
inline const engine::Tokenizer& tokenizer_of(const std::filesystem::path& path) {
  static std::map<std::string, std::unique_ptr<engine::Tokenizer>> cache;
  auto& slot = cache[path.string()];
  if (!slot) {
    const gguf::File file = gguf::File::open(path.string());
    slot = std::make_unique<engine::Tokenizer>(engine::Tokenizer::from_gguf(file));
  }
  return *slot;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Vector {
  std::string text;
  std::vector<int32_t> ids;
};

// ggml-vocab-*.gguf.inp holds the strings, each followed by
// "\n__ggml_vocab_test__\n"; .out one line of ids per string (the split
// llama.cpp's tests/test-tokenizer-0.cpp does).
// The texts of an .inp file: each followed by "\n__ggml_vocab_test__\n".
inline std::vector<std::string> split_inputs(const std::string& inp) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < inp.size();) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  return texts;
}

inline std::vector<Vector> read_vectors(const std::filesystem::path& gguf_path) {
  const std::vector<std::string> texts = split_inputs(read_file(gguf_path.string() + ".inp"));
  const std::string out = read_file(gguf_path.string() + ".out");
  std::vector<Vector> vectors;
  std::istringstream lines(out);
  std::string line;
  for (const std::string& text : texts) {
    std::getline(lines, line);
    Vector v{text, {}};
    std::istringstream ids(line);
    for (int64_t id; ids >> id;) v.ids.push_back(static_cast<int32_t>(id));
    vectors.push_back(std::move(v));
  }
  return vectors;
}

inline bool is_valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const auto step = engine::unicode::decode_utf8(s, pos);
    if (step.kind != engine::unicode::Utf8Step::complete) return false;
    pos += step.length;
  }
  return true;
}

inline std::string ids_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

}  // namespace tokenizer_test
