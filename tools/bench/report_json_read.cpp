// report_from_json: the JSON report read back into the data model, leniently
// (a report from an older bench lacks fields; they stay unknown).
#include <stdexcept>

#include "tools/bench/report_json.h"

namespace bench {
namespace {

double rnum(const JsonValue& v) { return v.number(kUnknown); }
uint64_t ru64(const JsonValue& v) {
  const double d = v.number(0);
  return d > 0 ? static_cast<uint64_t>(d) : 0;
}
int rint(const JsonValue& v, int fallback = 0) { return static_cast<int>(v.number(fallback)); }
std::vector<std::string> rstrings(const JsonValue& v) {
  std::vector<std::string> out;
  for (const JsonValue& s : v.items()) out.push_back(s.string());
  return out;
}

Stats read_stats(const JsonValue& v) {
  std::vector<double> samples;
  for (const JsonValue& s : v["samples"].items()) samples.push_back(s.number(kUnknown));
  Stats st = Stats::of(samples);
  if (samples.empty() && v["n"].number(0) > 0) {  // a report with summaries only
    st.n = static_cast<size_t>(v["n"].number(0));
    st.mean = rnum(v["mean"]);
    st.stddev = rnum(v["stddev"]);
    st.median = rnum(v["median"]);
    st.min = rnum(v["min"]);
    st.max = rnum(v["max"]);
  }
  return st;
}

Snapshot read_snapshot(const JsonValue& v) {
  Snapshot s;
  for (const JsonValue& c : v["cores"].items()) {
    CoreFreq f;
    f.cpu = rint(c["cpu"], -1);
    f.cur_khz = ru64(c["cur_khz"]);
    f.policy_max_khz = ru64(c["policy_max_khz"]);
    f.hw_max_khz = ru64(c["hw_max_khz"]);
    s.cores.push_back(f);
  }
  for (const JsonValue& z : v["thermal"].items()) {
    s.thermal.push_back({z["zone"].string(), z["type"].string("unknown"), rnum(z["celsius"])});
  }
  const JsonValue& p = v["power"];
  s.power.battery_status = p["battery_status"].string("unknown");
  s.power.battery_percent = rnum(p["battery_percent"]);
  s.power.charger = p["charger"].string("unknown");
  s.power.power_save = p["power_save"].string("unknown");
  s.power.platform_profile = p["platform_profile"].string("unknown");
  s.mem_available_bytes = ru64(v["mem_available_bytes"]);
  s.load_avg_1m = rnum(v["load_avg_1m"]);
  return s;
}

}  // namespace

Report report_from_json(const JsonValue& json) {
  Report r;
  r.schema = json["schema"].string("unknown");
  r.created = json["created"].string();
  const JsonValue& b = json["build"];
  r.build = {b["version"].string("unknown"), b["compiler"].string("unknown"), b["compiled_tiers"].string("unknown"),
             b["build_type"].string("unknown")};
  const JsonValue& d = json["device"];
  r.device.model = d["model"].string("unknown");
  r.device.model_source = d["model_source"].string("none");
  r.device.manufacturer = d["manufacturer"].string("unknown");
  r.device.soc = d["soc"].string("unknown");
  r.device.kernel = d["kernel"].string("unknown");
  r.device.arch = d["arch"].string("unknown");
  r.device.cpu_features = d["cpu_features"].string();
  for (const JsonValue& c : d["clusters"].items()) {
    ClusterInfo ci;
    ci.rank = c["rank"].string("big");
    ci.core_name = c["core_name"].string("unknown");
    ci.core_class = c["core_class"].string("unknown");
    for (const JsonValue& cpu : c["cpus"].items()) ci.cpus.push_back(rint(cpu));
    ci.max_freq_khz = ru64(c["max_freq_khz"]);
    ci.capacity = rint(c["capacity"]);
    ci.governor = c["governor"].string("unknown");
    ci.driver = c["driver"].string("unknown");
    r.device.clusters.push_back(std::move(ci));
  }
  r.device.topology_ranked_by = d["topology_ranked_by"].string();
  r.device.topology_notes = rstrings(d["topology_notes"]);
  r.device.mem_total_bytes = ru64(d["mem_total_bytes"]);
  r.device.llc_bytes = ru64(d["llc_bytes"]);
  r.device.transparent_huge_pages = d["transparent_huge_pages"].string("unknown");
  const JsonValue& s = json["settings"];
  r.settings.repetitions = rint(s["repetitions"]);
  r.settings.warmup = rint(s["warmup"]);
  r.settings.n_batch = rint(s["n_batch"]);
  r.settings.seed = static_cast<uint32_t>(ru64(s["seed"]));
  r.settings.command_line = s["command_line"].string();

  for (const JsonValue& rv : json["runs"].items()) {
    Run run;
    const JsonValue& m = rv["model"];
    run.model.path = m["path"].string();
    run.model.name = m["name"].string();
    run.model.arch = m["arch"].string();
    run.model.file_bytes = ru64(m["file_bytes"]);
    run.model.sha256 = m["sha256"].string("unknown");
    run.model.sha256_source = m["sha256_source"].string("skipped");
    for (const JsonValue& t : m["tensor_types"].items()) {
      run.model.tensor_types.push_back({t["type"].string(), ru64(t["tensors"]), ru64(t["bytes"])});
    }
    const JsonValue& shape = m["shape"];
    run.model.n_layer = static_cast<uint32_t>(ru64(shape["n_layer"]));
    run.model.n_embd = static_cast<uint32_t>(ru64(shape["n_embd"]));
    run.model.n_ff = static_cast<uint32_t>(ru64(shape["n_ff"]));
    run.model.n_head = static_cast<uint32_t>(ru64(shape["n_head"]));
    run.model.n_head_kv = static_cast<uint32_t>(ru64(shape["n_head_kv"]));
    run.model.n_vocab = static_cast<uint32_t>(ru64(shape["n_vocab"]));
    run.model.weight_bytes_per_token = ru64(m["weight_bytes_per_token"]);
    run.model.layer_params = ru64(m["layer_params"]);
    run.model.output_params = ru64(m["output_params"]);
    run.model.ops_isa = m["ops_isa"].string("unknown");
    for (const JsonValue& k : m["kernels"].items()) {
      KernelChoice kc;
      kc.weight_type = k["weight_type"].string();
      kc.kernel = k["kernel"].string("none");
      kc.tier = k["tier"].string("unknown");
      kc.expected_tier = k["expected_tier"].string("unknown");
      kc.fallback = k["fallback"].boolean();
      kc.rejected = rstrings(k["rejected"]);
      run.model.kernels.push_back(std::move(kc));
    }
    run.model.fallback_advice = rstrings(m["fallback_advice"]);
    run.model.kv_type = m["kv_type"].string("unknown");
    run.model.kv_layers = m["kv_layers"].string("");
    run.model.kv_n_ctx = static_cast<uint32_t>(ru64(m["kv_n_ctx"]));
    run.model.kv_bytes = ru64(m["kv_bytes"]);
    run.model.kv_full_bytes = ru64(m["kv_full_bytes"]);
    run.model.checkpoint_bytes = ru64(m["checkpoint_bytes"]);
    run.model.n_checkpoints = static_cast<uint32_t>(ru64(m["n_checkpoints"]));
    run.model.kv_cached_layers = static_cast<uint32_t>(ru64(m["kv_cached_layers"]));
    run.model.kv_windowed_layers = static_cast<uint32_t>(ru64(m["kv_windowed_layers"]));
    for (const JsonValue& w : m["kv_windows"].items()) run.model.kv_windows.push_back(static_cast<uint32_t>(ru64(w)));
    run.model.load_ms = rnum(m["load_ms"]);
    run.model.load_repack_ms = rnum(m["load_repack_ms"]);
    run.model.plain_read_ms = rnum(m["plain_read_ms"]);
    run.model.repack_cache = m["repack_cache"].string();
    run.model.rss_before_load_bytes = ru64(m["rss_before_load_bytes"]);
    run.model.rss_after_load_bytes = ru64(m["rss_after_load_bytes"]);
    run.model.repacked_bytes = ru64(m["repacked_bytes"]);
    run.model.repacked_huge_page_bytes = ru64(m["repacked_huge_page_bytes"]);
    run.model.peak_rss_bytes = ru64(m["peak_rss_bytes"]);

    const JsonValue& t = rv["threads"];
    run.threads.n_threads = rint(t["n_threads"]);
    run.threads.affinity = t["affinity"].string("unknown");
    run.threads.plan = t["plan"].string();
    run.threads.recommended = rint(t["recommended"]);
    for (const JsonValue& w : t["workers"].items()) {
      run.threads.workers.push_back({rint(w["thread"]), rint(w["cpu_asked"], -1), w["pin"].string("not pinned"),
                                     rint(w["pin_error"]), rint(w["last_cpu"], -1)});
    }
    run.threads.warnings = rstrings(t["warnings"]);

    const JsonValue& p = rv["probe"];
    run.probe.buffer_bytes = ru64(p["buffer_bytes"]);
    run.probe.llc_bytes = ru64(p["llc_bytes"]);
    run.probe.threads = rint(p["threads"]);
    run.probe.loads = p["loads"].string("unknown");
    run.probe.huge_page_bytes = ru64(p["huge_page_bytes"]);
    run.probe.gb_per_s = read_stats(p["gb_per_s"]);
    run.probe.gb_per_s_after = read_stats(p["gb_per_s_after"]);  // absent before the probe ran twice: empty
    run.probe.gb_per_s_between = read_stats(p["gb_per_s_between"]);  // absent in older reports: empty
    run.probe.kernel = p["kernel"].string("none");
    run.probe.kernel_gb_per_s = read_stats(p["kernel_gb_per_s"]);
    run.probe.kernel_share = rnum(p["kernel_share"]);

    for (const JsonValue& tv : rv["tests"].items()) {
      TestResult tr;
      tr.name = tv["name"].string();
      tr.kind = tv["kind"].string("unknown");
      tr.n_prompt = static_cast<uint32_t>(ru64(tv["n_prompt"]));
      tr.n_gen = static_cast<uint32_t>(ru64(tv["n_gen"]));
      tr.n_depth = static_cast<uint32_t>(ru64(tv["n_depth"]));
      tr.tokens_per_s = read_stats(tv["tokens_per_s"]);
      tr.ms = read_stats(tv["ms"]);
      run.tests.push_back(std::move(tr));
    }
    const JsonValue& rl = rv["roofline"];
    run.roofline.probe_gb_s = rnum(rl["probe_gb_s"]);
    run.roofline.decode_tokens_per_s = rnum(rl["decode_tokens_per_s"]);
    run.roofline.weight_bytes_per_token = ru64(rl["weight_bytes_per_token"]);
    run.roofline.kv_bytes_per_token = ru64(rl["kv_bytes_per_token"]);
    run.roofline.decode_gb_s = rnum(rl["decode_gb_s"]);
    run.roofline.decode_efficiency = rnum(rl["decode_efficiency"]);
    run.roofline.decode_efficiency_paired = read_stats(rl["decode_efficiency_paired"]);
    run.roofline.prefill_tokens_per_s = rnum(rl["prefill_tokens_per_s"]);
    run.roofline.prefill_gop_per_token = rnum(rl["prefill_gop_per_token"]);
    run.roofline.prefill_gop_s = rnum(rl["prefill_gop_s"]);
    run.roofline.peak_gop_s = rnum(rl["peak_gop_s"]);
    run.roofline.peak_method = rl["peak_method"].string();
    run.roofline.prefill_fraction = rnum(rl["prefill_fraction"]);

    const JsonValue& su = rv["sustained"];
    run.sustained.rounds = rint(su["rounds"]);
    run.sustained.interval_s = su["interval_s"].number(0);
    run.sustained.n_gen = static_cast<uint32_t>(ru64(su["n_gen"]));
    for (const JsonValue& rd : su["per_round"].items()) {
      Round round;
      round.index = rint(rd["index"]);
      round.elapsed_s = rd["elapsed_s"].number(0);
      round.tokens_per_s = rnum(rd["tokens_per_s"]);
      round.max_temp_c = rnum(rd["max_temp_c"]);
      round.mean_freq_mhz = rnum(rd["mean_freq_mhz"]);
      round.mean_policy_max_mhz = rnum(rd["mean_policy_max_mhz"]);
      run.sustained.per_round.push_back(round);
    }
    run.sustained.verdict = su["verdict"].string("not run");
    run.sustained.evidence = su["evidence"].string();
    run.before = read_snapshot(rv["before"]);
    run.after = read_snapshot(rv["after"]);
    run.cpu_share = rnum(rv["cpu_share"]);
    run.steal_share = rnum(rv["steal_share"]);
    r.runs.push_back(std::move(run));
  }
  return r;
}

Report read_report_file(const std::string& path) {
  const JsonValue json = JsonValue::parse_file(path);
  if (!json.is_object() || json.find("runs") == nullptr) {
    throw std::runtime_error(path + ": not a bench JSON report (no \"runs\"; write one with -o json)");
  }
  return report_from_json(json);
}

}  // namespace bench
