#include "tools/common/model_writing/quantize_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "engine/support/memory.h"
#include "engine/threads/thread_pool.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "kernels/ref/type_ops.h"
#include "tools/common/model_writing/imatrix.h"
#include "tools/common/model_writing/row_stream.h"
#include "tools/common/plural.h"

namespace tools {
namespace {

using gguf::GgmlType;

// A metadata integer, or `fallback` when absent; per-layer arrays give their
// first value (the rules only use these for whole-model decisions).
uint32_t meta_uint(const gguf::File& f, const std::string& key, uint32_t fallback) {
  const gguf::KeyValue* kv = f.find(key);
  if (kv == nullptr) return fallback;
  std::optional<uint64_t> v = kv->value.to_uint();
  if (!v && kv->value.type() == gguf::ValueType::ARRAY && kv->value.array_size() > 0) v = kv->value.at(0).to_uint();
  return v && *v <= UINT32_MAX ? static_cast<uint32_t>(*v) : fallback;
}

MixModel mix_model(const gguf::File& f) {
  MixModel m;
  m.arch = std::string(f.find_string("general.architecture").value_or(""));
  uint32_t blocks = 0;  // from the tensor names, when the key is missing
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.name.substr(0, 4) != "blk.") continue;
    const uint32_t layer = static_cast<uint32_t>(std::strtoul(std::string(t.name.substr(4)).c_str(), nullptr, 10));
    blocks = std::max(blocks, layer + 1);
  }
  const std::string p = m.arch + ".";
  m.n_layer = meta_uint(f, p + "block_count", blocks);
  m.n_head = meta_uint(f, p + "attention.head_count", 0);
  m.n_head_kv = meta_uint(f, p + "attention.head_count_kv", m.n_head);
  m.n_expert = meta_uint(f, p + "expert_count", 0);
  return m;
}

void check_not_the_input(const QuantizeOptions& o) {
  struct stat in {};
  if (::stat(o.input.c_str(), &in) != 0) {
    throw QuantizeError(o.input + ": cannot open: " + std::strerror(errno));
  }
  struct stat out {};
  if (!o.output.empty() && ::stat(o.output.c_str(), &out) == 0 && out.st_dev == in.st_dev && out.st_ino == in.st_ino) {
    throw QuantizeError(o.output + " is the input file " + o.input +
                        " (same device and inode): quantize never overwrites its input; choose another output name");
  }
}

// Refuses conversions that cannot be right before anything is written.
size_t check_conversions(const std::vector<PlannedTensor>& plan, bool allow_requantize, FILE* log) {
  const PlannedTensor* raised = nullptr;
  const PlannedTensor* requantized = nullptr;
  size_t n_raised = 0, n_requantized = 0;
  for (const PlannedTensor& t : plan) {
    if (t.from == t.to) continue;
    const auto* from = kernels::ref::type_ops(t.from);
    const auto* to = kernels::ref::type_ops(t.to);
    if (from == nullptr || from->dequantize_row == nullptr) {
      throw QuantizeError("tensor '" + t.name + "' is " + std::string(gguf::type_name(t.from)) +
                          ", a type this tool cannot read; inputs must be F32, F16 or BF16");
    }
    if (to == nullptr || to->quantize_row == nullptr) {
      throw QuantizeError("tensor '" + t.name + "': cannot write type " + std::string(gguf::type_name(t.to)));
    }
    if (bits_per_weight(t.to) > bits_per_weight(t.from)) {
      if (n_raised++ == 0) raised = &t;
    } else if (gguf::traits(t.from).quantized) {
      if (n_requantized++ == 0) requantized = &t;
    }
  }
  auto more = [](size_t n) { return n > 1 ? " (and " + std::to_string(n - 1) + " more tensors)" : std::string(); };
  auto bits = [](GgmlType t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s (%.2f bits/weight)", gguf::traits(t).name, bits_per_weight(t));
    return std::string(buf);
  };
  if (raised != nullptr) {
    throw QuantizeError("the input is already quantized: tensor '" + raised->name + "' is " + bits(raised->from) +
                        more(n_raised) + "; writing it as " + bits(raised->to) +
                        " gains nothing, the precision it lost cannot be restored. Quantize the original F32, F16 "
                        "or BF16 file instead");
  }
  if (requantized != nullptr && !allow_requantize) {
    throw QuantizeError("the input is already quantized: tensor '" + requantized->name + "' is " +
                        std::string(gguf::type_name(requantized->from)) + more(n_requantized) +
                        "; re-quantizing it to " + std::string(gguf::type_name(requantized->to)) +
                        " adds the errors of both types. Quantize the original F32, F16 or BF16 file, or pass "
                        "--allow-requantize to do it anyway");
  }
  if (requantized != nullptr && log != nullptr) {
    std::fprintf(log, "quantize: WARNING: re-quantizing %zu already-quantized tensors (first: '%s' %s -> %s); the "
                      "result is worse than quantizing the original file\n",
                 n_requantized, requantized->name.c_str(), gguf::traits(requantized->from).name,
                 gguf::traits(requantized->to).name);
  }
  return n_requantized;
}

