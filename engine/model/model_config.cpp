#include "engine/model/model_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "engine/arch/registry.h"
#include "engine/support/error.h"

namespace engine {
namespace {

[[noreturn]] void fail(const gguf::File& f, const std::string& what) { throw ModelError(f.path() + ": " + what); }

// The keys of one architecture: a key it does not list reads as absent.
class Keys {
 public:
  Keys(const gguf::File& f, const arch::Architecture& a) : f_(f), a_(a) {}

  const gguf::File& file() const { return f_; }
  std::string key(arch::Param p) const {
    if (spec(p) == nullptr) fail(f_, "the " + a_.name + " description lists no key for a value it needs");
    return a_.name + "." + spec(p)->suffix;
  }
  bool has(arch::Param p) const { return spec(p) != nullptr && f_.find(key(p)) != nullptr; }
  bool is_array(arch::Param p) const { return has(p) && f_.find(key(p))->value.type() == gguf::ValueType::ARRAY; }

  uint32_t u32(arch::Param p) const {
    const std::string k = key(p);
    const auto* kv = f_.find(k);
    if (kv != nullptr && kv->value.type() == gguf::ValueType::ARRAY) {
      fail(f_, "metadata '" + k + "' is a per-layer array; " + a_.name + " reads one value for every layer");
    }
    return checked(k, f_.get_uint(k));
  }
  uint32_t u32_or(arch::Param p, uint32_t fallback) const { return has(p) ? u32(p) : fallback; }

  // One value per layer: an array of n_layer values where the description
  // allows it, else the scalar for every layer; `fallback` per layer when absent.
  std::vector<uint32_t> per_layer(arch::Param p, uint32_t n_layer, const std::vector<uint32_t>& fallback) const {
    if (!has(p)) return fallback;
    const std::string k = key(p);
    const gguf::Value& v = f_.find(k)->value;
    if (v.type() != gguf::ValueType::ARRAY || !spec(p)->per_layer) return std::vector<uint32_t>(n_layer, u32(p));
    if (v.array_size() != n_layer) {
      fail(f_, "metadata '" + k + "' has " + std::to_string(v.array_size()) + " values for " +
                   std::to_string(n_layer) + " layers");
    }
    std::vector<uint32_t> out(n_layer);
    for (uint32_t i = 0; i < n_layer; ++i) {
      const std::optional<uint64_t> x = v.at(i).to_uint();
      if (!x) fail(f_, "metadata '" + k + "' value " + std::to_string(i) + " is not a non-negative integer");
      out[i] = checked(k, *x);
    }
    return out;
  }

  std::optional<double> f64(arch::Param p) const {
    return spec(p) == nullptr ? std::nullopt : f_.find_float(key(p));
  }
  std::optional<std::string_view> str(arch::Param p) const {
    return spec(p) == nullptr ? std::nullopt : f_.find_string(key(p));
  }

 private:
  const arch::KeySpec* spec(arch::Param p) const { return arch::find_key(a_, p); }
  uint32_t checked(const std::string& k, uint64_t v) const {
    if (v > UINT32_MAX) fail(f_, "metadata '" + k + "' = " + std::to_string(v) + " is out of range");
    return static_cast<uint32_t>(v);
  }

