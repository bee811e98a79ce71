// CpuTopology::detect: reading sysfs and /proc/cpuinfo. Every missing or
// malformed file is a fallback with a note, never an exception.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "engine/support/error.h"
#include "engine/support/text.h"
#include "engine/threads/affinity.h"
#include "engine/threads/cpu_list.h"
#include "engine/threads/topology.h"

namespace engine {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// An unsigned number in decimal, or hex with 0x (cpuinfo's MIDR fields).
std::optional<uint64_t> parse_number(std::string_view s) {
  s = trim_space(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> read_number(const fs::path& path) {
  const auto text = read_text(path);
  return text ? parse_number(*text) : std::nullopt;
}

std::optional<std::vector<int>> read_cpu_list(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  try {
    return parse_cpu_list(*text);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// /proc/cpuinfo, per processor: MIDR fields (arm64) and "model name" (x86).
struct CpuinfoEntry {
  std::optional<uint64_t> implementer, variant, part, revision;
  std::string model_name;
  uint32_t midr() const {
    if (!implementer || !part) return 0;
    return make_midr(static_cast<uint32_t>(*implementer), static_cast<uint32_t>(variant.value_or(0)),
                     static_cast<uint32_t>(*part), static_cast<uint32_t>(revision.value_or(0)));
  }
};

struct Cpuinfo {
  std::vector<std::pair<int, CpuinfoEntry>> processors;
  std::string hardware;
  bool shared_midr = false;  // pre-4.x arm64 format: one MIDR block for all CPUs

  const CpuinfoEntry* find(int cpu) const {
    for (const auto& [n, e] : processors) {
      if (n == cpu) return &e;
    }
    return nullptr;
  }
};

// Blocks are separated by blank lines; a block with one "processor" line
// describes that CPU. Old arm64 kernels list every "processor : N" in one block
// followed by a single MIDR (the boot CPU's), which would mislabel a
// big.LITTLE chip, so such a MIDR is not used.
Cpuinfo parse_cpuinfo(const std::string& text) {
  Cpuinfo info;
  std::vector<int> block_cpus;
  CpuinfoEntry block;
  bool block_has_midr = false;
  const auto flush = [&] {
    if (block_cpus.size() == 1) {
      info.processors.emplace_back(block_cpus[0], block);
    } else {
      if (block_has_midr) info.shared_midr = true;
      for (int cpu : block_cpus) info.processors.emplace_back(cpu, CpuinfoEntry{});
    }
    block_cpus.clear();
    block = CpuinfoEntry{};
    block_has_midr = false;
  };
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (trim_space(line).empty()) flush();
      continue;
    }
    const std::string_view key = trim_space(std::string_view(line).substr(0, colon));
    const std::string_view value = trim_space(std::string_view(line).substr(colon + 1));
    if (key == "processor") {
      if (const auto n = parse_number(value); n && *n < static_cast<uint64_t>(kMaxCpus)) {
        block_cpus.push_back(static_cast<int>(*n));
      }
    } else if (key == "CPU implementer") {
      block.implementer = parse_number(value);
      block_has_midr = true;
    } else if (key == "CPU variant") {
      block.variant = parse_number(value);
    } else if (key == "CPU part") {
      block.part = parse_number(value);
    } else if (key == "CPU revision") {
      block.revision = parse_number(value);
    } else if (key == "model name") {
      block.model_name = std::string(value);
    } else if (key == "Hardware") {
      info.hardware = std::string(value);
    }
  }
  flush();
  return info;
}

// The online CPUs, through the fallbacks a container or an old kernel needs.
std::vector<int> online_cpus(const fs::path& cpu_dir, const Cpuinfo& cpuinfo, bool live,
                             std::vector<std::string>& notes) {
  if (auto online = read_cpu_list(cpu_dir / "online"); online && !online->empty()) {
    if (auto possible = read_cpu_list(cpu_dir / "possible")) {
      std::vector<int> offline;
      for (int cpu : *possible) {
        if (std::find(online->begin(), online->end(), cpu) == online->end()) offline.push_back(cpu);
      }
      if (!offline.empty()) {
        notes.push_back("CPUs " + format_cpu_list(offline) +
                        " are offline (hotplugged out by the kernel or a power HAL) and are not used");
      }
    }
    return *online;
  }
  if (auto possible = read_cpu_list(cpu_dir / "possible"); possible && !possible->empty()) {
    notes.push_back("no readable sys/devices/system/cpu/online: assuming every possible CPU (" +
                    format_cpu_list(*possible) + ") is online");
    return *possible;
  }
  std::vector<int> cpus;
  std::error_code ec;
  for (fs::directory_iterator it(cpu_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 3 && name.compare(0, 3, "cpu") == 0) {
      if (const auto n = parse_number(std::string_view(name).substr(3)); n && *n < static_cast<uint64_t>(kMaxCpus)) {
        cpus.push_back(static_cast<int>(*n));
      }
    }
  }
  if (!cpus.empty()) {
    std::sort(cpus.begin(), cpus.end());
    notes.push_back("no online/possible CPU list: using the cpuN directories (" + format_cpu_list(cpus) + ")");
    return cpus;
  }
  for (const auto& [n, e] : cpuinfo.processors) cpus.push_back(n);
  if (!cpus.empty()) {
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    notes.push_back("no sys/devices/system/cpu: using the processors of /proc/cpuinfo (" + format_cpu_list(cpus) +
                    ")");
    return cpus;
  }
  const unsigned n = live ? std::thread::hardware_concurrency() : 0;
  if (n > 0) {
    for (unsigned i = 0; i < n; ++i) cpus.push_back(static_cast<int>(i));
    notes.push_back("no sysfs CPU list and no /proc/cpuinfo: assuming CPUs 0-" + std::to_string(n - 1) +
                    " (std::thread::hardware_concurrency)");
  } else {
    cpus.push_back(0);
    notes.push_back("no CPU information found: assuming a single CPU 0");
  }
  return cpus;
}

// "CPUs 0-3" or "all CPUs" for a note about the CPUs lacking a file.
std::string which(const std::vector<int>& missing, size_t total) {
  return missing.size() == total ? "any CPU" : "CPUs " + format_cpu_list(missing);
}

}  // namespace

CpuTopology CpuTopology::detect(const std::string& root) {
  const bool live = fs::path(root) == fs::path("/");
  const fs::path cpu_dir = fs::path(root) / "sys/devices/system/cpu";
  std::vector<std::string> notes;

  Cpuinfo cpuinfo;
  if (const auto text = read_text(fs::path(root) / "proc/cpuinfo")) {
    cpuinfo = parse_cpuinfo(*text);
  } else {
    notes.push_back("no readable /proc/cpuinfo: core types unknown");
  }
  if (cpuinfo.shared_midr) {
    notes.push_back("/proc/cpuinfo lists one MIDR for all CPUs (old kernel format): core types unknown");
  }

  std::vector<CoreInfo> cores;
  std::vector<int> no_freq, no_capacity, no_type;
  for (int cpu : online_cpus(cpu_dir, cpuinfo, live, notes)) {
    const fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
    CoreInfo c;
    c.cpu = cpu;
    c.max_freq_khz = read_number(dir / "cpufreq/cpuinfo_max_freq").value_or(0);
    c.capacity = static_cast<int>(std::min<uint64_t>(read_number(dir / "cpu_capacity").value_or(0), 1u << 20));
    c.smt_primary = cpu;
    if (const auto siblings = read_cpu_list(dir / "topology/thread_siblings_list");
        siblings && std::find(siblings->begin(), siblings->end(), cpu) != siblings->end()) {
      c.smt_primary = *std::min_element(siblings->begin(), siblings->end());
    }
    auto group = read_cpu_list(dir / "topology/cluster_cpus_list");
    if (!group || group->empty()) group = read_cpu_list(dir / "topology/core_siblings_list");
    if (group && !group->empty()) c.sysfs_group = *std::min_element(group->begin(), group->end());
    if (const CpuinfoEntry* e = cpuinfo.find(cpu)) {
      c.midr = e->midr();
      if (c.midr == 0) c.core_name = e->model_name;
    }
    if (c.max_freq_khz == 0) no_freq.push_back(cpu);
    if (c.capacity == 0) no_capacity.push_back(cpu);
    if (c.midr == 0 && c.core_name.empty()) no_type.push_back(cpu);
    cores.push_back(std::move(c));
  }
  // Intel hybrid parts (Alder Lake and later) list their core types here; the
  // model name is the same for both.
  for (const auto& [pmu, suffix, core_class] : {std::tuple{"cpu_core", " (P-core)", CoreClass::performance},
                                                std::tuple{"cpu_atom", " (E-core)", CoreClass::efficiency}}) {
    const auto cpus = read_cpu_list(fs::path(root) / "sys/devices" / pmu / "cpus");
    if (!cpus) continue;
    for (CoreInfo& c : cores) {
      if (c.midr == 0 && std::find(cpus->begin(), cpus->end(), c.cpu) != cpus->end()) {
        c.core_name += suffix;
        c.core_class = core_class;
      }
    }
  }
  if (!no_freq.empty()) {
    notes.push_back("no cpufreq/cpuinfo_max_freq for " + which(no_freq, cores.size()) +
                    " (a VM, a container or a kernel without cpufreq)");
  }
  if (!no_capacity.empty()) notes.push_back("no cpu_capacity for " + which(no_capacity, cores.size()));
  if (!no_type.empty() && cpuinfo.find(no_type.front()) != nullptr) {
    notes.push_back("/proc/cpuinfo gives no MIDR or model name for " + which(no_type, cores.size()));
  }

  CpuTopology topo = from_cores(std::move(cores));
  topo.hardware = cpuinfo.hardware;
  notes.insert(notes.end(), topo.notes.begin(), topo.notes.end());
  topo.notes = std::move(notes);
  if (live) {
    if (const auto allowed = os::thread_affinity()) topo.restrict_to(*allowed);
  }
  return topo;
}

}  // namespace engine
