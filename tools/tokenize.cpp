// tokenize: text on stdin -> token ids on stdout, with a model's vocabulary.
//
//   printf 'Hello world' | tokenize -m MODEL.gguf [--bos] [--special]
//
// The input is taken byte for byte (a trailing newline is text too). Ids go to
// stdout on one line, separated by spaces; errors go to stderr with exit code 1
// (2 for a usage error).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "engine/support/log.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"
#include "tools/common/args.h"
#include "tools/common/log_level.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: tokenize [-m] MODEL.gguf [--bos] [--special] < text\n"
               "  -m, --model FILE  the GGUF file whose vocabulary to use (the -m is optional)\n"
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

struct Options {
  std::string model;
  bool bos = false;
  bool special = false;
};

Options parse(int argc, char** argv) {
  Options o;
  tools::Args a(argc, argv);
  while (!a.done()) {
    if (a.flag({"--bos"})) {
      o.bos = true;
    } else if (a.flag({"--special"})) {
      o.special = true;
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else if (!a.model(o.model)) {
      a.unknown();
    }
  }
  if (o.model.empty()) throw tools::ArgError("no model given (tokenize -m MODEL.gguf < text)");
  return o;
}

int tokenize(const Options& o) {
  // Only problems on stderr unless the user asked for more.
  tools::set_tool_log_level(engine::LogLevel::warning);
  const gguf::File file = gguf::File::open(o.model);
  const engine::Tokenizer tokenizer = engine::Tokenizer::from_gguf(file);
  const std::vector<int32_t> ids = tokenizer.encode(read_stdin(), o.bos, o.special);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  if (std::fflush(stdout) != 0) throw std::runtime_error("cannot write stdout");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("tokenize", usage, argc, [&] { return tokenize(parse(argc, argv)); });
}