  const gguf::File& f_;
  const arch::Architecture& a_;
};

void check_tensor_count(const gguf::File& f, uint32_t n_layer, uint64_t needed) {
  if (needed > f.tensors().size()) {
    fail(f, "block_count " + std::to_string(n_layer) + " needs at least " + std::to_string(needed) +
                " tensors, the file has " + std::to_string(f.tensors().size()));
  }
}

// Each block has at least the description's unconditional per-layer tensors:
// a block_count the tensor list cannot back is refused before anything is
// sized by it.
void check_block_count(const gguf::File& f, const arch::Architecture& a, uint32_t n_layer) {
  uint64_t per_layer = 0;
  for (const arch::TensorSpec& t : a.tensors) per_layer += t.per_layer && t.required && t.present == nullptr;
  check_tensor_count(f, n_layer, uint64_t{n_layer} * per_layer);
}

void read_sizes(const Keys& k, ModelConfig& c) {
  using P = arch::Param;
  const gguf::File& f = k.file();
  c.n_ctx_train = k.u32(P::context_length);
  c.n_embd = k.u32(P::embedding_length);
  c.n_layer = k.u32(P::block_count);
  // Multi-token-prediction blocks come after the model's own in block_count
  // (llama.cpp's n_layer_nextn): their tensors are in the file and not run.
  if (const uint32_t nextn = k.u32_or(P::nextn_predict_layers, 0); nextn != 0) {
    if (nextn >= c.n_layer) {
      fail(f, "nextn_predict_layers " + std::to_string(nextn) + " leaves no layer of block_count " +
                  std::to_string(c.n_layer));
    }
    c.n_layer -= nextn;
    c.n_layer_nextn = nextn;
  }
  const char* positive = "embedding_length, block_count, feed_forward_length and attention.head_count must be positive";
  if (c.n_embd == 0 || c.n_layer == 0) fail(f, positive);
  check_block_count(f, *c.arch, c.n_layer);
  c.layer_n_ff = k.per_layer(P::feed_forward_length, c.n_layer, {});
  c.layer_n_head = k.per_layer(P::head_count, c.n_layer, {});
  if (c.layer_n_ff.empty()) k.u32(P::feed_forward_length);  // throws: the key is missing
  if (c.layer_n_head.empty()) k.u32(P::head_count);
  c.layer_n_head_kv = k.per_layer(P::head_count_kv, c.n_layer, c.layer_n_head);
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    if (c.layer_n_ff[il] == 0 || c.layer_n_head[il] == 0) {
      fail(f, positive);
    }
    // A family whose layer list marks its layers without attention by 0 KV
    // heads (lfm2) has no head ratio to check there.
    if (c.layer_n_head_kv[il] == 0 && c.arch->kv_heads_zero_without_attention) continue;
    if (c.layer_n_head_kv[il] == 0 || c.layer_n_head[il] % c.layer_n_head_kv[il] != 0) {
      fail(f, "attention.head_count " + std::to_string(c.layer_n_head[il]) + " is not a multiple of head_count_kv " +
                  std::to_string(c.layer_n_head_kv[il]) +
                   (k.is_array(P::head_count_kv) || k.is_array(P::head_count) ? " in layer " + std::to_string(il) : ""));
    }
  }
  c.n_ff = *std::max_element(c.layer_n_ff.begin(), c.layer_n_ff.end());
  c.n_head = *std::max_element(c.layer_n_head.begin(), c.layer_n_head.end());
  c.n_head_kv = *std::max_element(c.layer_n_head_kv.begin(), c.layer_n_head_kv.end());
  const uint32_t n_head0 = c.layer_n_head[0];
  if (!k.has(P::key_length) && c.n_embd % n_head0 != 0) {
    fail(f, "embedding_length " + std::to_string(c.n_embd) + " is not a multiple of head_count " +
                std::to_string(n_head0) + " and attention.key_length is not given");
  }
  c.head_dim_k = k.u32_or(P::key_length, c.n_embd / n_head0);
  c.head_dim_v = k.u32_or(P::value_length, c.head_dim_k);
  c.n_rot = k.u32_or(P::rope_dimension_count, c.head_dim_k);
  if (c.head_dim_k == 0 || c.head_dim_v == 0 || c.n_rot > c.head_dim_k || c.n_rot % 2 != 0) {
    fail(f, "rope.dimension_count " + std::to_string(c.n_rot) + " must be even and at most the head size " +
                std::to_string(c.head_dim_k));
  }
  // The products index every scratch buffer and KV row in 32 bits: a file
  // whose sizes overflow them would otherwise match tensors of the wrapped size.
  for (const auto& [name, per_head] : {std::pair{"key_length", c.head_dim_k}, std::pair{"value_length", c.head_dim_v}}) {
    if (uint64_t{c.n_head} * per_head > UINT32_MAX) {
      fail(f, "attention.head_count " + std::to_string(c.n_head) + " x attention." + name + " " +
                  std::to_string(per_head) + " overflows 32 bits");
    }
  }
}

void read_rope_and_norm(const Keys& k, ModelConfig& c) {
  using P = arch::Param;
  const gguf::File& f = k.file();
  c.rope_freq_base = static_cast<float>(k.f64(P::rope_freq_base).value_or(10000.0));
  if (!(c.rope_freq_base > 0.0f)) fail(f, "rope.freq_base must be positive");
  // As llama.cpp reads them: the type defaults to linear, and a factor is
  // optional (absent or 0: no scaling). Phi-3's longrope takes its frequency
  // factors from tensors (Model::rope_freq_factors) and scales by the factor,
  // when given, as llama.cpp's LONGROPE does (no YaRN ramp).
  const std::string scaling = std::string(k.str(P::rope_scaling_type).value_or("linear"));
  if (scaling == "linear" || scaling == "longrope") {
    const double factor = k.f64(P::rope_scaling_factor).value_or(0.0);
    if (!(factor >= 0.0) || !std::isfinite(factor)) fail(f, "rope.scaling.factor must be positive");
    if (factor > 0.0) c.rope_freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none") {
    fail(f, "rope scaling '" + scaling + "' is not supported (supported: none, linear, longrope)");
  }
  const double eps = f.get_float(k.key(P::rms_epsilon));
  if (!(eps > 0.0 && eps < 1.0)) fail(f, "attention.layer_norm_rms_epsilon must be in (0, 1)");
  c.rms_eps = static_cast<float>(eps);
}

// The scalings a few families read (llama.cpp's hparams of the same names):
// a multiplier of 0 or absent means none, as there.
void read_scalings(const Keys& k, ModelConfig& c) {
  using P = arch::Param;
  const gguf::File& f = k.file();
  c.n_ctx_orig = k.u32_or(P::rope_original_context, c.n_ctx_train);
  const auto finite = [&](P p, double fallback) {
    const double v = k.f64(p).value_or(fallback);
    if (!std::isfinite(v)) fail(f, "metadata '" + k.key(p) + "' is not a finite number");
    return static_cast<float>(v);
  };
  c.rope_attn_factor = finite(P::rope_attn_factor, 1.0);
  if (const float s = finite(P::embedding_scale, 0.0); s != 0.0f) c.embed_scale = s;
  if (const float s = finite(P::residual_scale, 0.0); s != 0.0f) c.residual_scale = s;
  c.attention_scale = finite(P::attention_scale, 0.0);
  if (const arch::KeySpec* ks = arch::find_key(*c.arch, P::logit_scale); ks != nullptr && ks->required) {
    f.get_float(k.key(P::logit_scale));  // throws: the key is missing
  }
  c.logit_scale = finite(P::logit_scale, 1.0);
  if (c.logit_scale == 0.0f) fail(f, "metadata '" + k.key(P::logit_scale) + "' is 0 (the logits are divided by it)");
}

void read_vocab_size(const Keys& k, ModelConfig& c) {
  const gguf::File& f = k.file();
  c.n_vocab = k.u32_or(arch::Param::vocab_size, 0);
  if (c.n_vocab == 0) {
    if (const gguf::Value* tokens = f.find_array("tokenizer.ggml.tokens")) {
      c.n_vocab = static_cast<uint32_t>(tokens->array_size());
    }
  }
  if (c.n_vocab == 0) {
    if (const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight"); emb != nullptr && emb->n_dims == 2) {
      c.n_vocab = static_cast<uint32_t>(emb->ne[1]);
    }
  }
  if (c.n_vocab == 0) {
    fail(f, "the vocabulary size is unknown (no " + c.arch_name + ".vocab_size, tokenizer.ggml.tokens or 2-D "
            "token_embd.weight)");
  }
}

// An array of one number or bool per layer (gemma4's sliding_window_pattern),
// or per block with the multi-token-prediction blocks' values after the
// layers' (qwen35's recurrent_layers, as llama.cpp reads it), which are dropped.
std::vector<double> per_layer_values(const Keys& k, arch::Param p, uint32_t n_layer, uint32_t n_nextn) {
  const std::string key = k.key(p);
  const gguf::Value& v = k.file().find(key)->value;
  if (v.array_size() != n_layer && v.array_size() != uint64_t{n_layer} + n_nextn) {
    fail(k.file(), "metadata '" + key + "' has " + std::to_string(v.array_size()) + " values for " +
                       std::to_string(n_layer) + " layers");
  }
  std::vector<double> out;
  for (uint32_t il = 0; il < n_layer; ++il) {
    const gguf::Value e = v.at(il);
    const std::optional<bool> b = e.to_bool();
    const std::optional<double> x = b ? std::optional<double>(*b ? 1.0 : 0.0)
                                      : e.to_uint() ? std::optional<double>(static_cast<double>(*e.to_uint()))
                                                    : e.to_double();
    if (!x || !std::isfinite(*x) || *x < 0) {
      fail(k.file(), "metadata '" + key + "' value " + std::to_string(il) + " is not a non-negative number");
    }
    out.push_back(*x);
  }
  return out;
}

// An array key of its own length (KeySpec::array), at most 64 numbers.
std::vector<double> array_values(const Keys& k, arch::Param p) {
  const std::string key = k.key(p);
  const gguf::Value& v = k.file().find(key)->value;
  if (v.array_size() > 64) fail(k.file(), "metadata '" + key + "' has " + std::to_string(v.array_size()) + " values (at most 64)");
  std::vector<double> out;
  for (uint64_t i = 0; i < v.array_size(); ++i) {
    const gguf::Value e = v.at(i);
    const std::optional<double> x = e.to_uint() ? std::optional<double>(static_cast<double>(*e.to_uint())) : e.to_double();
    if (!x || !std::isfinite(*x) || *x < 0) {
      fail(k.file(), "metadata '" + key + "' value " + std::to_string(i) + " is not a non-negative number");
    }
    out.push_back(*x);
  }
  return out;
}

// What the layer specs ask of each other, of the sizes and of the file: a
// cache shared with an earlier layer of the same kind that has its own, head
// sizes that V-from-K and RoPE can use, and the tensors each layer requires (a
// fused attn_qkv or attn_q, attn_k and attn_v), counted exactly as
// check_block_count counted them before the specs were known.
void check_layers(const gguf::File& f, const ModelConfig& c) {
  uint64_t needed = 0;
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    for (const arch::TensorSpec& t : c.arch->tensors) {
      needed += t.per_layer && t.required && (t.present == nullptr || t.present(c.layers[il]));
    }
    if (c.layers[il].mixer != MixerKind::attention) continue;  // its family checked its own sizes
    const AttentionSpec& a = c.layers[il].attention;
    const std::string layer = "layer " + std::to_string(il);
    if (a.head_dim_k == 0 || a.head_dim_v == 0 || a.rope.n_rot > a.head_dim_k || a.rope.n_rot % 2 != 0) {
      fail(f, layer + ": RoPE dimensions " + std::to_string(a.rope.n_rot) +
                  " must be even and at most the head size " + std::to_string(a.head_dim_k));
    }
    for (const uint32_t per_head : {a.head_dim_k, a.head_dim_v}) {
      if (uint64_t{a.n_head} * per_head > UINT32_MAX) {
        fail(f, layer + ": " + std::to_string(a.n_head) + " heads of " + std::to_string(per_head) +
                    " values overflow 32 bits");
      }
    }
    if (a.v_from_k && a.head_dim_k != a.head_dim_v) {
      fail(f, layer + " has no attn_v.weight, so V is K, but its key and value sizes differ");
    }
    if (!a.shares_kv()) continue;
    if (a.kv_source >= il) fail(f, layer + " shares the cache of no earlier layer");
    const AttentionSpec& s = c.layers[a.kv_source].attention;
    if (s.shares_kv() || s.window != a.window || s.n_head_kv != a.n_head_kv || s.head_dim_k != a.head_dim_k ||
        s.head_dim_v != a.head_dim_v) {
      fail(f, layer + " shares the cache of layer " + std::to_string(a.kv_source) +
                  ", which is not a layer of its kind (window, KV heads and head sizes) with a cache of its own");
    }
  }
  check_tensor_count(f, c.n_layer, needed);
}

