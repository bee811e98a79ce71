// run: generate text with a GGUF model, streaming it as it comes, then report
// prefill speed, time to first token and decode speed as separate figures.
//
//   run -m model.gguf -p "Once upon a time" -n 128
//   run -m model.gguf --tokens 1,403,407 --dump-logits out.json
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/model/model.h"
#include "engine/grammar/gbnf.h"
#include "engine/grammar/token_constraint.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "engine/threads/topology.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"
#include "gguf/writer_output.h"
#include "tools/common/args.h"
#include "tools/common/fallback_advice.h"
#include "tools/common/interrupt.h"
#include "tools/common/json_writer.h"
#include "tools/common/plural.h"
#include "tools/common/log_level.h"
#include "tools/common/sampler_args.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  std::string prompt;
  int64_t n_predict = 128;
  int64_t n_threads = 0;
  std::string cpus;
  int64_t n_ctx = 0;
  int64_t n_batch = 512;
  std::string kv_type = "f16";
  engine::SamplerParams sampler;
  tools::GrammarArgs grammar;
  bool ignore_eos = false;
  bool special = false;
  std::string tokens;
  std::string dump_logits;
  std::string prompt_cache;
  std::string cache_dir;  // the repack cache's directory
  bool time_read = false;
  bool verbose = false;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: run [-m] MODEL.gguf [-p PROMPT] [-n N] [options]\n"
               "  -m, --model FILE        GGUF model (the -m is optional)\n"
               "  -p, --prompt TEXT       prompt (default: empty, generation starts from BOS)\n"
               "  -n, --n-predict N       tokens to generate (default 128; -1: no limit); stops early at end of\n"
               "                          generation or a full context; Ctrl-C stops, prints the figures, exits 130\n"
               "  -t, --threads N         threads; 0 (the default) = one per core of the fastest clusters, pinned\n"
               "      --cpus SPEC         default | all | none | a CPU list such as 4-7\n"
               "  -c, --ctx-size N        context size (default: the model's, at most 4096; above the model's\n"
               "                          trained context a warning, since text past it degrades)\n"
               "  -b, --batch-size N      prompt tokens per prefill step (default 512)\n"
               "      --kv-type f16|f32|q8_0|q4_0  KV cache precision (default f16)\n"
               "%s%s"
               "      --ignore-eos        keep generating past end-of-generation tokens\n"
               "      --special           parse special-token texts in the prompt\n"
               "      --tokens IDS        evaluate these token ids (comma-separated) as one batch ...\n"
               "      --dump-logits FILE  ... and write {\"tokens\": [...], \"logits\": [[...], ...]} to FILE\n"
               "      --prompt-cache FILE a saved session: when FILE exists its tokens' cache is loaded and only\n"
               "                          the rest of the prompt evaluated; after the prompt the session is saved\n"
               "                          to FILE unless the file already held all of it\n"
               "      --cache-dir DIR     keep the repacked weights in DIR/MODEL.gguf.enginecache, so the next\n"
               "                          load maps them instead of repacking (default: $ENGINE_CACHE_DIR, else none)\n"
               "      --time-read         also time a plain read of the model file, beside the load time\n"
               "  -v, --verbose           log the kernel plan and thread placement\n",
               tools::kSamplerUsage, tools::kGrammarUsage);
}

