#include "tools/bench/measure.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <thread>

#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/model/model.h"
#include "engine/runtime/profile.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/session.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "engine/threads/topology.h"
#include "gguf/file.h"
#include "tools/bench/environment.h"
#include "tools/bench/model_info.h"
#include "tools/bench/probe.h"
#include "tools/bench/roofline.h"
#include "tools/bench/sha256.h"
#include "tools/bench/sustained.h"
#include "tools/bench/text_util.h"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU time of the whole process (every thread), user + system.
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

// CPU time, wall time and /proc/stat ticks of the tests alone, paused while a
// probe pass runs between decode repetitions: each pass maps and touches a
// fresh buffer, whose page faults (and on a virtual machine the host's work to
// back the memory, counted as steal: 12% of the CPUs' time over a run with
// the passes, 3-5% without, on this README's VM) are not the tests'.
class TestClock {
 public:
  explicit TestClock(const FsRoot& fs) : fs_(fs) {}
  void start() {
    cpu0_ = cpu_seconds();
    ticks0_ = read_cpu_ticks(fs_);
    wall0_ = Clock::now();
  }
  void stop() {
    wall_ += seconds_since(wall0_);
    cpu_ += cpu_seconds() - cpu0_;
    add_elapsed(ticks_, ticks0_, read_cpu_ticks(fs_));
  }
  // CPU time over wall time x threads; steal over the plan's CPUs (every CPU
  // when the plan does not pin).
  void finish(const engine::ThreadPlan& plan, Run& run) const {
    if (wall_ <= 0) return;
    run.cpu_share = cpu_ / (wall_ * static_cast<double>(plan.size()));
    std::vector<int> cpus = plan_cpus(plan);
    if (cpus.size() != plan.size()) cpus.clear();
    run.steal_share = steal_share(ticks_, cpus);
  }

 private:
  const FsRoot& fs_;
  double cpu0_ = 0, cpu_ = 0, wall_ = 0;
  Clock::time_point wall0_;
  std::vector<CpuTicks> ticks0_, ticks_;
};

// A status line redrawn in place on a terminal: which test, which repetition,
// how long so far. Nothing at all when stderr is not a terminal.
class Progress {
 public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total), start_(Clock::now()) {}
  ~Progress() { clear(); }
  void step(const std::string& what) {
    ++done_;
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[Kbench: [%zu/%zu] %s (%.0f s)", done_, total_, what.c_str(), seconds_since(start_));
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (enabled_ && shown_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      shown_ = false;
    }
  }

 private:
  bool enabled_;
  size_t total_;
  size_t done_ = 0;
  bool shown_ = false;
  Clock::time_point start_;
};

struct Workload {
  std::mt19937 rng;
  uint32_t n_vocab;
  std::vector<int32_t> tokens(size_t n) {
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(n_vocab) - 1);
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = pick(rng);
    return t;
  }
};

// Empty cache, `depth` tokens filled untimed.
void fill_depth(engine::Session& s, Workload& w, uint32_t depth) {
  s.reset();
  if (depth > 0) s.eval(w.tokens(depth));
}

double time_prefill(engine::Session& s, Workload& w, uint32_t n_prompt, uint32_t depth) {
  fill_depth(s, w, depth);
  const std::vector<int32_t> prompt = w.tokens(n_prompt);
  const auto t0 = Clock::now();
  s.eval(prompt);
  return seconds_since(t0);
}

double time_decode(engine::Session& s, Workload& w, uint32_t n_gen, uint32_t depth) {
  fill_depth(s, w, depth);
  const std::vector<int32_t> next = w.tokens(n_gen);  // stand-ins for sampled tokens
  const auto t0 = Clock::now();
  for (uint32_t i = 0; i < n_gen; ++i) s.eval({&next[i], 1});
  return seconds_since(t0);
}