// The family's further keys, as one scalar each; the family checks and
// defaults them where it reads them. An array where a scalar is read is
// passed over, as llama.cpp's get_key_or_arr does (the family's default holds).
void read_values(const Keys& k, ModelConfig& c) {
  for (const arch::KeySpec& spec : c.arch->keys) {
    if (spec.param < arch::kFirstValueParam || !k.has(spec.param)) continue;
    if (k.is_array(spec.param)) {
      if (spec.per_layer) c.layer_values[spec.param] = per_layer_values(k, spec.param, c.n_layer, c.n_layer_nextn);
      if (spec.array) c.arrays[spec.param] = array_values(k, spec.param);
      continue;
    }
    const std::string key = k.key(spec.param);
    const double v = arch::param_is_float(spec.param) ? k.file().get_float(key)
                                                     : static_cast<double>(k.u32(spec.param));
    if (!std::isfinite(v) || v < 0) fail(k.file(), "metadata '" + key + "' must be a non-negative number");
    c.values[spec.param] = v;
  }
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const gguf::File& f) {
  ModelConfig c;
  c.arch_name = std::string(f.get_string("general.architecture"));
  c.arch = arch::find_architecture(c.arch_name);
  if (c.arch == nullptr) {
    fail(f, "unsupported architecture '" + c.arch_name + "' (supported: " + arch::architecture_names() + ")");
  }
  c.name = std::string(f.find_string("general.name").value_or(""));
  const Keys keys(f, *c.arch);
  read_sizes(keys, c);
  read_rope_and_norm(keys, c);
  read_vocab_size(keys, c);
  read_values(keys, c);
  read_scalings(keys, c);
  c.layer_without_v.resize(c.n_layer);
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    c.layer_without_v[il] = f.find_tensor("blk." + std::to_string(il) + ".attn_v.weight") == nullptr;
  }
  try {
    arch::finish_config(c);  // the family may refuse what the keys describe
  } catch (const ModelError& e) {
    fail(f, e.what());
  }
  check_layers(f, c);
  // The scratch is sized by the largest head of any layer (gemma4's
  // sliding-window layers have their own size).
  for (const LayerSpec& l : c.layers) {
    c.head_dim_k = std::max(c.head_dim_k, l.attention.head_dim_k);
    c.head_dim_v = std::max(c.head_dim_v, l.attention.head_dim_v);
  }
  if (uint64_t{c.n_head} * std::max(c.head_dim_k, c.head_dim_v) > UINT32_MAX) {
    fail(f, "the largest layer's heads overflow 32 bits");
  }
  return c;
}

