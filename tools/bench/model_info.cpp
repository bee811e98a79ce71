#include "tools/bench/model_info.h"

#include <map>

#include "engine/ops/ops_isa.h"
#include "gguf/ggml_types.h"
#include "tools/common/fallback_advice.h"

namespace bench {

KernelChoice kernel_choice(const kernels::MatmulSelection& s) {
  KernelChoice k;
  k.weight_type = std::string(gguf::type_name(s.weight_type));
  k.kernel = s.kernel != nullptr ? s.kernel->name : "none";
  k.tier = s.kernel != nullptr ? std::string(kernels::tier_name(s.kernel->tier)) : "none";
  k.expected_tier = std::string(kernels::tier_name(s.expected));
  k.fallback = s.is_fallback();
  for (const kernels::Rejection& r : s.rejected) k.rejected.push_back(std::string(r.candidate->name) + ": " + r.reason);
  return k;
}

ModelInfo describe_model(const engine::Model& model, const std::string& path) {
  ModelInfo m;
  const engine::ModelConfig& c = model.config();
  m.path = path;
  m.name = c.name;
  m.arch = c.arch_name;
  m.file_bytes = model.file().file_size();
  std::map<std::string, TensorTypeBytes> by_type;
  for (const gguf::TensorInfo& t : model.file().tensors()) {
    TensorTypeBytes& e = by_type[std::string(gguf::type_name(t.type))];
    e.type = std::string(gguf::type_name(t.type));
    ++e.tensors;
    e.bytes += t.n_bytes;
  }
  for (auto& [name, e] : by_type) m.tensor_types.push_back(e);
  m.n_layer = c.n_layer;
  m.n_embd = c.n_embd;
  m.n_ff = c.n_ff;
  m.n_head = c.n_head;
  m.n_head_kv = c.n_head_kv;
  m.n_vocab = c.n_vocab;
  m.weight_bytes_per_token = model.weight_bytes();
  for (const engine::LayerWeights& l : model.layers()) {
    for (const engine::Linear* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      m.layer_params += uint64_t{w->in} * w->out;
    }
  }
  m.output_params = uint64_t{model.output().in} * model.output().out;
  for (const kernels::MatmulSelection& s : model.kernel_plan().selections) m.kernels.push_back(kernel_choice(s));
  m.fallback_advice = tools::advise_on_fallbacks(model.file(), model.kernel_plan(), path).lines();
  m.ops_isa = engine::ops::isa_ops().isa;
  m.repacked_bytes = model.repacked_bytes();
  m.repacked_huge_page_bytes = model.repacked_huge_page_bytes();
  return m;
}

DominantKernel dominant_kernel(const engine::Model& model) {
  std::map<const kernels::MatmulKernel*, uint64_t> bytes;
  std::map<const kernels::MatmulKernel*, const engine::Linear*> largest;
  auto add = [&](const engine::Linear& l) {
    if (l.kernel == nullptr) return;
    bytes[l.kernel] += *gguf::row_bytes(l.type, l.in) * l.out;
    const engine::Linear*& big = largest[l.kernel];
    if (big == nullptr || l.in * l.out > big->in * big->out) big = &l;
  };
  for (const engine::LayerWeights& l : model.layers()) {
    for (const engine::Linear* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) add(*w);
  }
  DominantKernel d;
  uint64_t best = 0;
  for (const auto& [k, b] : bytes) {
    if (b <= best) continue;
    best = b;
    d.tier = std::string(kernels::tier_name(k->tier));
    d.lhs_type = k->lhs_type;
    d.weight_type = std::string(gguf::type_name(k->rhs_type));
    d.kernel = k;
    d.k = largest[k]->in;
  }
  return d;
}

}  // namespace bench
