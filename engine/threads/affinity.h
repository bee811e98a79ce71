// The OS calls behind thread placement: pinning, the CPU a thread runs on, the
// process's CPU set, per-thread nice. Linux and Android share one code path
// (raw sched_setaffinity / sched_getaffinity syscalls, sched_getcpu, which
// glibc and bionic both have): nothing here is guarded by a glibc-only macro.
// Elsewhere every call reports ENOSYS and the pool runs unpinned.
#pragma once

#include <optional>
#include <vector>

namespace engine::os {

// Whether this build can pin threads at all (false off Linux/Android).
bool affinity_supported();

// Restricts the calling thread to `cpus`. 0 on success, else the errno
// (EINVAL: no CPU of the set is online or allowed by the cpuset; EPERM).
int set_thread_affinity(const std::vector<int>& cpus);
inline int pin_thread_to(int cpu) { return set_thread_affinity({cpu}); }

// The calling thread's CPU set, ascending; nullopt when it cannot be read.
std::optional<std::vector<int>> thread_affinity();

// The CPU the calling thread runs on right now; -1 when unknown.
int current_cpu();

// setpriority(PRIO_PROCESS, gettid(), nice) for the calling thread. 0 or errno
// (EACCES / EPERM: lowering nice needs CAP_SYS_NICE or RLIMIT_NICE).
int set_thread_nice(int nice);

}  // namespace engine::os
