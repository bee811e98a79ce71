// The report as JSON (the complete record, read back by --compare), JSONL
// (an environment line, then one self-contained line per result row) and CSV
// (one row per result, the key environment fields repeated on each row).
// The JSON layout is pinned by tests/fixtures/bench/example-report.json.
#pragma once

#include <string>

#include "tools/bench/json_value.h"
#include "tools/bench/report.h"

namespace bench {

std::string report_json(const Report& report, bool pretty = true);
Report report_from_json(const JsonValue& json);  // lenient: missing fields stay unknown
Report read_report_file(const std::string& path);

std::string report_jsonl(const Report& report);
std::string report_csv(const Report& report);

// Re-indents compact JSON text: two spaces, arrays of scalars on one line.
std::string indent_json(const std::string& compact);

}  // namespace bench
