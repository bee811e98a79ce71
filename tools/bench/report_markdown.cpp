#include "tools/bench/report_markdown.h"

#include <algorithm>
#include <sstream>

#include "engine/runtime/kv_cache.h"
#include "engine/support/memory.h"
#include "tools/bench/text_util.h"
#include "tools/common/plural.h"

namespace bench {
namespace {

std::string stats_cell(const Stats& s, int decimals) {
  if (s.empty()) return "-";
  // One sample has no spread to show: "± 0.00" would claim a precision it lacks.
  if (s.n == 1) return fmt_double(s.mean, decimals) + " (n=1)";
  return fmt_double(s.mean, decimals) + " ± " + fmt_double(s.stddev, decimals);
}

std::string samples_cell(const Stats& s, int decimals) {
  std::vector<std::string> parts;
  for (double v : s.samples) parts.push_back(fmt_double(v, decimals));
  return parts.empty() ? "-" : join(parts, " ");
}

// "KV cache of 32768 positions: 150.0 MiB (f16; 22 of 26 layers windowed to
// 512 positions; a full cache would be 832.0 MiB) = 22 windowed attention
// layers x 1023.0 KiB + ...", or the type and layers alone from an older report.
std::string kv_cell(const ModelInfo& m) {
  std::string s = "KV cache ";
  if (m.kv_n_ctx == 0) return s + m.kv_type + (m.kv_layers.empty() ? "" : " (" + m.kv_layers + ")");
  engine::KvSize size;
  size.type = engine::parse_kv_type(m.kv_type).value_or(engine::KvType::f16);
  size.bytes = m.kv_bytes;
  size.full_bytes = m.kv_full_bytes;
  size.n_layers = m.kv_cached_layers;
  size.n_windowed = m.kv_windowed_layers;
  size.windows = m.kv_windows;
  s += "of " + std::to_string(m.kv_n_ctx) + " positions: " + size.describe();
  if (!m.kv_layers.empty()) s += " = " + m.kv_layers;
  if (m.n_checkpoints != 0) {
    s += "; checkpoints of the recurrent states, at most " + engine::format_bytes(m.checkpoint_bytes) + " (" +
         tools::plural(m.n_checkpoints, "copy", "copies") + ")";
  }
  return s;
}

std::string short_model(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void results_table(std::ostringstream& o, const Report& r) {
  o << "## Results\n\n"
    << "Prefill, decode and time to first token are separate rows; " << tools::plural(r.settings.warmup, "warm-up run")
    << " per test not counted; " << tools::plural(r.settings.repetitions, "repetition")
    << "; random token ids (no tokenizer, no sampling in the timed part).\n\n"
    << "| model | threads | test | kind | unit | mean ± sd | median | min | max | samples |\n"
    << "|---|---:|---|---|---|---:|---:|---:|---:|---|\n";
  for (const Run& run : r.runs) {
    for (const TestResult& t : run.tests) {
      const bool ms = t.kind == "ttft";
      const Stats& s = ms ? t.ms : t.tokens_per_s;
      const int dec = ms ? 1 : 2;
      o << "| " << short_model(run.model.path) << " | " << run.threads.n_threads << " | " << t.name
        << (t.n_depth ? " @d" + std::to_string(t.n_depth) : "") << " | " << t.kind << " | " << (ms ? "ms" : "t/s")
        << " | " << stats_cell(s, dec) << " | " << fmt_double(s.median, dec) << " | " << fmt_double(s.min, dec) << " | "
        << fmt_double(s.max, dec) << " | " << samples_cell(s, dec) << " |\n";
    }
  }
  o << "\n";
}

void clocks_table(std::ostringstream& o, const Run& run) {
  const std::vector<int> workers = worker_cpus(run.threads);
  o << "| cpu | worker | cur before | cur after | cap before | cap after | hardware max |\n"
    << "|---:|---|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < run.before.cores.size(); ++i) {
    const CoreFreq& b = run.before.cores[i];
    const CoreFreq* a = i < run.after.cores.size() ? &run.after.cores[i] : nullptr;
    const bool w = std::find(workers.begin(), workers.end(), b.cpu) != workers.end();
    o << "| " << b.cpu << " | " << (w ? "yes" : "") << " | " << fmt_mhz(b.cur_khz) << " | "
      << (a ? fmt_mhz(a->cur_khz) : "unknown") << " | " << fmt_mhz(b.policy_max_khz) << " | "
      << (a ? fmt_mhz(a->policy_max_khz) : "unknown") << " | " << fmt_mhz(b.hw_max_khz) << " |\n";
  }
  o << "\n";
}

void thermal_table(std::ostringstream& o, const Run& run) {
  if (run.before.thermal.empty() && run.after.thermal.empty()) {
    o << "Thermal zones: none readable.\n\n";
    return;
  }
  o << "| zone | type | before | after |\n|---|---|---:|---:|\n";
  for (size_t i = 0; i < run.before.thermal.size(); ++i) {
    const ThermalZone& b = run.before.thermal[i];
    double after = kUnknown;
    for (const ThermalZone& z : run.after.thermal) {
      if (z.zone == b.zone) after = z.celsius;
    }
    o << "| " << b.zone << " | " << b.type << " | " << fmt_celsius(b.celsius) << " | " << fmt_celsius(after) << " |\n";
  }
  o << "\n";
}

void roofline_block(std::ostringstream& o, const Run& run) {
  const Roofline& rl = run.roofline;
  o << "Roofline:\n\n";
  if (run.probe.buffer_bytes > 0) {
    const ProbeResult& p = run.probe;
    o << "- read bandwidth (probe): " << fmt_double(rl.probe_gb_s) << " GB/s median of "
      << tools::plural(static_cast<int64_t>(p.gb_per_s.n + p.gb_per_s_after.n), "pass", "passes");
    if (p.gb_per_s_after.empty()) {
      o << " (min " << fmt_double(p.gb_per_s.min) << ", max " << fmt_double(p.gb_per_s.max) << ")";
    } else {
      o << " (" << fmt_double(p.gb_per_s.median) << " before the tests, " << fmt_double(p.gb_per_s_after.median)
        << " after)";
    }
    if (!p.gb_per_s_between.empty()) {
      o << ", and " << tools::plural(static_cast<int64_t>(p.gb_per_s_between.n), "pass", "passes")
        << " between the decode repetitions (" << fmt_double(p.gb_per_s_between.min) << " to "
        << fmt_double(p.gb_per_s_between.max) << ")";
    }
    o << ", " << fmt_bytes(p.buffer_bytes) << " buffer (last-level cache " << fmt_bytes(p.llc_bytes) << "), "
      << fmt_threads(p.threads) << " of the same pool, " << p.loads << " loads, " << fmt_bytes_or_none(p.huge_page_bytes)
      << " in 2 MiB pages\n";
    if (probe_drift(p) > kProbeDriftNote) {
      o << "- the bandwidth moved by " << fmt_percent(probe_drift(p))
        << " between the probe before and after the tests (other load on the memory system, or throttling): "
        << (rl.decode_efficiency_paired.empty()
                ? "the decode efficiency below is that uncertain\n"
                : "the decode efficiency below sets each repetition against the passes around it\n");
    }
  } else {
    o << "- read bandwidth (probe): not run\n";
  }
  if (known(rl.decode_tokens_per_s)) {
    o << "- decode: " << fmt_double(rl.decode_tokens_per_s) << " t/s x " << fmt_bytes(rl.weight_bytes_per_token)
      << " of weights per token = " << fmt_double(rl.decode_gb_s) << " GB/s = **" << fmt_percent(rl.decode_efficiency)
      << " of the probe**";
    if (rl.kv_bytes_per_token > 0) o << " (plus " << fmt_bytes(rl.kv_bytes_per_token) << " of KV cache per token)";
    o << "\n";
    if (!rl.decode_efficiency_paired.empty()) {
      const Stats& e = rl.decode_efficiency_paired;
      // One repetition has one figure, not a range with a median.
      const std::string figures =
          e.n == 1 ? fmt_percent(e.median)
                   : fmt_percent(e.min) + " to " + fmt_percent(e.max) + ", median " + fmt_percent(e.median);
      o << "  - "
        << (e.n == 1 ? "the repetition" : "each of the " + tools::plural(static_cast<int64_t>(e.n), "repetition"))
        << " against the probe passes right before and after it: " << figures
        << " (the figure above); against the median of every pass " << fmt_percent(rl.decode_gb_s / rl.probe_gb_s)
        << "\n";
    }
    const ProbeResult& p = run.probe;
    if (known(p.kernel_share)) {
      o << "  - the decode kernel alone (" << p.kernel << ", one row of activations over the probe's buffer, after each "
        << "pass before the tests): " << fmt_double(p.kernel_gb_per_s.median) << " GB/s, " << fmt_percent(p.kernel_share)
        << " of the pass before it (median); the rest of decode's shortfall is outside the matrix stream (norms, "
           "attention, activation quantization, pool waits: --profile)\n";
    }
  }
  if (known(rl.prefill_tokens_per_s)) {
    o << "- prefill: " << fmt_double(rl.prefill_tokens_per_s) << " t/s x " << fmt_sig(rl.prefill_gop_per_token)
      << " GOP per token = " << fmt_sig(rl.prefill_gop_s) << " GOP/s = **" << fmt_percent(rl.prefill_fraction)
      << " of the peak estimate** (" << rl.peak_method << ")\n";
  }
  o << "\n";
}

void profile_block(std::ostringstream& o, const Run& run) {
  if (run.profile.empty()) return;
  const ProfileRow& total = run.profile.back();  // the "total" row
  auto cell = [](double ms, double all) {
    if (!known(ms)) return std::string("-");
    return fmt_double(ms, 3) + " (" + (known(all) && all > 0 ? fmt_percent(ms / all) : std::string("-")) + ")";
  };
  o << "Where the time goes (--profile; ms per token, share of the total):\n\n"
    << "| operation | prefill | decode |\n|---|---:|---:|\n";
  for (const ProfileRow& r : run.profile) {
    o << "| " << r.op << " | " << cell(r.prefill_ms_per_token, total.prefill_ms_per_token) << " | "
      << cell(r.decode_ms_per_token, total.decode_ms_per_token) << " |\n";
  }
  o << "\n";
}

void sustained_block(std::ostringstream& o, const Sustained& s) {
  if (s.rounds == 0) return;
  o << "Sustained decode (" << tools::plural(s.rounds, "round") << " of " << tools::plural(s.n_gen, "token") << ", "
    << fmt_double(s.interval_s, 1) << " s apart): **" << s.verdict << "** — " << s.evidence << "\n\n"
    << "| round | elapsed s | t/s | hottest zone | mean clock | clock cap |\n|---:|---:|---:|---:|---:|---:|\n";
  for (const Round& r : s.per_round) {
    o << "| " << r.index << " | " << fmt_double(r.elapsed_s, 1) << " | " << fmt_double(r.tokens_per_s) << " | "
      << fmt_celsius(r.max_temp_c) << " | " << fmt_double(r.mean_freq_mhz, 0) << " | "
      << fmt_double(r.mean_policy_max_mhz, 0) << " |\n";
  }
  o << "\n";
}

}  // namespace

std::string clusters_line(const DeviceInfo& d) {
  std::vector<std::string> parts;
  for (const ClusterInfo& c : d.clusters) {
    parts.push_back(c.rank + " cpu " + cpu_list_text(c.cpus) + " " + c.core_name + ", max " + fmt_mhz(c.max_freq_khz) +
                    ", governor " + c.governor + (c.driver != "unknown" ? " (" + c.driver + ")" : ""));
  }
  return parts.empty() ? "unknown" : join(parts, "; ");
}

std::string kernels_line(const ModelInfo& m) {
  std::vector<std::string> parts;
  for (const KernelChoice& k : m.kernels) {
    std::string s = k.weight_type + ": " + k.kernel + " (" + k.tier + ")";
    if (k.fallback) s += " **FALLBACK** (expected " + k.expected_tier + ")";
    if (!k.rejected.empty()) s += ", rejected: " + join(k.rejected, ", ");
    parts.push_back(s);
  }
  parts.push_back("row operations: " + m.ops_isa);
  return join(parts, "; ");
}

std::string tensor_types_line(const ModelInfo& m) {
  std::vector<std::string> parts;
  for (const TensorTypeBytes& t : m.tensor_types) {
    parts.push_back(t.type + " x" + std::to_string(t.tensors) + " " + fmt_bytes(t.bytes));
  }
  return parts.empty() ? "unknown" : join(parts, ", ");
}

std::string workers_line(const ThreadsInfo& t) {
  std::vector<std::string> parts;
  for (const WorkerInfo& w : t.workers) {
    std::string s = "t" + std::to_string(w.thread) + " ";
    s += w.cpu_asked >= 0 ? "cpu " + std::to_string(w.cpu_asked) + " " + w.pin : w.pin;
    if (w.pin == "failed") s += " (errno " + std::to_string(w.pin_error) + ")";
    s += ", ran on cpu " + (w.last_cpu >= 0 ? std::to_string(w.last_cpu) : std::string("unknown"));
    parts.push_back(s);
  }
  return parts.empty() ? "unknown" : join(parts, "; ");
}

std::string device_name(const DeviceInfo& d) {
  if (d.model_source == "none") return "not identified (no getprop, build.prop, device tree or DMI)";
  return d.model + " (from " + d.model_source + ")";
}

std::string power_line(const PowerState& p) {
  std::string s = "battery " + p.battery_status;
  if (known(p.battery_percent)) s += " " + fmt_double(p.battery_percent, 0) + "%";
  s += ", charger " + p.charger + ", battery saver " + p.power_save;
  if (p.platform_profile != "unknown") s += ", platform profile " + p.platform_profile;
  return s;
}

std::string report_markdown(const Report& r) {
  std::ostringstream o;
  const DeviceInfo& d = r.device;
  o << "# bench report: " << d.model << "\n\n## Environment\n\n| | |\n|---|---|\n"
    << "| device | " << device_name(d) << ", manufacturer " << d.manufacturer << ", SoC " << d.soc << " |\n"
    << "| OS kernel | " << d.kernel << " |\n"
    << "| engine | " << r.build.version << ", " << r.build.compiler << ", " << r.build.build_type
    << ", compiled tiers: " << r.build.compiled_tiers << " |\n"
    << "| CPU features | " << d.cpu_features << " |\n"
    << "| clusters | " << clusters_line(d) << " (ranked by " << d.topology_ranked_by << ") |\n";
  if (!d.topology_notes.empty()) o << "| topology notes | " << join(d.topology_notes, "; ") << " |\n";
  o << "| memory | MemTotal " << fmt_bytes(d.mem_total_bytes);
  if (!r.runs.empty()) o << ", MemAvailable " << fmt_bytes(r.runs.front().before.mem_available_bytes) << " before the first run";
  o << " |\n| last-level cache | " << fmt_bytes(d.llc_bytes) << " |\n"
    << "| transparent huge pages | " << d.transparent_huge_pages << " |\n";
  if (!r.runs.empty()) o << "| power | " << power_line(r.runs.front().before.power) << " |\n";
  o << "| command | `" << r.settings.command_line << "` |\n| created | " << r.created << " |\n\n";

  std::vector<std::string> models_seen;
  for (const Run& run : r.runs) {
    const ModelInfo& m = run.model;
    if (std::find(models_seen.begin(), models_seen.end(), m.path) != models_seen.end()) continue;
    models_seen.push_back(m.path);
    o << "## Model " << short_model(m.path) << "\n\n| | |\n|---|---|\n"
      << "| file | " << m.path << ", " << fmt_bytes(m.file_bytes) << " (" << m.file_bytes << " bytes) |\n"
      << "| SHA-256 | " << m.sha256 << " (" << m.sha256_source << ") |\n"
      << "| shape | " << m.arch << (m.name.empty() ? "" : " '" + m.name + "'") << ", "
      << tools::plural(m.n_layer, "layer") << ", n_embd " << m.n_embd << ", n_ff " << m.n_ff << ", heads " << m.n_head
      << "/" << m.n_head_kv << " kv, vocab " << m.n_vocab << " |\n"
      << "| tensor types | " << tensor_types_line(m) << " |\n"
      << "| kernels | " << kernels_line(m) << " |\n";
    if (!m.fallback_advice.empty()) o << "| advice | " << join(m.fallback_advice, "<br>") << " |\n";
    o << "| memory | resident after load " << fmt_bytes(m.rss_after_load_bytes);
    if (const double ratio = load_rss_ratio(m); known(ratio)) {
      o << " (weights " << fmt_double(ratio) << "x the file)";
    }
    o << ", peak " << fmt_bytes(m.peak_rss_bytes) << "; load " << fmt_double(m.load_ms, 0) << " ms";
    if (known(m.load_repack_ms)) o << " (repack " << fmt_double(m.load_repack_ms, 0) << " ms)";
    if (!m.repack_cache.empty() && m.repack_cache != "off") o << ", repack cache " << m.repack_cache;
    if (known(m.plain_read_ms)) o << ", a plain read of the file " << fmt_double(m.plain_read_ms, 0) << " ms";
    o << "; " << kv_cell(m);
    if (m.repacked_bytes > 0) {
      o << "; repacked weights " << fmt_bytes(m.repacked_bytes) << ", "
        << fmt_bytes_or_none(m.repacked_huge_page_bytes) << " of them in 2 MiB pages";
    }
    o << " |\n\n";
  }

  results_table(o, r);

  int index = 0;
  for (const Run& run : r.runs) {
    o << "## Run " << ++index << ": " << short_model(run.model.path) << ", " << fmt_threads(run.threads.n_threads) << "\n\n"
      << "Threads: " << run.threads.plan << " (recommended here: " << run.threads.recommended << ")\n\n"
      << "Workers: " << workers_line(run.threads) << "\n\n";
    for (const std::string& w : run.threads.warnings) o << "> WARNING: " << w << "\n\n";
    o << "CPU share during the tests: " << fmt_percent(run.cpu_share) << " of " << fmt_threads(run.threads.n_threads)
      << " (below 100%: other processes, or a hypervisor, took the cores)";
    // A phone's /proc/stat counts no steal; a virtual machine's says how much of
    // the shortfall the hypervisor took.
    if (known(run.steal_share) && run.steal_share >= 0.005) {
      o << "; steal time " << fmt_percent(run.steal_share) << " of these CPUs' time (the hypervisor ran other guests on them)";
    }
    o << "; load average " << fmt_double(run.before.load_avg_1m)
      << " before, " << fmt_double(run.after.load_avg_1m) << " after\n\n";
    roofline_block(o, run);
    profile_block(o, run);
    o << "Clocks before and after (MHz; cap = scaling_max_freq):\n\n";
    clocks_table(o, run);
    thermal_table(o, run);
    o << "Power after: " << power_line(run.after.power) << "; MemAvailable " << fmt_bytes(run.after.mem_available_bytes)
      << "\n\n";
    sustained_block(o, run.sustained);
  }
  return o.str();
}

}  // namespace bench
