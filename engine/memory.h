// The process's memory, as the kernel counts it (/proc/self/status): what a
// user compares against the model file's size.
#pragma once

#include <cstdint>

namespace engine {

struct MemoryUsage {
  uint64_t rss_bytes = 0;       // VmRSS: resident now
  uint64_t peak_rss_bytes = 0;  // VmHWM: the most ever resident
  bool known = false;           // false where /proc is not readable
};

MemoryUsage memory_usage();

}  // namespace engine
