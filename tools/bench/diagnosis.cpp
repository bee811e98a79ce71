#include "tools/bench/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "kernels/tier.h"
#include "tools/bench/text_util.h"

namespace bench {
namespace {

struct Side {
  const Report& report;
  const Run& run;
  char name;
};

std::string fx(double v) { return fmt_double(v, 2); }

// ---- 1 different_file ----

std::string types_text(const ModelInfo& m) {
  std::vector<std::string> parts;
  for (const TensorTypeBytes& t : m.tensor_types) {
    parts.push_back(t.type + " x" + std::to_string(t.tensors) + " (" + fmt_bytes(t.bytes) + ")");
  }
  return parts.empty() ? "unknown" : join(parts, ", ");
}

std::optional<Finding> different_file(const Side& a, const Side& b) {
  const ModelInfo& ma = a.run.model;
  const ModelInfo& mb = b.run.model;
  Finding f;
  const bool hashes = ma.sha256 != "unknown" && mb.sha256 != "unknown";
  if (hashes && ma.sha256 != mb.sha256) {
    f.evidence.push_back("sha256: A " + ma.sha256.substr(0, 16) + "... (" + fmt_bytes(ma.file_bytes) + "), B " +
                         mb.sha256.substr(0, 16) + "... (" + fmt_bytes(mb.file_bytes) + ")");
  } else if (!hashes && ma.file_bytes != mb.file_bytes) {
    f.evidence.push_back("file size: A " + fmt_bytes(ma.file_bytes) + ", B " + fmt_bytes(mb.file_bytes) +
                         " (no SHA-256 on one side)");
  }
  std::map<std::string, uint64_t> ta, tb;
  for (const TensorTypeBytes& t : ma.tensor_types) ta[t.type] = t.bytes;
  for (const TensorTypeBytes& t : mb.tensor_types) tb[t.type] = t.bytes;
  if (!ta.empty() && !tb.empty() && ta != tb) {
    f.evidence.push_back("tensor types: A " + types_text(ma) + "; B " + types_text(mb));
  }
  if (f.evidence.empty()) return std::nullopt;
  if (ma.weight_bytes_per_token != mb.weight_bytes_per_token && ma.weight_bytes_per_token && mb.weight_bytes_per_token) {
    f.evidence.push_back("weights read per token: A " + fmt_bytes(ma.weight_bytes_per_token) + ", B " +
                         fmt_bytes(mb.weight_bytes_per_token));
    f.side = ma.weight_bytes_per_token > mb.weight_bytes_per_token ? 'A' : 'B';
  } else if (ma.file_bytes != mb.file_bytes) {
    f.side = ma.file_bytes > mb.file_bytes ? 'A' : 'B';
  }
  f.summary = "the two runs used different model files: they did different work";
  return f;
}

// ---- 2 kernel_fallback ----

int tier_rank(const std::string& name) {
  const auto t = kernels::parse_tier(name);
  return t ? static_cast<int>(*t) : -1;
}

std::string kernel_text(const KernelChoice& k) {
  std::string s = k.kernel + " (" + k.tier;
  if (k.fallback) s += "; FALLBACK, this CPU should get " + k.expected_tier;
  if (!k.rejected.empty()) s += "; rejected: " + join(k.rejected, ", ");
  return s + ")";
}

std::optional<Finding> kernel_fallback(const Side& a, const Side& b) {
  const bool same_arch = a.report.device.arch == b.report.device.arch;
  Finding f;
  int worse_a = 0, worse_b = 0;
  std::vector<std::string> types;
  for (const KernelChoice& k : a.run.model.kernels) types.push_back(k.weight_type);
  for (const KernelChoice& k : b.run.model.kernels) {
    if (std::find(types.begin(), types.end(), k.weight_type) == types.end()) types.push_back(k.weight_type);
  }
  auto find = [](const ModelInfo& m, const std::string& type) -> const KernelChoice* {
    for (const KernelChoice& k : m.kernels) {
      if (k.weight_type == type) return &k;
    }
    return nullptr;
  };
  for (const std::string& type : types) {
    const KernelChoice* ka = find(a.run.model, type);
    const KernelChoice* kb = find(b.run.model, type);
    bool a_worse = false, b_worse = false;
    if (ka && ka->fallback && !(kb && kb->fallback)) a_worse = true;
    if (kb && kb->fallback && !(ka && ka->fallback)) b_worse = true;
    if (ka && kb && same_arch && !a_worse && !b_worse) {
      const int ra = tier_rank(ka->tier), rb = tier_rank(kb->tier);
      if (ra >= 0 && rb >= 0 && ra != rb) (ra < rb ? a_worse : b_worse) = true;
    }
    if (!a_worse && !b_worse) continue;
    worse_a += a_worse;
    worse_b += b_worse;
    f.evidence.push_back(type + ": A " + (ka ? kernel_text(*ka) : "not used") + "; B " +
                         (kb ? kernel_text(*kb) : "not used"));
  }
  if (f.evidence.empty()) return std::nullopt;
  f.side = worse_a > worse_b ? 'A' : worse_b > worse_a ? 'B' : '=';
  if (a.report.build.compiled_tiers != b.report.build.compiled_tiers) {
    f.evidence.push_back("compiled tiers: A " + a.report.build.compiled_tiers + "; B " + b.report.build.compiled_tiers);
  }
  f.evidence.push_back("cpu: A " + a.report.device.cpu_features + "; B " + b.report.device.cpu_features);
  f.summary = "a kernel fallback or a lower kernel tier: the matmuls run on slower code";
  return f;
}

// ---- 3 unoptimized_build ----

std::optional<Finding> unoptimized_build(const Side& a, const Side& b) {
  const bool ua = a.report.build.build_type == "unoptimized", ub = b.report.build.build_type == "unoptimized";
  if (ua == ub) return std::nullopt;
  Finding f;
  f.side = ua ? 'A' : 'B';
  f.summary = "an unoptimized (-O0) build of the engine";
  f.evidence.push_back("build: A " + a.report.build.build_type + " (" + a.report.build.compiler + "), B " +
                       b.report.build.build_type + " (" + b.report.build.compiler + ")");
  return f;
}

// ---- 4 weights_expanded ----

std::optional<Finding> weights_expanded(const Side& a, const Side& b) {
  constexpr double kLimit = 1.25;  // repacking at load is memory-neutral; 25% leaves room for scratch
  const double ra = load_rss_ratio(a.run.model), rb = load_rss_ratio(b.run.model);
  if (!known(ra) || !known(rb)) return std::nullopt;
  const bool ba = ra > kLimit, bb = rb > kLimit;
  if (!ba && !bb) return std::nullopt;
  if (ba && bb && std::fabs(ra - rb) < 0.25) return std::nullopt;
  Finding f;
  f.side = ra > rb ? 'A' : 'B';
  f.summary = "resident memory far above the file size: weights expanded or copied (and maybe swapping)";
  f.evidence.push_back("resident after load: A " + fmt_bytes(a.run.model.rss_after_load_bytes) + " for a " +
                       fmt_bytes(a.run.model.file_bytes) + " file (" + fx(ra) + "x), B " +
                       fmt_bytes(b.run.model.rss_after_load_bytes) + " for " + fmt_bytes(b.run.model.file_bytes) +
                       " (" + fx(rb) + "x)");
  return f;
}

// ---- 5 thread_placement ----

struct Placement {
  int threads = 0;
  int big = 0;
  std::vector<int> little_cpus;
  std::string little_name;
  bool bad() const { return !little_cpus.empty() || (big > 0 && threads > big); }
};

Placement placement(const Side& s) {
  Placement p;
  p.threads = s.run.threads.n_threads;
  p.big = big_core_count(s.report.device);
  for (int cpu : worker_cpus(s.run.threads)) {
    const ClusterInfo* c = cluster_of(s.report.device, cpu);
    if (c != nullptr && c->rank == "little") {
      p.little_cpus.push_back(cpu);
      p.little_name = c->core_name;
    }
  }
  return p;
}

std::string placement_text(const Side& s, const Placement& p) {
  std::string t = fmt_threads(p.threads) + " on cpu " + cpu_list_text(worker_cpus(s.run.threads));
  t += ", " + std::to_string(p.big) + " prime/big cores";
  if (!p.little_cpus.empty()) {
    t += ", " + std::to_string(p.little_cpus.size()) + " worker(s) on little cores (cpu " +
         cpu_list_text(p.little_cpus) + " " + p.little_name + ")";
  }
  return t;
}

std::optional<Finding> thread_placement(const Side& a, const Side& b) {
  const Placement pa = placement(a), pb = placement(b);
  if (pa.bad() == pb.bad() && pa.little_cpus.size() == pb.little_cpus.size()) return std::nullopt;
  Finding f;
  const bool a_worse = pa.bad() != pb.bad() ? pa.bad() : pa.little_cpus.size() > pb.little_cpus.size();
  f.side = a_worse ? 'A' : 'B';
  f.summary = "threads beyond the big cores or workers on little cores: every step waits for the slowest core";
  f.evidence.push_back("A " + placement_text(a, pa) + "; B " + placement_text(b, pb));
  return f;
}

// ---- 6 pinning_failed ----

std::vector<std::string> failed_pins(const ThreadsInfo& t) {
  std::vector<std::string> out;
  for (const WorkerInfo& w : t.workers) {
    if (w.pin == "failed") {
      out.push_back("t" + std::to_string(w.thread) + " cpu " + std::to_string(w.cpu_asked) + " failed (errno " +
                    std::to_string(w.pin_error) + "), last seen on cpu " + std::to_string(w.last_cpu));
    } else if (w.pin == "pinned" && w.cpu_asked >= 0 && w.last_cpu >= 0 && w.last_cpu != w.cpu_asked) {
      out.push_back("t" + std::to_string(w.thread) + " pinned to cpu " + std::to_string(w.cpu_asked) +
                    " but seen on cpu " + std::to_string(w.last_cpu));
    }
  }
  return out;
}

int pinned_count(const ThreadsInfo& t) {
  return static_cast<int>(std::count_if(t.workers.begin(), t.workers.end(), [](const WorkerInfo& w) { return w.pin == "pinned"; }));
}

std::optional<Finding> pinning_failed(const Side& a, const Side& b) {
  const auto fa = failed_pins(a.run.threads), fb = failed_pins(b.run.threads);
  if (fa.size() == fb.size()) return std::nullopt;
  Finding f;
  f.side = fa.size() > fb.size() ? 'A' : 'B';
  f.summary = "thread pinning failed: the OS may run workers on any core, little ones included";
  auto text = [](const ThreadsInfo& t, const std::vector<std::string>& failed) {
    return std::to_string(pinned_count(t)) + "/" + std::to_string(t.workers.size()) + " pinned" +
           (failed.empty() ? "" : ": " + join(failed, "; "));
  };
  f.evidence.push_back("A " + text(a.run.threads, fa) + "; B " + text(b.run.threads, fb));
  return f;
}

// ---- 7 low_frequency ----

bool slow_governor(const ClusterInfo& c) { return is_slow_governor(c.governor, c.driver); }

struct Clocks {
  std::vector<std::string> slow_governors;
  double cap_fraction = kUnknown;  // policy max / hw max over the worker CPUs, before the run
  double cap_mhz = kUnknown, hw_mhz = kUnknown;
  std::string power;               // battery saver / low-power profile
  bool bad() const { return !slow_governors.empty() || (known(cap_fraction) && cap_fraction < 0.85) || !power.empty(); }
};

Clocks clocks(const Side& s) {
  Clocks c;
  const std::vector<int> cpus = worker_cpus(s.run.threads);
  std::vector<const ClusterInfo*> seen;
  for (int cpu : cpus) {
    const ClusterInfo* cl = cluster_of(s.report.device, cpu);
    if (cl == nullptr || std::find(seen.begin(), seen.end(), cl) != seen.end()) continue;
    seen.push_back(cl);
    if (slow_governor(*cl)) {
      c.slow_governors.push_back(cl->governor + " on cpu " + cpu_list_text(cl->cpus) + " (" + cl->rank + " " +
                                 cl->core_name + ")");
    }
  }
  double cap = 0, hw = 0;
  for (const CoreFreq& f : s.run.before.cores) {
    if (std::find(cpus.begin(), cpus.end(), f.cpu) == cpus.end() || f.policy_max_khz == 0 || f.hw_max_khz == 0) continue;
    cap += static_cast<double>(f.policy_max_khz);
    hw += static_cast<double>(f.hw_max_khz);
  }
  if (hw > 0) {
    c.cap_fraction = cap / hw;
    c.cap_mhz = cap / 1000.0;
    c.hw_mhz = hw / 1000.0;
  }
  const PowerState& p = s.run.before.power;
  if (p.power_save == "on") c.power = "battery saver on";
  if (p.platform_profile == "low-power" || p.platform_profile == "quiet") c.power = "platform profile " + p.platform_profile;
  return c;
}

std::string clocks_text(const Side& s, const Clocks& c) {
  std::vector<std::string> parts;
  for (const ClusterInfo& cl : s.report.device.clusters) parts.push_back(cl.rank + " " + cl.governor);
  std::string t = "governor " + (parts.empty() ? std::string("unknown") : join(parts, ", "));
  if (known(c.cap_fraction)) {
    t += "; worker clock cap " + fmt_percent(c.cap_fraction) + " of the hardware maximum before the run";
  }
  const PowerState& p = s.run.before.power;
  t += "; battery saver " + p.power_save;
  if (p.platform_profile != "unknown") t += ", platform profile " + p.platform_profile;
  return t;
}

std::optional<Finding> low_frequency(const Side& a, const Side& b) {
  const Clocks ca = clocks(a), cb = clocks(b);
  char side = '=';
  if (ca.bad() != cb.bad()) {
    side = ca.bad() ? 'A' : 'B';
  } else if (known(ca.cap_fraction) && known(cb.cap_fraction) && std::fabs(ca.cap_fraction - cb.cap_fraction) > 0.15) {
    side = ca.cap_fraction < cb.cap_fraction ? 'A' : 'B';
  } else {
    return std::nullopt;
  }
  Finding f;
  f.side = side;
  f.summary = "a power-save governor, battery saver or a clock cap: the cores run below their top clock";
  f.evidence.push_back("A " + clocks_text(a, ca) + "; B " + clocks_text(b, cb));
  const Clocks& bad = side == 'A' ? ca : cb;
  if (!bad.slow_governors.empty()) f.evidence.push_back(std::string(1, side) + ": " + join(bad.slow_governors, "; "));
  return f;
}

// ---- 8 throttling ----

std::string throttle_evidence(const Side& s) {
  if (s.run.sustained.verdict == "throttling") return s.run.sustained.evidence;
  const std::vector<int> cpus = worker_cpus(s.run.threads);
  const double cap0 = mean_policy_max_mhz(s.run.before, cpus), cap1 = mean_policy_max_mhz(s.run.after, cpus);
  if (known(cap0) && known(cap1) && cap1 < 0.9 * cap0) {
    return "clock cap of the worker CPUs fell during the run: " + fmt_double(cap0, 0) + " -> " + fmt_double(cap1, 0) +
           " MHz; hottest zone " + fmt_celsius(max_temp(s.run.before)) + " -> " + fmt_celsius(max_temp(s.run.after));
  }
  return "";
}

std::optional<Finding> throttling(const Side& a, const Side& b) {
  const std::string ea = throttle_evidence(a), eb = throttle_evidence(b);
  if (ea.empty() == eb.empty()) return std::nullopt;
  Finding f;
  f.side = ea.empty() ? 'B' : 'A';
  f.summary = "thermal throttling: the clocks fell as the device heated up";
  auto text = [](const Side& s, const std::string& e) {
    if (!e.empty()) return e;
    if (s.run.sustained.rounds > 0) return "sustained " + s.run.sustained.verdict + " (" + s.run.sustained.evidence + ")";
    return std::string("no sign (no sustained rounds; clock cap steady)");
  };
  f.evidence.push_back("A " + text(a, ea) + "; B " + text(b, eb));
  return f;
}

// ---- 9 cpu_contention ----

std::optional<Finding> cpu_contention(const Side& a, const Side& b) {
  constexpr double kContended = 0.8;
  const double sa = a.run.cpu_share, sb = b.run.cpu_share;
  if (!known(sa) || !known(sb)) return std::nullopt;
  const bool ca = sa < kContended, cb = sb < kContended;
  if (ca == cb && std::fabs(sa - sb) < 0.2) return std::nullopt;
  if (!ca && !cb) return std::nullopt;
  Finding f;
  f.side = sa < sb ? 'A' : 'B';
  // On a virtual machine the shortfall may be the hypervisor's: steal time
  // covering at least half of it names that cause instead.
  const Side& slow = f.side == 'A' ? a : b;
  const double steal = slow.run.steal_share;
  const bool stolen = known(steal) && steal >= 0.5 * (1.0 - slow.run.cpu_share);
  f.summary = stolen ? "the hypervisor gave the cores to other guests (steal time): the engine got a fraction of the CPU "
                       "time it asked for"
                     : "other processes competed for the cores: the engine got a fraction of the CPU time it asked for";
  const auto side_text = [](const Side& s) {
    std::string t = fmt_percent(s.run.cpu_share) + " of " + fmt_threads(s.run.threads.n_threads) + " (load average " +
                    fx(s.run.before.load_avg_1m);
    if (known(s.run.steal_share)) t += ", steal time " + fmt_percent(s.run.steal_share);
    return t + ")";
  };
  f.evidence.push_back("CPU share during the tests: A " + side_text(a) + ", B " + side_text(b));
  return f;
}

// ---- 10 different_test ----

std::string test_text(const TestResult& t) {
  return t.name + " at depth " + std::to_string(t.n_depth);
}

std::optional<Finding> different_test(const Side& a, const Side& b) {
  Finding f;
  for (const char* kind : {"prefill", "decode", "mixed", "ttft"}) {
    const TestResult* ta = first_of_kind(a.run, kind);
    const TestResult* tb = first_of_kind(b.run, kind);
    if (ta == nullptr || tb == nullptr) continue;
    if (ta->n_prompt != tb->n_prompt || ta->n_gen != tb->n_gen || ta->n_depth != tb->n_depth) {
      f.evidence.push_back(std::string(kind) + ": A " + test_text(*ta) + ", B " + test_text(*tb));
      // More tokens in the cache make every step read more: the deeper side is the slower one.
      const uint64_t la = uint64_t{ta->n_depth} + ta->n_prompt + ta->n_gen, lb = uint64_t{tb->n_depth} + tb->n_prompt + tb->n_gen;
      if (la != lb) f.side = la > lb ? 'A' : 'B';
    }
  }
  if (a.run.model.kv_type != b.run.model.kv_type) {
    f.evidence.push_back("KV cache type: A " + a.run.model.kv_type + ", B " + b.run.model.kv_type);
  }
  if (f.evidence.empty()) return std::nullopt;
  f.summary = "different test settings (prompt/decode lengths, KV depth or KV type): not the same measurement";
  return f;
}

// ---- 11 measurement_kind ----

std::string kinds_text(const Run& r) {
  std::vector<std::string> parts;
  for (const TestResult& t : r.tests) parts.push_back(t.name + " (" + t.kind + ")");
  return parts.empty() ? "no rows" : join(parts, ", ");
}

std::optional<Finding> measurement_kind(const Side& a, const Side& b) {
  const bool da = first_of_kind(a.run, "decode") != nullptr, db = first_of_kind(b.run, "decode") != nullptr;
  Finding f;
  if (da != db) {
    const Side& lacking = da ? b : a;
    f.side = lacking.name;
    const bool mixed = first_of_kind(lacking.run, "mixed") != nullptr;
    f.summary = mixed ? "a mixed measurement: prompt and generation timed together, so prefill time counts as decode"
                      : "a TTFT-only measurement: no decode rows, only the prompt's time";
    f.evidence.push_back("A rows: " + kinds_text(a.run) + "; B rows: " + kinds_text(b.run));
  }
  const int wa = a.report.settings.warmup, wb = b.report.settings.warmup;
  if ((wa == 0) != (wb == 0)) {
    if (f.evidence.empty()) {
      f.side = wa == 0 ? 'A' : 'B';
      f.summary = "a cold measurement: no warm-up run, so first-run page faults and clock ramp-up count";
    }
    f.evidence.push_back("warm-up runs: A " + std::to_string(wa) + ", B " + std::to_string(wb));
  }
  if (f.evidence.empty()) return std::nullopt;
  return f;
}

// ---- 12 thread_count ----

std::optional<Finding> thread_count(const Side& a, const Side& b) {
  const int ta = a.run.threads.n_threads, tb = b.run.threads.n_threads;
  if (ta == tb || ta == 0 || tb == 0) return std::nullopt;
  Finding f;
  f.side = ta < tb ? 'A' : 'B';
  f.summary = "different thread counts";
  f.evidence.push_back("threads: A " + std::to_string(ta) + " (recommended " + std::to_string(a.run.threads.recommended) +
                       "), B " + std::to_string(tb) + " (recommended " + std::to_string(b.run.threads.recommended) + ")");
  return f;
}

// ---- 13 small_pages ----

// Share of the repacked weights in 2 MiB pages; unknown for reports without
// the figure (older versions) or without repacked weights.
double huge_page_share(const ModelInfo& m) {
  if (m.repacked_bytes == 0) return kUnknown;
  return static_cast<double>(m.repacked_huge_page_bytes) / static_cast<double>(m.repacked_bytes);
}

std::optional<Finding> small_pages(const Side& a, const Side& b) {
  const double sa = huge_page_share(a.run.model), sb = huge_page_share(b.run.model);
  if (!known(sa) || !known(sb)) return std::nullopt;
  if ((sa < 0.5) == (sb < 0.5)) return std::nullopt;
  Finding f;
  f.side = sa < sb ? 'A' : 'B';
  f.summary = "weights in 4 KiB pages instead of 2 MiB ones: more TLB misses while decode streams them";
  auto text = [](const Side& s) {
    return fmt_bytes_or_none(s.run.model.repacked_huge_page_bytes) + " of " + fmt_bytes(s.run.model.repacked_bytes) +
           " (transparent huge pages: " + s.report.device.transparent_huge_pages + ")";
  };
  f.evidence.push_back("repacked weights in 2 MiB pages: A " + text(a) + ", B " + text(b));
  return f;
}

// ---- 14 memory_bandwidth ----

std::optional<Finding> memory_bandwidth(const Side& a, const Side& b) {
  const double ga = a.run.roofline.probe_gb_s, gb = b.run.roofline.probe_gb_s;
  if (!known(ga) || !known(gb) || ga <= 0 || gb <= 0) return std::nullopt;
  if (std::min(ga, gb) >= 0.8 * std::max(ga, gb)) return std::nullopt;
  Finding f;
  f.side = ga < gb ? 'A' : 'B';
  f.summary = "lower memory read bandwidth: decode streams every weight per token and hits this wall";
  f.evidence.push_back("read probe: A " + fx(ga) + " GB/s (" + fmt_threads(a.run.probe.threads) + "), B " +
                       fx(gb) + " GB/s (" + fmt_threads(b.run.probe.threads) + "); decode efficiency A " +
                       fmt_percent(a.run.roofline.decode_efficiency) + ", B " + fmt_percent(b.run.roofline.decode_efficiency));
  return f;
}

// ---- 15 different_build, 16 different_device ----

std::optional<Finding> different_build(const Side& a, const Side& b) {
  const BuildInfo& x = a.report.build;
  const BuildInfo& y = b.report.build;
  if (x.version == y.version && x.compiler == y.compiler && x.compiled_tiers == y.compiled_tiers) return std::nullopt;
  Finding f;
  f.summary = "different engine builds";
  f.evidence.push_back("A " + x.version + ", " + x.compiler + ", tiers " + x.compiled_tiers + "; B " + y.version + ", " +
                       y.compiler + ", tiers " + y.compiled_tiers);
  return f;
}

std::optional<Finding> different_device(const Side& a, const Side& b) {
  const DeviceInfo& x = a.report.device;
  const DeviceInfo& y = b.report.device;
  if (x.model == y.model && x.soc == y.soc && x.arch == y.arch) return std::nullopt;
  Finding f;
  f.summary = "different devices: hardware differences remain after the causes above";
  f.evidence.push_back("A " + x.model + " (" + x.soc + ", " + x.arch + "); B " + y.model + " (" + y.soc + ", " + y.arch + ")");
  return f;
}

using Rule = std::optional<Finding> (*)(const Side&, const Side&);

struct RuleEntry {
  const char* cause;
  Rule rule;
};

const RuleEntry kRules[] = {
    {"different_file", different_file},     {"kernel_fallback", kernel_fallback},
    {"unoptimized_build", unoptimized_build}, {"weights_expanded", weights_expanded},
    {"thread_placement", thread_placement}, {"pinning_failed", pinning_failed},
    {"low_frequency", low_frequency},       {"throttling", throttling},
    {"cpu_contention", cpu_contention},     {"different_test", different_test},     {"measurement_kind", measurement_kind},
    {"thread_count", thread_count},         {"small_pages", small_pages},
    {"memory_bandwidth", memory_bandwidth},
    {"different_build", different_build},   {"different_device", different_device},
};

// The figure both runs measured, in the order that matters most to a user.
void speed(const Run& a, const Run& b, Diagnosis& d) {
  for (const char* kind : {"decode", "prefill", "mixed"}) {
    const TestResult* ta = first_of_kind(a, kind);
    const TestResult* tb = first_of_kind(b, kind);
    if (ta == nullptr || tb == nullptr) continue;
    const double va = ta->tokens_per_s.median, vb = tb->tokens_per_s.median;
    if (!(va > 0) || !(vb > 0)) continue;
    d.ratio = std::max(va, vb) / std::min(va, vb);
    d.slower = d.ratio < 1.05 ? '=' : (va < vb ? 'A' : 'B');
    const std::string figures = std::string(kind) + " medians: A " + ta->name + " " + fx(va) + ", B " + tb->name + " " +
                                fx(vb) + " tokens/s";
    d.headline = d.slower == '=' ? "A and B are within 5% (" + figures + ")"
                                 : std::string(1, d.slower) + " is " + fx(d.ratio) + "x slower (" + figures + ")";
    return;
  }
  d.headline = "no figure measured by both reports (decode, prefill or mixed)";
}

}  // namespace

const std::vector<std::string>& diagnosis_causes() {
  static const std::vector<std::string> causes = [] {
    std::vector<std::string> c;
    for (const RuleEntry& r : kRules) c.push_back(r.cause);
    return c;
  }();
  return causes;
}

Diagnosis diagnose(const Report& a, const Report& b, size_t index) {
  Diagnosis d;
  if (index >= a.runs.size() || index >= b.runs.size()) {
    d.headline = "no run " + std::to_string(index + 1) + " in both reports";
    return d;
  }
  const Side sa{a, a.runs[index], 'A'};
  const Side sb{b, b.runs[index], 'B'};
  speed(sa.run, sb.run, d);
  int rank = 0;
  for (const RuleEntry& r : kRules) {
    ++rank;
    std::optional<Finding> f = r.rule(sa, sb);
    if (!f) continue;
    f->cause = r.cause;
    f->rank = rank;
    f->explains_slower = (d.slower == 'A' || d.slower == 'B') && f->side == d.slower;
    d.findings.push_back(std::move(*f));
  }
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& x, const Finding& y) {
    if (x.explains_slower != y.explains_slower) return x.explains_slower;
    return x.rank < y.rank;
  });
  return d;
}

}  // namespace bench