std::string ModelConfig::describe() const {
  // The RoPE of the first layer that attends (a hybrid's first may not).
  const auto first_attending = std::find_if(layers.begin(), layers.end(),
                                            [](const LayerSpec& l) { return l.mixer == MixerKind::attention; });
  const RopeSpec& rope = (first_attending != layers.end() ? *first_attending : layers.front()).attention.rope;
  std::string s = arch_name + ": " + std::to_string(n_layer) + " layers, n_embd " + std::to_string(n_embd) +
                  ", heads " + std::to_string(n_head) + "/" + std::to_string(n_head_kv) + " kv, head " +
                  std::to_string(head_dim_k) + ", n_ff " + std::to_string(n_ff) + ", vocab " +
                  std::to_string(n_vocab) + ", ctx " + std::to_string(n_ctx_train) + ", rope " +
                  (rope.style == ops::RopeStyle::neox ? "neox" : "normal") + " base ";
  // %g, not a cast to an integer: a base from the file can be any float (a
  // cast of 4.7e27 to int64 is undefined; found by the model_loader fuzzer).
  char base[32];
  std::snprintf(base, sizeof base, "%g", static_cast<double>(rope.freq_base));
  s += base;
  const auto is_conv = [](const LayerSpec& l) { return l.mixer == MixerKind::shortconv; };
  if (const auto conv = std::find_if(layers.begin(), layers.end(), is_conv); conv != layers.end()) {
    s += "; " + std::to_string(std::count_if(layers.begin(), layers.end(), is_conv)) +
         " layers short convolutions of " + std::to_string(conv->conv_kernel) + " taps";
  }
  const bool windowed = std::any_of(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.attention.window != 0; });
  if (const auto sliding_window = static_cast<uint64_t>(value(arch::Param::sliding_window, 0));
      sliding_window != 0 && !windowed) {
    s += "; the file's sliding window of " + std::to_string(sliding_window) +
         " positions is not applied (as llama.cpp does not for this architecture)";
  }
  return s;
}

}  // namespace engine
