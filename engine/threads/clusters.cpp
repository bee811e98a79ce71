// CpuTopology::from_cores: grouping CPUs into clusters and ranking them (the
// rules are stated in topology.h), and describe().
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "engine/threads/cpu_list.h"
#include "engine/threads/topology.h"

namespace engine {
namespace {

// Cores of one type whose speed is within this fraction of the cluster's
// fastest core share a cluster. 0.85 keeps a Dimensity 9300's X4 cores (3.25
// and 2.85 GHz, ratio 0.88) and a Snapdragon 8 Gen 3's A720 cores (3.15 and
// 2.96 GHz) together, and splits a Snapdragon 8 Elite's Oryon cores (4.32 and
// 3.53 GHz, ratio 0.82) into its prime and performance clusters.
constexpr int kSameClusterPercent = 85;
// A cluster of unknown core type below this share of the top cluster's
// capacity is little (efficiency cores sit at 20-45% on current phones).
constexpr int kLittlePercent = 50;

enum class Source { capacity, frequency, type, nothing };

const char* source_name(Source s) {
  switch (s) {
    case Source::capacity:
      return "cpu_capacity";
    case Source::frequency:
      return "cpuinfo_max_freq";
    case Source::type:
      return "core type";
    case Source::nothing:
      return "nothing";
  }
  return "?";
}

// The speed measure: cpu_capacity when every CPU has one and they differ (the
// scheduler's own view, IPC included), else the maximum frequency, else the
// same two when they are uniform, else none.
Source choose_source(const std::vector<CoreInfo>& cores) {
  const auto all = [&](auto field) {
    return std::all_of(cores.begin(), cores.end(), [&](const CoreInfo& c) { return field(c) > 0; });
  };
  const auto varied = [&](auto field) {
    return std::any_of(cores.begin(), cores.end(), [&](const CoreInfo& c) { return field(c) != field(cores[0]); });
  };
  const auto capacity = [](const CoreInfo& c) { return static_cast<uint64_t>(c.capacity); };
  const auto freq = [](const CoreInfo& c) { return c.max_freq_khz; };
  const bool has_capacity = all(capacity), has_freq = all(freq);
  if (has_capacity && varied(capacity)) return Source::capacity;
  if (has_freq && varied(freq)) return Source::frequency;
  if (has_capacity) return Source::capacity;
  if (has_freq) return Source::frequency;
  const bool typed = std::any_of(cores.begin(), cores.end(),
                                 [](const CoreInfo& c) { return c.core_class != CoreClass::unknown; });
  return typed ? Source::type : Source::nothing;
}

uint64_t speed(const CoreInfo& c, Source s) {
  if (s == Source::capacity) return static_cast<uint64_t>(c.capacity);
  if (s == Source::frequency) return c.max_freq_khz;
  return 0;
}

// Cores of different known types never share a cluster.
std::string type_key(const CoreInfo& c) {
  if (c.midr != 0) return "midr:" + std::to_string(midr_model(c.midr));
  if (!c.core_name.empty()) return "name:" + c.core_name;
  return "";
}

std::string ghz(uint64_t khz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GHz", static_cast<double>(khz) / 1e6);
  return buf;
}

}  // namespace

const char* rank_name(Cluster::Rank rank) {
  switch (rank) {
    case Cluster::Rank::prime:
      return "prime";
    case Cluster::Rank::big:
      return "big";
    case Cluster::Rank::little:
      return "little";
  }
  return "?";
}

CpuTopology CpuTopology::from_cores(std::vector<CoreInfo> cores) {
  CpuTopology topo;
  std::sort(cores.begin(), cores.end(), [](const CoreInfo& a, const CoreInfo& b) { return a.cpu < b.cpu; });
  for (CoreInfo& c : cores) {
    if (c.midr != 0) {
      c.core_name = midr_core_name(c.midr);
      const CoreType* t = find_core_type(c.midr);
      c.core_class = t ? t->core_class : CoreClass::unknown;
    }
    if (c.smt_primary < 0) c.smt_primary = c.cpu;
  }
  const Source source = choose_source(cores);
  topo.ranked_by = source_name(source);
  const bool any_type = std::any_of(cores.begin(), cores.end(), [](const CoreInfo& c) { return !type_key(c).empty(); });
  // With neither speeds nor types, the kernel's clusters are all that is left.
  const bool use_sysfs_groups = source == Source::nothing && !any_type;
  if (source == Source::frequency) {
    topo.notes.push_back("ranked by cpuinfo_max_freq: no usable cpu_capacity");
  } else if (source == Source::type) {
    topo.notes.push_back("ranked by core type only: no cpu_capacity and no cpuinfo_max_freq");
  } else if (source == Source::nothing) {
    topo.notes.push_back(std::string("no cpu_capacity, cpuinfo_max_freq or core type: ") +
                         (use_sysfs_groups ? "clusters follow the kernel's topology files and " : "") +
                         "all CPUs are treated as equally fast");
  }

  // Fastest first: speed, then core class, then CPU number.
  std::vector<size_t> order(cores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const uint64_t sa = speed(cores[a], source), sb = speed(cores[b], source);
    if (sa != sb) return sa > sb;
    if (cores[a].core_class != cores[b].core_class) return cores[a].core_class > cores[b].core_class;
    return cores[a].cpu < cores[b].cpu;
  });
  std::vector<size_t> first_core;   // per cluster: index of its first (fastest) core
  std::vector<uint64_t> top_speed;  // per cluster: that core's speed
  for (size_t i : order) {
    CoreInfo& c = cores[i];
    const uint64_t s = speed(c, source);
    int found = -1;
    for (size_t k = 0; k < topo.clusters.size() && found < 0; ++k) {
      const CoreInfo& first = cores[first_core[k]];
      if (type_key(first) != type_key(c)) continue;
      if (use_sysfs_groups && first.sysfs_group != c.sysfs_group) continue;
      if (s * 100 < top_speed[k] * kSameClusterPercent) continue;
      found = static_cast<int>(k);
    }
    if (found < 0) {
      found = static_cast<int>(topo.clusters.size());
      Cluster cl;
      cl.core_name = c.core_name;
      cl.core_class = c.core_class;
      topo.clusters.push_back(std::move(cl));
      first_core.push_back(i);
      top_speed.push_back(s);
    }
    Cluster& cl = topo.clusters[static_cast<size_t>(found)];
    cl.cpus.push_back(c.cpu);
    cl.max_freq_khz = std::max(cl.max_freq_khz, c.max_freq_khz);
    cl.capacity = std::max(cl.capacity, c.capacity);
    c.cluster = found;
  }

