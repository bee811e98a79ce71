// quantize: write a GGUF model with its weights in another type, as llama.cpp's
// llama-quantize does (same per-tensor rules, bit-identical blocks).
//
//   quantize model-f16.gguf model-q4_k_m.gguf Q4_K_M
//   quantize --dry-run model-f16.gguf Q4_0
//   quantize --imatrix imatrix.gguf model-f16.gguf model-iq4_xs.gguf IQ4_XS
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine/support/log.h"
#include "tools/common/args.h"
#include "tools/common/plural.h"
#include "tools/common/log_level.h"
#include "tools/common/model_writing/quantize_model.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: quantize [options] [-m] IN.gguf OUT.gguf TYPE\n"
               "       quantize --dry-run [options] [-m] IN.gguf [OUT.gguf] TYPE\n"
               "TYPE (case-insensitive): %s\n"
               "  Q4_K_M, Q5_K_M  llama.cpp's mixes: Q6_K for the LM head and for attn_v and ffn_down of some layers\n"
               "  Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, IQ4_NL, IQ4_XS  llama.cpp's mixes of those names (Q3_K, Q4_K, Q5_K\n"
               "                  for attn_v, attn_output, ffn_down by layer; see docs or llama-quantize)\n"
               "  Q2_K_S          llama.cpp's smaller Q2_K mix: needs --imatrix (unusable without, as in llama-quantize)\n"
               "  others          that type for every 2-D weight, except a Q6_K LM head (unless --pure)\n"
               "  norms, biases and other 1-D tensors keep their type; inputs are F32, F16 or BF16\n"
               "options:\n"
               "      --pure              every 2-D weight in TYPE, LM head included (llama-quantize --pure)\n"
               "      --imatrix FILE      importance matrix from llama.cpp's llama-imatrix (GGUF or legacy .dat):\n"
               "                          the quantizers weight each column by it, as llama-quantize --imatrix\n"
               "      --dry-run           print the plan (type and size per tensor, totals); write nothing\n"
               "      --allow-requantize  accept already-quantized input tensors (the errors add up)\n"
               "  -t, --threads N         threads (default: one per big core)\n"
               "      --no-progress       no progress bar (drawn only when stderr is a terminal anyway)\n"
               "  -v, --verbose           a line per tensor while writing\n",
               tools::target_names().c_str());
}

tools::QuantizeOptions parse(int argc, char** argv) {
  tools::QuantizeOptions o;
  o.progress = isatty(STDERR_FILENO) != 0;
  std::vector<std::string> positional;
  tools::Args a(argc, argv);
  while (!a.done()) {
    int64_t n;
    if (a.flag({"--pure"})) {
      o.pure = true;
    } else if (a.flag({"--dry-run"})) {
      o.dry_run = true;
    } else if (a.flag({"--allow-requantize"})) {
      o.allow_requantize = true;
    } else if (a.flag({"--no-progress"})) {
      o.progress = false;
    } else if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
    } else if (a.option({"-t", "--threads"}, n)) {
      if (n < 0 || n > 1024) throw tools::ArgError("-t must be between 0 and 1024");
      o.n_threads = static_cast<size_t>(n);
    } else if (std::string f; a.option({"--imatrix"}, f)) {
      o.imatrix = f;
    } else if (std::string m; a.option({"-m", "--model"}, m)) {
      if (!o.input.empty()) throw tools::ArgError("more than one -m given ('" + o.input + "', '" + m + "')");
      o.input = m;
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else if (std::string p; a.positional(p)) {
      positional.push_back(p);
    } else {
      a.unknown();
    }
  }
  // -m IN.gguf, as every tool takes its model, stands for the first plain argument.
  if (!o.input.empty()) positional.insert(positional.begin(), o.input);
  if (positional.size() == 3) {
    o.input = positional[0];
    o.output = positional[1];
    o.type = positional[2];
  } else if (positional.size() == 2 && o.dry_run) {
    o.input = positional[0];
    o.type = positional[1];
  } else {
    throw tools::ArgError("expected IN.gguf OUT.gguf TYPE, got " +
                          tools::plural(static_cast<int64_t>(positional.size()), "argument"));
  }
  // A type it does not know is a usage error, found before the input is read.
  if (tools::find_target(o.type) == nullptr) throw tools::ArgError(tools::unknown_target_message(o.type));
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("quantize", usage, argc, [&] {
    const tools::QuantizeOptions o = parse(argc, argv);
    tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
    tools::quantize_model(o);
    return 0;
  });
}
