// bench: prefill, decode and time-to-first-token of GGUF models with the
// environment that explains them (device, kernels, threads, clocks, heat, the
// model file's hash), a memory-bandwidth roofline, sustained rounds that show
// throttling, and `--compare` that says why one report is slower.
//
//   bench -m model.gguf                       # pp512, tg128, 5 repetitions, markdown
//   bench -m a.gguf -m b.gguf -p 128,512 -n 32 -t 2,4 -o json > report.json
//   bench -m model.gguf -n 64 --rounds 20 --interval 5 --plot heat.svg
//   bench --compare phone-a.json phone-b.json
#include <unistd.h>

#include <cstdio>
#include <string>

#include "engine/runtime/kv_cache.h"
#include "engine/support/log.h"
#include "gguf/writer_output.h"
#include "tools/bench/diagnosis.h"
#include "tools/bench/measure.h"
#include "tools/bench/report_json.h"
#include "tools/bench/report_markdown.h"
#include "tools/bench/svg_plot.h"
#include "tools/bench/text_util.h"
#include "tools/common/args.h"
#include "tools/common/log_level.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: bench [-m] MODEL.gguf [[-m] MODEL2.gguf ...] [options]\n"
               "       bench --compare A.json B.json\n"
               "tests (lists are comma-separated, as in llama-bench):\n"
               "  -m, --model FILE        GGUF model (the -m is optional); repeat for several\n"
               "  -p, --n-prompt LIST     prompt lengths for the prefill test (default 512; 0 = none)\n"
               "  -n, --n-gen LIST        generated tokens for the decode test (default 128; 0 = none)\n"
               "      -pg P,N             also a mixed test: P prompt + N generated timed together\n"
               "  -d, --depth LIST        tokens already in the KV cache before each test (default 0)\n"
               "  -t, --threads LIST      thread counts (default 0: one per big core)\n"
               "      --cpus SPEC         default | all | none | a CPU list such as 4-7\n"
               "  -r, --repetitions N     timed runs per test (default 5)\n"
               "      --warmup N          untimed runs before each test (default 1)\n"
               "  -b, --batch-size N      prompt tokens per prefill step (default 512)\n"
               "      --kv-type f16|f32|q8_0|q4_0  KV cache precision (default f16)\n"
               "  -s, --seed N            seed of the random token ids (default 42)\n"
               "sustained mode:\n"
               "      --rounds N          repeat the decode test N times after the tests\n"
               "      --interval S        seconds between rounds (default 0)\n"
               "      --plot FILE.svg     tokens/s, temperature and clock per round as an SVG chart\n"
               "profile:\n"
               "      --profile           after the tests, one more prefill (first -p) and decode (first -n,\n"
               "                          sampled) timing each operation class: matmul per weight type,\n"
               "                          attention, short convolution (lfm2), activation quantization,\n"
               "                          elementwise, pool waits, sampling\n"
               "output:\n"
               "  -o, --output FORMAT     md (default), json, jsonl or csv, to stdout\n"
               "      --save FILE.json    also write the JSON report to FILE\n"
               "      --no-hash           skip the model's SHA-256 (cached by path, size and mtime)\n"
               "      --cache-dir DIR     where the SHA-256 cache lives\n"
               "      --repack-cache DIR  keep the repacked weights in DIR between runs (default:\n"
               "                          $ENGINE_CACHE_DIR, else none: every run repacks)\n"
               "      --no-probe          skip the memory-bandwidth probe (no decode roofline)\n"
               "      --probe-mib N       probe buffer size (default: 4x the last-level cache, 128..1024 MiB)\n"
               "      --no-progress       no status line on stderr (drawn only on a terminal anyway)\n"
               "      --root DIR          read sysfs/proc under DIR (captured trees; for tests)\n"
               "  -v, --verbose           log the kernel plan and thread placement\n"
               "compare:\n"
               "      --compare A.json B.json   both reports side by side and why one is slower\n");
}

