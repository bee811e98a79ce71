// Number formatting shared by the report formats and the diagnosis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

std::string fmt_double(double v, int decimals = 2);  // "unknown" for NaN
std::string fmt_sig(double v, int digits = 3);        // significant digits: "1.95", "0.00124"
std::string fmt_bytes(uint64_t bytes);                // "607.3 MiB", "1.21 GiB"; "unknown" for 0
std::string fmt_bytes_or_none(uint64_t bytes);        // the same, "none" for 0 (where 0 is an amount)
std::string fmt_mhz(uint64_t khz);                    // "3302 MHz"; "unknown" for 0
std::string fmt_celsius(double c);                    // "45.1 C"; "unknown"
std::string fmt_percent(double fraction);             // "84%"; "unknown"
std::string fmt_threads(int64_t n);                   // "1 thread", "4 threads"
std::string join(const std::vector<std::string>& parts, const std::string& sep);
std::string cpu_list_text(const std::vector<int>& cpus);  // "0-3,6"; "none"

}  // namespace bench
