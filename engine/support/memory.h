// The process's memory, as the kernel counts it (/proc/self/status): what a
// user compares against the model file's size; and the memory still available
// to it, so a session that cannot fit is refused before it allocates.
#pragma once

#include <cstdint>
#include <string>

namespace engine {

struct MemoryUsage {
  uint64_t rss_bytes = 0;       // VmRSS: resident now
  uint64_t peak_rss_bytes = 0;  // VmHWM: the most ever resident
  uint64_t anon_bytes = 0;      // RssAnon: resident and not backed by a file (heap, not the mapping)
  bool known = false;           // false where /proc is not readable
};

MemoryUsage memory_usage();

// The most this process can still allocate and touch: the smallest of the
// kernel's MemAvailable (/proc/meminfo), the cgroup v2 limit minus its usage,
// and RLIMIT_AS minus the address space in use. `source` names the bound that
// won ("MemAvailable", "cgroup memory.max", "RLIMIT_AS"); known is false when
// none could be read (then nothing is refused).
struct MemoryAvailable {
  uint64_t bytes = UINT64_MAX;
  std::string source;
  bool known = false;
};

MemoryAvailable memory_available();

// "1.5 GiB" / "12.0 MiB" / "512 bytes": sizes in messages.
std::string format_bytes(uint64_t bytes);

}  // namespace engine