std::vector<uint32_t> uint_list(const std::string& text, const char* flag) {
  std::vector<uint32_t> out;
  for (int32_t v : tools::parse_int_list(text)) {
    if (v < 0) throw tools::ArgError(std::string(flag) + " values must be >= 0");
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

struct Cli {
  bench::BenchOptions bench;
  std::string format = "md";
  std::string save;
  std::string plot;
  std::string compare_a, compare_b;
  bool verbose = false;
  bool progress = true;
};

Cli parse(int argc, char** argv) {
  Cli c;
  bench::BenchOptions& o = c.bench;
  tools::Args a(argc, argv);
  bool prompt_set = false, gen_set = false, depth_set = false, threads_set = false;
  while (!a.done()) {
    std::string s;
    int64_t i = 0;
    float f = 0;
    if (a.model(o.models)) {
    } else if (a.option({"-p", "--n-prompt"}, s)) {
      if (!prompt_set) o.n_prompt.clear();
      prompt_set = true;
      for (uint32_t v : uint_list(s, "-p")) o.n_prompt.push_back(v);
    } else if (a.option({"-n", "--n-gen"}, s)) {
      if (!gen_set) o.n_gen.clear();
      gen_set = true;
      for (uint32_t v : uint_list(s, "-n")) o.n_gen.push_back(v);
    } else if (a.option({"-pg"}, s)) {
      const auto v = uint_list(s, "-pg");
      if (v.size() != 2 || v[0] == 0 || v[1] == 0) throw tools::ArgError("-pg takes P,N with both > 0");
      o.pg.emplace_back(v[0], v[1]);
    } else if (a.option({"-d", "--depth"}, s)) {
      if (!depth_set) o.depth.clear();
      depth_set = true;
      for (uint32_t v : uint_list(s, "-d")) o.depth.push_back(v);
    } else if (a.option({"-t", "--threads"}, s)) {
      if (!threads_set) o.threads.clear();
      threads_set = true;
      for (uint32_t v : uint_list(s, "-t")) o.threads.push_back(static_cast<int>(v));
    } else if (a.option({"--cpus"}, o.cpus) || a.option({"--kv-type"}, o.kv_type) ||
               a.option({"-o", "--output"}, c.format) || a.option({"--save"}, c.save) ||
               a.option({"--plot"}, c.plot) || a.option({"--cache-dir"}, o.cache_dir) ||
               a.option({"--repack-cache"}, o.repack_cache_dir) ||
               a.option({"--root"}, o.root)) {
    } else if (a.option({"-r", "--repetitions"}, i)) {
      if (i < 1 || i > 100000) throw tools::ArgError("-r must be >= 1");
      o.repetitions = static_cast<int>(i);
    } else if (a.option({"--warmup"}, i)) {
      if (i < 0 || i > 1000) throw tools::ArgError("--warmup must be >= 0");
      o.warmup = static_cast<int>(i);
    } else if (a.option({"-b", "--batch-size"}, i)) {
      if (i < 1 || i > 1 << 20) throw tools::ArgError("-b must be positive");
      o.n_batch = static_cast<uint32_t>(i);
    } else if (a.option({"-s", "--seed"}, i)) {
      o.seed = static_cast<uint32_t>(i);
    } else if (a.option({"--rounds"}, i)) {
      if (i < 0 || i > 100000) throw tools::ArgError("--rounds must be >= 0");
      o.rounds = static_cast<int>(i);
    } else if (a.option({"--interval"}, f)) {
      if (f < 0) throw tools::ArgError("--interval must be >= 0");
      o.interval_s = f;
    } else if (a.option({"--probe-mib"}, i)) {
      if (i < 1 || i > 1 << 20) throw tools::ArgError("--probe-mib must be positive");
      o.probe_bytes = static_cast<uint64_t>(i) << 20;
    } else if (a.flag({"--profile"})) {
      o.profile = true;
    } else if (a.flag({"--no-probe"})) {
      o.probe = false;
    } else if (a.flag({"--no-hash"})) {
      o.hash = false;
    } else if (a.flag({"--no-progress"})) {
      c.progress = false;
    } else if (a.flag({"-v", "--verbose"})) {
      c.verbose = true;
    } else if (a.flag({"--compare"})) {
      if (a.done()) throw tools::ArgError("--compare needs two JSON reports");
      c.compare_a = a.take();
      if (a.done()) throw tools::ArgError("--compare needs two JSON reports");
      c.compare_b = a.take();
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else {
      a.unknown();
    }
  }
  if (c.format != "md" && c.format != "json" && c.format != "jsonl" && c.format != "csv") {
    throw tools::ArgError("-o must be md, json, jsonl or csv");
  }
  if (!c.compare_a.empty()) return c;
  if (o.models.empty()) throw tools::ArgError("no model given (-m MODEL.gguf)");
  if (!engine::parse_kv_type(o.kv_type)) throw tools::ArgError("--kv-type must be f16, f32, q8_0 or q4_0");
  if (o.depth.empty()) o.depth.push_back(0);
  if (o.threads.empty()) o.threads.push_back(0);
  bool any = o.rounds > 0 || !o.pg.empty();
  for (uint32_t p : o.n_prompt) any = any || p > 0;
  for (uint32_t n : o.n_gen) any = any || n > 0;
  if (!any) throw tools::ArgError("nothing to measure: -p and -n are all 0 and there is no -pg or --rounds");
  if (!c.plot.empty() && o.rounds == 0) throw tools::ArgError("--plot draws the sustained rounds: add --rounds N");
  return c;
}

int run(int argc, char** argv) {
  Cli c = parse(argc, argv);
  tools::set_tool_log_level(engine::LogLevel::warning, c.verbose);
  if (!c.compare_a.empty()) {
    const bench::Report a = bench::read_report_file(c.compare_a);
    const bench::Report b = bench::read_report_file(c.compare_b);
    std::fputs(bench::format_compare(a, b, c.compare_a, c.compare_b).c_str(), stdout);
    return 0;
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  // Refuse an output that cannot be written before minutes of measuring.
  for (const std::string& out : {c.save, c.plot}) {
    if (!out.empty()) gguf::resolve_output_path(out);
  }
  c.bench.progress = c.progress && ::isatty(2) != 0;
  const bench::Report report = bench::run_bench(c.bench, command_line);

  if (c.format == "md") std::fputs(bench::report_markdown(report).c_str(), stdout);
  if (c.format == "json") std::fputs(bench::report_json(report).c_str(), stdout);
  if (c.format == "jsonl") std::fputs(bench::report_jsonl(report).c_str(), stdout);
  if (c.format == "csv") std::fputs(bench::report_csv(report).c_str(), stdout);
  std::fflush(stdout);
  if (!c.save.empty()) {
    gguf::write_output_file(c.save, bench::report_json(report));
    std::fprintf(stderr, "bench: wrote the JSON report to %s\n", c.save.c_str());
  }
  if (!c.plot.empty()) {
    for (const bench::Run& r : report.runs) {
      if (r.sustained.rounds == 0) continue;
      const std::string title = "sustained decode: " + report.device.model + ", " + r.model.path + ", " +
                                bench::fmt_threads(r.threads.n_threads);
      gguf::write_output_file(c.plot, bench::sustained_svg(r.sustained, title));
      std::fprintf(stderr, "bench: wrote the sustained-rounds chart to %s\n", c.plot.c_str());
      break;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("bench", usage, argc, [&] { return run(argc, argv); });
}
