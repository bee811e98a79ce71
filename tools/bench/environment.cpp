#include "tools/bench/environment.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "engine/model/stream_arena.h"
#include "engine/threads/cpu_list.h"
#include "engine/threads/midr.h"
#include "engine/support/version.h"

namespace bench {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string cpu_dir(int cpu) { return "/sys/devices/system/cpu/cpu" + std::to_string(cpu); }

// The value shared by every CPU of a cluster, "mixed (a, b)" when they differ,
// "unknown" when no CPU has the file.
std::string cluster_value(const FsRoot& fs, const std::vector<int>& cpus, const std::string& file) {
  std::vector<std::string> seen;
  for (int cpu : cpus) {
    const auto v = fs.read(cpu_dir(cpu) + "/cpufreq/" + file);
    if (v && !v->empty() && std::find(seen.begin(), seen.end(), *v) == seen.end()) seen.push_back(*v);
  }
  if (seen.empty()) return "unknown";
  if (seen.size() == 1) return seen[0];
  std::string s = "mixed (";
  for (size_t i = 0; i < seen.size(); ++i) s += (i ? ", " : "") + seen[i];
  return s + ")";
}

uint64_t meminfo_bytes(const std::string& meminfo, const std::string& key) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str() + key.size() + 1, "%llu", &kb) == 1) return kb * 1024;
  }
  return 0;
}

// "491520K", "8M", "1024" -> bytes.
uint64_t parse_size(const std::string& text) {
  unsigned long long v = 0;
  char unit = 0;
  const int n = std::sscanf(text.c_str(), "%llu%c", &v, &unit);
  if (n < 1) return 0;
  if (n == 2 && (unit == 'K' || unit == 'k')) return v << 10;
  if (n == 2 && (unit == 'M' || unit == 'm')) return v << 20;
  if (n == 2 && (unit == 'G' || unit == 'g')) return v << 30;
  return v;
}

const char* kBuildProps[] = {"/system/build.prop", "/system/system/build.prop", "/vendor/build.prop",
                             "/product/etc/build.prop", "/product/build.prop"};

// The first value of any of `keys` in the build.prop files under the root.
std::optional<std::string> build_prop(const FsRoot& fs, std::initializer_list<const char*> keys) {
  for (const char* file : kBuildProps) {
    const auto text = fs.read(file);
    if (!text) continue;
    for (const char* key : keys) {
      const auto v = prop_value(*text, key);
      if (v && !v->empty()) return v;
    }
  }
  return std::nullopt;
}

std::optional<std::string> getprop(const char* key) {
  auto v = run_program("getprop", {key});
  if (v && !v->empty()) return v;
  return std::nullopt;
}

bool is_android(const FsRoot& fs) {
  return fs.is_live() && (fs.exists("/system/bin/getprop") || fs.exists("/system/build.prop"));
}

double millidegrees_to_celsius(int64_t v) {
  // Most zones report millidegrees; a few drivers report degrees.
  return (v > 1000 || v < -1000) ? static_cast<double>(v) / 1000.0 : static_cast<double>(v);
}

}  // namespace

std::string cpus_label(const std::vector<int>& cpus) { return engine::format_cpu_list(cpus); }

BuildInfo collect_build() {
  BuildInfo b;
  b.version = engine::version();
  b.compiler = engine::compiler();
  b.compiled_tiers = engine::compiled_tiers();
#if defined(__OPTIMIZE__)
  b.build_type = "optimized";
#else
  b.build_type = "unoptimized";
#endif
  return b;
}

uint64_t last_level_cache_bytes(const FsRoot& fs, const engine::CpuTopology& topology) {
  uint64_t best = 0;
  int best_level = 0;
  for (const engine::CoreInfo& core : topology.cores) {
    const std::string dir = cpu_dir(core.cpu) + "/cache";
    for (const std::string& index : fs.list(dir)) {
      if (index.rfind("index", 0) != 0) continue;
      const auto type = fs.read(dir + "/" + index + "/type");
      if (type && *type == "Instruction") continue;
      const int level = static_cast<int>(fs.read_i64(dir + "/" + index + "/level").value_or(0));
      const uint64_t size = parse_size(fs.read(dir + "/" + index + "/size").value_or(""));
      if (level > best_level || (level == best_level && size > best)) {
        best_level = level;
        best = size;
      }
    }
  }
  return best;
}

