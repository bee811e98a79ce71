// tokenize: text on stdin -> token ids on stdout, with a model's vocabulary.
//
//   printf 'Hello world' | tokenize -m MODEL.gguf [--bos] [--special]
//
// The input is taken byte for byte (a trailing newline is text too). Ids go to
// stdout on one line, separated by spaces; errors go to stderr with exit code 1.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "engine/log.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"
#include "tools/common/log_level.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: tokenize -m MODEL.gguf [--bos] [--special] < text\n"
               "  -m, --model FILE  the GGUF file whose vocabulary to use\n"
               "  --bos             put the BOS token first\n"
               "  --special         parse control-token texts (\"<|im_start|>\") as those tokens\n");
}

std::string read_stdin() {
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) text.append(buf, n);
  if (std::ferror(stdin)) throw std::runtime_error("cannot read stdin");
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  bool bos = false;
  bool special = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "-m" || a == "--model") && i + 1 < argc) {
      model = argv[++i];
    } else if (a == "--bos") {
      bos = true;
    } else if (a == "--special") {
      special = true;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "tokenize: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 1;
    }
  }
  if (model.empty()) {
    std::fprintf(stderr, "tokenize: no model given (-m MODEL.gguf)\n");
    usage(stderr);
    return 1;
  }
  // Only problems on stderr unless the user asked for more.
  tools::set_tool_log_level(engine::LogLevel::warning);
  try {
    const gguf::File file = gguf::File::open(model);
    const engine::Tokenizer tokenizer = engine::Tokenizer::from_gguf(file);
    const std::vector<int32_t> ids = tokenizer.encode(read_stdin(), bos, special);
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) line += ' ';
      line += std::to_string(ids[i]);
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenize: %s\n", e.what());
    return 1;
  }
}
