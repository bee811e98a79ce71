// serve: an OpenAI-compatible HTTP server on one GGUF model (docs/serve.md).
// --parallel sessions generate at once, each with its share of the cores;
// further requests wait (at most --queue) or get 503.
//
//   serve -m model.gguf                          # http://127.0.0.1:8080, the chat page at /
//   serve -m model.gguf --host 0.0.0.0 --api-key "$KEY" --parallel 2
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/api/engine.hpp"
#include "tools/common/args.h"
#include "tools/common/chat_template_option.h"
#include "tools/common/log_level.h"
#include "tools/common/sampler_args.h"
#include "tools/serve/server.h"
#include "tools/serve/slot_pool.h"

namespace {

struct Options {
  std::string model, host = "127.0.0.1", api_key, template_arg, cpus;
  int64_t port = 8080, parallel = 1, queue = 16, n_ctx = 0, n_threads = 0;
  int64_t max_body = int64_t{1} << 20, max_prompt_tokens = 0, max_tokens = 0;
  engine::SamplerParams sampler;
  bool verbose = false;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: serve [-m] MODEL.gguf [options]\n"
               "An OpenAI-compatible server: POST /v1/chat/completions, /v1/completions; GET /v1/models,\n"
               "/health, /metrics, and a chat page at /.\n"
               "  -m, --model FILE         GGUF model (the -m is optional)\n"
               "      --host ADDR          address to listen on (default 127.0.0.1: this machine only;\n"
               "                           0.0.0.0 for every interface, then give --api-key)\n"
               "      --port N             port (default 8080; 0: any free one, printed)\n"
               "      --api-key KEY        every request needs Authorization: Bearer KEY (but the page at /, which\n"
               "                           asks for it, and /health)\n"
               "      --parallel N         sessions generating at once (default 1), each with the cores / N\n"
               "      --queue N            requests that may wait for a session (default 16); more get 503\n"
               "  -c, --ctx-size N         each session's context (default: the model's, at most 4096)\n"
               "  -t, --threads N          threads per session (default: the fastest cores / --parallel)\n"
               "      --cpus SPEC          a CPU list such as 4-7 for the sessions\n"
               "      --template NAME|FILE chat template: a built-in (chatml, llama3, gemma, phi3) or a Jinja file\n"
               "      --max-body BYTES     largest request body (default 1048576); larger: 413\n"
               "      --max-prompt-tokens N  longest prompt (default: the context - 1); longer: 400\n"
               "      --max-tokens N       most tokens a request may ask for (default: the context); more: 400\n"
               "Sampling defaults for what a request does not set (temperature and top_p it may set):\n%s"
               "  -v, --verbose            log the kernel plan and thread placement\n",
               tools::kSamplerUsage);
}

Options parse(int argc, char** argv) {
  Options o;
  tools::Args a(argc, argv);
  while (!a.done()) {
    if (a.model(o.model) || a.option({"--host"}, o.host) || a.option({"--port"}, o.port) ||
        a.option({"--api-key"}, o.api_key) || a.option({"--parallel", "-np"}, o.parallel) ||
        a.option({"--queue"}, o.queue) || a.option({"-c", "--ctx-size"}, o.n_ctx) ||
        a.option({"-t", "--threads"}, o.n_threads) || a.option({"--cpus"}, o.cpus) ||
        a.option({"--template"}, o.template_arg) || a.option({"--max-body"}, o.max_body) ||
        a.option({"--max-prompt-tokens"}, o.max_prompt_tokens) || a.option({"--max-tokens"}, o.max_tokens) ||
        tools::parse_sampler_option(a, o.sampler)) {
      continue;
    }
    if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
      continue;
    }
    if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    }
    a.unknown();
  }
  if (o.model.empty()) throw tools::ArgError("no model given");
  auto in_range = [](int64_t v, int64_t lo, int64_t hi, const char* name) {
    if (v < lo || v > hi) {
      throw tools::ArgError(std::string(name) + " must be from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
  };
  in_range(o.port, 0, 65535, "--port");
  in_range(o.parallel, 1, 64, "--parallel");
  in_range(o.queue, 0, 4096, "--queue");
  in_range(o.n_ctx, 0, UINT32_MAX, "-c");
  in_range(o.n_threads, 0, 1024, "-t");
  in_range(o.max_body, 1024, int64_t{1} << 30, "--max-body");
  in_range(o.max_prompt_tokens, 0, UINT32_MAX, "--max-prompt-tokens");
  in_range(o.max_tokens, 0, UINT32_MAX, "--max-tokens");
  try {
    o.sampler.validate();
  } catch (const std::exception& e) {
    throw tools::ArgError(e.what());
  }
  return o;
}

std::unique_ptr<serve::Slot> make_slot(engine::api::Model& model, const Options& o, int index, int32_t n_threads) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = static_cast<uint32_t>(o.n_ctx);
  p.n_threads = n_threads;
  p.cpus = o.cpus.empty() ? nullptr : o.cpus.c_str();
  return std::make_unique<serve::Slot>(serve::Slot{index, engine::api::Session(model, p), 0});
}