double time_mixed(engine::Session& s, Workload& w, uint32_t n_prompt, uint32_t n_gen, uint32_t depth) {
  fill_depth(s, w, depth);
  const std::vector<int32_t> prompt = w.tokens(n_prompt);
  const std::vector<int32_t> next = w.tokens(n_gen);
  const auto t0 = Clock::now();
  s.eval(prompt);
  for (uint32_t i = 0; i < n_gen; ++i) s.eval({&next[i], 1});
  return seconds_since(t0);
}

// bench --profile: one more prefill of n_prompt tokens and decode of n_gen,
// after the timed tests so reading the clock around each step costs those
// nothing. Decode samples every token with the default sampler, so sampling
// shows up too. Milliseconds per token by operation class.
std::vector<ProfileRow> profile_pass(engine::Session& s, Workload& w, uint32_t n_prompt, uint32_t n_gen,
                                     uint32_t depth, uint32_t seed) {
  engine::Profile prefill, decode;
  if (n_prompt > 0) {
    fill_depth(s, w, depth);
    const std::vector<int32_t> prompt = w.tokens(n_prompt);
    s.set_profile(&prefill);
    s.eval(prompt);
    s.set_profile(nullptr);
  }
  if (n_gen > 0) {
    fill_depth(s, w, depth);
    const std::vector<int32_t> first = w.tokens(1);
    s.eval(first);  // logits to sample the first generated token from
    engine::SamplerParams sp;
    sp.seed = seed;
    engine::Sampler sampler(sp);
    s.set_profile(&decode);
    for (uint32_t i = 0; i < n_gen && s.n_past() < s.n_ctx(); ++i) {
      const auto t0 = Clock::now();
      const int32_t next = sampler.sample(s.logits());
      decode.sampling += seconds_since(t0);
      s.eval({&next, 1});
    }
    s.set_profile(nullptr);
  }
  auto per_token = [](double seconds, const engine::Profile& p) {
    return p.tokens == 0 ? kUnknown : 1000.0 * seconds / static_cast<double>(p.tokens);
  };
  std::vector<ProfileRow> rows;
  auto add = [&](const std::string& op, double in_prefill, double in_decode) {
    rows.push_back({op, per_token(in_prefill, prefill), per_token(in_decode, decode)});
  };
  for (uint32_t t = 0; t < gguf::kGgmlTypeIdCount; ++t) {
    if (prefill.matmul[t] > 0 || decode.matmul[t] > 0) {
      add("matmul " + std::string(gguf::type_name(static_cast<gguf::GgmlType>(t))), prefill.matmul[t],
          decode.matmul[t]);
    }
  }
  add("attention", prefill.attention, decode.attention);
  if (prefill.shortconv > 0 || decode.shortconv > 0) add("short convolution", prefill.shortconv, decode.shortconv);
  if (prefill.delta_net > 0 || decode.delta_net > 0) add("gated delta net", prefill.delta_net, decode.delta_net);
  add("activation quantization", prefill.activation_quant, decode.activation_quant);
  add("elementwise (norms, RoPE, adds, SwiGLU)", prefill.elementwise, decode.elementwise);
  add("thread-pool wait", prefill.pool_wait, decode.pool_wait);
  add("sampling", prefill.sampling, decode.sampling);
  add("total", prefill.total(), decode.total());
  return rows;
}

struct Planned {
  std::string name, kind;
  uint32_t n_prompt = 0, n_gen = 0, depth = 0;
};

std::vector<Planned> plan_tests(const BenchOptions& o) {
  std::vector<Planned> tests;
  for (uint32_t d : o.depth) {
    for (uint32_t p : o.n_prompt) {
      if (p > 0) tests.push_back({"pp" + std::to_string(p), "prefill", p, 0, d});
    }
    for (uint32_t n : o.n_gen) {
      if (n > 0) tests.push_back({"tg" + std::to_string(n), "decode", 0, n, d});
    }
    for (const auto& [p, n] : o.pg) {
      tests.push_back({"pp" + std::to_string(p) + "+tg" + std::to_string(n), "mixed", p, n, d});
    }
  }
  return tests;
}