// The importance matrix's weights for each planned tensor (nullptr: none).
// Checks every converted tensor's entry, as llama-quantize does (even for
// types whose quantizer ignores it), and refuses a tensor that needs one and
// has none.
std::vector<const std::vector<float>*> imatrix_weights(const std::optional<Imatrix>& m, const QuantTarget& target,
                                                       QuantizeResult& result) {
  std::vector<const std::vector<float>*> out(result.plan.size(), nullptr);
  if (!m) return out;
  for (size_t k = 0; k < result.plan.size(); ++k) {
    const PlannedTensor& p = result.plan[k];
    if (p.from == p.to) continue;
    out[k] = imatrix_entry_for(*m, p.name, p.ne);
    if (out[k] == nullptr && requires_imatrix(target, p.name, p.to)) {
      throw QuantizeError(m->path + " has no entry for tensor '" + p.name + "', which " + std::string(target.name) +
                          " writes as " + std::string(gguf::type_name(p.to)) +
                          ", unusable without one (llama-quantize refuses it too)");
    }
    if (out[k] == nullptr) {
      result.imatrix_missing.push_back(p.name);
    } else if (kernels::ref::type_ops(p.to)->quantize_row_weighted != nullptr) {
      ++result.n_imatrix_used;
    }
  }
  return out;
}

void print_imatrix_use(FILE* out, const std::optional<Imatrix>& m, const QuantizeResult& r) {
  if (!m) return;
  std::fprintf(out, "quantize: importance matrix %s (%s, %zu entries, %u chunks%s%s): %s quantized with it",
               m->path.c_str(), m->legacy ? "legacy .dat" : "GGUF", m->entries.size(), m->chunk_count,
               m->datasets.empty() ? "" : " of ", m->datasets.empty() ? "" : m->datasets[0].c_str(),
               plural(static_cast<int64_t>(r.n_imatrix_used), "tensor").c_str());
  if (!r.imatrix_missing.empty()) {
    std::fprintf(out, "; no entry for %s (first: %s), quantized without", plural(static_cast<int64_t>(r.imatrix_missing.size()), "tensor").c_str(),
                 r.imatrix_missing[0].c_str());
  }
  std::fputc('\n', out);
}

}  // namespace