DeviceInfo collect_device(const FsRoot& fs, const engine::CpuTopology& topology, const kernels::CpuFeatures& cpu) {
  DeviceInfo d;
  d.arch = kernels::arch_name(cpu.arch);
  d.cpu_features = cpu.describe();
  d.kernel = fs.read("/proc/sys/kernel/osrelease").value_or("unknown");

  if (is_android(fs)) {
    if (auto v = getprop("ro.product.model")) {
      d.model = *v;
      d.model_source = "getprop";
    }
    if (auto v = getprop("ro.product.manufacturer")) d.manufacturer = *v;
    if (auto v = getprop("ro.soc.model")) {
      d.soc = *v;
      if (auto m = getprop("ro.soc.manufacturer")) d.soc = *m + " " + *v;
    } else if (auto p = getprop("ro.board.platform")) {
      d.soc = *p;
    }
  }
  if (d.model_source == "none") {
    if (auto v = build_prop(fs, {"ro.product.model", "ro.product.system.model", "ro.product.vendor.model",
                                 "ro.product.product.model"})) {
      d.model = *v;
      d.model_source = "build.prop";
      if (auto m = build_prop(fs, {"ro.product.manufacturer", "ro.product.system.manufacturer",
                                   "ro.product.vendor.manufacturer"})) {
        d.manufacturer = *m;
      }
      if (d.soc == "unknown") {
        if (auto s = build_prop(fs, {"ro.soc.model", "ro.board.platform"})) d.soc = *s;
      }
    }
  }
  if (d.model_source == "none") {
    if (auto v = fs.read("/proc/device-tree/model"); v && !v->empty()) {
      d.model = trim(*v);
      d.model_source = "device-tree";
    }
  }
  if (d.model_source == "none") {
    const auto vendor = fs.read("/sys/class/dmi/id/sys_vendor");
    const auto product = fs.read("/sys/class/dmi/id/product_name");
    if (product && !product->empty()) {
      d.model = vendor && !vendor->empty() ? trim(*vendor) + " " + trim(*product) : trim(*product);
      d.model_source = "dmi";
      if (vendor) d.manufacturer = trim(*vendor);
    }
  }
  if (d.soc == "unknown") {
    const auto machine = fs.read("/sys/devices/soc0/machine");
    const auto family = fs.read("/sys/devices/soc0/family");
    if (machine && !machine->empty()) {
      d.soc = family && !family->empty() ? *family + " " + *machine : *machine;
    } else if (!topology.hardware.empty()) {
      d.soc = topology.hardware;
    }
  }

  for (const engine::Cluster& c : topology.clusters) {
    ClusterInfo ci;
    ci.rank = engine::rank_name(c.rank);
    ci.core_name = c.core_name.empty() ? "unknown" : c.core_name;
    ci.core_class = engine::core_class_name(c.core_class);
    ci.cpus = c.cpus;
    std::sort(ci.cpus.begin(), ci.cpus.end());
    ci.max_freq_khz = c.max_freq_khz;
    ci.capacity = c.capacity;
    ci.governor = cluster_value(fs, ci.cpus, "scaling_governor");
    ci.driver = cluster_value(fs, ci.cpus, "scaling_driver");
    d.clusters.push_back(std::move(ci));
  }
  d.topology_ranked_by = topology.ranked_by;
  d.topology_notes = topology.notes;
  const std::string meminfo = fs.read("/proc/meminfo").value_or("");
  d.mem_total_bytes = meminfo_bytes(meminfo, "MemTotal");
  d.llc_bytes = last_level_cache_bytes(fs, topology);
  d.transparent_huge_pages = engine::parse_huge_pages_mode(fs.read("/sys/kernel/mm/transparent_hugepage/enabled").value_or(""));
  return d;
}

