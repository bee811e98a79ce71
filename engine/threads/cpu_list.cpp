#include "engine/threads/cpu_list.h"

#include <algorithm>
#include <charconv>

#include "engine/support/error.h"
#include "engine/support/text.h"

namespace engine {
namespace {

int parse_cpu(std::string_view s, std::string_view item) {
  s = trim_space(s);
  int value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0 || value >= kMaxCpus) {
    throw Error("bad CPU list item '" + std::string(item) + "': expected a CPU number (0.." +
                std::to_string(kMaxCpus - 1) + ") or a range like 4-7");
  }
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  std::vector<bool> seen;
  const auto add = [&](int cpu) {
    if (static_cast<size_t>(cpu) >= seen.size()) seen.resize(static_cast<size_t>(cpu) + 1, false);
    if (!seen[static_cast<size_t>(cpu)]) {
      seen[static_cast<size_t>(cpu)] = true;
      cpus.push_back(cpu);
    }
  };
  text = trim_space(text);
  if (text.empty()) return cpus;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim_space(text.substr(start, comma - start));
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      add(parse_cpu(item, item));
    } else {
      const int first = parse_cpu(item.substr(0, dash), item);
      const int last = parse_cpu(item.substr(dash + 1), item);
      if (last < first) throw Error("bad CPU list item '" + std::string(item) + "': the range is reversed");
      for (int cpu = first; cpu <= last; ++cpu) add(cpu);
    }
    start = comma + 1;
  }
  return cpus;
}

std::string format_cpu_list(std::vector<int> cpus) {
  if (cpus.empty()) return "none";
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
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

}  // namespace engine
