// The doctor's checklist: everything on this device that would make inference
// slow, each line OK, INFO (could not be checked) or WARN (slow: fix it), with
// what to do. Shares the environment code with bench, and takes the same
// filesystem root so tests replay captured phones.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/threads/thread_plan.h"
#include "engine/threads/topology.h"
#include "kernels/cpu_features.h"
#include "kernels/tier.h"
#include "tools/bench/report.h"
#include "tools/bench/sysfs.h"

namespace bench {

enum class Level { ok, info, warn };
const char* level_name(Level l);  // "OK", "INFO", "WARN"

struct Check {
  Level level = Level::ok;
  std::string topic;    // "governor", "kernel Q4_0", ...
  std::string message;  // what was found
  std::string advice;   // what to do ("" for OK)
};

struct DoctorInput {
  const FsRoot* fs = nullptr;
  const engine::CpuTopology* topology = nullptr;
  kernels::CpuFeatures cpu;
  std::optional<kernels::Tier> cap;  // ENGINE_MAX_TIER
  BuildInfo build;
  engine::ThreadOptions threads;     // the setting to check (default: the recommended one)
  const ModelInfo* model = nullptr;  // loaded with -m: its kernels and resident memory
  // Steal time over a short busy sample on every CPU (doctor on the live
  // system, steal_sample below); unknown: not measured, no check line.
  double steal_share = kUnknown;
};

// Thresholds.
inline constexpr double kHotCelsius = 70.0;      // a zone this hot means throttling is near
inline constexpr double kCapFraction = 0.90;     // scaling_max_freq below 90% of the hardware max
inline constexpr double kLowBatteryPercent = 20; // phones cap clocks on a low battery
inline constexpr double kRssLimit = 1.25;        // resident memory over file size
inline constexpr double kStealLimit = 0.05;      // a hypervisor taking 5% of the CPUs' time

std::vector<Check> doctor_checks(const DoctorInput& in);

// Keeps every CPU of the topology busy for `seconds` and returns the steal
// share /proc/stat counted meanwhile: steal accrues only while a virtual CPU
// wants to run, so an idle reading says nothing.
double steal_sample(const FsRoot& fs, const engine::CpuTopology& topology, double seconds);

// One line per check ("WARN  governor: ..." then "      -> do: ..."), and a
// summary line.
std::string format_checks(const std::vector<Check>& checks);
int warning_count(const std::vector<Check>& checks);

}  // namespace bench