Snapshot take_snapshot(const FsRoot& fs, const engine::CpuTopology& topology) {
  Snapshot s;
  for (const engine::CoreInfo& core : topology.cores) {
    CoreFreq f;
    f.cpu = core.cpu;
    const std::string dir = cpu_dir(core.cpu) + "/cpufreq/";
    f.cur_khz = fs.read_u64(dir + "scaling_cur_freq").value_or(0);
    f.policy_max_khz = fs.read_u64(dir + "scaling_max_freq").value_or(0);
    f.hw_max_khz = fs.read_u64(dir + "cpuinfo_max_freq").value_or(core.max_freq_khz);
    s.cores.push_back(f);
  }
  for (const std::string& zone : fs.list("/sys/class/thermal")) {
    if (zone.rfind("thermal_zone", 0) != 0) continue;
    ThermalZone z;
    z.zone = zone;
    z.type = fs.read("/sys/class/thermal/" + zone + "/type").value_or("unknown");
    if (const auto t = fs.read_i64("/sys/class/thermal/" + zone + "/temp")) z.celsius = millidegrees_to_celsius(*t);
    s.thermal.push_back(std::move(z));
  }
  bool any_supply = false, online = false;
  for (const std::string& supply : fs.list("/sys/class/power_supply")) {
    const std::string dir = "/sys/class/power_supply/" + supply + "/";
    const std::string type = fs.read(dir + "type").value_or("");
    if (type == "Battery") {
      if (auto st = fs.read(dir + "status")) s.power.battery_status = *st;
      if (auto cap = fs.read_i64(dir + "capacity")) s.power.battery_percent = static_cast<double>(*cap);
    } else if (const auto on = fs.read_i64(dir + "online")) {
      any_supply = true;
      online = online || *on != 0;
    }
  }
  if (any_supply) s.power.charger = online ? "online" : "offline";
  if (is_android(fs)) {
    if (const auto v = run_program("settings", {"get", "global", "low_power"})) {
      if (*v == "1") s.power.power_save = "on";
      if (*v == "0" || *v == "null") s.power.power_save = "off";
    }
  } else if (const auto v = fs.read("/sys/firmware/acpi/platform_profile")) {
    s.power.platform_profile = *v;
  }
  // Captured trees carry the battery saver state as a file of their own.
  if (!fs.is_live()) {
    if (const auto v = fs.read("/settings/global/low_power")) s.power.power_save = *v == "1" ? "on" : "off";
  }
  s.mem_available_bytes = meminfo_bytes(fs.read("/proc/meminfo").value_or(""), "MemAvailable");
  if (const auto load = fs.read("/proc/loadavg")) {
    char* end = nullptr;
    const double v = std::strtod(load->c_str(), &end);
    if (end != load->c_str()) s.load_avg_1m = v;
  }
  return s;
}

ThreadsInfo threads_info(const engine::ThreadPlan& plan, const engine::ThreadPool* pool) {
  ThreadsInfo t;
  t.n_threads = static_cast<int>(plan.size());
  t.affinity = engine::affinity_name(plan.affinity);
  t.plan = plan.describe();
  t.recommended = static_cast<int>(plan.recommended_threads);
  t.warnings = plan.warnings;
  if (pool != nullptr) {
    for (const engine::WorkerReport& r : pool->report()) {
      WorkerInfo w;
      w.thread = static_cast<int>(r.thread);
      w.cpu_asked = r.cpu_asked;
      w.pin = r.pin == engine::WorkerReport::Pin::pinned   ? "pinned"
              : r.pin == engine::WorkerReport::Pin::failed ? "failed"
                                                           : "not pinned";
      w.pin_error = r.pin_error;
      w.last_cpu = r.last_cpu;
      t.workers.push_back(w);
    }
  } else {
    for (size_t i = 0; i < plan.size(); ++i) {
      WorkerInfo w;
      w.thread = static_cast<int>(i);
      w.cpu_asked = plan.cpus[i];
      t.workers.push_back(w);
    }
  }
  return t;
}

std::vector<int> plan_cpus(const engine::ThreadPlan& plan) {
  std::vector<int> cpus;
  for (int c : plan.cpus) {
    if (c >= 0) cpus.push_back(c);
  }
  return cpus;
}

