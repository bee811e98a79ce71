#include "engine/memory.h"

#include <cstdio>
#include <cstring>

namespace engine {

MemoryUsage memory_usage() {
  MemoryUsage m;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) {
      m.rss_bytes = kb * 1024;
      m.known = true;
    } else if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) {
      m.peak_rss_bytes = kb * 1024;
    }
  }
  std::fclose(f);
  return m;
}

}  // namespace engine
