// Where each thread of the pool runs: decided once from the topology and the
// user's options, before any thread exists, so it can be tested on fixtures and
// printed by the tools.
//
// Policies (--cpus):
//   default  one thread per physical core of the prime and big clusters, never
//            on little cores, fastest core first (thread 0, the caller, does the
//            serial work between parallel steps), each pinned to its own core
//   all      one thread per allowed CPU, fastest first, pinned
//   4-7,9    exactly these CPUs, in this order, pinned
//   none     no pinning; the thread count still follows the default
//
// Guard rails (logged as WARNINGs by make() and kept in `warnings`): more
// threads than the chosen cores, threads on little cores, threads sharing a
// physical core through SMT, CPUs outside the process's cpuset, and a process
// confined to little cores. Each says the expected effect and what to set.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/threads/topology.h"

namespace engine {

enum class Affinity { automatic, all, list, none };

const char* affinity_name(Affinity a);  // "default", "all", "list", "none"

struct ThreadOptions {
  size_t n_threads = 0;  // 0: one per core the policy picks
  Affinity affinity = Affinity::automatic;
  std::string cpus;       // Affinity::list: "4-7,9"
  std::optional<int> nice;  // nice for the worker threads (the caller's is the app's); unset: inherited

  // --cpus as users type it: "default" (or "auto" or ""), "all", "none", or a
  // CPU list. Throws engine::Error on a malformed list.
  void set_cpus(std::string_view spec);
};

struct ThreadPlan {
  std::vector<int> cpus;              // per thread, 0 = the caller; -1 = not pinned
  std::vector<std::string> roles;     // per thread: "prime Cortex-X4", "not pinned", ...
  std::vector<std::string> warnings;  // the guard-rail WARNINGs, as logged
  // Per thread: its CPU is an in-order core (CoreClass::efficiency), where
  // the kernels with an in-order schedule use it (MatmulKernel::run_in_order).
  std::vector<bool> in_order;
  // Every CPU this process may use is in-order (Android's background cpuset
  // on many phones): so are the threads that are not pinned.
  bool only_in_order_cpus = false;
  Affinity affinity = Affinity::none;
  std::optional<int> nice;
  size_t recommended_threads = 1;     // what the default policy picks here

  size_t size() const { return cpus.size(); }
  // "6 threads (default): t0 cpu7 prime Cortex-X4; t1-t5 cpu2-6 big Cortex-A720"
  std::string describe() const;

  // Throws engine::Error when an explicit CPU list names a CPU that is not
  // online. Logs each warning with log_warning.
  static ThreadPlan make(const CpuTopology& topology, const ThreadOptions& options);
  // n threads, none pinned, no topology (tests, tools, single-thread use).
  static ThreadPlan unpinned(size_t n_threads);
};

}  // namespace engine
