#include "tools/bench/report_json.h"

#include "tools/common/json_writer.h"

namespace bench {
namespace {

using tools::JsonWriter;

void num(JsonWriter& j, const char* key, double v) {
  j.key(key);
  if (known(v)) {
    j.value(v);
  } else {
    j.null();
  }
}
void u64(JsonWriter& j, const char* key, uint64_t v) { j.key(key).value(v); }
void i64(JsonWriter& j, const char* key, int64_t v) { j.key(key).value(v); }
void str(JsonWriter& j, const char* key, const std::string& v) { j.key(key).value(v); }

void strings(JsonWriter& j, const char* key, const std::vector<std::string>& v) {
  j.key(key).begin_array();
  for (const std::string& s : v) j.value(s);
  j.end_array();
}
void ints(JsonWriter& j, const char* key, const std::vector<int>& v) {
  j.key(key).begin_array();
  for (int x : v) j.value(x);
  j.end_array();
}

void write_stats(JsonWriter& j, const char* key, const Stats& s) {
  j.key(key).begin_object();
  u64(j, "n", s.n);
  const bool some = s.n > 0;
  num(j, "mean", some ? s.mean : kUnknown);
  num(j, "stddev", some ? s.stddev : kUnknown);
  num(j, "median", some ? s.median : kUnknown);
  num(j, "min", some ? s.min : kUnknown);
  num(j, "max", some ? s.max : kUnknown);
  j.key("samples").begin_array();
  for (double v : s.samples) j.value(v);
  j.end_array();
  j.end_object();
}

void write_snapshot(JsonWriter& j, const char* key, const Snapshot& s) {
  j.key(key).begin_object();
  j.key("cores").begin_array();
  for (const CoreFreq& f : s.cores) {
    j.begin_object();
    i64(j, "cpu", f.cpu);
    u64(j, "cur_khz", f.cur_khz);
    u64(j, "policy_max_khz", f.policy_max_khz);
    u64(j, "hw_max_khz", f.hw_max_khz);
    j.end_object();
  }
  j.end_array();
  j.key("thermal").begin_array();
  for (const ThermalZone& z : s.thermal) {
    j.begin_object();
    str(j, "zone", z.zone);
    str(j, "type", z.type);
    num(j, "celsius", z.celsius);
    j.end_object();
  }
  j.end_array();
  j.key("power").begin_object();
  str(j, "battery_status", s.power.battery_status);
  num(j, "battery_percent", s.power.battery_percent);
  str(j, "charger", s.power.charger);
  str(j, "power_save", s.power.power_save);
  str(j, "platform_profile", s.power.platform_profile);
  j.end_object();
  u64(j, "mem_available_bytes", s.mem_available_bytes);
  num(j, "load_avg_1m", s.load_avg_1m);
  j.end_object();
}

void write_device(JsonWriter& j, const DeviceInfo& d) {
  j.key("device").begin_object();
  str(j, "model", d.model);
  str(j, "model_source", d.model_source);
  str(j, "manufacturer", d.manufacturer);
  str(j, "soc", d.soc);
  str(j, "kernel", d.kernel);
  str(j, "arch", d.arch);
  str(j, "cpu_features", d.cpu_features);
  j.key("clusters").begin_array();
  for (const ClusterInfo& c : d.clusters) {
    j.begin_object();
    str(j, "rank", c.rank);
    str(j, "core_name", c.core_name);
    str(j, "core_class", c.core_class);
    ints(j, "cpus", c.cpus);
    u64(j, "max_freq_khz", c.max_freq_khz);
    i64(j, "capacity", c.capacity);
    str(j, "governor", c.governor);
    str(j, "driver", c.driver);
    j.end_object();
  }
  j.end_array();
  str(j, "topology_ranked_by", d.topology_ranked_by);
  strings(j, "topology_notes", d.topology_notes);
  u64(j, "mem_total_bytes", d.mem_total_bytes);
  u64(j, "llc_bytes", d.llc_bytes);
  str(j, "transparent_huge_pages", d.transparent_huge_pages);
  j.end_object();
}

void write_model(JsonWriter& j, const ModelInfo& m) {
  j.key("model").begin_object();
  str(j, "path", m.path);
  str(j, "name", m.name);
  str(j, "arch", m.arch);
  u64(j, "file_bytes", m.file_bytes);
  str(j, "sha256", m.sha256);
  str(j, "sha256_source", m.sha256_source);
  j.key("tensor_types").begin_array();
  for (const TensorTypeBytes& t : m.tensor_types) {
    j.begin_object();
    str(j, "type", t.type);
    u64(j, "tensors", t.tensors);
    u64(j, "bytes", t.bytes);
    j.end_object();
  }
  j.end_array();
  j.key("shape").begin_object();
  u64(j, "n_layer", m.n_layer);
  u64(j, "n_embd", m.n_embd);
  u64(j, "n_ff", m.n_ff);
  u64(j, "n_head", m.n_head);
  u64(j, "n_head_kv", m.n_head_kv);
  u64(j, "n_vocab", m.n_vocab);
  j.end_object();
  u64(j, "weight_bytes_per_token", m.weight_bytes_per_token);
  u64(j, "layer_params", m.layer_params);
  u64(j, "output_params", m.output_params);
  str(j, "ops_isa", m.ops_isa);
  j.key("kernels").begin_array();
  for (const KernelChoice& k : m.kernels) {
    j.begin_object();
    str(j, "weight_type", k.weight_type);
    str(j, "kernel", k.kernel);
    str(j, "tier", k.tier);
    str(j, "expected_tier", k.expected_tier);
    j.key("fallback").value(k.fallback);
    strings(j, "rejected", k.rejected);
    j.end_object();
  }
  j.end_array();
  strings(j, "fallback_advice", m.fallback_advice);
  str(j, "kv_type", m.kv_type);
  str(j, "kv_layers", m.kv_layers);
  u64(j, "kv_n_ctx", m.kv_n_ctx);
  u64(j, "kv_bytes", m.kv_bytes);
  u64(j, "kv_full_bytes", m.kv_full_bytes);
  u64(j, "checkpoint_bytes", m.checkpoint_bytes);
  u64(j, "n_checkpoints", m.n_checkpoints);
  u64(j, "kv_cached_layers", m.kv_cached_layers);
  u64(j, "kv_windowed_layers", m.kv_windowed_layers);
  j.key("kv_windows").begin_array();
  for (uint32_t w : m.kv_windows) j.value(uint64_t{w});
  j.end_array();
  num(j, "load_ms", m.load_ms);
  num(j, "load_repack_ms", m.load_repack_ms);
  num(j, "plain_read_ms", m.plain_read_ms);
  str(j, "repack_cache", m.repack_cache);
  u64(j, "rss_before_load_bytes", m.rss_before_load_bytes);
  u64(j, "rss_after_load_bytes", m.rss_after_load_bytes);
  u64(j, "peak_rss_bytes", m.peak_rss_bytes);
  u64(j, "repacked_bytes", m.repacked_bytes);
  u64(j, "repacked_huge_page_bytes", m.repacked_huge_page_bytes);
  j.end_object();
}

void write_threads(JsonWriter& j, const ThreadsInfo& t) {
  j.key("threads").begin_object();
  i64(j, "n_threads", t.n_threads);
  str(j, "affinity", t.affinity);
  str(j, "plan", t.plan);
  i64(j, "recommended", t.recommended);
  j.key("workers").begin_array();
  for (const WorkerInfo& w : t.workers) {
    j.begin_object();
    i64(j, "thread", w.thread);
    i64(j, "cpu_asked", w.cpu_asked);
    str(j, "pin", w.pin);
    i64(j, "pin_error", w.pin_error);
    i64(j, "last_cpu", w.last_cpu);
    j.end_object();
  }
  j.end_array();
  strings(j, "warnings", t.warnings);
  j.end_object();
}

void write_test(JsonWriter& j, const TestResult& t) {
  j.begin_object();
  str(j, "name", t.name);
  str(j, "kind", t.kind);
  u64(j, "n_prompt", t.n_prompt);
  u64(j, "n_gen", t.n_gen);
  u64(j, "n_depth", t.n_depth);
  write_stats(j, "tokens_per_s", t.tokens_per_s);
  write_stats(j, "ms", t.ms);
  j.end_object();
}

void write_roofline(JsonWriter& j, const Roofline& r) {
  j.key("roofline").begin_object();
  num(j, "probe_gb_s", r.probe_gb_s);
  num(j, "decode_tokens_per_s", r.decode_tokens_per_s);
  u64(j, "weight_bytes_per_token", r.weight_bytes_per_token);
  u64(j, "kv_bytes_per_token", r.kv_bytes_per_token);
  num(j, "decode_gb_s", r.decode_gb_s);
  num(j, "decode_efficiency", r.decode_efficiency);
  write_stats(j, "decode_efficiency_paired", r.decode_efficiency_paired);
  num(j, "prefill_tokens_per_s", r.prefill_tokens_per_s);
  num(j, "prefill_gop_per_token", r.prefill_gop_per_token);
  num(j, "prefill_gop_s", r.prefill_gop_s);
  num(j, "peak_gop_s", r.peak_gop_s);
  str(j, "peak_method", r.peak_method);
  num(j, "prefill_fraction", r.prefill_fraction);
  j.end_object();
}

void write_sustained(JsonWriter& j, const Sustained& s) {
  j.key("sustained").begin_object();
  i64(j, "rounds", s.rounds);
  num(j, "interval_s", s.interval_s);
  u64(j, "n_gen", s.n_gen);
  j.key("per_round").begin_array();
  for (const Round& r : s.per_round) {
    j.begin_object();
    i64(j, "index", r.index);
    num(j, "elapsed_s", r.elapsed_s);
    num(j, "tokens_per_s", r.tokens_per_s);
    num(j, "max_temp_c", r.max_temp_c);
    num(j, "mean_freq_mhz", r.mean_freq_mhz);
    num(j, "mean_policy_max_mhz", r.mean_policy_max_mhz);
    j.end_object();
  }
  j.end_array();
  str(j, "verdict", s.verdict);
  str(j, "evidence", s.evidence);
  j.end_object();
}

void write_run(JsonWriter& j, const Run& r) {
  j.begin_object();
  write_model(j, r.model);
  write_threads(j, r.threads);
  j.key("probe").begin_object();
  u64(j, "buffer_bytes", r.probe.buffer_bytes);
  u64(j, "llc_bytes", r.probe.llc_bytes);
  i64(j, "threads", r.probe.threads);
  str(j, "loads", r.probe.loads);
  u64(j, "huge_page_bytes", r.probe.huge_page_bytes);
  write_stats(j, "gb_per_s", r.probe.gb_per_s);
  write_stats(j, "gb_per_s_after", r.probe.gb_per_s_after);
  write_stats(j, "gb_per_s_between", r.probe.gb_per_s_between);
  str(j, "kernel", r.probe.kernel);
  write_stats(j, "kernel_gb_per_s", r.probe.kernel_gb_per_s);
  num(j, "kernel_share", r.probe.kernel_share);
  j.end_object();
  j.key("tests").begin_array();
  for (const TestResult& t : r.tests) write_test(j, t);
  j.end_array();
  write_roofline(j, r.roofline);
  write_sustained(j, r.sustained);
  if (!r.profile.empty()) {  // only with --profile: reports without it keep their keys
    j.key("profile").begin_array();
    for (const ProfileRow& p : r.profile) {
      j.begin_object();
      str(j, "op", p.op);
      num(j, "prefill_ms_per_token", p.prefill_ms_per_token);
      num(j, "decode_ms_per_token", p.decode_ms_per_token);
      j.end_object();
    }
    j.end_array();
  }
  write_snapshot(j, "before", r.before);
  write_snapshot(j, "after", r.after);
  num(j, "cpu_share", r.cpu_share);
  num(j, "steal_share", r.steal_share);
  j.end_object();
}

void write_header(JsonWriter& j, const Report& r) {
  str(j, "schema", r.schema);
  str(j, "created", r.created);
  j.key("build").begin_object();
  str(j, "version", r.build.version);
  str(j, "compiler", r.build.compiler);
  str(j, "compiled_tiers", r.build.compiled_tiers);
  str(j, "build_type", r.build.build_type);
  j.end_object();
  write_device(j, r.device);
  j.key("settings").begin_object();
  i64(j, "repetitions", r.settings.repetitions);
  i64(j, "warmup", r.settings.warmup);
  i64(j, "n_batch", r.settings.n_batch);
  u64(j, "seed", r.settings.seed);
  str(j, "command_line", r.settings.command_line);
  j.end_object();
}

}  // namespace

std::string report_json(const Report& report, bool pretty) {
  JsonWriter j;
  j.begin_object();
  write_header(j, report);
  j.key("runs").begin_array();
  for (const Run& r : report.runs) write_run(j, r);
  j.end_array();
  j.end_object();
  return pretty ? indent_json(j.str()) : j.str();
}

std::string report_jsonl(const Report& report) {
  std::string out;
  {
    JsonWriter j;
    j.begin_object();
    str(j, "type", "environment");
    write_header(j, report);
    j.end_object();
    out += j.str() + "\n";
  }
  for (const Run& run : report.runs) {
    for (const TestResult& t : run.tests) {
      JsonWriter j;
      j.begin_object();
      str(j, "type", "result");
      str(j, "device", report.device.model);
      str(j, "model", run.model.path);
      str(j, "model_sha256", run.model.sha256);
      u64(j, "model_bytes", run.model.file_bytes);
      i64(j, "n_threads", run.threads.n_threads);
      ints(j, "cpus", worker_cpus(run.threads));
      str(j, "test", t.name);
      str(j, "kind", t.kind);
      u64(j, "n_prompt", t.n_prompt);
      u64(j, "n_gen", t.n_gen);
      u64(j, "n_depth", t.n_depth);
      write_stats(j, "tokens_per_s", t.tokens_per_s);
      write_stats(j, "ms", t.ms);
      num(j, "probe_gb_s", run.roofline.probe_gb_s);
      j.end_object();
      out += j.str() + "\n";
    }
  }
  return out;
}

}  // namespace bench
