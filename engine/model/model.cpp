#include "engine/model/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <type_traits>
#include <variant>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/threads/parallel_pack.h"
#include "kernels/ref/type_ops.h"

namespace engine {
namespace {

std::string shape_of(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (uint64_t d : shape) {
    if (s.size() > 1) s.append(", ");
    s.append(std::to_string(d));
  }
  return s.append("]");
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Bytes a matrix takes in its kernel's layout, at a 64-byte boundary.
uint64_t packed_bytes(const kernels::MatmulKernel& kernel, uint64_t out, uint64_t in) {
  return (kernel.rhs_packed_size(out, in) + 63) / 64 * 64;
}

}  // namespace

const gguf::TensorInfo& Model::require(const std::string& name, const std::vector<uint64_t>& shape) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) throw ModelError(file_.path() + ": tensor '" + name + "' is missing");
  bool same = t->n_dims == shape.size();
  size_t d = 0;
  for (uint64_t n : shape) same = same && t->ne[d++] == n;
  if (!same) {
    throw ModelError(file_.path() + ": tensor '" + name + "' has shape " + t->shape_string() + ", expected " +
                shape_of(shape) + " from the model's hyperparameters");
  }
  return *t;
}

std::vector<float> Model::load_vector(const gguf::TensorInfo& t) {
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(t.type);
  if (ops == nullptr) {
    throw ModelError(file_.path() + ": tensor '" + std::string(t.name) + "' has type " +
                     std::string(gguf::type_name(t.type)) + ", which the engine cannot read");
  }
  std::vector<float> v(t.n_elements);
  ops->dequantize_row(file_.tensor_data(t), v.data(), t.n_elements);
  heap_weight_bytes_ += t.n_elements * sizeof(float);
  return v;
}

Linear Model::make_linear(const gguf::TensorInfo& t) {
  Linear l;
  l.name = std::string(t.name);
  l.in = t.ne[0];
  l.out = t.ne[1];
  l.type = t.type;
  l.kernel = plan_.kernel_for(t.type);
  if (l.kernel == nullptr) {
    throw ModelError(file_.path() + ": tensor '" + l.name + "' has type " + std::string(gguf::type_name(t.type)) +
                ", which this build has no matmul kernel for");
  }
  l.rhs = file_.tensor_data(t);
  if (l.kernel->pack_rhs != nullptr) {
    const uint64_t size = packed_bytes(*l.kernel, l.out, l.in);
    if (const uint8_t* cached = cache_ ? cache_->find(l.name, size) : nullptr) {
      phase_ = "mapping cache";
      l.rhs = cached;
      return l;
    }
    // Repack once into the kernel's layout, then let the source pages go, so
    // the resident set holds one copy of each matrix, not two.
    phase_ = "repacking";
    const auto start = Clock::now();
    uint8_t* packed = repacked_.allocate(size);
    if (packed == nullptr) throw ResourceError(file_.path() + ": no room left repacking '" + l.name + "'");
    heap_weight_bytes_ += size;
    const size_t threads =
        parallel_pack_rhs(*l.kernel, l.out, l.in, l.rhs, *gguf::row_bytes(l.type, l.in), packed, pack_threads_);
    packed_on_threads_ = std::max(packed_on_threads_, threads);
    file_.release_pages(t);
    l.rhs = packed;
    stats_.repack_seconds += seconds_since(start);
    if (write_cache_) packed_.push_back({l.name, packed, size});
  }
  return l;
}

// A table read a row at a time from the mapping, in a type the engine can read.
const gguf::TensorInfo* Model::readable_table(const gguf::TensorInfo& t) const {
  if (kernels::ref::type_ops(t.type) == nullptr) {
    throw ModelError(file_.path() + ": " + std::string(t.name) + " has type " + std::string(gguf::type_name(t.type)) +
                     ", which the engine cannot read");
  }
  return &t;
}

// One row of the description's tensor table: found by name, checked against
// the shape the hyperparameters give, and put where its slot says.
void Model::load_tensor(const arch::TensorSpec& spec, uint32_t il) {
  const std::string name = arch::tensor_name(spec, il);
  const std::vector<uint64_t> shape = arch::tensor_shape(spec, config_, il);
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr && !spec.required) {
    if (spec.fallback == nullptr) return;
    t = file_.find_tensor(spec.fallback);
    if (t == nullptr) throw ModelError(file_.path() + ": tensor '" + std::string(spec.fallback) + "' is missing");
    log_info("model " + file_.path() + ": no " + name + ", " + std::string(spec.fallback) + " stands in for it (tied)");
  } else {
    t = &require(name, shape);
  }
  LayerWeights* layer = spec.per_layer ? &layers_[il] : nullptr;
  const auto linear = [&](Linear& slot) {
    slot = make_linear(*t);
    matrices_.push_back(&slot);
  };
  std::visit(
      [&](auto member) {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, Linear GlobalWeights::*>) {
          linear(globals_.*member);
        } else if constexpr (std::is_same_v<M, std::vector<float> GlobalWeights::*>) {
          globals_.*member = load_vector(*t);
        } else if constexpr (std::is_same_v<M, Linear LayerWeights::*>) {
          linear(layer->*member);
        } else if constexpr (std::is_same_v<M, std::vector<float> LayerWeights::*>) {
          layer->*member = load_vector(*t);
        } else if constexpr (std::is_same_v<M, const gguf::TensorInfo* GlobalWeights::*>) {
          globals_.*member = readable_table(*t);
        } else {  // the embedding table: read a row at a time from the mapping
          token_embd_ = readable_table(*t);
        }
      },
      spec.slot);
  step(t->n_bytes, phase_);
  phase_ = "reading";
}

