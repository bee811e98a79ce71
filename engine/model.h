// A loaded model: the GGUF mapping, its config, one kernel per weight type, and
// views of every weight. Weights stay in the read-only mapping (a kernel that
// wants another layout gets a repacked copy, made once here); the small 1-D
// tensors (norms, biases) are converted to float at load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/kernel_plan.h"
#include "engine/model_config.h"
#include "engine/stream_arena.h"
#include "gguf/file.h"
#include "kernels/matmul.h"

namespace engine {

// A weight matrix W[out, in] (GGUF ne = [in, out]) with the kernel chosen for
// its type: y[m, out] = x[m, in] * W^T.
struct Linear {
  std::string name;
  size_t in = 0;
  size_t out = 0;
  gguf::GgmlType type = gguf::GgmlType::F32;
  const kernels::MatmulKernel* kernel = nullptr;
  const uint8_t* rhs = nullptr;  // in the kernel's layout: the mapping itself, or a repacked copy
};

struct LayerWeights {
  std::vector<float> attn_norm;  // (n_embd)
  std::vector<float> ffn_norm;   // (n_embd)
  std::vector<float> q_bias;     // (q_dim), qwen2
  std::vector<float> k_bias;     // (kv_dim_k), qwen2
  std::vector<float> v_bias;     // (kv_dim_v), qwen2
  std::vector<float> q_norm;     // (head_dim_k), qwen3
  std::vector<float> k_norm;     // (head_dim_k), qwen3
  Linear wq, wk, wv, wo;         // (q_dim, n_embd) (kv_dim_k, n_embd) (kv_dim_v, n_embd) (n_embd, q_dim)
  Linear w_gate, w_up, w_down;   // (n_ff, n_embd) (n_ff, n_embd) (n_embd, n_ff)
};

class Model {
 public:
  // Maps the file, reads the config, validates every tensor's presence, type
  // and shape, and selects the kernels (logging the plan). Throws engine::Error
  // or gguf::Error naming the file and the problem.
  static std::unique_ptr<Model> load(const std::string& path);
  // The same from a parsed file: File::open's mapping, or File::parse over
  // bytes the caller keeps alive while the model lives (fuzzing, tests).
  static std::unique_ptr<Model> load(gguf::File file);

  const gguf::File& file() const { return file_; }
  const ModelConfig& config() const { return config_; }
  const KernelPlan& kernel_plan() const { return plan_; }

  // x[0..n_embd) = row `token` of the embedding table, as floats.
  void embed(int32_t token, float* x) const;

  const std::vector<LayerWeights>& layers() const { return layers_; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  const Linear& output() const { return output_; }
  // Llama 3 per-pair frequency divisors (rope_freqs.weight), empty when absent.
  const std::vector<float>& rope_freq_factors() const { return rope_freq_factors_; }

  // Bytes of weights read per generated token (every matrix once).
  uint64_t weight_bytes() const;
  // Heap bytes holding weights: the repacked copies (their source pages in the
  // mapping are released) and the 1-D tensors converted to float. Everything
  // else is read from the mapping, which commits no memory.
  uint64_t heap_weight_bytes() const { return heap_weight_bytes_; }
  // The repacked matrices' bytes, and how many of them sit in 2 MiB pages now
  // (engine/stream_arena.h; 0 where the kernel gave none or /proc is unreadable).
  uint64_t repacked_bytes() const { return repacked_.used(); }
  uint64_t repacked_huge_page_bytes() const { return repacked_.huge_page_bytes(); }

 private:
  explicit Model(gguf::File file) : file_(std::move(file)) {}
  const gguf::TensorInfo& require(const std::string& name, std::initializer_list<uint64_t> shape) const;
  std::vector<float> load_vector(const std::string& name, uint64_t n, bool required = true);
  Linear load_linear(const std::string& name, uint64_t in, uint64_t out);
  Linear make_linear(const gguf::TensorInfo& t);
  void reserve_repacked();
  void log_repacked() const;

  gguf::File file_;
  ModelConfig config_;
  KernelPlan plan_;
  const gguf::TensorInfo* token_embd_ = nullptr;
  std::vector<LayerWeights> layers_;
  std::vector<float> output_norm_;
  Linear output_;
  std::vector<float> rope_freq_factors_;
  StreamArena repacked_;  // weights in a kernel's own layout
  uint64_t heap_weight_bytes_ = 0;
  size_t pack_threads_ = 1;       // threads that may repack a large matrix (engine/threads/parallel_pack.h)
  size_t packed_on_threads_ = 1;  // the most that did, for the log
};

}  // namespace engine
