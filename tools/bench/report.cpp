#include "tools/bench/report.h"

#include <algorithm>
#include <cmath>

namespace bench {

double probe_reference_gb_s(const ProbeResult& p) {
  std::vector<double> all = p.gb_per_s.samples;
  all.insert(all.end(), p.gb_per_s_after.samples.begin(), p.gb_per_s_after.samples.end());
  if (all.empty()) return p.gb_per_s.empty() ? kUnknown : p.gb_per_s.median;  // a report without samples
  return Stats::of(std::move(all)).median;
}

double probe_drift(const ProbeResult& p) {
  if (p.gb_per_s.empty() || p.gb_per_s_after.empty()) return 0;
  const double a = p.gb_per_s.median, b = p.gb_per_s_after.median;
  const double hi = std::max(a, b);
  return hi > 0 ? std::abs(a - b) / hi : 0;
}

const TestResult* first_of_kind(const Run& run, const std::string& kind) {
  for (const TestResult& t : run.tests) {
    if (t.kind == kind && !(kind == "ttft" ? t.ms : t.tokens_per_s).empty()) return &t;
  }
  return nullptr;
}

const ClusterInfo* cluster_of(const DeviceInfo& device, int cpu) {
  for (const ClusterInfo& c : device.clusters) {
    if (std::find(c.cpus.begin(), c.cpus.end(), cpu) != c.cpus.end()) return &c;
  }
  return nullptr;
}

std::vector<int> worker_cpus(const ThreadsInfo& threads) {
  std::vector<int> cpus;
  for (const WorkerInfo& w : threads.workers) {
    const int cpu = w.last_cpu >= 0 ? w.last_cpu : w.cpu_asked;
    if (cpu >= 0) cpus.push_back(cpu);
  }
  return cpus;
}

int big_core_count(const DeviceInfo& device) {
  int n = 0;
  for (const ClusterInfo& c : device.clusters) {
    if (c.rank != "little") n += static_cast<int>(c.cpus.size());
  }
  return n;
}

double max_temp(const Snapshot& s) {
  double best = kUnknown;
  for (const ThermalZone& z : s.thermal) {
    if (known(z.celsius) && (!known(best) || z.celsius > best)) best = z.celsius;
  }
  return best;
}

namespace {

double mean_mhz(const Snapshot& s, const std::vector<int>& cpus, uint64_t CoreFreq::*field) {
  double sum = 0;
  int n = 0;
  for (const CoreFreq& f : s.cores) {
    if (f.*field == 0) continue;
    if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), f.cpu) == cpus.end()) continue;
    sum += static_cast<double>(f.*field) / 1000.0;
    ++n;
  }
  return n > 0 ? sum / n : kUnknown;
}

}  // namespace

bool is_slow_governor(const std::string& governor, const std::string& driver) {
  if (governor == "conservative" || governor == "userspace") return true;
  if (governor.find("powersave") == std::string::npos) return false;
  return driver.find("pstate") == std::string::npos;
}

double mean_cur_mhz(const Snapshot& s, const std::vector<int>& cpus) { return mean_mhz(s, cpus, &CoreFreq::cur_khz); }
double mean_policy_max_mhz(const Snapshot& s, const std::vector<int>& cpus) {
  return mean_mhz(s, cpus, &CoreFreq::policy_max_khz);
}

double load_rss_ratio(const ModelInfo& m) {
  if (m.rss_after_load_bytes == 0 || m.file_bytes == 0) return kUnknown;
  if (m.rss_before_load_bytes == 0 || m.rss_before_load_bytes > m.rss_after_load_bytes) {
    return static_cast<double>(m.rss_after_load_bytes) / static_cast<double>(m.file_bytes);
  }
  const uint64_t added = m.rss_after_load_bytes - m.rss_before_load_bytes;
  return static_cast<double>(added > kLoadOverheadBytes ? added - kLoadOverheadBytes : 0) /
         static_cast<double>(m.file_bytes);
}

}  // namespace bench
