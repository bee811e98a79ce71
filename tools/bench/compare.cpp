// format_compare: both reports side by side, then the ranked diagnosis.
#include <algorithm>
#include <sstream>

#include "tools/bench/diagnosis.h"
#include "tools/bench/report_markdown.h"
#include "tools/bench/text_util.h"
#include "tools/common/plural.h"

namespace bench {
namespace {

std::string cell(std::string s) {
  for (char& c : s) {
    if (c == '|') c = '/';
    if (c == '\n') c = ' ';
  }
  return s;
}

std::string tests_cell(const Run& run, const std::string& kind) {
  std::vector<std::string> parts;
  for (const TestResult& t : run.tests) {
    if (t.kind != kind) continue;
    const bool ms = kind == "ttft";
    const Stats& s = ms ? t.ms : t.tokens_per_s;
    parts.push_back(t.name + (t.n_depth ? "@d" + std::to_string(t.n_depth) : "") + " " + fmt_double(s.median, ms ? 1 : 2) +
                    (ms ? " ms" : " t/s"));
  }
  return parts.empty() ? "-" : join(parts, ", ");
}

std::string clock_cell(const Snapshot& before, const Snapshot& after, const ThreadsInfo& t) {
  const std::vector<int> cpus = worker_cpus(t);
  return "cur " + fmt_double(mean_cur_mhz(before, cpus), 0) + " -> " + fmt_double(mean_cur_mhz(after, cpus), 0) +
         " MHz, cap " + fmt_double(mean_policy_max_mhz(before, cpus), 0) + " -> " +
         fmt_double(mean_policy_max_mhz(after, cpus), 0) + " MHz";
}

}  // namespace

std::string format_compare(const Report& a, const Report& b, const std::string& label_a, const std::string& label_b) {
  std::ostringstream o;
  o << "# bench --compare\n\n| | A: " << cell(label_a) << " | B: " << cell(label_b) << " |\n|---|---|---|\n";
  auto row = [&](const std::string& name, const std::string& x, const std::string& y) {
    o << "| " << name << " | " << cell(x) << " | " << cell(y) << " |\n";
  };
  row("device", a.device.model + " (" + a.device.soc + ")", b.device.model + " (" + b.device.soc + ")");
  row("engine", a.build.version + ", " + a.build.compiler + ", " + a.build.build_type + ", tiers " + a.build.compiled_tiers,
      b.build.version + ", " + b.build.compiler + ", " + b.build.build_type + ", tiers " + b.build.compiled_tiers);
  row("CPU features", a.device.cpu_features, b.device.cpu_features);
  row("clusters", clusters_line(a.device), clusters_line(b.device));
  const size_t n = std::min(a.runs.size(), b.runs.size());
  for (size_t i = 0; i < n; ++i) {
    const Run& ra = a.runs[i];
    const Run& rb = b.runs[i];
    const std::string p = n > 1 ? "run " + std::to_string(i + 1) + ": " : "";
    row(p + "model", ra.model.path + ", " + fmt_bytes(ra.model.file_bytes) + ", sha256 " + ra.model.sha256.substr(0, 16),
        rb.model.path + ", " + fmt_bytes(rb.model.file_bytes) + ", sha256 " + rb.model.sha256.substr(0, 16));
    row(p + "tensor types", tensor_types_line(ra.model), tensor_types_line(rb.model));
    row(p + "kernels", kernels_line(ra.model), kernels_line(rb.model));
    row(p + "resident after load", fmt_bytes(ra.model.rss_after_load_bytes), fmt_bytes(rb.model.rss_after_load_bytes));
    row(p + "threads", ra.threads.plan, rb.threads.plan);
    row(p + "workers", workers_line(ra.threads), workers_line(rb.threads));
    row(p + "worker clocks before -> after", clock_cell(ra.before, ra.after, ra.threads),
        clock_cell(rb.before, rb.after, rb.threads));
    row(p + "hottest zone before -> after",
        fmt_celsius(max_temp(ra.before)) + " -> " + fmt_celsius(max_temp(ra.after)),
        fmt_celsius(max_temp(rb.before)) + " -> " + fmt_celsius(max_temp(rb.after)));
    row(p + "power", power_line(ra.before.power), power_line(rb.before.power));
    row(p + "read probe", fmt_double(ra.roofline.probe_gb_s) + " GB/s", fmt_double(rb.roofline.probe_gb_s) + " GB/s");
    for (const char* kind : {"prefill", "decode", "ttft", "mixed"}) {
      row(p + kind, tests_cell(ra, kind), tests_cell(rb, kind));
    }
    row(p + "decode efficiency", fmt_percent(ra.roofline.decode_efficiency), fmt_percent(rb.roofline.decode_efficiency));
    row(p + "prefill / peak", fmt_percent(ra.roofline.prefill_fraction), fmt_percent(rb.roofline.prefill_fraction));
    row(p + "sustained", ra.sustained.verdict, rb.sustained.verdict);
  }
  if (a.runs.size() != b.runs.size()) {
    o << "\nA has " << tools::plural(static_cast<int64_t>(a.runs.size()), "run") << ", B " << b.runs.size()
      << ": the first " << n << (n == 1 ? " is" : " are") << " paired.\n";
  }
  for (size_t i = 0; i < std::max<size_t>(n, 1); ++i) {
    const Diagnosis d = diagnose(a, b, i);
    o << "\n## Diagnosis" << (n > 1 ? " of run " + std::to_string(i + 1) : "") << "\n\n" << d.headline << ".\n\n";
    if (d.findings.empty()) {
      o << "No difference in the causes this tool checks (file, kernels, build, memory, threads, pinning, clocks, "
           "throttling, test settings, measurement, bandwidth).\n";
      continue;
    }
    o << "Causes, most likely first:\n\n";
    int k = 0;
    for (const Finding& f : d.findings) {
      o << ++k << ". **" << f.cause << "**";
      if (f.side != '=') o << " (" << f.side << (f.explains_slower ? ", the slower one" : "") << ")";
      o << ": " << f.summary << "\n";
      for (const std::string& e : f.evidence) o << "   - " << e << "\n";
    }
  }
  return o.str();
}

}  // namespace bench