bool Model::report(uint64_t bytes, const char* phase) {
  progress_done_ += bytes;
  if (!options_->progress) return true;
  // Never backwards, and 1 only at the end: a tensor counted twice (a tied
  // output) could otherwise overshoot.
  const double f = progress_total_ == 0 ? 0 : static_cast<double>(progress_done_) / static_cast<double>(progress_total_);
  progress_last_ = std::clamp(f, progress_last_, 0.999);
  return options_->progress(progress_last_, phase);
}

void Model::step(uint64_t bytes, const char* phase) {
  if (!report(bytes, phase)) {
    throw Cancelled(file_.path() + ": the load was cancelled by its progress callback at " +
                    std::to_string(static_cast<int>(progress_last_ * 100)) + "%");
  }
}

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options) {
  const auto start = Clock::now();
  // The plain read is timed after the load (load(File) skips it: its bytes
  // may come from memory, not from a file).
  LoadOptions inner = options;
  inner.measure_read = false;
  std::unique_ptr<Model> m = load(gguf::File::open(path), inner);
  m->stats_.load_seconds = seconds_since(start);
  if (options.measure_read) {
    try {
      m->stats_.read_seconds = time_plain_read(path);
    } catch (const Error& e) {
      log_warning(e.what());
    }
  }
  m->options_ = nullptr;
  return m;
}

std::unique_ptr<Model> Model::load(gguf::File file, const LoadOptions& options) {
  const auto start = Clock::now();
  std::unique_ptr<Model> m(new Model(std::move(file)));
  m->options_ = &options;
  const gguf::File& f = m->file_;
  const std::string& path = f.path();
  ModelConfig& c = m->config_;
  c = ModelConfig::from_gguf(f);
  log_info("model " + path + ": " + c.describe());
  // One kernel per weight type of the matrices (2-D tensors), chosen once.
  std::vector<gguf::GgmlType> types;
  for (const auto& t : f.tensors()) {
    if (t.n_dims == 2) types.push_back(t.type);
  }
  m->plan_ = plan_kernels(types);
  m->open_cache(options.cache_dir);
  m->reserve_repacked();
  m->pack_threads_ = pack_threads();
  m->stats_.file_bytes = f.file_size();
  for (const auto& t : f.tensors()) m->progress_total_ += t.n_bytes;
  m->step(0, "reading");

  // The description's tensor table, global tensors first, then block by block.
  const std::vector<arch::TensorSpec>& table = c.arch->tensors;
  m->layers_.resize(c.n_layer);
  const auto present = [&](const arch::TensorSpec& t, uint32_t il) {
    return t.present == nullptr || t.present(c.layers[il]);
  };
  for (const arch::TensorSpec& t : table) {
    if (!t.per_layer && present(t, 0)) m->load_tensor(t, 0);
  }
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    for (const arch::TensorSpec& t : table) {
      if (t.per_layer && present(t, il)) m->load_tensor(t, il);
    }
  }
  m->repacked_.release_unused();
  m->log_repacked();
  if (m->write_cache_) m->write_cache();
  if (options.progress && !options.progress(1.0, "done")) {
    throw Cancelled(path + ": the load was cancelled by its progress callback at its end");
  }
  m->stats_.load_seconds = seconds_since(start);
  m->options_ = nullptr;
  return m;
}

void Model::open_cache(const std::string& dir) {
  const bool repacks = std::any_of(plan_.selections.begin(), plan_.selections.end(), [](const auto& s) {
    return s.kernel != nullptr && s.kernel->pack_rhs != nullptr;
  });
  if (dir.empty() || !repacks) return;
  const auto start = Clock::now();
  const std::string& path = stats_.cache_path = repack_cache_path(dir, file_.path());
  try {
    cache_key_ = repack_cache_key(file_, plan_);
  } catch (const Error& e) {
    log_warning(std::string(e.what()) + "; loading without the repack cache");
    return;
  }
  cache_ = RepackCache::open(path, cache_key_, &stats_.cache_note);
  stats_.cache_seconds += seconds_since(start);
  if (cache_ != nullptr) {
    stats_.cache = CacheState::hit;
    log_info("repack cache " + path + ": mapped (" + format_bytes(cache_->file_bytes()) + "), no repacking");
    return;
  }
  if (!stats_.cache_note.empty()) {
    log_info("repack cache " + path + ": " + stats_.cache_note + "; repacking and writing it again");
  }
  write_cache_ = true;
}