uint32_t context_needed(const BenchOptions& o, const std::vector<Planned>& tests) {
  uint32_t n = 1;
  for (const Planned& t : tests) n = std::max(n, t.depth + t.n_prompt + t.n_gen);
  if (o.rounds > 0) {
    const uint32_t gen = o.n_gen.empty() || o.n_gen.front() == 0 ? 128 : o.n_gen.front();
    n = std::max(n, o.depth.front() + gen);
  }
  if (o.profile) {  // the profiled decode starts after one untimed token
    const uint32_t prompt = o.n_prompt.empty() ? 0 : o.n_prompt.front();
    const uint32_t gen = o.n_gen.empty() ? 0 : o.n_gen.front();
    n = std::max(n, o.depth.front() + std::max(prompt, gen + 1));
  }
  return n;
}

Round take_round(int index, double elapsed, double tps, const Snapshot& s, const std::vector<int>& cpus) {
  Round r;
  r.index = index;
  r.elapsed_s = elapsed;
  r.tokens_per_s = tps;
  r.max_temp_c = max_temp(s);
  r.mean_freq_mhz = mean_cur_mhz(s, cpus);
  r.mean_policy_max_mhz = mean_policy_max_mhz(s, cpus);
  return r;
}

// Resets the process's peak resident size (VmHWM) to the current one: Linux
// 4.0+ and Android, by writing 5 to /proc/self/clear_refs. False when refused.
bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Report run_bench(const BenchOptions& o, const std::string& command_line) {
  // Every model must be a GGUF file before anything is hashed (and cached)
  // or measured: a wrong path fails at once, not after minutes of hashing.
  for (const std::string& path : o.models) static_cast<void>(gguf::File::open(path));

  const FsRoot fs(o.root);
  const engine::CpuTopology topology = engine::CpuTopology::detect(o.root);
  kernels::CpuFeatures cpu = kernels::host_cpu_features();
  if (!fs.is_live()) {
    const kernels::CpuFeatures captured = features_from_cpuinfo(fs.read("/proc/cpuinfo").value_or(""));
    if (captured.arch != kernels::Arch::unknown) cpu = captured;
  }
  Report report;
  report.created = utc_now();
  report.build = collect_build();
  report.device = collect_device(fs, topology, cpu);
  report.settings.repetitions = o.repetitions;
  report.settings.warmup = o.warmup;
  report.settings.n_batch = static_cast<int>(o.n_batch);
  report.settings.seed = o.seed;
  report.settings.command_line = command_line;

  const std::vector<Planned> tests = plan_tests(o);
  const size_t per_run = tests.size() * static_cast<size_t>(o.warmup + o.repetitions) + static_cast<size_t>(o.rounds) +
                         (o.probe ? 1 : 0) + (o.profile ? 1 : 0);
  Progress progress(o.progress, per_run * o.models.size() * o.threads.size());

  for (const std::string& path : o.models) {
    ModelInfo base;
    std::string sha = "unknown", sha_source = "skipped";
    if (o.hash) {
      if (o.progress) std::fprintf(stderr, "\r\033[Kbench: SHA-256 of %s ...", path.c_str());
      const auto t0 = Clock::now();
      const FileDigest digest = cached_sha256(path, o.cache_dir);
      progress.clear();
      if (digest.source == "computed") {
        std::fprintf(stderr, "%sbench: SHA-256 of %s computed in %.1f s%s\n", o.progress ? "\r\033[K" : "", path.c_str(),
                     seconds_since(t0), digest.cache_file.empty() ? " (no writable cache directory)" : ", cached");
      } else if (o.progress) {
        std::fprintf(stderr, "\r\033[K");
      }
      sha = digest.sha256;
      sha_source = digest.source;
    }
    const engine::MemoryUsage before_load = engine::memory_usage();
    const auto t_load = Clock::now();
    engine::LoadOptions load_options;
    load_options.cache_dir = o.repack_cache_dir.empty() ? engine::cache_dir_from_env() : o.repack_cache_dir;
    load_options.measure_read = true;  // bench reads the whole file anyway (its SHA-256)
    const std::unique_ptr<engine::Model> model = engine::Model::load(path, load_options);
    const double load_ms = 1000 * (seconds_since(t_load) - std::max(model->load_stats().read_seconds, 0.0));
    const engine::MemoryUsage after_load = engine::memory_usage();  // its peak covers any repacking copies
    base = describe_model(*model, path);
    base.sha256 = sha;
    base.sha256_source = sha_source;
    base.load_ms = load_ms;
    base.load_repack_ms = 1000 * model->load_stats().repack_seconds;
    if (model->load_stats().read_seconds >= 0) base.plain_read_ms = 1000 * model->load_stats().read_seconds;
    base.repack_cache = engine::cache_state_name(model->load_stats().cache);
    base.rss_before_load_bytes = before_load.known ? before_load.rss_bytes : 0;
    base.rss_after_load_bytes = after_load.known ? after_load.rss_bytes : 0;
    base.kv_type = o.kv_type;
    const DominantKernel dominant = dominant_kernel(*model);
    const engine::ModelConfig& cfg = model->config();

    for (int n_threads : o.threads) {
      Run run;
      run.model = base;
      engine::ThreadOptions topt;
      topt.n_threads = static_cast<size_t>(n_threads);
      if (!o.cpus.empty()) topt.set_cpus(o.cpus);
      const engine::ThreadPlan plan = engine::ThreadPlan::make(topology, topt);
      engine::ThreadPool pool(plan, {.pin_caller = true});  // the tool's main thread is its own to pin
      bool probe_peak_cleared = false;
      run.probe.llc_bytes = report.device.llc_bytes;
      if (o.probe) {
        const uint64_t bytes = probe_buffer_bytes(report.device.llc_bytes, take_snapshot(fs, topology).mem_available_bytes,
                                                  o.probe_bytes);
        progress.step("read-bandwidth probe, " + fmt_bytes(bytes) + ", " + fmt_threads(plan.size()));
        run.probe = probe_read_bandwidth(pool, bytes, o.probe_passes, {dominant.kernel, dominant.k});
        run.probe.llc_bytes = report.device.llc_bytes;
        // The probe's buffer is gone; keep it out of the peak the report gives for the model.
        probe_peak_cleared = reset_peak_rss();
      }
      engine::SessionParams sp;
      sp.n_ctx = context_needed(o, tests);
      sp.n_batch = o.n_batch;
      sp.kv_type = engine::parse_kv_type(o.kv_type).value_or(engine::KvType::f16);
      sp.pool = &pool;
      engine::Session session(*model, sp);
      run.model.kv_layers = engine::describe_uses(session.kv_cache().uses());
      const engine::KvSize& kv = session.kv_cache().size();
      run.model.kv_n_ctx = session.n_ctx();
      run.model.kv_bytes = kv.bytes;
      run.model.kv_full_bytes = kv.full_bytes;
      run.model.kv_cached_layers = kv.n_layers;
      run.model.kv_windowed_layers = kv.n_windowed;
      run.model.kv_windows = kv.windows;
      Workload work{std::mt19937(o.seed), cfg.n_vocab};

      run.before = take_snapshot(fs, topology);
      const std::string where = fmt_threads(plan.size());
      // The roofline's decode row (the first) gets a probe pass before each
      // counted repetition and after the last: each repetition is then set
      // against the bandwidth of its own minutes (on this README's shared VM the
      // probe moved by 10-46% within one run). The pass's buffer is freed at
      // once and kept out of the peak the report gives for the model.
      const auto first_decode = std::find_if(tests.begin(), tests.end(), [](const Planned& t) { return t.kind == "decode"; });
      const Planned* paired = o.probe && first_decode != tests.end() ? &*first_decode : nullptr;
      std::vector<double> between;
      uint64_t tests_peak = 0;
      TestClock clock(fs);
      const auto probe_between = [&] {
        clock.stop();
        progress.step("read-bandwidth probe between decode repetitions, " + where);
        const engine::MemoryUsage now = engine::memory_usage();
        if (now.known) tests_peak = std::max(tests_peak, now.peak_rss_bytes);
        between.push_back(probe_read_bandwidth(pool, run.probe.buffer_bytes, 1).gb_per_s.median);
        if (probe_peak_cleared) reset_peak_rss();
        clock.start();
      };
      clock.start();
      for (const Planned& t : tests) {
        std::vector<double> tps, ms;
        for (int rep = -o.warmup; rep < o.repetitions; ++rep) {
          if (&t == paired && rep >= 0) probe_between();
          progress.step(t.name + (t.depth ? " @d" + std::to_string(t.depth) : "") + ", " + where + ", " +
                        (rep < 0 ? "warm-up" : "rep " + std::to_string(rep + 1) + "/" + std::to_string(o.repetitions)));
          double s = 0;
          if (t.kind == "prefill") s = time_prefill(session, work, t.n_prompt, t.depth);
          if (t.kind == "decode") s = time_decode(session, work, t.n_gen, t.depth);
          if (t.kind == "mixed") s = time_mixed(session, work, t.n_prompt, t.n_gen, t.depth);
          if (rep < 0) continue;
          tps.push_back((t.n_prompt + t.n_gen) / s);
          ms.push_back(1000 * s);
        }
        if (&t == paired) probe_between();
        // What the session keeps of its recurrent states to go back to (the
        // checkpoints a regenerate or an edit restores): the most of any test.
        const engine::StateMemory states = engine::state_memory(session.kv_cache(), session.checkpoints());
        if (states.checkpoint_bytes > run.model.checkpoint_bytes) {
          run.model.checkpoint_bytes = states.checkpoint_bytes;
          run.model.n_checkpoints = states.n_checkpoints;
        }
        TestResult r;
        r.name = t.name;
        r.kind = t.kind;
        r.n_prompt = t.n_prompt;
        r.n_gen = t.n_gen;
        r.n_depth = t.depth;
        r.tokens_per_s = Stats::of(tps);
        r.ms = Stats::of(ms);
        run.tests.push_back(r);
        if (t.kind == "prefill") {  // time to first token: the same prefill, in milliseconds
          TestResult ttft;
          ttft.name = "ttft" + std::to_string(t.n_prompt);
          ttft.kind = "ttft";
          ttft.n_prompt = t.n_prompt;
          ttft.n_depth = t.depth;
          ttft.ms = r.ms;
          run.tests.push_back(ttft);
        }
      }
      clock.stop();
      run.probe.gb_per_s_between = Stats::of(between);
      if (!tests.empty()) clock.finish(plan, run);
      run.threads = threads_info(plan, &pool);
      if (o.profile) {
        progress.step("profile, " + where);
        const uint32_t n_prompt = o.n_prompt.empty() ? 0 : o.n_prompt.front();
        const uint32_t n_gen = o.n_gen.empty() ? 0 : o.n_gen.front();
        run.profile = profile_pass(session, work, n_prompt, n_gen, o.depth.front(), o.seed);
      }

      if (o.rounds > 0) {
        Sustained& su = run.sustained;
        su.rounds = o.rounds;
        su.interval_s = o.interval_s;
        su.n_gen = o.n_gen.empty() || o.n_gen.front() == 0 ? 128 : o.n_gen.front();
        const std::vector<int> cpus = worker_cpus(run.threads);  // empty: the mean over every CPU
        const auto start = Clock::now();
        for (int i = 1; i <= o.rounds; ++i) {
          progress.step("sustained round " + std::to_string(i) + "/" + std::to_string(o.rounds));
          const double s = time_decode(session, work, su.n_gen, o.depth.front());
          const Round r = take_round(i, seconds_since(start), su.n_gen / s, take_snapshot(fs, topology), cpus);
          su.per_round.push_back(r);
          progress.clear();
          std::fprintf(stderr, "bench: round %d/%d: %.2f tokens/s, hottest zone %s, mean clock %s MHz, cap %s MHz\n", i,
                       o.rounds, r.tokens_per_s, fmt_celsius(r.max_temp_c).c_str(),
                       fmt_double(r.mean_freq_mhz, 0).c_str(), fmt_double(r.mean_policy_max_mhz, 0).c_str());
          if (i < o.rounds && o.interval_s > 0) {
            std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
          }
        }
        judge_sustained(su);
      }
      run.after = take_snapshot(fs, topology);
      run.threads = threads_info(plan, &pool);
      // The larger of the load's peak and the run's (the session's KV cache and
      // scratch); the run's only when the probe's buffer could be taken out of it.
      const engine::MemoryUsage end = engine::memory_usage();
      run.model.peak_rss_bytes = after_load.known ? after_load.peak_rss_bytes : 0;
      if (end.known && (probe_peak_cleared || !o.probe)) {
        run.model.peak_rss_bytes = std::max({run.model.peak_rss_bytes, tests_peak, end.peak_rss_bytes});
      }

      // The probe again, now the tests are done (and the peak memory taken):
      // bandwidth that moved during the run counts from both ends.
      if (o.probe && !tests.empty()) {
        progress.step("read-bandwidth probe after the tests, " + fmt_threads(plan.size()));
        const uint64_t bytes = run.probe.buffer_bytes;
        run.probe.gb_per_s_after = probe_read_bandwidth(pool, bytes, o.probe_passes).gb_per_s;
      }

      // Roofline.
      RooflineInputs in;
      in.probe_gb_s = run.probe.buffer_bytes > 0 ? probe_reference_gb_s(run.probe) : kUnknown;
      in.weight_bytes_per_token = base.weight_bytes_per_token;
      const engine::KvType sp_kv_type = engine::parse_kv_type(o.kv_type).value_or(engine::KvType::f16);
      if (const TestResult* d = first_of_kind(run, "decode")) {
        in.decode_tokens_per_s = d->tokens_per_s.median;
        in.decode_samples = d->tokens_per_s.samples;
        in.probe_between = run.probe.gb_per_s_between.samples;
        const double mid = d->n_depth + d->n_gen / 2.0;
        // Every layer's cache read once at the middle depth (engine/runtime/kv_cache.h):
        // all positions so far, or no more than a windowed layer's window.
        double kv_bytes = 0;
        for (const engine::CacheUse& u : engine::cache_uses(cfg, 1, 1, sp_kv_type)) {
          const double positions = u.window != 0 ? std::min<double>(mid, u.window) : mid;
          kv_bytes += positions * static_cast<double>(u.n_layers) * static_cast<double>(u.bytes_per_position);
        }
        in.kv_bytes_per_token = static_cast<uint64_t>(kv_bytes);
      }
      if (const TestResult* p = first_of_kind(run, "prefill")) {
        in.prefill_tokens_per_s = p->tokens_per_s.median;
        in.n_prompt = p->n_prompt;
        in.prefill_ops_total = prefill_ops(base.layer_params, base.output_params, cfg.n_layer,
                                           cfg.q_dim() + cfg.n_head * cfg.head_dim_v, p->n_prompt, p->n_depth);
      }
      std::vector<PeakCore> cores;
      for (int c : worker_cpus(run.threads)) {
        PeakCore pc;
        const engine::CoreInfo* core = topology.core(c);
        if (core != nullptr) pc.core_class = engine::core_class_name(core->core_class);
        if (core != nullptr && core->max_freq_khz > 0) {
          pc.ghz = core->max_freq_khz / 1e6;
        } else {
          pc.ghz = cpuinfo_mhz(fs, c) / 1000.0;
        }
        cores.push_back(pc);
      }
      in.peak = estimate_peak(dominant.tier, dominant.lhs_type, cpu, cores);
      if (!dominant.weight_type.empty()) in.peak.method += "; kernel for " + dominant.weight_type;
      run.roofline = compute_roofline(in);
      report.runs.push_back(std::move(run));
    }
  }
  progress.clear();
  return report;
}

}  // namespace bench
