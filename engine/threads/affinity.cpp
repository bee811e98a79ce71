#include "engine/threads/affinity.h"

#include <cerrno>

#include "engine/threads/cpu_list.h"

#if defined(__linux__)  // glibc, bionic and musl alike
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace engine::os {

#if defined(__linux__)
namespace {

// A kernel cpumask as the raw syscalls take it: kMaxCpus bits in longs. The
// syscalls are used instead of the cpu_set_t wrappers so the mask size is ours
// (CPU_SETSIZE is 1024 in both libcs, NR_CPUS may be larger).
using Mask = std::vector<unsigned long>;
constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);

Mask make_mask(const std::vector<int>& cpus) {
  Mask mask(kMaxCpus / kBitsPerWord, 0);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < kMaxCpus) mask[static_cast<size_t>(cpu) / kBitsPerWord] |= 1UL << (cpu % kBitsPerWord);
  }
  return mask;
}

}  // namespace

bool affinity_supported() { return true; }

int set_thread_affinity(const std::vector<int>& cpus) {
  const Mask mask = make_mask(cpus);
  // pid 0: the calling thread (the kernel's affinity is per thread).
  if (syscall(SYS_sched_setaffinity, 0, mask.size() * sizeof(unsigned long), mask.data()) == 0) return 0;
  return errno;
}

std::optional<std::vector<int>> thread_affinity() {
  Mask mask(kMaxCpus / kBitsPerWord, 0);
  // The raw syscall returns the number of bytes it wrote.
  const long bytes = syscall(SYS_sched_getaffinity, 0, mask.size() * sizeof(unsigned long), mask.data());
  if (bytes <= 0) return std::nullopt;
  std::vector<int> cpus;
  for (size_t bit = 0; bit < static_cast<size_t>(bytes) * 8; ++bit) {
    if ((mask[bit / kBitsPerWord] >> (bit % kBitsPerWord)) & 1) cpus.push_back(static_cast<int>(bit));
  }
  return cpus;
}

int current_cpu() { return sched_getcpu(); }

int set_thread_nice(int nice) {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, tid, nice) == 0) return 0;
  return errno;
}

#else

bool affinity_supported() { return false; }
int set_thread_affinity(const std::vector<int>&) { return ENOSYS; }
std::optional<std::vector<int>> thread_affinity() { return std::nullopt; }
int current_cpu() { return -1; }
int set_thread_nice(int) { return ENOSYS; }

#endif

}  // namespace engine::os
