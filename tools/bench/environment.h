// Collects the environment block of a report from a filesystem root: "/" on
// the device, a captured tree in the tests (tests/fixtures/bench). Commands
// (getprop, settings) are only run on the live system.
//
// Sources:
//   device model   getprop ro.product.model (Android, live), build.prop files,
//                  /proc/device-tree/model, /sys/class/dmi/id/{sys_vendor,product_name}
//   SoC            getprop ro.soc.model, /sys/devices/soc0/{machine,soc_id}, cpuinfo Hardware
//   clusters       engine::CpuTopology, plus cpufreq/scaling_governor and
//                  scaling_driver of each cluster's CPUs
//   clocks         cpuN/cpufreq/{scaling_cur_freq,scaling_max_freq,cpuinfo_max_freq}
//   heat           /sys/class/thermal/thermal_zone*/{type,temp} (millidegrees)
//   power          /sys/class/power_supply/* (Battery: status, capacity;
//                  Mains/USB: online), `settings get global low_power` (Android,
//                  live), /sys/firmware/acpi/platform_profile
//   memory         /proc/meminfo MemTotal, MemAvailable
//   caches         cpuN/cache/index*/size: the largest is the last level
//   steal time     /proc/stat cpuN lines, 8th field (a virtual machine's CPUs)
#pragma once

#include <string>
#include <vector>

#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "engine/threads/topology.h"
#include "kernels/cpu_features.h"
#include "tools/bench/report.h"
#include "tools/bench/sysfs.h"

namespace bench {

BuildInfo collect_build();
DeviceInfo collect_device(const FsRoot& fs, const engine::CpuTopology& topology, const kernels::CpuFeatures& cpu);
// Clocks of every online CPU in the topology, thermal zones, power, memory.
Snapshot take_snapshot(const FsRoot& fs, const engine::CpuTopology& topology);

// Largest cache size listed under cpuN/cache (bytes); 0 when none is listed.
uint64_t last_level_cache_bytes(const FsRoot& fs, const engine::CpuTopology& topology);

// The plan and, once the pool has run, where each worker ran.
ThreadsInfo threads_info(const engine::ThreadPlan& plan, const engine::ThreadPool* pool);

// The CPUs the plan pins its threads to (unpinned threads left out).
std::vector<int> plan_cpus(const engine::ThreadPlan& plan);

// CPU features named in a /proc/cpuinfo text ("Features" on arm64, "flags"
// on x86), for captured trees; arch from the same text.
kernels::CpuFeatures features_from_cpuinfo(const std::string& cpuinfo);

// The "cpu MHz" of a processor in /proc/cpuinfo (x86, where cpufreq may be
// absent in VMs); 0 when not listed.
double cpuinfo_mhz(const FsRoot& fs, int cpu);

// Time of one CPU from a /proc/stat "cpuN" line, in USER_HZ ticks: all of it
// (user .. steal) and the steal, the time a virtual CPU wanted to run while
// the hypervisor ran something else on the physical core.
struct CpuTicks {
  int cpu = -1;
  uint64_t total = 0;
  uint64_t steal = 0;
};
// Every "cpuN" line with a steal field; empty when /proc/stat is unreadable.
std::vector<CpuTicks> read_cpu_ticks(const FsRoot& fs);
// Adds the ticks from `before` to `after` to `elapsed`, CPU by CPU (a CPU
// missing from either read is left out): the ticks of several intervals.
void add_elapsed(std::vector<CpuTicks>& elapsed, const std::vector<CpuTicks>& before, const std::vector<CpuTicks>& after);
// The stolen share of `elapsed` over `cpus` (every CPU in it when `cpus` is
// empty); kUnknown when a CPU is missing or no time passed.
double steal_share(const std::vector<CpuTicks>& elapsed, const std::vector<int>& cpus);

// "cpu 4-7" style label of CPU numbers.
std::string cpus_label(const std::vector<int>& cpus);

}  // namespace bench
