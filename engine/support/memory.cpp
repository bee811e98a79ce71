#include "engine/support/memory.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace engine {
namespace {

// The value of "<key>: <n> kB" in a /proc file, in bytes; 0 when absent.
uint64_t proc_kb(const char* path, const char* key) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char line[256];
  const size_t key_len = std::strlen(key);
  uint64_t bytes = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long kb = 0;
    if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':' &&
        std::sscanf(line + key_len + 1, " %llu kB", &kb) == 1) {
      bytes = kb * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

// A file holding one number; false when unreadable or "max" (no limit).
bool read_number(const char* path, uint64_t& out) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

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
    } else if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1) {
      m.anon_bytes = kb * 1024;
    }
  }
  std::fclose(f);
  return m;
}

MemoryAvailable memory_available() {
  MemoryAvailable a;
  auto consider = [&](uint64_t bytes, const char* source) {
    if (!a.known || bytes < a.bytes) {
      a.bytes = bytes;
      a.source = source;
    }
    a.known = true;
  };
  if (const uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable"); avail != 0) consider(avail, "MemAvailable");
  // A container's memory limit: inside one, /sys/fs/cgroup is its own cgroup
  // (v2). On a host it is the root group, which has no memory.max.
  uint64_t limit = 0, used = 0;
  if (read_number("/sys/fs/cgroup/memory.max", limit) && read_number("/sys/fs/cgroup/memory.current", used)) {
    consider(limit > used ? limit - used : 0, "cgroup memory.max");
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const uint64_t in_use = proc_kb("/proc/self/status", "VmSize");
    consider(rl.rlim_cur > in_use ? rl.rlim_cur - in_use : 0, "RLIMIT_AS");
  }
  return a;
}

std::string format_bytes(uint64_t bytes) {
  char buf[48];
  if (bytes >= (uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

}  // namespace engine