Options parse(int argc, char** argv) {
  Options o;
  tools::Args a(argc, argv);
  while (!a.done()) {
    if (a.model(o.model) || a.option({"-p", "--prompt"}, o.prompt) ||
        a.option({"-n", "--n-predict"}, o.n_predict) || a.option({"-t", "--threads"}, o.n_threads) ||
        a.option({"--cpus"}, o.cpus) || a.option({"-c", "--ctx-size"}, o.n_ctx) ||
        a.option({"-b", "--batch-size"}, o.n_batch) || a.option({"--kv-type"}, o.kv_type) ||
        a.option({"--tokens"}, o.tokens) || a.option({"--dump-logits"}, o.dump_logits) ||
        a.option({"--prompt-cache"}, o.prompt_cache) || a.option({"--cache-dir"}, o.cache_dir)) {
      continue;
    }
    if (tools::parse_sampler_option(a, o.sampler) || tools::parse_grammar_option(a, o.grammar)) {
    } else if (a.flag({"--ignore-eos"})) {
      o.ignore_eos = true;
    } else if (a.flag({"--special"})) {
      o.special = true;
    } else if (a.flag({"--time-read"})) {
      o.time_read = true;
    } else if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else {
      a.unknown();
    }
  }
  if (o.model.empty()) throw tools::ArgError("no model given (-m MODEL.gguf)");
  if (o.n_predict < -1) throw tools::ArgError("-n must be >= 0, or -1 for no limit");
  if (o.n_threads < 0) throw tools::ArgError("-t must be >= 0");
  if (o.n_ctx < 0 || o.n_ctx > UINT32_MAX) throw tools::ArgError("-c is out of range");
  if (o.n_batch <= 0 || o.n_batch > UINT32_MAX) throw tools::ArgError("-b must be positive");
  if (!engine::parse_kv_type(o.kv_type)) throw tools::ArgError("--kv-type must be f16, f32, q8_0 or q4_0");
  if (!o.dump_logits.empty() && o.tokens.empty()) throw tools::ArgError("--dump-logits needs --tokens");
  try {
    o.sampler.validate();
  } catch (const engine::Error& e) {
    throw tools::ArgError(e.what());
  }
  o.grammar.load();  // the file's errors before the model loads
  return o;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct PromptCache {
  bool loaded = false;
  double load_ms = 0;
  size_t reused = 0;
};

// The prompt's prefill, from the saved session at `path` when there is one
// (--prompt-cache): its tokens' cache is loaded and only the rest evaluated.
// A file that cannot be used is said and the prompt evaluated whole.
PromptCache prefill(engine::Session& session, const std::vector<int32_t>& prompt, const std::string& path) {
  PromptCache cache;
  if (!path.empty() && std::filesystem::exists(path)) {
    const auto t = Clock::now();
    try {
      engine::load_session(session, path);
      cache.loaded = true;
    } catch (const engine::SessionFileError& e) {
      std::fprintf(stderr, "run: prompt cache not used: %s\n", e.what());
    }
    cache.load_ms = ms_between(t, Clock::now());
  }
  cache.reused = session.eval_prompt(prompt);
  return cache;
}

// The prompt cache is replaced after the prompt: a file there must be a saved
// session (of any model: one that cannot be used is said and replaced), never
// another file of the user's given by mistake.
void check_prompt_cache_path(const std::string& path) {
  const std::string target = gguf::resolve_output_path(path);
  std::error_code ec;
  if (std::filesystem::exists(target, ec) && std::filesystem::file_size(target, ec) > 0 &&
      !engine::starts_as_saved_session(target)) {
    throw engine::Error(path + ": not a saved session (no ENGINEKV magic): refusing to replace it with one (give "
                        "a new path for --prompt-cache, or remove the file)");
  }
}

void save_prompt_cache(const engine::Session& session, const std::string& path) {
  const auto t = Clock::now();
  engine::save_session(session, path);
  std::fprintf(stderr, "run: prompt cache: %s of the prompt saved to %s in %.1f ms\n",
               tools::plural(static_cast<int64_t>(session.tokens().size()), "token").c_str(), path.c_str(),
               ms_between(t, Clock::now()));
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// --tokens/--dump-logits: one batch, the logits of every position, as JSON.
int dump_logits(engine::Session& session, const std::vector<int32_t>& ids, const std::string& path, size_t n_vocab) {
  session.eval(ids, /*all_logits=*/true);
  tools::JsonWriter j;
  j.begin_object().key("tokens").begin_array();
  for (int32_t t : ids) j.value(static_cast<int64_t>(t));
  j.end_array().key("logits").begin_array();
  const auto logits = session.logits();
  for (size_t p = 0; p < ids.size(); ++p) {
    j.begin_array();
    for (size_t v = 0; v < n_vocab; ++v) j.value(static_cast<double>(logits[p * n_vocab + v]));
    j.end_array();
  }
  j.end_array().end_object();
  gguf::write_output_file(path, j.str() + "\n");
  std::fprintf(stderr, "wrote the logits of %s x %zu to %s\n",
               tools::plural(static_cast<int64_t>(ids.size()), "position").c_str(), n_vocab, path.c_str());
  return 0;
}

int run(const Options& o) {
  tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
  // Output paths are checked before the model loads: a folder or a device
  // node is refused now, not after the generation.
  if (!o.dump_logits.empty()) gguf::resolve_output_path(o.dump_logits);
  if (!o.prompt_cache.empty()) check_prompt_cache_path(o.prompt_cache);
  const auto t_load = Clock::now();
  engine::LoadOptions load_options;
  load_options.cache_dir = o.cache_dir.empty() ? engine::cache_dir_from_env() : o.cache_dir;
  load_options.measure_read = o.time_read;
  const auto model = engine::Model::load(o.model, load_options);
  const engine::Tokenizer tokenizer = engine::Tokenizer::from_gguf(model->file());
  const auto t_loaded = Clock::now();
  const engine::MemoryUsage after_load = engine::memory_usage();
  // A weight type below this CPU's tier: say how to get a file that runs at
  // full speed here (the WARNING lines above name the kernels).
  for (const std::string& line : tools::advise_on_fallbacks(model->file(), model->kernel_plan(), o.model).lines()) {
    std::fprintf(stderr, "run: %s\n", line.c_str());
  }

  engine::ThreadOptions thread_options;
  thread_options.n_threads = static_cast<size_t>(o.n_threads);
  if (!o.cpus.empty()) thread_options.set_cpus(o.cpus);
  const engine::ThreadPlan plan = engine::ThreadPlan::make(engine::CpuTopology::detect(), thread_options);
  engine::ThreadPool pool(plan, {.pin_caller = true});  // the tool's main thread is its own to pin
  engine::SessionParams sp;
  sp.n_ctx = static_cast<uint32_t>(o.n_ctx);
  sp.n_batch = static_cast<uint32_t>(o.n_batch);
  sp.kv_type = *engine::parse_kv_type(o.kv_type);
  sp.pool = &pool;
  // Session setup allocates and zeroes the KV cache and scratch: with a large
  // -c it is seconds (and most of the memory), so the summary reports it.
  const auto t_setup = Clock::now();
  engine::Session session(*model, sp);
  const double setup_ms = ms_between(t_setup, Clock::now());
  const size_t n_vocab = model->config().n_vocab;

  if (!o.tokens.empty()) {
    const std::vector<int32_t> ids = tools::parse_int_list(o.tokens);
    if (!o.dump_logits.empty()) return dump_logits(session, ids, o.dump_logits, n_vocab);
  }

  std::vector<int32_t> prompt = o.tokens.empty() ? tokenizer.encode(o.prompt, tokenizer.add_bos(), o.special)
                                                 : tools::parse_int_list(o.tokens);
  if (prompt.empty()) {
    if (tokenizer.bos() < 0) throw engine::Error("the prompt is empty and the vocabulary has no BOS token to start from");
    prompt.push_back(tokenizer.bos());
  }
  engine::Sampler sampler(o.sampler);
  for (int32_t t : prompt) sampler.accept(t);
  if (o.grammar.parsed) {
    sampler.set_grammar(std::make_unique<engine::grammar::TokenConstraint>(
        *o.grammar.parsed, std::make_shared<engine::grammar::TokenVocabulary>(tokenizer)));
  }

  // Checked before the prompt is echoed: an error is all a refused run prints.
  if (prompt.size() > session.n_ctx()) {
    throw engine::Error("the prompt has " + std::to_string(prompt.size()) + " tokens, more than the context of " +
                        std::to_string(session.n_ctx()) + " (raise -c, or shorten the prompt)");
  }
  // The prompt is printed as given; the decoder sees its ids first so the
  // continuation's spacing is right.
  engine::Tokenizer::StreamDecoder decoder = tokenizer.stream_decoder();
  std::string shown_prompt;
  for (int32_t t : prompt) shown_prompt += decoder.push(t);
  std::fputs(shown_prompt.c_str(), stdout);
  std::fflush(stdout);

  const tools::StopOnInterrupt interrupt;  // Ctrl-C ends the loop below; the figures still print
  const auto t_prefill = Clock::now();
  const PromptCache cache = prefill(session, prompt, o.prompt_cache);
  int32_t next = sampler.sample(session.logits());
  const auto t_first = Clock::now();
  if (!o.prompt_cache.empty() && cache.reused + 1 < prompt.size()) save_prompt_cache(session, o.prompt_cache);

  int64_t generated = 0;
  auto t_decode_end = t_first;
  while (o.n_predict < 0 || generated < o.n_predict) {
    ++generated;
    sampler.accept(next);
    const bool stop = !o.ignore_eos && tokenizer.is_end_of_generation(next);
    if (!stop) {
      std::fputs(decoder.push(next).c_str(), stdout);
      std::fflush(stdout);
    }
    if (stop || generated == o.n_predict || interrupt.requested()) break;
    if (session.n_past() >= session.n_ctx()) {
      std::fprintf(stderr, "\nrun: the context (%s) is full; stopping\n",
                   tools::plural(session.n_ctx(), "token").c_str());
      break;
    }
    session.eval({&next, 1});
    next = sampler.sample(session.logits());
    t_decode_end = Clock::now();
  }
  std::fputs(decoder.flush().c_str(), stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);
  if (interrupt.requested()) std::fprintf(stderr, "\nrun: interrupted; the figures cover what was generated\n");

  const engine::MemoryUsage end = engine::memory_usage();
  const double prefill_ms = ms_between(t_prefill, t_first);
  const double decode_ms = ms_between(t_first, t_decode_end);
  const int64_t decode_steps = generated > 0 ? generated - 1 : 0;  // the first token came from the prefill
  std::fprintf(stderr, "\nmodel:      %s (%s, load %.0f ms)\n", o.model.c_str(),
               mib(model->file().file_size()).c_str(),
               ms_between(t_load, t_loaded) - 1000 * std::max(model->load_stats().read_seconds, 0.0));
  std::fprintf(stderr, "load:       %s\n", engine::describe_load(model->load_stats()).c_str());
  // The cache's bytes beside a full cache's: what sliding windows save.
  std::fprintf(stderr, "session:    context %s, set up in %.0f ms; KV cache %s\n",
               tools::plural(session.n_ctx(), "token").c_str(), setup_ms, session.kv_cache().size().describe().c_str());
  // With a prompt cache the rate counts the tokens evaluated, not those loaded.
  const size_t evaluated = prompt.size() - cache.reused;
  std::fprintf(stderr, "prompt:     %s, prefill %.2f tokens/s (%.1f ms)\n",
               tools::plural(static_cast<int64_t>(prompt.size()), "token").c_str(),
               1000.0 * static_cast<double>(evaluated) / prefill_ms, prefill_ms);
  std::fprintf(stderr, "first token: %.1f ms after the prompt was tokenized\n", prefill_ms);
  if (cache.loaded) {
    std::fprintf(stderr, "prompt cache: %s loaded in %.1f ms, %s of the prompt reused\n", o.prompt_cache.c_str(),
                 cache.load_ms, tools::plural(static_cast<int64_t>(cache.reused), "token").c_str());
  }
  if (decode_steps > 0) {
    std::fprintf(stderr, "decode:     %s, %.2f tokens/s (%.1f ms)\n", tools::plural(decode_steps, "token").c_str(),
                 1000.0 * static_cast<double>(decode_steps) / decode_ms, decode_ms);
  } else {
    std::fprintf(stderr, "decode:     no decode steps (generated %s)\n", tools::plural(generated, "token").c_str());
  }
  std::fprintf(stderr, "sampler:    seed %u, temp %.2f, top-k %d, top-p %.2f, min-p %.2f, repeat-penalty %.2f\n",
               sampler.seed(), static_cast<double>(o.sampler.temperature), o.sampler.top_k,
               static_cast<double>(o.sampler.top_p), static_cast<double>(o.sampler.min_p),
               static_cast<double>(o.sampler.repeat_penalty));
  if (after_load.known) {
    std::fprintf(stderr, "memory:     resident %s after load, %s at the end, peak %s; KV cache %s (%s)\n",
                 mib(after_load.rss_bytes).c_str(), mib(end.rss_bytes).c_str(), mib(end.peak_rss_bytes).c_str(),
                 mib(session.kv_cache().bytes()).c_str(), session.kv_cache().describe().c_str());
    const std::string recurrent = engine::state_memory(session.kv_cache(), session.checkpoints()).describe_recurrent();
    if (!recurrent.empty()) std::fprintf(stderr, "            %s\n", recurrent.c_str());
  }
  std::fprintf(stderr, "threads:    %s\n", pool.describe().c_str());
  return interrupt.requested() ? tools::StopOnInterrupt::kExitCode : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("run", usage, argc, [&] { return run(parse(argc, argv)); });
}
