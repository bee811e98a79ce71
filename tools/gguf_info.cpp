// gguf-info: describe a GGUF file — header, metadata, tensors, totals per type,
// and (with --kernels) the kernel this build would choose per weight type on
// this CPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/model/kernel_plan.h"
#include "engine/support/log.h"
#include "engine/support/version.h"
#include "gguf/file.h"
#include "tools/common/args.h"
#include "tools/common/json_writer.h"
#include "tools/common/log_level.h"

namespace {

struct Options {
  std::string path;
  bool json = false;
  bool kernels = false;
  size_t max_items = 8;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gguf-info [--json] [--kernels] [--items N] [-m] FILE.gguf\n"
               "  --json      machine-readable output\n"
               "  --kernels   also show the matmul kernel chosen per weight type on this CPU\n"
               "  --items N   array elements shown before summarizing (default 8)\n");
}

struct TypeTotal {
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

std::map<std::string, TypeTotal> totals_by_type(const gguf::File& f) {
  std::map<std::string, TypeTotal> totals;
  for (const auto& t : f.tensors()) {
    TypeTotal& tt = totals[std::string(gguf::type_name(t.type))];
    ++tt.tensors;
    tt.elements += t.n_elements;
    tt.bytes += t.n_bytes;
  }
  return totals;
}

std::vector<gguf::GgmlType> matrix_types(const gguf::File& f) {
  std::vector<gguf::GgmlType> types;
  for (const auto& t : f.tensors()) {
    if (t.n_dims >= 2) types.push_back(t.type);  // 1-D tensors (norms, biases) are not matmul weights
  }
  return types;
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
  } else if (b >= (1ull << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1ull << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  }
  return buf;
}

void print_text(const gguf::File& f, const Options& opt) {
  std::printf("file:      %s\n", f.path().c_str());
  std::printf("size:      %llu bytes (%s)\n", static_cast<unsigned long long>(f.file_size()),
              human_bytes(f.file_size()).c_str());
  std::printf("gguf:      version %u, alignment %u, data section at offset %llu (%llu bytes)\n", f.version(),
              f.alignment(), static_cast<unsigned long long>(f.data_offset()),
              static_cast<unsigned long long>(f.data_size()));

  std::printf("\nmetadata:  %zu keys\n", f.metadata().size());
  size_t key_width = 0;
  for (const auto& kv : f.metadata()) key_width = std::max(key_width, kv.key.size());
  for (const auto& kv : f.metadata()) {
    std::string type(gguf::value_type_name(kv.value.type()));
    if (kv.value.type() == gguf::ValueType::ARRAY) {
      type = std::string(gguf::value_type_name(kv.value.array_type())) + "[" +
             std::to_string(kv.value.array_size()) + "]";
    }
    std::printf("  %-*.*s  %-14s %s\n", static_cast<int>(key_width), static_cast<int>(kv.key.size()),
                kv.key.data(), type.c_str(), kv.value.to_display(opt.max_items).c_str());
  }

  std::printf("\ntensors:   %zu\n", f.tensors().size());
  size_t name_width = 4;
  for (const auto& t : f.tensors()) name_width = std::max(name_width, t.name.size());
  std::printf("  %-*s  %-8s %-24s %12s %12s\n", static_cast<int>(name_width), "name", "type", "shape", "bytes",
              "offset");
  for (const auto& t : f.tensors()) {
    std::printf("  %-*.*s  %-8s %-24s %12llu %12llu\n", static_cast<int>(name_width),
                static_cast<int>(t.name.size()), t.name.data(), std::string(gguf::type_name(t.type)).c_str(),
                t.shape_string().c_str(), static_cast<unsigned long long>(t.n_bytes),
                static_cast<unsigned long long>(f.data_offset() + t.offset));
  }

  uint64_t all_bytes = 0, all_elements = 0;
  const auto totals = totals_by_type(f);
  for (const auto& [name, tt] : totals) {
    all_bytes += tt.bytes;
    all_elements += tt.elements;
  }
  std::printf("\ntotals by type:\n");
  for (const auto& [name, tt] : totals) {
    std::printf("  %-8s %5llu tensors %14llu elements %14llu bytes  %5.1f%%  %6.3f bits/weight\n", name.c_str(),
                static_cast<unsigned long long>(tt.tensors), static_cast<unsigned long long>(tt.elements),
                static_cast<unsigned long long>(tt.bytes),
                all_bytes ? 100.0 * static_cast<double>(tt.bytes) / static_cast<double>(all_bytes) : 0.0,
                tt.elements ? 8.0 * static_cast<double>(tt.bytes) / static_cast<double>(tt.elements) : 0.0);
  }
  std::printf("  %-8s %5zu tensors %14llu elements %14llu bytes (%s) of a %llu-byte file\n", "all",
              f.tensors().size(), static_cast<unsigned long long>(all_elements),
              static_cast<unsigned long long>(all_bytes), human_bytes(all_bytes).c_str(),
              static_cast<unsigned long long>(f.file_size()));
}

void print_kernels_text(const engine::KernelPlan& plan) {
  std::printf("\nkernels (%s):\n", engine::describe_cpu_line(plan.cpu, plan.cap).c_str());
  for (const auto& s : plan.selections) std::printf("  %s%s\n", s.is_fallback() ? "WARNING " : "", s.describe().c_str());
}

void json_value(tools::JsonWriter& j, const gguf::Value& v, size_t max_items) {
  using gguf::ValueType;
  switch (v.type()) {
    case ValueType::STRING:
      j.value(*v.to_string());
      return;
    case ValueType::BOOL:
      j.value(*v.to_bool());
      return;
    case ValueType::FLOAT32:
    case ValueType::FLOAT64:
      j.value(*v.to_double());
      return;
    case ValueType::ARRAY: {
      j.begin_object();
      j.key("element_type").value(gguf::value_type_name(v.array_type()));
      j.key("count").value(v.array_size());
      j.key(v.array_size() <= max_items ? "items" : "first_items").begin_array();
      for (uint64_t i = 0; i < v.array_size() && i < max_items; ++i) json_value(j, v.at(i), max_items);
      j.end_array();
      j.end_object();
      return;
    }
    default:
      if (auto i = v.to_int()) {
        j.value(*i);
      } else {
        j.value(*v.to_uint());
      }
  }
}

void print_json(const gguf::File& f, const Options& opt, const engine::KernelPlan* plan) {
  tools::JsonWriter j;
  j.begin_object();
  j.key("file").value(f.path());
  j.key("file_size").value(f.file_size());
  j.key("version").value(f.version());
  j.key("alignment").value(f.alignment());
  j.key("data_offset").value(f.data_offset());
  j.key("metadata").begin_array();
  for (const auto& kv : f.metadata()) {
    j.begin_object();
    j.key("key").value(kv.key);
    j.key("type").value(gguf::value_type_name(kv.value.type()));
    j.key("value");
    json_value(j, kv.value, opt.max_items);
    j.end_object();
  }
  j.end_array();
  j.key("tensors").begin_array();
  for (const auto& t : f.tensors()) {
    j.begin_object();
    j.key("name").value(t.name);
    j.key("type").value(gguf::type_name(t.type));
    j.key("shape").begin_array();
    for (uint32_t d = 0; d < t.n_dims; ++d) j.value(t.ne[d]);
    j.end_array();
    j.key("bytes").value(t.n_bytes);
    j.key("offset").value(f.data_offset() + t.offset);
    j.end_object();
  }
  j.end_array();
  j.key("totals_by_type").begin_object();
  for (const auto& [name, tt] : totals_by_type(f)) {
    j.key(name).begin_object();
    j.key("tensors").value(tt.tensors);
    j.key("elements").value(tt.elements);
    j.key("bytes").value(tt.bytes);
    j.end_object();
  }
  j.end_object();
  if (plan != nullptr) {
    j.key("kernels").begin_object();
    j.key("cpu").value(plan->cpu.describe());
    j.key("compiled_tiers").value(engine::compiled_tiers());
    j.key("max_tier");
    if (plan->cap) {
      j.value(kernels::tier_name(*plan->cap));
    } else {
      j.null();
    }
    j.key("selections").begin_array();
    for (const auto& s : plan->selections) {
      j.begin_object();
      j.key("weight_type").value(gguf::type_name(s.weight_type));
      j.key("kernel");
      if (s.kernel) {
        j.value(s.kernel->name);
        j.key("tier").value(kernels::tier_name(s.kernel->tier));
      } else {
        j.null();
      }
      j.key("fallback").value(s.is_fallback());
      j.key("rejected").begin_array();
      for (const auto& r : s.rejected) {
        j.begin_object().key("kernel").value(r.candidate->name).key("reason").value(r.reason).end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_object();
  std::printf("%s\n", j.str().c_str());
}

Options parse(int argc, char** argv) {
  Options opt;
  tools::Args a(argc, argv);
  while (!a.done()) {
    int64_t items = 0;
    if (a.flag({"--json"})) {
      opt.json = true;
    } else if (a.flag({"--kernels"})) {
      opt.kernels = true;
    } else if (a.option({"--items"}, items)) {
      if (items < 0) throw tools::ArgError("--items must be >= 0");
      opt.max_items = static_cast<size_t>(items);
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      std::exit(0);
    } else if (!a.model(opt.path)) {
      a.unknown();
    }
  }
  if (opt.path.empty()) throw tools::ArgError("no file given (gguf-info FILE.gguf)");
  return opt;
}

int describe(const Options& opt) {
  tools::set_tool_log_level(engine::LogLevel::off);  // --kernels prints the plan itself
  const gguf::File f = gguf::File::open(opt.path);
  std::optional<engine::KernelPlan> plan;
  if (opt.kernels) {
    const auto types = matrix_types(f);
    plan = engine::plan_kernels(types);
  }
  if (opt.json) {
    print_json(f, opt, plan ? &*plan : nullptr);
  } else {
    print_text(f, opt);
    if (plan) print_kernels_text(*plan);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("gguf-info", usage, argc, [&] { return describe(parse(argc, argv)); });
}
