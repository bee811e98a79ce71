#include "tools/bench/doctor_checks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>

#include "engine/support/log.h"
#include "gguf/ggml_types.h"
#include "kernels/registry.h"
#include "tools/bench/environment.h"
#include "tools/bench/model_info.h"
#include "tools/bench/report_markdown.h"
#include "tools/bench/text_util.h"
#include "tools/common/plural.h"

namespace bench {
namespace {

void add(std::vector<Check>& out, Level level, std::string topic, std::string message, std::string advice = "") {
  out.push_back({level, std::move(topic), std::move(message), std::move(advice)});
}

bool tier_compiled(const std::string& tiers, kernels::Tier t) {
  std::istringstream in(tiers);
  std::string w;
  while (in >> w) {
    if (w == kernels::tier_name(t)) return true;
  }
  return false;
}

// The weight types of the common GGUF files: Q4_0, Q4_K_M (Q4_K + Q6_K),
// Q5_K_M (Q5_K + Q6_K), Q8_0, F16.
constexpr gguf::GgmlType kCommonTypes[] = {gguf::GgmlType::Q4_0, gguf::GgmlType::Q4_K, gguf::GgmlType::Q5_K,
                                           gguf::GgmlType::Q6_K, gguf::GgmlType::Q8_0, gguf::GgmlType::F16};

// The common types that have a kernel at this CPU's tier in this build.
std::string fast_types(const DoctorInput& in) {
  std::vector<std::string> names;
  for (gguf::GgmlType t : kCommonTypes) {
    if (!kernels::select_matmul(t, in.cpu, in.cap).is_fallback()) names.emplace_back(gguf::type_name(t));
  }
  return names.empty() ? "none in this build" : join(names, ", ");
}

void kernel_checks(const DoctorInput& in, std::vector<Check>& out) {
  const kernels::Tier expected = kernels::expected_tier(in.cpu);
  add(out, Level::ok, "cpu", in.cpu.describe() + "; best kernel tier for it: " + std::string(kernels::tier_name(expected)) +
                                 "; compiled tiers: " + in.build.compiled_tiers);
  if (!tier_compiled(in.build.compiled_tiers, expected)) {
    add(out, Level::warn, "build",
        "this binary has no " + std::string(kernels::tier_name(expected)) + " kernels, which this CPU can run",
        "use a build with every tier of this architecture (the default of the aarch64 toolchain file; "
        "x86 needs Highway, ENGINE_USE_HWY=ON)");
  }
  if (in.cap) {
    add(out, Level::warn, "ENGINE_MAX_TIER",
        "set to " + std::string(kernels::tier_name(*in.cap)) + ": better kernels are refused on purpose",
        "unset ENGINE_MAX_TIER unless you are debugging a kernel tier");
  }
  std::vector<KernelChoice> choices;
  if (in.model != nullptr) {
    choices = in.model->kernels;
  } else {
    for (gguf::GgmlType t : kCommonTypes) choices.push_back(kernel_choice(kernels::select_matmul(t, in.cpu, in.cap)));
  }
  for (const KernelChoice& k : choices) {
    const std::string topic = "kernel " + k.weight_type;
    if (k.kernel == "none") {
      add(out, in.model ? Level::warn : Level::info, topic, "this build cannot compute " + k.weight_type,
          "use a file with another weight type");
    } else if (k.fallback) {
      const std::string why = k.rejected.empty() ? "" : " (rejected: " + join(k.rejected, ", ") + ")";
      // This build has the tier (else the build check above says so) but no
      // kernel of this type in it: no build has one, so the fix is the file.
      std::string advice = in.model != nullptr && !in.model->fallback_advice.empty()
                               ? join(in.model->fallback_advice, "\n         ")
                               : k.weight_type + " files run on slow code here; types that run at full speed: " +
                                     fast_types(in);
      add(out, in.model ? Level::warn : Level::info, topic,
          k.kernel + " [" + k.tier + "], a fallback below the " + k.expected_tier + " tier this CPU supports" + why,
          advice);
    } else {
      add(out, Level::ok, topic, k.kernel + " [" + k.tier + "]");
    }
  }
}

void topology_checks(const DoctorInput& in, const DeviceInfo& device, const engine::ThreadPlan& plan,
                     std::vector<Check>& out) {
  add(out, device.model_source == "none" ? Level::info : Level::ok, "device", device_name(device) + ", SoC " + device.soc + ", " + device.arch + ", OS kernel " + device.kernel);
  for (const ClusterInfo& c : device.clusters) {
    add(out, Level::ok, "cores", c.rank + ": cpu " + cpu_list_text(c.cpus) + " " + c.core_name + " (" + c.core_class +
                                     "), max " + fmt_mhz(c.max_freq_khz));
  }
  if (device.topology_ranked_by == "nothing" && device.clusters.size() <= 1 && in.topology->cores.size() > 1) {
    add(out, Level::info, "cores", "nothing tells the cores apart here (no cpu_capacity, no cpufreq, no known core type)",
        "on a phone, pass --cpus with the fast cores if the recommendation below looks wrong");
  }
  for (const std::string& note : device.topology_notes) add(out, Level::info, "topology", note);
  const std::vector<int> cpus = plan_cpus(plan);
  std::string cpu_text;
  for (int c : plan.cpus) cpu_text.append(cpu_text.empty() ? "" : ",").append(std::to_string(c));
  add(out, Level::ok, "threads",
      "recommended: " + fmt_threads(plan.recommended_threads) + "; this setting: " + plan.describe(),
      "");
  if (!cpus.empty()) out.back().message += " (bench -t " + std::to_string(plan.size()) + " --cpus " + cpu_text + ")";
  for (const std::string& w : plan.warnings) {
    add(out, Level::warn, "threads", w, "use the recommended setting above (-t 0 --cpus default)");
  }
}

void clock_checks(const DeviceInfo& device, const Snapshot& snap, const engine::ThreadPlan& plan,
                  std::vector<Check>& out) {
  std::vector<int> used = plan_cpus(plan);
  const bool pinned = !used.empty();
  for (const ClusterInfo& c : device.clusters) {
    const bool in_use = !pinned || std::any_of(c.cpus.begin(), c.cpus.end(), [&](int cpu) {
      return std::find(used.begin(), used.end(), cpu) != used.end();
    });
    const std::string where = c.rank + " cpu " + cpu_list_text(c.cpus);
    if (c.governor == "unknown") {
      add(out, Level::info, "governor", where + ": not readable (no cpufreq here: a VM, a container, or a locked-down phone)");
    } else if (is_slow_governor(c.governor, c.driver) && !in_use) {
      add(out, Level::info, "governor", where + ": '" + c.governor + "' (these cores are not used by the thread plan)");
    } else if (is_slow_governor(c.governor, c.driver)) {
      const std::string policy = "/sys/devices/system/cpu/cpu" + std::to_string(c.cpus.front()) + "/cpufreq/scaling_governor";
      add(out, Level::warn, "governor", where + ": '" + c.governor + "' keeps these cores at low clocks",
          "turn off battery saver / power-save mode; with root: echo schedutil > " + policy);
    } else {
      add(out, Level::ok, "governor", where + ": " + c.governor + (c.driver != "unknown" ? " (" + c.driver + ")" : ""));
    }
    uint64_t cap = 0, hw = 0, cur = 0;
    for (const CoreFreq& f : snap.cores) {
      if (std::find(c.cpus.begin(), c.cpus.end(), f.cpu) == c.cpus.end()) continue;
      cap = std::max(cap, f.policy_max_khz);
      hw = std::max(hw, f.hw_max_khz);
      cur = std::max(cur, f.cur_khz);
    }
    if (cap > 0 && hw > 0 && static_cast<double>(cap) < kCapFraction * static_cast<double>(hw) && in_use) {
      add(out, Level::warn, "clock cap",
          where + ": capped at " + fmt_mhz(cap) + " of " + fmt_mhz(hw) + " (thermal limit or power-save)",
          "let the device cool down, unplug it from a hot charger, turn off battery saver; then run doctor again");
    } else if (cap > 0 && hw > 0) {
      add(out, Level::ok, "clocks", where + ": now " + fmt_mhz(cur) + ", cap " + fmt_mhz(cap) + " of " + fmt_mhz(hw));
    }
  }
}

void heat_power_checks(const Snapshot& snap, std::vector<Check>& out) {
  const ThermalZone* hottest = nullptr;
  int readable = 0;
  for (const ThermalZone& z : snap.thermal) {
    if (!known(z.celsius)) continue;
    ++readable;
    if (hottest == nullptr || z.celsius > hottest->celsius) hottest = &z;
  }
  if (hottest == nullptr) {
    add(out, Level::info, "temperature", "no thermal zone readable here");
  } else if (hottest->celsius >= kHotCelsius) {
    add(out, Level::warn, "temperature",
        "hottest of " + tools::plural(readable, "zone") + ": " + hottest->type + " at " + fmt_celsius(hottest->celsius),
        "the device is hot and will throttle: let it cool (off the charger, out of the sun) before measuring");
  } else {
    add(out, Level::ok, "temperature",
        "hottest of " + tools::plural(readable, "zone") + ": " + hottest->type + " at " +
            fmt_celsius(hottest->celsius));
  }
  const PowerState& p = snap.power;
  if (p.power_save == "on") {
    add(out, Level::warn, "power", "battery saver is on: Android lowers the clocks and may park the big cores",
        "turn battery saver off (Settings > Battery)");
  } else if (p.platform_profile == "low-power" || p.platform_profile == "quiet") {
    add(out, Level::warn, "power", "platform profile '" + p.platform_profile + "' limits the CPU's power",
        "switch the power profile to balanced or performance");
  } else if (p.battery_status == "Discharging" && known(p.battery_percent) && p.battery_percent < kLowBatteryPercent) {
    add(out, Level::warn, "power", "battery at " + fmt_double(p.battery_percent, 0) + "% and discharging: phones cap clocks",
        "charge the phone above 20% before measuring");
  } else if (p.power_save == "unknown" && p.battery_status == "unknown" && p.platform_profile == "unknown") {
    add(out, Level::info, "power", "battery and power-save state not readable here");
  } else {
    add(out, Level::ok, "power", power_line(p));
  }
}

void load_check(const Snapshot& snap, size_t n_cpus, std::vector<Check>& out) {
  if (!known(snap.load_avg_1m)) return;
  const std::string text = "load average " + fmt_double(snap.load_avg_1m) + " over " + std::to_string(n_cpus) + " CPUs";
  if (snap.load_avg_1m > static_cast<double>(n_cpus)) {
    // INFO, not WARN: Android counts blocked kernel threads, so its load runs high at rest.
    add(out, Level::info, "load", text + ": other processes are busy, measurements will be noisy",
        "close other apps and builds before measuring; bench reports the CPU share it got");
  } else {
    add(out, Level::ok, "load", text);
  }
}

void steal_check(double steal, std::vector<Check>& out) {
  if (!known(steal)) return;
  const std::string text = "steal time " + fmt_percent(steal) + " of the CPUs' time while all of them were busy";
  if (steal >= kStealLimit) {
    add(out, Level::warn, "steal", text + ": a hypervisor runs other guests on these cores, and every step waits for them",
        "use dedicated cores (a non-shared instance) or measure when the host is quieter; bench reports the steal time "
        "of its tests");
  } else {
    add(out, Level::ok, "steal", text);
  }
}

// The engine asks for 2 MiB pages for the repacked weights
// (engine/model/stream_arena.h); the kernel gives them unless the mode is "never".
void huge_page_check(const DoctorInput& in, const DeviceInfo& device, std::vector<Check>& out) {
  const std::string& mode = device.transparent_huge_pages;
  if (mode == "never") {
    add(out, Level::warn, "huge pages",
        "transparent huge pages are off: the weights stream through 4 KiB pages, one TLB entry per 4 KiB "
        "(a read loop ran 10.1 GB/s in 4 KiB pages against 12.4 GB/s in 2 MiB pages on a 2-core VM)",
        "as root: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (a stock phone keeps its setting)");
  } else if (mode == "always" || mode == "madvise") {
    std::string message = "transparent huge pages " + mode + ": the engine asks for 2 MiB pages for the weights";
    if (in.model != nullptr && in.model->repacked_bytes > 0) {
      message += "; " + fmt_bytes_or_none(in.model->repacked_huge_page_bytes) + " of " + fmt_bytes(in.model->repacked_bytes) +
                 " of repacked weights in 2 MiB pages";
    }
    add(out, Level::ok, "huge pages", message);
  } else {
    add(out, Level::info, "huge pages", "transparent huge page setting not readable (/sys/kernel/mm/transparent_hugepage)");
  }
}

void memory_checks(const DoctorInput& in, const DeviceInfo& device, const Snapshot& snap, std::vector<Check>& out) {
  const uint64_t avail = snap.mem_available_bytes;
  if (avail == 0) {
    add(out, Level::info, "memory", "MemAvailable not readable");
  } else if (in.model != nullptr && in.model->file_bytes > 0 &&
             // the model's own resident pages were available before it was loaded
             static_cast<double>(in.model->file_bytes) >
                 0.9 * static_cast<double>(avail + in.model->rss_after_load_bytes)) {
    add(out, Level::warn, "memory",
        "the model (" + fmt_bytes(in.model->file_bytes) + ") does not fit in MemAvailable (" + fmt_bytes(avail) + ")",
        "weights would be re-read from flash every token: close apps or use a smaller quantization");
  } else {
    add(out, Level::ok, "memory", "MemAvailable " + fmt_bytes(avail) + " of " + fmt_bytes(device.mem_total_bytes));
  }
  huge_page_check(in, device, out);
  if (in.model != nullptr) {
    const ModelInfo& m = *in.model;
    // The process alone is a few MiB (binary, libraries, thread stacks): on a
    // 1 MiB model that was a 5x "expansion". Judged is what the load added.
    if (const double ratio = load_rss_ratio(m); known(ratio)) {
      const std::string what = "resident " + fmt_bytes(m.rss_after_load_bytes) + " after load" +
                               (m.rss_before_load_bytes ? " (" + fmt_bytes(m.rss_before_load_bytes) + " before it)" : "") +
                               " for a " + fmt_bytes(m.file_bytes) + " file: the weights take " + fmt_double(ratio) +
                               "x the file" + (m.rss_before_load_bytes ? " (the load's fixed 1 MiB aside)" : "");
      if (ratio > kRssLimit) {
        add(out, Level::warn, "model memory", what + ": weights expanded or copied",
            "check the kernel lines above for fallbacks; report it with `bench -o json` attached");
      } else {
        add(out, Level::ok, "model memory", what);
      }
    }
  }
}

}  // namespace

const char* level_name(Level l) {
  switch (l) {
    case Level::ok: return "OK";
    case Level::info: return "INFO";
    case Level::warn: return "WARN";
  }
  return "?";
}

std::vector<Check> doctor_checks(const DoctorInput& in) {
  std::vector<Check> out;
  // A captured tree describes another device: its own cpuinfo names its arch
  // and features; the kernel lines stay about this binary on this CPU.
  kernels::CpuFeatures device_cpu = in.cpu;
  if (!in.fs->is_live()) {
    const kernels::CpuFeatures captured = features_from_cpuinfo(in.fs->read("/proc/cpuinfo").value_or(""));
    if (captured.arch != kernels::Arch::unknown) device_cpu = captured;
  }
  const DeviceInfo device = collect_device(*in.fs, *in.topology, device_cpu);
  const Snapshot snap = take_snapshot(*in.fs, *in.topology);
  if (in.build.build_type == "unoptimized") {
    add(out, Level::warn, "build", "this engine was compiled without optimization",
        "rebuild with -DCMAKE_BUILD_TYPE=Release");
  } else {
    add(out, Level::ok, "build", "engine " + in.build.version + ", " + in.build.compiler + ", " + in.build.build_type);
  }
  kernel_checks(in, out);
  const engine::LogLevel saved = engine::log_level();
  engine::set_log_level(engine::LogLevel::off);  // the plan's warnings become WARN lines below
  engine::ThreadPlan plan;
  try {
    plan = engine::ThreadPlan::make(*in.topology, in.threads);
  } catch (...) {
    engine::set_log_level(saved);
    throw;
  }
  engine::set_log_level(saved);
  topology_checks(in, device, plan, out);
  clock_checks(device, snap, plan, out);
  heat_power_checks(snap, out);
  load_check(snap, in.topology->cores.size(), out);
  steal_check(in.steal_share, out);
  memory_checks(in, device, snap, out);
  return out;
}

double steal_sample(const FsRoot& fs, const engine::CpuTopology& topology, double seconds) {
  std::atomic<bool> stop{false};
  const std::vector<CpuTicks> before = read_cpu_ticks(fs);
  std::vector<std::thread> spinners;
  const size_t n = std::max<size_t>(topology.cores.size(), 1);
  for (size_t i = 0; i < n; ++i) {
    spinners.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true, std::memory_order_relaxed);
  for (std::thread& t : spinners) t.join();
  std::vector<CpuTicks> elapsed;
  add_elapsed(elapsed, before, read_cpu_ticks(fs));
  return steal_share(elapsed, {});
}

int warning_count(const std::vector<Check>& checks) {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const Check& c) { return c.level == Level::warn; }));
}

std::string format_checks(const std::vector<Check>& checks) {
  std::string s;
  for (const Check& c : checks) {
    char head[16];
    std::snprintf(head, sizeof head, "%-5s ", level_name(c.level));
    s += head + c.topic + ": " + c.message + "\n";
    if (!c.advice.empty() && c.level != Level::ok) s += "      -> " + c.advice + "\n";
  }
  const int warnings = warning_count(checks);
  s += warnings == 0 ? "doctor: no problems found that would make inference slow\n"
                     : "doctor: " + std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s") +
                           ": inference would be slow here until fixed (see the WARN lines)\n";
  return s;
}

}  // namespace bench
