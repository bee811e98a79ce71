// CPU topology: which CPUs exist, which are fast, which are little. Read from
// sysfs and /proc/cpuinfo under a root directory, so tests replay trees of real
// phones (tests/fixtures/topology) the way pytorch/cpuinfo does.
//
// Sources, per online CPU (<root>/sys/devices/system/cpu/online):
//   cpuN/cpu_capacity                  the scheduler's relative speed (arm64, 0..1024)
//   cpuN/cpufreq/cpuinfo_max_freq      hardware maximum frequency, kHz
//   cpuN/topology/thread_siblings_list SMT siblings (x86 hyperthreads)
//   cpuN/topology/cluster_cpus_list, else core_siblings_list
//                                      the kernel's cluster; only used when
//                                      nothing else tells CPUs apart
//   /proc/cpuinfo                      MIDR per processor (arm64), "model name" (x86)
//   sys/devices/cpu_core|cpu_atom/cpus Intel hybrid P-cores and E-cores
//
// Clusters are groups of CPUs of one core type and (within 15%) one speed, not
// the kernel's clusters: on DynamIQ phones the device tree often puts all eight
// cores in one cluster, while a Snapdragon 8 Elite's two Oryon clusters share a
// core type and differ only in clock (4.32 vs 3.53 GHz).
//
// Ranks: little = an efficiency core type (or, when the type is unknown, less
// than half the top cluster's capacity) while a faster non-efficiency cluster
// exists; prime = the fastest of two or more non-little clusters when it is
// strictly faster than the next; every other cluster is big.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/threads/midr.h"

namespace engine {

struct CoreInfo {
  int cpu = -1;               // logical CPU number, as in sysfs and sched_setaffinity
  int cluster = -1;           // index into CpuTopology::clusters
  uint64_t max_freq_khz = 0;  // cpufreq/cpuinfo_max_freq; 0 = unknown
  int capacity = 0;           // cpu_capacity; 0 = unknown
  uint32_t midr = 0;          // MIDR_EL1 from /proc/cpuinfo; 0 = unknown (x86, or not listed)
  std::string core_name;      // "Cortex-A720" (from the MIDR), x86 "model name"; "" = unknown
  CoreClass core_class = CoreClass::unknown;
  int smt_primary = -1;       // lowest CPU of its thread_siblings_list (== cpu without SMT)
  int sysfs_group = -1;       // lowest CPU of cluster_cpus_list / core_siblings_list; -1 = unknown
  bool allowed = true;        // in this process's CPU affinity mask (cpuset)

  // The second (third, ...) hardware thread of a physical core.
  bool is_smt_secondary() const { return smt_primary >= 0 && smt_primary != cpu; }
};

struct Cluster {
  enum class Rank { prime, big, little };

  std::vector<int> cpus;  // fastest first (capacity / frequency), then by number
  Rank rank = Rank::big;
  std::string core_name;  // of its cores; "" = unknown
  CoreClass core_class = CoreClass::unknown;
  uint64_t max_freq_khz = 0;  // highest of its CPUs; 0 = unknown
  int capacity = 0;           // highest of its CPUs; 0 = unknown
};

const char* rank_name(Cluster::Rank rank);

struct CpuTopology {
  std::vector<CoreInfo> cores;      // online CPUs, ascending CPU number
  std::vector<Cluster> clusters;    // fastest first
  std::vector<std::string> notes;   // fallbacks taken, said in words
  std::string ranked_by;            // "cpu_capacity", "cpuinfo_max_freq", "core type" or "nothing"
  std::string hardware;             // /proc/cpuinfo "Hardware" line (older Android kernels), else ""

  // Reads <root>/sys/devices/system/cpu and <root>/proc/cpuinfo. For root "/"
  // (the live system) CPUs outside this process's affinity mask are marked
  // !allowed (Android puts background apps in a little-core cpuset). Never
  // throws: missing or malformed files become notes and fallbacks.
  static CpuTopology detect(const std::string& root = "/");

  // Clusters and ranks for cores already read (tests build odd layouts with
  // it). Fills core_name and core_class from midr when midr != 0.
  static CpuTopology from_cores(std::vector<CoreInfo> cores);

  // Marks CPUs outside `allowed_cpus` as not allowed, with a note.
  void restrict_to(const std::vector<int>& allowed_cpus);

  const CoreInfo* core(int cpu) const;  // nullptr when not online
  size_t physical_cores() const;        // CPUs that are not SMT secondaries

  // Multi-line summary: one line per cluster, then the notes.
  std::string describe() const;
};

}  // namespace engine
