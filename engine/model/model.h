// A loaded model: the GGUF mapping, its config, one kernel per weight type, and
// views of every weight. Weights stay in the read-only mapping (a kernel that
// wants another layout gets a repacked copy, made once here); the small 1-D
// tensors (norms, biases) are converted to float at load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/arch/arch.h"
#include "engine/model/kernel_plan.h"
#include "engine/model/load_options.h"
#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "engine/model/repack_cache.h"
#include "engine/model/stream_arena.h"
#include "gguf/file.h"

namespace engine {

class Model {
 public:
  // Maps the file, reads the config, validates every tensor's presence, type
  // and shape, and selects the kernels (logging the plan). Throws engine::Error
  // or gguf::Error naming the file and the problem, engine::Cancelled when the
  // options' progress callback cancels.
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options = {});
  // The same from a parsed file: File::open's mapping, or File::parse over
  // bytes the caller keeps alive while the model lives (fuzzing, tests).
  static std::unique_ptr<Model> load(gguf::File file, const LoadOptions& options = {});

  const gguf::File& file() const { return file_; }
  const ModelConfig& config() const { return config_; }
  const KernelPlan& kernel_plan() const { return plan_; }

  // x[0..n_embd) = row `token` of the embedding table, as floats.
  void embed(int32_t token, float* x) const;
  // p[0..n_pl x n_layer) = row `token` of per_layer_token_embd, as floats
  // (only when the model has per-layer inputs).
  void embed_per_layer(int32_t token, float* p) const;

  const std::vector<LayerWeights>& layers() const { return layers_; }
  const std::vector<float>& output_norm() const { return globals_.output_norm; }
  const Linear& output() const { return globals_.output; }
  const GlobalWeights& globals() const { return globals_; }
  // The per-pair RoPE frequency divisors a session of n_ctx positions uses, as
  // llama.cpp picks them: Llama 3's rope_freqs.weight when the file has it,
  // else LongRoPE's long factors when n_ctx exceeds the original context
  // (rope.scaling.original_context_length) and its short ones otherwise;
  // empty when the file has none.
  const std::vector<float>& rope_freq_factors(uint32_t n_ctx) const;
  // Which LongRoPE factors that is and why, for the session's log line: ", LongRoPE long factors
  // (context 8192 > original 4096)"; empty without LongRoPE factors.
  std::string rope_factors_note(uint32_t n_ctx) const;

  // Bytes of weights read per generated token (every matrix once).
  uint64_t weight_bytes() const;
  // Heap bytes holding weights: the repacked copies (their source pages in the
  // mapping are released; none when mapped from the repack cache) and the 1-D tensors converted to float. Everything
  // else is read from the mapping, which commits no memory.
  uint64_t heap_weight_bytes() const { return heap_weight_bytes_; }
  // The repacked matrices' bytes, and how many of them sit in 2 MiB pages now
  // (engine/model/stream_arena.h; 0 where the kernel gave none or /proc is unreadable).
  uint64_t repacked_bytes() const { return repacked_.used(); }
  uint64_t repacked_huge_page_bytes() const { return repacked_.huge_page_bytes(); }
  // How long the load took, of that the repacking, and how the repack cache served it.
  const LoadStats& load_stats() const { return stats_; }

 private:
  explicit Model(gguf::File file) : file_(std::move(file)) {}
  const gguf::TensorInfo& require(const std::string& name, const std::vector<uint64_t>& shape) const;
  std::vector<float> load_vector(const gguf::TensorInfo& t);
  Linear make_linear(const gguf::TensorInfo& t);
  const gguf::TensorInfo* readable_table(const gguf::TensorInfo& t) const;
  // Loads tensor `t` of the description (of layer il when per layer) into its slot.
  void load_tensor(const arch::TensorSpec& t, uint32_t il);
  void reserve_repacked();
  void log_repacked() const;
  // The repack cache: mapped when valid, else to be written after the load.
  void open_cache(const std::string& dir);
  void write_cache();
  // Counts `bytes` of the load done and tells the progress callback; false
  // when it cancels. step() throws engine::Cancelled then.
  bool report(uint64_t bytes, const char* phase);
  void step(uint64_t bytes, const char* phase);

  gguf::File file_;
  ModelConfig config_;
  KernelPlan plan_;
  const gguf::TensorInfo* token_embd_ = nullptr;
  std::vector<LayerWeights> layers_;
  GlobalWeights globals_;
  std::vector<const Linear*> matrices_;  // every matrix loaded, for weight_bytes()
  StreamArena repacked_;  // weights in a kernel's own layout
  uint64_t heap_weight_bytes_ = 0;
  size_t pack_threads_ = 1;       // threads that may repack a large matrix (engine/threads/parallel_pack.h)
  size_t packed_on_threads_ = 1;  // the most that did, for the log
  // The load's progress, in bytes of tensors (and of the cache written).
  const LoadOptions* options_ = nullptr;
  uint64_t progress_total_ = 0, progress_done_ = 0;
  double progress_last_ = 0;
  const char* phase_ = "reading";
  LoadStats stats_;
  std::unique_ptr<RepackCache> cache_;    // the repacked weights, mapped
  std::string cache_key_;
  bool write_cache_ = false;
  std::vector<RepackEntry> packed_;       // what the cache gets
};

}  // namespace engine
