// synth: write a random-weight GGUF model of a real model's shape (or a custom
// one), directly in any type quantize writes, in bounded memory.
//
//   synth llama-2-7b -o llama-2-7b-q4_0.gguf --type Q4_0
//   synth qwen3-0.6b -o small.gguf --type Q4_K_M --layers 2 --seed 7
//   synth --arch llama --n-embd 512 --n-layer 4 --n-head 8 --n-ff 1536 --n-vocab 1000 -o t.gguf --type Q8_0
//   synth --list
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "engine/support/log.h"
#include "tools/common/args.h"
#include "tools/common/log_level.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: synth NAME -o OUT.gguf --type TYPE [--layers N] [--seed S] [options]\n"
               "       synth --arch llama|qwen2|qwen3 --n-embd N --n-layer N --n-head N --n-ff N\n"
               "             (--n-vocab N | --vocab FILE)\n"
               "             -o OUT.gguf --type TYPE [options]\n"
               "       synth --list\n"
               "NAME: %s\n"
               "TYPE: %s\n"
               "options:\n"
               "  -o, --output FILE     the GGUF file to write\n"
               "      --type TYPE       weight type; Q4_K_M/Q5_K_M use llama.cpp's mixes, as quantize does\n"
               "      --layers N        layer count (default: the shape's)\n"
               "      --seed S          random seed (default 1); the same seed gives the same bytes\n"
               "      --vocab FILE      copy the tokenizer of this GGUF (the vocab size comes from it);\n"
               "                        default: a byte-level SentencePiece vocabulary of the shape's size\n"
               "      --pure            every 2-D weight in TYPE, LM head included\n"
               "      --dry-run         print the plan (type and size per tensor, totals); write nothing\n"
               "  -t, --threads N       threads (default: one per big core)\n"
               "      --no-progress     no progress bar (drawn only when stderr is a terminal anyway)\n"
               "  -v, --verbose         a line per tensor while writing\n"
               "shape (a custom shape with --arch, or overrides of a named one):\n"
               "      --arch A  --n-embd N  --n-layer N  --n-head N  --n-head-kv N  --head-dim N  --n-ff N\n"
               "      --n-vocab N  --ctx N  --rope-base F  --rms-eps F  --tied  --untied\n",
               tools::shape_names().c_str(), tools::target_names().c_str());
}

void list_shapes() {
  std::printf("%-15s %-6s %6s %6s %5s %4s %5s %6s %7s %7s %10s %6s %-5s %8s  %s\n", "name", "arch", "n_embd", "layers",
              "heads", "kv", "h_dim", "n_ff", "vocab", "ctx", "rope_base", "eps", "tied", "params", "source");
  for (const tools::SynthShape& s : tools::named_shapes()) {
    std::printf("%-15s %-6s %6u %6u %5u %4u %5u %6u %7u %7u %10.0f %6.0e %-5s %7.2fB  %s%s\n", s.name.c_str(),
                s.arch.c_str(), s.n_embd, s.n_layer, s.n_head, s.n_head_kv, s.head_dim, s.n_ff, s.n_vocab, s.n_ctx,
                static_cast<double>(s.rope_base), static_cast<double>(s.rms_eps), s.tied ? "yes" : "no",
                static_cast<double>(s.n_params()) / 1e9, s.source.c_str(),
                s.rope_factor > 0 ? ", llama3 rope scaling factor 32" : "");
  }
}

struct Overrides {
  std::optional<std::string> arch;
  std::optional<int64_t> n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx;
  std::optional<float> rope_base, rms_eps;
  std::optional<bool> tied;
};

uint32_t u32(const char* flag, int64_t v) {
  if (v <= 0 || v > UINT32_MAX) throw tools::ArgError(std::string(flag) + " must be a positive 32-bit integer");
  return static_cast<uint32_t>(v);
}

