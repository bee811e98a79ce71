// Why is one report slower than the other? Rules, each comparing one cause
// across the two reports and stating its evidence from both. Findings are
// ranked: causes on the slower side first, then by the rule order below,
// which follows the usual size of the effect on phones:
//
//   1 different_file     different SHA-256 or tensor types: not the same work
//   2 kernel_fallback    a kernel fallback or a lower tier (int4 expanded in
//                        software, 5-50x)
//   3 unoptimized_build  an -O0 build of the engine
//   4 weights_expanded   resident memory far above the file (weights expanded
//                        or copied; swapping)
//   5 thread_placement   threads beyond the big cores or workers on little cores
//   6 pinning_failed     affinity requests refused (workers drift to little cores)
//   7 low_frequency      power-save governor, battery saver, or a clock cap
//                        before the run
//   8 throttling         clocks fell or heat rose across the sustained rounds,
//                        or the clock cap fell during the run
//   9 cpu_contention     other processes took the cores: the process got far
//                        less CPU time than wall time x threads
//  10 different_test     different prompt/decode lengths, KV depth or KV type
//  11 measurement_kind   one report has no separate decode rows (TTFT-only or
//                        prompt and generation mixed), or ran without warm-up
//  12 thread_count       different thread counts (both within the big cores)
//  13 memory_bandwidth   the read-bandwidth probe differs (decode's wall)
//  14 different_build    engine version, compiler or compiled tiers differ
//  15 different_device   different device or SoC (context, not a fault)
#pragma once

#include <string>
#include <vector>

#include "tools/bench/report.h"

namespace bench {

struct Finding {
  std::string cause;     // one of the ids above
  int rank = 0;          // 1..15, the rule order
  char side = '=';       // 'A' or 'B': the report with the problem; '=' both or neither
  bool explains_slower = false;  // the problem is on the slower side
  std::string summary;
  std::vector<std::string> evidence;  // each line quotes both reports
};

struct Diagnosis {
  char slower = '?';     // 'A', 'B', '=' (within 5%), '?' (no common figure)
  double ratio = kUnknown;  // faster / slower
  std::string headline;
  std::vector<Finding> findings;  // ranked
};

// The rule ids in rank order.
const std::vector<std::string>& diagnosis_causes();

// Compares run `index` of each report (both reports usually hold one run).
Diagnosis diagnose(const Report& a, const Report& b, size_t index = 0);

// Markdown: a side-by-side table of both reports, then the ranked diagnosis.
std::string format_compare(const Report& a, const Report& b, const std::string& label_a,
                           const std::string& label_b);

}  // namespace bench