std::vector<CpuTicks> read_cpu_ticks(const FsRoot& fs) {
  std::vector<CpuTicks> out;
  std::istringstream in(fs.read("/proc/stat").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    // "cpu3 user nice system idle iowait irq softirq steal guest guest_nice";
    // guest time is already counted in user and nice. "cpu " is the sum.
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream fields(line.substr(3));
    CpuTicks t;
    fields >> t.cpu;
    uint64_t v = 0;
    int n = 0;
    for (; n < 8 && fields >> v; ++n) {
      t.total += v;
      if (n == 7) t.steal = v;
    }
    if (n == 8) out.push_back(t);  // kernels before 2.6.11 have no steal field
  }
  return out;
}

namespace {

// The entry of `cpu` in a list of ticks; end() when it is not listed.
template <class Ticks>
auto find_cpu(Ticks& ticks, int cpu) {
  return std::find_if(ticks.begin(), ticks.end(), [cpu](const CpuTicks& t) { return t.cpu == cpu; });
}

}  // namespace

void add_elapsed(std::vector<CpuTicks>& elapsed, const std::vector<CpuTicks>& before, const std::vector<CpuTicks>& after) {
  for (const CpuTicks& a : after) {
    const auto b = find_cpu(before, a.cpu);
    if (b == before.end() || a.total < b->total || a.steal < b->steal) continue;
    auto e = find_cpu(elapsed, a.cpu);
    if (e == elapsed.end()) e = elapsed.insert(elapsed.end(), CpuTicks{a.cpu, 0, 0});
    e->total += a.total - b->total;
    e->steal += a.steal - b->steal;
  }
}

double steal_share(const std::vector<CpuTicks>& elapsed, const std::vector<int>& cpus) {
  uint64_t total = 0, steal = 0;
  const auto add = [&](const CpuTicks& t) {
    total += t.total;
    steal += t.steal;
  };
  if (cpus.empty()) std::for_each(elapsed.begin(), elapsed.end(), add);
  for (int cpu : cpus) {
    const auto e = find_cpu(elapsed, cpu);
    if (e == elapsed.end()) return kUnknown;
    add(*e);
  }
  if (total == 0) return kUnknown;
  return static_cast<double>(steal) / static_cast<double>(total);
}

double cpuinfo_mhz(const FsRoot& fs, int cpu) {
  std::istringstream in(fs.read("/proc/cpuinfo").value_or(""));
  std::string line;
  int current = -1;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    if (key == "processor") current = std::atoi(line.c_str() + colon + 1);
    if (key == "cpu MHz" && current == cpu) return std::atof(line.c_str() + colon + 1);
  }
  return 0;
}

kernels::CpuFeatures features_from_cpuinfo(const std::string& cpuinfo) {
  using kernels::Feature;
  static const std::map<std::string, Feature> arm = {
      {"asimd", Feature::asimd}, {"asimdhp", Feature::fp16}, {"asimddp", Feature::dotprod},
      {"i8mm", Feature::i8mm},   {"bf16", Feature::bf16},    {"sve", Feature::sve},
      {"sve2", Feature::sve2},   {"svei8mm", Feature::svei8mm}, {"sme", Feature::sme}};
  static const std::map<std::string, Feature> x86 = {
      {"sse4_2", Feature::sse42},       {"avx", Feature::avx},           {"avx2", Feature::avx2},
      {"fma", Feature::fma},            {"f16c", Feature::f16c},         {"avx512f", Feature::avx512f},
      {"avx512bw", Feature::avx512bw},  {"avx512vl", Feature::avx512vl}, {"avx512_vnni", Feature::avx512vnni},
      {"avx512_bf16", Feature::avx512bf16}, {"avx_vnni", Feature::avxvnni}};
  kernels::CpuFeatures f;
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const bool is_arm = key == "Features", is_x86 = key == "flags";
    if (!is_arm && !is_x86) continue;
    f.arch = is_arm ? kernels::Arch::aarch64 : kernels::Arch::x86_64;
    std::istringstream words(line.substr(colon + 1));
    std::string w;
    const auto& table = is_arm ? arm : x86;
    while (words >> w) {
      if (const auto it = table.find(w); it != table.end()) f.set(it->second);
    }
    break;  // the first processor speaks for all (big.LITTLE cores share features)
  }
  return f;
}

}  // namespace bench