void Model::write_cache() {
  const auto start = Clock::now();
  uint64_t total = 0;
  for (const RepackEntry& e : packed_) total += e.bytes;
  // The write counts as much progress as the repacking it saves.
  progress_total_ += total;
  uint64_t reported = 0;
  const auto progress = [&](uint64_t written) {
    const uint64_t delta = written - reported;
    reported = written;
    return report(delta, "writing cache");
  };
  try {
    write_repack_cache(stats_.cache_path, cache_key_, packed_, progress);
    stats_.cache = CacheState::written;
    log_info("repack cache " + stats_.cache_path + ": written (" + format_bytes(total) + ")");
  } catch (const Cancelled&) {
    throw;
  } catch (const Error& e) {
    stats_.cache = CacheState::write_failed;
    log_warning(std::string(e.what()) + "; the next load repacks again");
  }
  packed_.clear();
  stats_.cache_seconds += seconds_since(start);
}

// Room for every matrix its kernel repacks (an upper bound: token_embd.weight
// counts too, and is repacked only as a tied output), in one StreamArena.
void Model::reserve_repacked() {
  uint64_t total = 0;
  for (const auto& t : file_.tensors()) {
    const kernels::MatmulKernel* kernel = t.n_dims == 2 ? plan_.kernel_for(t.type) : nullptr;
    if (kernel == nullptr || kernel->pack_rhs == nullptr) continue;
    const uint64_t bytes = packed_bytes(*kernel, t.ne[1], t.ne[0]);
    if (bytes > UINT64_MAX / 2 - total) throw ResourceError(file_.path() + ": the repacked weights' size overflows");
    total += bytes;
  }
  repacked_ = StreamArena(total, file_.path() + ": repacked weights");
}

void Model::log_repacked() const {
  // Reading /proc/self/smaps and sysfs for a line nobody sees is skipped (the
  // fuzzers load a model per input with the log off).
  if (repacked_.used() == 0 || log_level() > LogLevel::info) return;
  std::string line = "model " + file_.path() + ": repacked weights " + format_bytes(repacked_.used()) + " on " +
                     std::to_string(packed_on_threads_) + (packed_on_threads_ == 1 ? " thread, " : " threads, ");
  if (repacked_.huge_pages_advised()) {
    line += format_bytes(repacked_.huge_page_bytes()) + " of them in 2 MiB pages";
  } else {
    line += "in small pages (huge pages not available)";
  }
  log_info(line + " (transparent huge pages: " + transparent_huge_pages_mode() + ")");
}

namespace {

// Row `r` of a table of rows of n values, as floats.
void table_row(const gguf::File& f, const gguf::TensorInfo& t, int32_t r, uint64_t n, float* out) {
  const uint64_t row = *gguf::row_bytes(t.type, n);
  kernels::ref::type_ops(t.type)->dequantize_row(f.tensor_data(t) + static_cast<uint64_t>(r) * row, out, n);
}

}  // namespace

void Model::embed(int32_t token, float* x) const { table_row(file_, *token_embd_, token, config_.n_embd, x); }

void Model::embed_per_layer(int32_t token, float* p) const {
  table_row(file_, *globals_.per_layer_token_embd, token, uint64_t{config_.per_layer_input.n_embd} * config_.n_layer,
            p);
}

const std::vector<float>& Model::rope_freq_factors(uint32_t n_ctx) const {
  if (!globals_.rope_freqs.empty()) return globals_.rope_freqs;
  return n_ctx > config_.n_ctx_orig ? globals_.rope_long : globals_.rope_short;
}

std::string Model::rope_factors_note(uint32_t n_ctx) const {
  if (!globals_.rope_freqs.empty() || (globals_.rope_long.empty() && globals_.rope_short.empty())) return "";
  const bool use_long = n_ctx > config_.n_ctx_orig;
  return std::string(", LongRoPE ") + (use_long ? "long" : "short") + " factors (context " + std::to_string(n_ctx) +
         (use_long ? " > " : " <= ") + "original " + std::to_string(config_.n_ctx_orig) + ")";
}

uint64_t Model::weight_bytes() const {
  uint64_t total = 0;
  for (const Linear* l : matrices_) total += *gguf::row_bytes(l->type, l->in) * l->out;
  return total;
}

}  // namespace engine