QuantizeResult quantize_model(const QuantizeOptions& o) {
  const QuantTarget* target = find_target(o.type);
  if (target == nullptr) {
    throw QuantizeError(unknown_target_message(o.type));
  }
  if (o.output.empty() && !o.dry_run) throw QuantizeError("no output file given");
  check_not_the_input(o);
  const gguf::File in = gguf::File::open(o.input);
  std::optional<Imatrix> imatrix;
  if (!o.imatrix.empty()) imatrix = load_imatrix(o.imatrix);

  // The tensors in llama.cpp's order, and the type each gets.
  std::vector<TensorDesc> descs;
  for (const gguf::TensorInfo& t : in.tensors()) descs.push_back({std::string(t.name), t.n_dims, t.ne, t.type});
  const std::vector<size_t> order = llama_cpp_order(descs);
  std::vector<TensorDesc> ordered;
  for (size_t i : order) ordered.push_back(descs[i]);
  std::vector<TypeChoice> choices;
  try {
    choices = choose_types(*target, o.pure, mix_model(in), ordered, imatrix.has_value());
  } catch (const MixError& e) {
    throw QuantizeError(o.input + ": " + e.what());
  }

  QuantizeResult result;
  result.input_file_bytes = in.file_size();
  std::vector<const gguf::TensorInfo*> infos;
  for (size_t k = 0; k < order.size(); ++k) {
    const gguf::TensorInfo& t = in.tensors()[order[k]];
    infos.push_back(&t);
    PlannedTensor p{ordered[k].name, t.n_dims, t.ne, t.type, choices[k].type, t.n_bytes, 0, choices[k].fallback};
    p.to_bytes = t.rows() * gguf::row_bytes(p.to, t.ne[0]).value_or(0);
    if (!choices[k].fallback.empty()) ++result.n_fallbacks;
    if (p.from == p.to && p.note.empty()) p.note = "unchanged";
    result.plan.push_back(std::move(p));
  }
  result.n_requantized = check_conversions(result.plan, o.allow_requantize, o.out != nullptr ? stderr : nullptr);
  const std::string imatrix_need = imatrix ? std::string() : imatrix_needed(*target, ordered, choices);
  if (!imatrix_need.empty() && !o.dry_run) {
    throw QuantizeError(o.input + " as " + std::string(target->name) + ": " + imatrix_need +
                        ". Pass --imatrix FILE (written by llama.cpp's llama-imatrix for this model), or choose Q2_K");
  }
  const std::vector<const std::vector<float>*> weights = imatrix_weights(imatrix, *target, result);

  gguf::Writer writer;
  writer.copy_metadata(in);
  for (const char* key : {"split.no", "split.count", "split.tensors.count"}) writer.remove(key);
  set_file_type(writer, *target);
  if (imatrix) record_imatrix(writer, *imatrix);

  uint64_t total_bytes = 0;
  for (const PlannedTensor& p : result.plan) total_bytes += p.to_bytes;
  Progress progress(total_bytes, o.progress && !o.dry_run);
  std::unique_ptr<engine::ThreadPool> pool;
  if (!o.dry_run) pool = std::make_unique<engine::ThreadPool>(writing_threads(o.n_threads));

  for (size_t k = 0; k < result.plan.size(); ++k) {
    const std::vector<uint64_t> ne(infos[k]->ne.begin(), infos[k]->ne.begin() + infos[k]->n_dims);
    writer.add_tensor(result.plan[k].name, result.plan[k].to, ne, [&, k](gguf::TensorSink& sink) {
      const PlannedTensor& p = result.plan[k];
      const gguf::TensorInfo& t = *infos[k];
      if (o.verbose && o.out != nullptr) print_plan_line(o.out, k, result.plan.size(), p, true);
      progress.set_label(p.name);
      const uint8_t* data = in.tensor_data(t);
      if (p.from == p.to) {
        constexpr uint64_t kChunk = 4 << 20;
        for (uint64_t at = 0; at < t.n_bytes; at += kChunk) {
          const uint64_t n = std::min(kChunk, t.n_bytes - at);
          sink.write(data + at, static_cast<size_t>(n));
          progress.add(n);
        }
      } else {
        const auto* from = kernels::ref::type_ops(p.from);
        const uint64_t row_length = t.ne[0];
        const uint64_t in_row_bytes = *gguf::row_bytes(p.from, row_length);
        stream_rows(*pool, p.to, row_length, t.rows(),
                    [&](uint64_t first, uint64_t n, float* dst) {
                      for (uint64_t r = 0; r < n; ++r) {
                        from->dequantize_row(data + (first + r) * in_row_bytes, dst + r * row_length, row_length);
                      }
                    },
                    sink, &progress, [&](uint64_t first, uint64_t n) {
                      // Read once: keep the input out of the resident set as
                      // the rows are done (a page straddling two batches stays).
                      gguf::TensorInfo rows = t;
                      rows.offset = t.offset + first * in_row_bytes;
                      rows.n_bytes = n * in_row_bytes;
                      in.release_pages(rows);
                    },
                    RowWeights{weights[k] != nullptr ? weights[k]->data() : nullptr, t.ne[1]});
      }
      in.release_pages(t);
    });
  }
  result.output_file_bytes = writer.file_size();

  if (o.dry_run) {
    if (o.out != nullptr) {
      std::fprintf(o.out, "quantize: %s -> %s%s (dry run: nothing written)\n", o.input.c_str(),
                   std::string(target->name).c_str(), o.pure ? " --pure" : "");
      print_plan(o.out, result.plan, result.input_file_bytes, result.output_file_bytes);
      print_imatrix_use(o.out, imatrix, result);
      if (!imatrix_need.empty()) std::fprintf(o.out, "quantize: WARNING: %s: writing it needs --imatrix FILE\n", imatrix_need.c_str());
    }
    return result;
  }

  const auto start = std::chrono::steady_clock::now();
  writer.write(o.output);
  progress.finish();
  if (o.out != nullptr) {
    uint64_t elements = 0;
    for (const PlannedTensor& p : result.plan) elements += p.n_elements();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const engine::MemoryUsage mem = engine::memory_usage();
    std::fprintf(o.out, "quantize: wrote %s as %s%s: %zu tensors, %s -> %s (%.2f bits/weight) in %.1f s with %s",
                 o.output.c_str(), std::string(target->name).c_str(), o.pure ? " (pure)" : "", result.plan.size(),
                 format_mib(result.input_file_bytes).c_str(), format_mib(result.output_file_bytes).c_str(),
                 static_cast<double>(total_bytes) * 8.0 / static_cast<double>(std::max<uint64_t>(elements, 1)), secs,
                 plural(static_cast<int64_t>(pool->size()), "thread").c_str());
    if (mem.known) std::fprintf(o.out, ", peak RSS %s", format_mib(mem.peak_rss_bytes).c_str());
    std::fputc('\n', o.out);
    print_imatrix_use(o.out, imatrix, result);
    if (result.n_fallbacks > 0) {
      std::fprintf(o.out,
                   "quantize: %s fell back to another type (row length not a multiple of the block size; see "
                   "--dry-run)\n",
                   plural(static_cast<int64_t>(result.n_fallbacks), "tensor").c_str());
    }
  }
  return result;
}

}  // namespace tools
