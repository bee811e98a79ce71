// Opens a GGUF file through the installed library and prints what it holds.
#include <cstdio>

#include "engine/support/version.h"
#include "gguf/file.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    const gguf::File f = gguf::File::open(argv[1]);
    std::printf("engine %s: %s has %zu tensors\n", engine::version(), argv[1], f.tensors().size());
  } catch (const gguf::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
