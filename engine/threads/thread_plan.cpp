#include "engine/threads/thread_plan.h"

#include <algorithm>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/threads/cpu_list.h"

namespace engine {
namespace {

// The topology's allowed CPUs in speed order, split the way the plan uses them.
struct Pools {
  std::vector<int> fast;            // prime + big, one per physical core
  std::vector<int> fast_smt;        // their SMT siblings
  std::vector<int> little;          // little, one per physical core
  std::vector<int> little_smt;
  std::vector<int> fast_excluded;   // prime + big CPUs the cpuset forbids
};

Pools pools_of(const CpuTopology& topo) {
  Pools p;
  for (const Cluster& cl : topo.clusters) {
    const bool little = cl.rank == Cluster::Rank::little;
    for (int cpu : cl.cpus) {
      const CoreInfo* c = topo.core(cpu);
      if (c == nullptr) continue;
      if (!c->allowed) {
        if (!little) p.fast_excluded.push_back(cpu);
        continue;
      }
      if (little) {
        (c->is_smt_secondary() ? p.little_smt : p.little).push_back(cpu);
      } else {
        (c->is_smt_secondary() ? p.fast_smt : p.fast).push_back(cpu);
      }
    }
  }
  return p;
}

std::string role_of(const CpuTopology& topo, int cpu) {
  if (cpu < 0) return "not pinned";
  const CoreInfo* c = topo.core(cpu);
  if (c == nullptr || c->cluster < 0) return "unknown CPU";
  const Cluster& cl = topo.clusters[static_cast<size_t>(c->cluster)];
  std::string role = rank_name(cl.rank);
  role += ' ';
  role += c->core_name.empty() ? "core" : c->core_name;
  if (c->is_smt_secondary()) role += " (SMT sibling)";
  return role;
}

// A core known (by its MIDR) to issue in program order.
bool is_in_order(const CpuTopology& topo, int cpu) {
  const CoreInfo* c = cpu >= 0 ? topo.core(cpu) : nullptr;
  return c != nullptr && c->core_class == CoreClass::efficiency;
}

std::string fast_cores_phrase(const CpuTopology& topo, const Pools& p) {
  std::string out = std::to_string(p.fast.size()) + (p.fast.size() == 1 ? " performance core" : " performance cores");
  std::string parts;
  for (const Cluster& cl : topo.clusters) {
    if (cl.rank == Cluster::Rank::little) continue;
    std::vector<int> mine;
    for (int cpu : p.fast) {
      if (std::find(cl.cpus.begin(), cl.cpus.end(), cpu) != cl.cpus.end()) mine.push_back(cpu);
    }
    if (mine.empty()) continue;
    if (!parts.empty()) parts += ", ";
    parts += std::string(rank_name(cl.rank)) + " cpu" + format_cpu_list(mine);
  }
  return parts.empty() ? out : out + " (" + parts + ")";
}

std::string names_of(const CpuTopology& topo, const std::vector<int>& cpus) {
  std::vector<std::string> names;
  for (int cpu : cpus) {
    const CoreInfo* c = topo.core(cpu);
    const std::string name = c && !c->core_name.empty() ? c->core_name : "unknown core";
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "/") + n;
  return out;
}

// CPUs in thread order, ascending runs collapsed: {7,4,5,6} -> "7,4-6".
std::string cpu_sequence(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void append(std::vector<int>& to, const std::vector<int>& from) { to.insert(to.end(), from.begin(), from.end()); }

// The guard rails for a plan whose CPUs are decided.
void add_warnings(ThreadPlan& plan, const CpuTopology& topo, const Pools& p, const std::string& threads_flag) {
  const std::string recommended = "--threads " + std::to_string(plan.recommended_threads);
  std::vector<int> on_little, on_smt_shared, excluded;
  size_t unpinned = 0;
  for (int cpu : plan.cpus) {
    if (cpu < 0) {
      ++unpinned;
      continue;
    }
    if (contains(p.little, cpu) || contains(p.little_smt, cpu)) on_little.push_back(cpu);
    const CoreInfo* c = topo.core(cpu);
    if (c && c->is_smt_secondary() && contains(plan.cpus, c->smt_primary)) on_smt_shared.push_back(cpu);
    if (c && !c->allowed) excluded.push_back(cpu);
  }
  const std::string slowest =
      "Expected effect: every parallel step waits for its slowest thread, so decode usually gets slower, "
      "not faster, often by 2x or more. ";
  if (!on_little.empty() && !p.fast.empty()) {
    plan.warnings.push_back(threads_flag + " puts " + std::to_string(on_little.size()) + " of " +
                            std::to_string(plan.size()) + " threads on little cores (cpu" + format_cpu_list(on_little) +
                            ", " + names_of(topo, on_little) + ") next to " + fast_cores_phrase(topo, p) + ". " +
                            slowest + "Recommended: " + recommended + " with --cpus default.");
  }
  if (!on_smt_shared.empty()) {
    plan.warnings.push_back(threads_flag + " puts " + std::to_string(on_smt_shared.size()) +
                            " threads on SMT siblings of cores that already run one (cpu" +
                            format_cpu_list(on_smt_shared) +
                            "). Expected effect: two threads share one core's SIMD units, so matmuls gain little or "
                            "lose. Recommended: " + recommended + ".");
  }
  if (unpinned > 0 && plan.affinity != Affinity::none) {
    plan.warnings.push_back(threads_flag + " asks for more threads than the chosen CPUs: " + std::to_string(unpinned) +
                            " threads are not pinned and share CPUs with the others. Expected effect: threads "
                            "preempt each other in the middle of a step; decode slows down erratically, often by "
                            "several times. Recommended: " + recommended + ".");
  }
  if (plan.affinity == Affinity::none && plan.size() > p.fast.size() && !p.fast.empty()) {
    plan.warnings.push_back(threads_flag + " asks for more threads than the " + fast_cores_phrase(topo, p) +
                            " (not pinned). Expected effect: the extra threads run on little cores or share cores, and "
                            "every parallel step waits for the slowest. Recommended: " + recommended + ".");
  }
  if (!excluded.empty()) {
    plan.warnings.push_back("CPUs " + format_cpu_list(excluded) +
                            " are outside this process's CPU set (affinity mask or cpuset): pinning to them will "
                            "fail and those threads run wherever the scheduler puts them. Recommended: --cpus default, "
                            "which only uses allowed CPUs.");
  }
}

// More threads than this per CPU the process may use only oversubscribes them
// (each extra thread waits for a core; at 10,000 the system refused to start
// more): refused with the count that makes sense here.
constexpr size_t kMaxThreadsPerCpu = 4;

void check_thread_count(size_t n_threads, const Pools& p) {
  std::vector<int> allowed;
  for (const auto* pool : {&p.fast, &p.fast_smt, &p.little, &p.little_smt}) append(allowed, *pool);
  const size_t limit = kMaxThreadsPerCpu * std::max<size_t>(allowed.size(), 1);
  if (n_threads <= limit) return;
  std::sort(allowed.begin(), allowed.end());
  throw Error("--threads " + std::to_string(n_threads) + ": this process may run on " +
              std::to_string(allowed.size()) + (allowed.size() == 1 ? " CPU" : " CPUs") +
              (allowed.empty() ? "" : " (cpu " + format_cpu_list(allowed) + ")") + ", so at most " +
              std::to_string(limit) + " threads (" + std::to_string(kMaxThreadsPerCpu) +
              " per CPU); 0 picks one per fast core");
}

}  // namespace

const char* affinity_name(Affinity a) {
  switch (a) {
    case Affinity::automatic:
      return "default";
    case Affinity::all:
      return "all";
    case Affinity::list:
      return "list";
    case Affinity::none:
      return "none";
  }
  return "?";
}

void ThreadOptions::set_cpus(std::string_view spec) {
  cpus.clear();
  if (spec.empty() || spec == "default" || spec == "auto") {
    affinity = Affinity::automatic;
  } else if (spec == "all") {
    affinity = Affinity::all;
  } else if (spec == "none") {
    affinity = Affinity::none;
  } else {
    if (parse_cpu_list(spec).empty()) throw Error("--cpus: empty CPU list");
    affinity = Affinity::list;
    cpus = std::string(spec);
  }
}

ThreadPlan ThreadPlan::make(const CpuTopology& topo, const ThreadOptions& options) {
  ThreadPlan plan;
  plan.affinity = options.affinity;
  plan.nice = options.nice;
  const Pools p = pools_of(topo);
  const size_t little_count = p.little.size();
  plan.recommended_threads = std::max<size_t>(1, p.fast.empty() ? little_count : p.fast.size());
  std::string threads_flag =
      options.n_threads > 0 ? "--threads " + std::to_string(options.n_threads) : std::string("the thread count");

  std::vector<int> candidates;  // in the order threads take them
  switch (options.affinity) {
    case Affinity::automatic:
    case Affinity::none:
      append(candidates, p.fast);
      append(candidates, p.fast_smt);
      append(candidates, p.little);
      append(candidates, p.little_smt);
      break;
    case Affinity::all:
      append(candidates, p.fast);
      append(candidates, p.little);
      append(candidates, p.fast_smt);
      append(candidates, p.little_smt);
      threads_flag = options.n_threads > 0 ? threads_flag + " with --cpus all" : "--cpus all";
      break;
    case Affinity::list: {
      for (int cpu : parse_cpu_list(options.cpus)) {
        if (topo.core(cpu) == nullptr) {
          std::vector<int> online;
          for (const CoreInfo& c : topo.cores) online.push_back(c.cpu);
          throw Error("--cpus " + options.cpus + ": CPU " + std::to_string(cpu) + " is not online (online: " +
                      format_cpu_list(online) + ")");
        }
        candidates.push_back(cpu);
      }
      threads_flag = options.n_threads > 0 ? threads_flag + " with --cpus " + options.cpus : "--cpus " + options.cpus;
      break;
    }
  }
  size_t n = options.n_threads;
  check_thread_count(n, p);
  if (n == 0) {
    n = options.affinity == Affinity::all || options.affinity == Affinity::list ? candidates.size()
                                                                                 : plan.recommended_threads;
  }
  n = std::max<size_t>(n, 1);
  for (size_t t = 0; t < n; ++t) {
    const int cpu = t < candidates.size() && options.affinity != Affinity::none ? candidates[t] : -1;
    plan.cpus.push_back(cpu);
    plan.roles.push_back(role_of(topo, cpu));
    plan.in_order.push_back(is_in_order(topo, cpu));
  }
  const auto& cores = topo.cores;
  plan.only_in_order_cpus =
      std::any_of(cores.begin(), cores.end(), [](const CoreInfo& c) { return c.allowed; }) &&
      std::all_of(cores.begin(), cores.end(),
                  [&](const CoreInfo& c) { return !c.allowed || is_in_order(topo, c.cpu); });

  if (p.fast.empty() && !p.fast_excluded.empty()) {
    plan.warnings.push_back("this process may only run on little cores (cpu" + format_cpu_list(p.little) +
                            "); the performance cores (cpu" + format_cpu_list(p.fast_excluded) +
                            ") are outside its CPU set, as Android does for background apps. Expected effect: "
                            "several times slower decode. Recommended: run in the foreground (top-app cpuset) or "
                            "from a shell without taskset.");
  }
  add_warnings(plan, topo, p, threads_flag);
  for (const std::string& w : plan.warnings) log_warning(w);
  return plan;
}

ThreadPlan ThreadPlan::unpinned(size_t n_threads) {
  ThreadPlan plan;
  n_threads = std::max<size_t>(n_threads, 1);
  plan.cpus.assign(n_threads, -1);
  plan.roles.assign(n_threads, "not pinned");
  plan.recommended_threads = n_threads;
  return plan;
}

std::string ThreadPlan::describe() const {
  // Plans built by hand (tests, tools) may lack roles.
  const auto role = [&](size_t t) -> std::string {
    return t < roles.size() ? roles[t] : cpus[t] < 0 ? "not pinned" : "pinned";
  };
  std::string out = std::to_string(size()) + (size() == 1 ? " thread (" : " threads (") + affinity_name(affinity) + "):";
  for (size_t t = 0; t < size();) {
    size_t end = t + 1;
    while (end < size() && role(end) == role(t) && (cpus[end] < 0) == (cpus[t] < 0)) ++end;
    out += t == 0 ? " " : "; ";
    out += 't';  // appends: GCC 12 warns falsely on "t" + std::to_string() (-Wrestrict, PR 105651)
    out += std::to_string(t);
    if (end - t > 1) out += "-t" + std::to_string(end - 1);
    if (cpus[t] >= 0) {
      out += " cpu" + cpu_sequence(std::vector<int>(cpus.begin() + static_cast<long>(t), cpus.begin() + static_cast<long>(end)));
    }
    out += ' ';
    out += role(t);
    t = end;
  }
  if (nice) out += "; nice " + std::to_string(*nice);
  return out;
}

}  // namespace engine
