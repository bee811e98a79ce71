// The flat views of a report: CSV rows and the JSON indenter.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "engine/threads/cpu_list.h"
#include "tools/bench/report_json.h"

namespace bench {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string fmt(double v) {
  if (!known(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string joined_samples(const Stats& s) {
  std::string out;
  for (double v : s.samples) out.append(out.empty() ? "" : " ").append(fmt(v));
  return out;
}

}  // namespace

std::string report_csv(const Report& report) {
  std::ostringstream out;
  out << "device,arch,cpu_features,build,model,model_sha256,model_bytes,model_types,kernels,n_threads,cpus,"
         "governors,test,kind,n_prompt,n_gen,n_depth,reps,tps_mean,tps_stddev,tps_median,tps_min,tps_max,"
         "ms_mean,ms_median,tps_samples,probe_gb_s,decode_efficiency,max_temp_before_c,max_temp_after_c,"
         "rss_after_load_bytes,kv_n_ctx,kv_bytes,kv_full_bytes,kv_windows\n";
  std::string governors;
  for (const ClusterInfo& c : report.device.clusters) {
    governors.append(governors.empty() ? "" : " ").append(c.rank).append(":").append(c.governor);
  }
  for (const Run& run : report.runs) {
    std::string types, kernels, windows;
    for (uint32_t w : run.model.kv_windows) windows.append(windows.empty() ? "" : " ").append(std::to_string(w));
    for (const TensorTypeBytes& t : run.model.tensor_types) types.append(types.empty() ? "" : " ").append(t.type);
    for (const KernelChoice& k : run.model.kernels) {
      kernels.append(kernels.empty() ? "" : " ").append(k.weight_type).append(":").append(k.tier).append(k.fallback ? "(fallback)" : "");
    }
    for (const TestResult& t : run.tests) {
      // Empty cells, not zeros, for what a row does not measure (a TTFT row has no tokens/s).
      auto summary = [](const Stats& s) {
        return s.empty() ? Stats{0, kUnknown, kUnknown, kUnknown, kUnknown, kUnknown, {}} : s;
      };
      const Stats tps = summary(t.tokens_per_s), ms = summary(t.ms);
      out << csv_field(report.device.model) << ',' << report.device.arch << ',' << csv_field(report.device.cpu_features)
          << ',' << csv_field(report.build.version + " " + report.build.compiled_tiers) << ','
          << csv_field(run.model.path) << ',' << run.model.sha256 << ',' << run.model.file_bytes << ','
          << csv_field(types) << ',' << csv_field(kernels) << ',' << run.threads.n_threads << ','
          << csv_field(engine::format_cpu_list(worker_cpus(run.threads))) << ',' << csv_field(governors) << ',' << t.name << ','
          << t.kind << ',' << t.n_prompt << ',' << t.n_gen << ',' << t.n_depth << ','
          << std::max(t.tokens_per_s.n, t.ms.n) << ',' << fmt(tps.mean) << ',' << fmt(tps.stddev) << ','
          << fmt(tps.median) << ',' << fmt(tps.min) << ',' << fmt(tps.max) << ',' << fmt(ms.mean) << ','
          << fmt(ms.median) << ',' << csv_field(joined_samples(t.tokens_per_s)) << ','
          << fmt(run.roofline.probe_gb_s) << ',' << fmt(run.roofline.decode_efficiency) << ','
          << fmt(max_temp(run.before)) << ',' << fmt(max_temp(run.after)) << ',' << run.model.rss_after_load_bytes
          << ',' << run.model.kv_n_ctx << ',' << run.model.kv_bytes << ',' << run.model.kv_full_bytes << ','
          << windows << '\n';
    }
  }
  return out.str();
}

std::string indent_json(const std::string& s) {
  std::string out;
  int depth = 0;
  bool in_string = false;
  std::vector<bool> inline_stack;  // per open container: written on one line
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(2 * d), ' ');
  };
  // An array whose elements are all scalars stays on one line.
  auto scalar_array = [&](size_t open) {
    bool str_ = false;
    for (size_t k = open + 1; k < s.size(); ++k) {
      const char c = s[k];
      if (str_) {
        if (c == '\\') ++k;
        else if (c == '"') str_ = false;
        continue;
      }
      if (c == '"') str_ = true;
      else if (c == '[' || c == '{') return false;
      else if (c == ']') return true;
    }
    return true;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < s.size()) out += s[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    const bool in_line = !inline_stack.empty() && inline_stack.back();
    switch (c) {
      case '"':
        in_string = true;
        out += c;
        break;
      case '{':
      case '[': {
        const bool empty = i + 1 < s.size() && (s[i + 1] == '}' || s[i + 1] == ']');
        const bool one_line = empty || (c == '[' && scalar_array(i));
        out += c;
        inline_stack.push_back(one_line);
        ++depth;
        if (!one_line) newline(depth);
        break;
      }
      case '}':
      case ']': {
        --depth;
        const bool one_line = inline_stack.back();
        inline_stack.pop_back();
        if (!one_line) newline(depth);
        out += c;
        break;
      }
      case ',':
        out += c;
        if (in_line) {
          out += ' ';
        } else {
          newline(depth);
        }
        break;
      case ':':
        out += ": ";
        break;
      default:
        out += c;
    }
  }
  out += '\n';
  return out;
}

}  // namespace bench