tools::SynthShape resolve_shape(const std::string& name, const Overrides& ov) {
  tools::SynthShape s;
  if (!name.empty()) {
    const tools::SynthShape* named = tools::find_shape(name);
    if (named == nullptr) {
      throw tools::ArgError("unknown shape '" + name + "'; known: " + tools::shape_names() +
                            " (or a custom shape with --arch)");
    }
    s = *named;
  } else {
    if (!ov.arch) throw tools::ArgError("give a shape NAME, or --arch and the sizes of a custom shape");
    for (auto [flag, v] : {std::pair{"--n-embd", ov.n_embd}, {"--n-layer", ov.n_layer}, {"--n-head", ov.n_head},
                           {"--n-ff", ov.n_ff}, {"--n-vocab", ov.n_vocab}}) {
      if (!v) throw tools::ArgError(std::string("a custom shape needs ") + flag);
    }
    s.name = "custom";
    s.n_ctx = 4096;
    if (const tools::SynthShape* typical = tools::default_shape(*ov.arch)) s.rms_eps = typical->rms_eps;
    s.source = "command line";
  }
  if (ov.arch) s.arch = *ov.arch;
  if (ov.n_embd) s.n_embd = u32("--n-embd", *ov.n_embd);
  if (ov.n_layer) s.n_layer = u32("--n-layer", *ov.n_layer);
  if (ov.n_head) s.n_head = u32("--n-head", *ov.n_head);
  if (ov.n_head_kv) s.n_head_kv = u32("--n-head-kv", *ov.n_head_kv);
  if (ov.n_ff) s.n_ff = u32("--n-ff", *ov.n_ff);
  if (ov.n_vocab) s.n_vocab = u32("--n-vocab", *ov.n_vocab);
  if (ov.n_ctx) s.n_ctx = u32("--ctx", *ov.n_ctx);
  if (ov.rope_base) s.rope_base = *ov.rope_base;
  if (ov.rms_eps) s.rms_eps = *ov.rms_eps;
  if (ov.tied) s.tied = *ov.tied;
  if (name.empty() && !ov.n_head_kv) s.n_head_kv = s.n_head;
  if (ov.head_dim) {
    s.head_dim = u32("--head-dim", *ov.head_dim);
  } else if (name.empty()) {
    if (s.n_embd % s.n_head != 0) throw tools::ArgError("--n-embd is not a multiple of --n-head: give --head-dim");
    s.head_dim = s.n_embd / s.n_head;
  }
  return s;
}

tools::SynthOptions parse(int argc, char** argv) {
  tools::SynthOptions o;
  o.progress = isatty(STDERR_FILENO) != 0;
  std::string name;
  Overrides ov;
  tools::Args a(argc, argv);
  while (!a.done()) {
    int64_t n;
    float f;
    std::string text;
    if (a.option({"-o", "--output"}, o.output) || a.option({"--type"}, o.type) ||
        a.option({"--vocab"}, o.vocab_file)) {
    } else if (a.option({"--layers", "--n-layer"}, n)) {
      ov.n_layer = n;
    } else if (a.option({"--seed"}, n)) {
      o.seed = static_cast<uint64_t>(n);
    } else if (a.option({"-t", "--threads"}, n)) {
      if (n < 0 || n > 1024) throw tools::ArgError("-t must be between 0 and 1024");
      o.n_threads = static_cast<size_t>(n);
    } else if (a.option({"--arch"}, text)) {
      ov.arch = text;
    } else if (a.option({"--n-embd"}, n)) {
      ov.n_embd = n;
    } else if (a.option({"--n-head"}, n)) {
      ov.n_head = n;
    } else if (a.option({"--n-head-kv"}, n)) {
      ov.n_head_kv = n;
    } else if (a.option({"--head-dim"}, n)) {
      ov.head_dim = n;
    } else if (a.option({"--n-ff"}, n)) {
      ov.n_ff = n;
    } else if (a.option({"--n-vocab"}, n)) {
      ov.n_vocab = n;
    } else if (a.option({"--ctx"}, n)) {
      ov.n_ctx = n;
    } else if (a.option({"--rope-base"}, f)) {
      ov.rope_base = f;
    } else if (a.option({"--rms-eps"}, f)) {
      ov.rms_eps = f;
    } else if (a.flag({"--tied"})) {
      ov.tied = true;
    } else if (a.flag({"--untied"})) {
      ov.tied = false;
    } else if (a.flag({"--pure"})) {
      o.pure = true;
    } else if (a.flag({"--dry-run"})) {
      o.dry_run = true;
    } else if (a.flag({"--no-progress"})) {
      o.progress = false;
    } else if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
    } else if (a.flag({"--list"})) {
      list_shapes();
      std::exit(0);
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else if (std::string given; a.positional(given)) {
      if (!name.empty()) throw tools::ArgError("more than one shape name given ('" + name + "', '" + given + "')");
      name = given;
    } else {
      a.unknown();
    }
  }
  if (o.type.empty()) throw tools::ArgError("no --type given");
  if (tools::find_target(o.type) == nullptr) throw tools::ArgError(tools::unknown_target_message(o.type));
  if (o.output.empty() && !o.dry_run) throw tools::ArgError("no output file given (-o OUT.gguf)");
  // The vocabulary file gives the vocab size: read it (and refuse a file
  // that is not GGUF, naming it) before the shape needs --n-vocab.
  if (!o.vocab_file.empty()) {
    const uint32_t n = tools::vocab_size(o.vocab_file);
    if (ov.n_vocab && *ov.n_vocab != static_cast<int64_t>(n)) {
      throw tools::ArgError("--n-vocab " + std::to_string(*ov.n_vocab) + " differs from the " + std::to_string(n) +
                            " tokens of " + o.vocab_file + " (--vocab sets the vocab size; leave --n-vocab out)");
    }
    ov.n_vocab = n;
  }
  o.shape = resolve_shape(name, ov);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("synth", usage, argc, [&] {
    const tools::SynthOptions o = parse(argc, argv);
    tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
    tools::synth_model(o);
    return 0;
  });
}
