#include "tools/common/model_writing/plan.h"

#include "engine/threads/topology.h"

namespace tools {

std::string PlannedTensor::shape() const {
  std::string s = "[";
  for (uint32_t d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
  return s + "]";
}

std::string format_mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

void print_plan_line(FILE* out, size_t index, size_t count, const PlannedTensor& t, bool with_input) {
  const int width = static_cast<int>(std::to_string(count).size());
  std::fprintf(out, "[%*zu/%zu] %-32s %-18s %-5s -> %-5s", width, index + 1, count, t.name.c_str(), t.shape().c_str(),
               std::string(gguf::type_name(t.from)).c_str(), std::string(gguf::type_name(t.to)).c_str());
  if (with_input) std::fprintf(out, " %12s ->", format_mib(t.from_bytes).c_str());
  std::fprintf(out, " %12s", format_mib(t.to_bytes).c_str());
  if (!t.note.empty()) std::fprintf(out, "  (%s)", t.note.c_str());
  std::fputc('\n', out);
}

void print_plan(FILE* out, std::span<const PlannedTensor> plan, uint64_t input_file_bytes, uint64_t output_file_bytes) {
  const bool with_input = input_file_bytes > 0;
  uint64_t elements = 0, in_bytes = 0, out_bytes = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    print_plan_line(out, i, plan.size(), plan[i], with_input);
    elements += plan[i].n_elements();
    in_bytes += plan[i].from_bytes;
    out_bytes += plan[i].to_bytes;
  }
  // Per output type: how many tensors and how many bytes.
  std::fprintf(out, "types:");
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    size_t n = 0;
    uint64_t bytes = 0;
    for (const PlannedTensor& t : plan) {
      if (static_cast<uint32_t>(t.to) == id) {
        ++n;
        bytes += t.to_bytes;
      }
    }
    if (n > 0) std::fprintf(out, " %s x%zu (%s)", gguf::ggml_type_traits(id)->name, n, format_mib(bytes).c_str());
  }
  std::fputc('\n', out);
  const double bpw = elements ? static_cast<double>(out_bytes) * 8.0 / static_cast<double>(elements) : 0.0;
  std::fprintf(out, "total: %zu tensors, %llu weights", plan.size(), static_cast<unsigned long long>(elements));
  if (with_input) {
    std::fprintf(out, ", tensor data %s -> %s, file %s -> %s (%llu bytes), %.2f bits/weight\n",
                 format_mib(in_bytes).c_str(), format_mib(out_bytes).c_str(), format_mib(input_file_bytes).c_str(),
                 format_mib(output_file_bytes).c_str(), static_cast<unsigned long long>(output_file_bytes), bpw);
  } else {
    std::fprintf(out, ", tensor data %s, file %s (%llu bytes), %.2f bits/weight\n", format_mib(out_bytes).c_str(),
                 format_mib(output_file_bytes).c_str(), static_cast<unsigned long long>(output_file_bytes), bpw);
  }
}

void set_file_type(gguf::Writer& writer, const QuantTarget& target) {
  writer.remove("general.quantization_version");
  writer.remove("general.file_type");
  writer.set_u32("general.quantization_version", 2);  // GGML_QNT_VERSION
  writer.set_u32("general.file_type", target.file_type);
}

engine::ThreadPlan writing_threads(size_t n) {
  engine::ThreadOptions options;
  options.n_threads = n;
  return engine::ThreadPlan::make(engine::CpuTopology::detect(), options);
}

}  // namespace tools
