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
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: synth NAME -o OUT.gguf --type TYPE [--layers N] [--seed S] [options]\n"
               "       synth --arch ARCH --n-embd N --n-layer N --n-head N --n-ff N\n"
               "             (--n-vocab N | --vocab FILE)\n"
               "             -o OUT.gguf --type TYPE [options]\n"
               "       synth --list\n"
               "NAME: %s\n"
               "TYPE: %s\n"
               "options:\n"
               "  -o, --output FILE     the GGUF file to write\n"
               "      --type TYPE       weight type; Q4_K_M, Q5_K_M, Q2_K, Q3_K_S/M/L, IQ4_NL, IQ4_XS are llama.cpp's mixes, as in quantize\n"
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
               "      --n-vocab N  --ctx N  --rope-base F  --rms-eps F  --tied  --untied\n"
               "      --rope-linear F   linear RoPE scaling by F (rope.scaling.factor)\n"
               "      --set KEY=VALUE   a further key of the family, e.g. attention.sliding_window=8\n"
               "                        (KEY=A,B,... one value per layer where the key may be an array;\n"
               "                        KEY=none leaves out a key the named shape has)\n"
               "      --rope-partial F  proportional RoPE on the global layers: F of each head rotated\n"
               "                        (rope_freqs.weight, Gemma 4's partial_rotary_factor)\n"
               "      --k-eq-v          the global layers have no V projection (attention_k_eq_v)\n"
               "      --n-rot N         dimensions RoPE rotates per head (default: the whole head)\n"
               "      --longrope N      LongRoPE factors extending an original context of N to --ctx (phi3)\n",
               tools::shape_names().c_str(), tools::target_names().c_str());
}

void list_shapes() {
  std::printf("%-15s %-8s %6s %6s %5s %4s %5s %6s %7s %7s %10s %6s %-5s %8s  %s\n", "name", "arch", "n_embd", "layers",
              "heads", "kv", "h_dim", "n_ff", "vocab", "ctx", "rope_base", "eps", "tied", "params", "source");
  for (const tools::SynthShape& s : tools::named_shapes()) {
    std::printf("%-15s %-8s %6u %6u %5u %4u %5u %6u %7u %7u %10.0f %6.0e %-5s %7.2fB  %s%s\n", s.name.c_str(),
                s.arch.c_str(), s.n_embd, s.n_layer, s.n_head, s.n_head_kv, s.head_dim, s.n_ff, s.n_vocab, s.n_ctx,
                static_cast<double>(s.rope_base), static_cast<double>(s.rms_eps), s.tied ? "yes" : "no",
                static_cast<double>(s.n_params()) / 1e9, s.source.c_str(),
                s.rope_factor > 0 ? ", llama3 rope scaling factor 32" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("synth", usage, argc, [&] {
    const tools::SynthCommand cmd = tools::parse_synth_command(argc, argv);
    if (cmd.action == tools::SynthCommand::list) {
      list_shapes();
      return 0;
    }
    if (cmd.action == tools::SynthCommand::help) {
      usage(stdout);
      return 0;
    }
    const tools::SynthOptions& o = cmd.options;
    tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
    tools::synth_model(o);
    return 0;
  });
}