// SIGINT and SIGTERM end the server from a thread of its own (the handlers'
// threads are httplib's); blocked in every other thread.
void stop_on_signals(serve::Server& server) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  std::thread([set, &server] {
    int sig = 0;
    sigwait(&set, &sig);
    std::fprintf(stderr, "serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    server.stop();
  }).detach();
}

int run(const Options& o) {
  tools::set_tool_log_level(engine::LogLevel::warning, o.verbose);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: they inherit it

  serve::ServerOptions so;
  so.chat = tools::chat_template_option(o.template_arg);
  engine::api::Model model(o.model);
  // Each session gets the fastest cores / --parallel threads: sessions do not
  // share a pool, and more threads than cores in all would make every one slow.
  std::vector<std::unique_ptr<serve::Slot>> slots;
  slots.push_back(make_slot(model, o, 0, static_cast<int32_t>(o.n_threads)));
  int32_t threads = static_cast<int32_t>(o.n_threads);
  if (threads == 0) {
    size_t n_workers = 0;  // the default plan's threads: one per core of the fastest cluster(s)
    const engine_status s = engine_session_workers(slots[0]->session.get(), nullptr, 0, &n_workers);
    if (s != ENGINE_ERR_BUFFER_TOO_SMALL) engine::api::check(s);
    threads = std::max<int32_t>(1, static_cast<int32_t>(n_workers) / static_cast<int32_t>(o.parallel));
    if (o.parallel > 1) {
      slots.clear();  // first, or its threads count against the new ones (and the engine warns)
      slots.push_back(make_slot(model, o, 0, threads));
    }
  }
  for (int i = 1; i < o.parallel; ++i) slots.push_back(make_slot(model, o, i, threads));
  so.n_ctx = slots[0]->session.kv_info().n_ctx;
  serve::SlotPool pool(std::move(slots), static_cast<size_t>(o.queue));

  so.host = o.host;
  so.port = static_cast<int>(o.port);
  so.api_key = o.api_key;
  so.max_body = static_cast<size_t>(o.max_body);
  so.max_prompt_tokens = static_cast<size_t>(o.max_prompt_tokens);
  so.max_tokens = static_cast<uint32_t>(o.max_tokens);
  so.model_name = std::filesystem::path(o.model).stem().string();
  so.sampler = tools::c_sampler_params(o.sampler);
  serve::Server server(model, pool, so);
  const int port = server.bind();
  stop_on_signals(server);
  std::fprintf(stderr, "serve: %s: %lld session%s of %d thread%s, context %u, up to %lld waiting%s\n",
               so.model_name.c_str(), static_cast<long long>(o.parallel), o.parallel == 1 ? "" : "s", threads,
               threads == 1 ? "" : "s", so.n_ctx, static_cast<long long>(o.queue),
               o.api_key.empty() ? "" : ", API key needed");
  if (o.api_key.empty() && o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1") {
    std::fprintf(stderr, "serve: WARNING: listening on %s without --api-key: anyone who reaches it can use it\n",
                 o.host.c_str());
  }
  std::printf("serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stdout);
  server.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("serve", usage, argc, [&] { return run(parse(argc, argv)); });
}
