// The default report format: a markdown document a person reads on the phone's
// terminal or pastes into an issue. The environment block comes first, then
// the results table (prefill, decode and TTFT as separate rows), then per run
// the thread placement, the roofline, clocks and heat before and after, and
// the sustained rounds.
#pragma once

#include <string>

#include "tools/bench/report.h"

namespace bench {

std::string report_markdown(const Report& report);

// Pieces shared with the compare table.
std::string clusters_line(const DeviceInfo& d);
std::string kernels_line(const ModelInfo& m);
std::string tensor_types_line(const ModelInfo& m);
std::string workers_line(const ThreadsInfo& t);
std::string power_line(const PowerState& p);
std::string device_name(const DeviceInfo& d);  // "Pixel 8 Pro (from getprop)"

}  // namespace bench
