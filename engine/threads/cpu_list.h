// CPU lists as Linux writes them in sysfs (online, cluster_cpus_list) and as
// users type them (--cpus 4-7,9): comma-separated CPU numbers and ranges.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engine {

// "0-3,6,8-9" -> {0,1,2,3,6,8,9}. Order of first appearance is kept and
// duplicates are dropped, so "7,4-6" pins thread 0 to CPU 7. Whitespace around
// items is ignored; an empty or all-whitespace text is an empty list. Throws
// engine::Error naming the bad item ("4-", "a", "7-4", a CPU >= kMaxCpus).
std::vector<int> parse_cpu_list(std::string_view text);

// {0,1,2,3,6} -> "0-3,6" (sorted, ranges collapsed); {} -> "none".
std::string format_cpu_list(std::vector<int> cpus);

// The largest CPU number + 1 the engine handles (Linux's default NR_CPUS for
// arm64 and x86_64 distributions is at most 8192; phones have < 16).
inline constexpr int kMaxCpus = 8192;

}  // namespace engine