  // Ranks.
  const bool have_speeds = source == Source::capacity || source == Source::frequency;
  std::vector<size_t> non_little;
  for (size_t k = 0; k < topo.clusters.size(); ++k) {
    Cluster& cl = topo.clusters[k];
    bool little = false;
    if (k > 0) {
      const bool faster_non_efficiency = std::any_of(topo.clusters.begin(), topo.clusters.begin() + static_cast<long>(k),
                                                     [](const Cluster& f) { return f.core_class != CoreClass::efficiency; });
      little = (cl.core_class == CoreClass::efficiency && faster_non_efficiency) ||
               (cl.core_class == CoreClass::unknown && have_speeds &&
                top_speed[k] * 100 < top_speed[0] * kLittlePercent);
    }
    cl.rank = little ? Cluster::Rank::little : Cluster::Rank::big;
    if (!little) non_little.push_back(k);
  }
  if (non_little.size() >= 2) {
    const size_t a = non_little[0], b = non_little[1];
    const bool faster = top_speed[a] > top_speed[b] ||
                        (top_speed[a] == top_speed[b] && topo.clusters[a].core_class > topo.clusters[b].core_class);
    if (faster) topo.clusters[a].rank = Cluster::Rank::prime;
  }
  topo.cores = std::move(cores);
  return topo;
}

void CpuTopology::restrict_to(const std::vector<int>& allowed_cpus) {
  std::vector<int> excluded;
  for (CoreInfo& c : cores) {
    c.allowed = std::find(allowed_cpus.begin(), allowed_cpus.end(), c.cpu) != allowed_cpus.end();
    if (!c.allowed) excluded.push_back(c.cpu);
  }
  if (!excluded.empty()) {
    notes.push_back("this process may not run on CPUs " + format_cpu_list(excluded) +
                    " (its affinity mask or cpuset excludes them; Android does this to background apps)");
  }
}

const CoreInfo* CpuTopology::core(int cpu) const {
  for (const CoreInfo& c : cores) {
    if (c.cpu == cpu) return &c;
  }
  return nullptr;
}

size_t CpuTopology::physical_cores() const {
  return static_cast<size_t>(std::count_if(cores.begin(), cores.end(), [](const CoreInfo& c) { return !c.is_smt_secondary(); }));
}

std::string CpuTopology::describe() const {
  std::string out = std::to_string(cores.size()) + " CPUs";
  if (physical_cores() != cores.size()) out += " (" + std::to_string(physical_cores()) + " physical cores, SMT)";
  out += ", " + std::to_string(clusters.size()) + (clusters.size() == 1 ? " cluster" : " clusters") +
         ", ranked by " + ranked_by;
  if (!hardware.empty()) out += ", hardware " + hardware;
  out += ":";
  for (const Cluster& cl : clusters) {
    char line[256];
    std::snprintf(line, sizeof line, "\n  %-6s cpu%-8s %2zu x %s", rank_name(cl.rank), format_cpu_list(cl.cpus).c_str(),
                  cl.cpus.size(), cl.core_name.empty() ? "unknown core" : cl.core_name.c_str());
    out += line;
    if (cl.max_freq_khz > 0) out += ", " + ghz(cl.max_freq_khz);
    if (cl.capacity > 0) out += ", capacity " + std::to_string(cl.capacity);
  }
  for (const std::string& note : notes) out += "\n  note: " + note;
  return out;
}

}  // namespace engine
