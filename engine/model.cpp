#include "engine/model.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "engine/log.h"
#include "engine/memory.h"
#include "engine/threads/parallel_pack.h"
#include "kernels/ref/type_ops.h"

namespace engine {
namespace {

std::string shape_of(std::initializer_list<uint64_t> shape) {
  std::string s = "[";
  for (uint64_t d : shape) {
    if (s.size() > 1) s.append(", ");
    s.append(std::to_string(d));
  }
  return s.append("]");
}

// Bytes a matrix takes in its kernel's layout, at a 64-byte boundary.
uint64_t packed_bytes(const kernels::MatmulKernel& kernel, uint64_t out, uint64_t in) {
  return (kernel.rhs_packed_size(out, in) + 63) / 64 * 64;
}

}  // namespace

const gguf::TensorInfo& Model::require(const std::string& name, std::initializer_list<uint64_t> shape) const {
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

std::vector<float> Model::load_vector(const std::string& name, uint64_t n, bool required) {
  if (!required && file_.find_tensor(name) == nullptr) return {};
  const gguf::TensorInfo& t = require(name, {n});
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(t.type);
  if (ops == nullptr) {
    throw ModelError(file_.path() + ": tensor '" + name + "' has type " + std::string(gguf::type_name(t.type)) +
                ", which the engine cannot read");
  }
  std::vector<float> v(n);
  ops->dequantize_row(file_.tensor_data(t), v.data(), n);
  heap_weight_bytes_ += n * sizeof(float);
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
    // Repack once into the kernel's layout, then let the source pages go, so
    // the resident set holds one copy of each matrix, not two.
    const uint64_t size = packed_bytes(*l.kernel, l.out, l.in);
    uint8_t* packed = repacked_.allocate(size);
    if (packed == nullptr) throw ResourceError(file_.path() + ": no room left repacking '" + l.name + "'");
    heap_weight_bytes_ += size;
    const size_t threads =
        parallel_pack_rhs(*l.kernel, l.out, l.in, l.rhs, *gguf::row_bytes(l.type, l.in), packed, pack_threads_);
    packed_on_threads_ = std::max(packed_on_threads_, threads);
    file_.release_pages(t);
    l.rhs = packed;
  }
  return l;
}

Linear Model::load_linear(const std::string& name, uint64_t in, uint64_t out) {
  return make_linear(require(name, {in, out}));
}

std::unique_ptr<Model> Model::load(const std::string& path) { return load(gguf::File::open(path)); }

std::unique_ptr<Model> Model::load(gguf::File file) {
  std::unique_ptr<Model> m(new Model(std::move(file)));
  const gguf::File& f = m->file_;
  const std::string& path = f.path();
  ModelConfig& c = m->config_;
  c = ModelConfig::from_gguf(f);
  log_info("model " + path + ": " + c.describe());
  // Each block has at least 9 tensors: a block_count the tensor list cannot
  // back is refused before sizing anything by it.
  if (uint64_t{c.n_layer} * 9 > f.tensors().size()) {
    throw ModelError(path + ": block_count " + std::to_string(c.n_layer) + " needs at least " +
                     std::to_string(uint64_t{c.n_layer} * 9) + " tensors, the file has " +
                     std::to_string(f.tensors().size()));
  }

  // One kernel per weight type of the matrices (2-D tensors), chosen once.
  std::vector<gguf::GgmlType> types;
  for (const auto& t : f.tensors()) {
    if (t.n_dims == 2) types.push_back(t.type);
  }
  m->plan_ = plan_kernels(types);
  m->reserve_repacked();
  m->pack_threads_ = pack_threads();

  m->token_embd_ = &m->require("token_embd.weight", {c.n_embd, c.n_vocab});
  if (kernels::ref::type_ops(m->token_embd_->type) == nullptr) {
    throw ModelError(path + ": token_embd.weight has type " + std::string(gguf::type_name(m->token_embd_->type)) +
                ", which the engine cannot read");
  }
  m->output_norm_ = m->load_vector("output_norm.weight", c.n_embd);
  if (f.find_tensor("output.weight") != nullptr) {
    m->output_ = m->load_linear("output.weight", c.n_embd, c.n_vocab);
  } else {
    m->output_ = m->make_linear(*m->token_embd_);  // tied embeddings
    log_info("model " + path + ": no output.weight, the LM head is token_embd.weight (tied)");
  }
  m->rope_freq_factors_ = m->load_vector("rope_freqs.weight", c.n_rot / 2, /*required=*/false);

  m->layers_.resize(c.n_layer);
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    LayerWeights& l = m->layers_[i];
    const std::string b = "blk." + std::to_string(i) + ".";
    l.attn_norm = m->load_vector(b + "attn_norm.weight", c.n_embd);
    l.ffn_norm = m->load_vector(b + "ffn_norm.weight", c.n_embd);
    l.wq = m->load_linear(b + "attn_q.weight", c.n_embd, c.q_dim());
    l.wk = m->load_linear(b + "attn_k.weight", c.n_embd, c.kv_dim_k());
    l.wv = m->load_linear(b + "attn_v.weight", c.n_embd, c.kv_dim_v());
    l.wo = m->load_linear(b + "attn_output.weight", c.n_head * c.head_dim_v, c.n_embd);
    l.w_gate = m->load_linear(b + "ffn_gate.weight", c.n_embd, c.n_ff);
    l.w_up = m->load_linear(b + "ffn_up.weight", c.n_embd, c.n_ff);
    l.w_down = m->load_linear(b + "ffn_down.weight", c.n_ff, c.n_embd);
    if (c.qkv_bias) {
      l.q_bias = m->load_vector(b + "attn_q.bias", c.q_dim());
      l.k_bias = m->load_vector(b + "attn_k.bias", c.kv_dim_k());
      l.v_bias = m->load_vector(b + "attn_v.bias", c.kv_dim_v());
    }
    if (c.qk_norm) {
      l.q_norm = m->load_vector(b + "attn_q_norm.weight", c.head_dim_k);
      l.k_norm = m->load_vector(b + "attn_k_norm.weight", c.head_dim_k);
    }
  }
  m->repacked_.release_unused();
  m->log_repacked();
  return m;
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

void Model::embed(int32_t token, float* x) const {
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(token_embd_->type);
  const uint64_t row = *gguf::row_bytes(token_embd_->type, config_.n_embd);
  ops->dequantize_row(file_.tensor_data(*token_embd_) + static_cast<uint64_t>(token) * row, x, config_.n_embd);
}

uint64_t Model::weight_bytes() const {
  uint64_t total = 0;
  auto add = [&](const Linear& l) { total += *gguf::row_bytes(l.type, l.in) * l.out; };
  for (const LayerWeights& l : layers_) {
    for (const Linear* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) add(*w);
  }
  add(output_);
  return total;
}

}  // namespace engine
