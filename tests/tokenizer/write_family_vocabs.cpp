// write_family_vocabs DIR: writes each family-shaped vocabulary of
// family_vocabs.h as DIR/<name>.gguf, for reference/make_family_expected.py to
// run llama.cpp's llama-tokenize on.
#include <cstdio>
#include <exception>
#include <string>

#include "tests/tokenizer/family_vocabs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_family_vocabs DIR\n");
    return 2;
  }
  try {
    for (const std::string& name : tokenizer_test::family_vocab_names()) {
      const std::string path = std::string(argv[1]) + "/" + name + ".gguf";
      tokenizer_test::write_family_vocab(name, path);
      std::printf("%s\n", path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_family_vocabs: %s\n", e.what());
    return 1;
  }
  return 0;
}
