#include "tools/bench/text_util.h"

#include <cmath>
#include <cstdio>

#include "engine/threads/cpu_list.h"
#include "tools/common/plural.h"

namespace bench {

std::string fmt_double(double v, int decimals) {
  if (std::isnan(v)) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_sig(double v, int digits) {
  if (std::isnan(v)) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fmt_bytes_or_none(uint64_t bytes) { return bytes == 0 ? "none" : fmt_bytes(bytes); }

std::string fmt_bytes(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  char buf[64];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1ull << 20));
  }
  return buf;
}

std::string fmt_mhz(uint64_t khz) {
  if (khz == 0) return "unknown";
  return std::to_string((khz + 500) / 1000) + " MHz";
}

std::string fmt_celsius(double c) { return std::isnan(c) ? "unknown" : fmt_double(c, 1) + " C"; }

std::string fmt_percent(double fraction) {
  return std::isnan(fraction) ? "unknown" : fmt_double(100.0 * fraction, 0) + "%";
}

std::string fmt_threads(int64_t n) { return tools::plural(n, "thread"); }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string cpu_list_text(const std::vector<int>& cpus) { return engine::format_cpu_list(cpus); }

}  // namespace bench
