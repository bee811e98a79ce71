// What quantize and synth are about to write, tensor by tensor: the plan that
// --dry-run prints, and the file-type keys every written file records.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "engine/threads/thread_plan.h"
#include "gguf/writer.h"
#include "tools/common/model_writing/quant_mix.h"

namespace tools {

struct PlannedTensor {
  std::string name;
  uint32_t n_dims = 0;
  std::array<uint64_t, 4> ne{1, 1, 1, 1};
  gguf::GgmlType from = gguf::GgmlType::F32;  // input type (synth: F32, generated)
  gguf::GgmlType to = gguf::GgmlType::F32;
  uint64_t from_bytes = 0;  // 0 for synth
  uint64_t to_bytes = 0;
  std::string note;  // type fallback, copied unchanged, ...

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::string shape() const;  // "[4096, 32000]"
};

// One line per tensor, then the totals: "[  3/291] blk.0.attn_q.weight [4096, 4096] F32 -> Q4_K 64.00 MiB -> 9.00 MiB".
// input_file_bytes 0: no input column (synth).
void print_plan(FILE* out, std::span<const PlannedTensor> plan, uint64_t input_file_bytes, uint64_t output_file_bytes);
void print_plan_line(FILE* out, size_t index, size_t count, const PlannedTensor& t, bool with_input);

// general.quantization_version and general.file_type, appended last (after
// removing old values), as llama-quantize does, so the header bytes match.
void set_file_type(gguf::Writer& writer, const QuantTarget& target);

// The threads that convert rows: n > 0 threads, or 0 for the engine's default
// (one per big core), placed as the engine places them.
engine::ThreadPlan writing_threads(size_t n);

std::string format_mib(uint64_t bytes);  // "12.34 MiB"

}  // namespace tools
