#include "engine/model_config.h"

#include <cstdio>
#include <utility>

#include "engine/error.h"

namespace engine {
namespace {

[[noreturn]] void fail(const gguf::File& f, const std::string& what) { throw ModelError(f.path() + ": " + what); }

uint32_t u32_key(const gguf::File& f, const std::string& key) {
  const auto* kv = f.find(key);
  if (kv != nullptr && kv->value.type() == gguf::ValueType::ARRAY) {
    fail(f, "metadata '" + key + "' is a per-layer array; models with different sizes per layer are not supported");
  }
  const uint64_t v = f.get_uint(key);
  if (v > UINT32_MAX) fail(f, "metadata '" + key + "' = " + std::to_string(v) + " is out of range");
  return static_cast<uint32_t>(v);
}

uint32_t u32_key_or(const gguf::File& f, const std::string& key, uint32_t fallback) {
  return f.find(key) != nullptr ? u32_key(f, key) : fallback;
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const gguf::File& f) {
  ModelConfig c;
  c.arch_name = std::string(f.get_string("general.architecture"));
  if (c.arch_name == "llama") {
    c.arch = Arch::llama;
  } else if (c.arch_name == "qwen2") {
    c.arch = Arch::qwen2;
    c.rope_style = ops::RopeStyle::neox;
    c.qkv_bias = true;
  } else if (c.arch_name == "qwen3") {
    c.arch = Arch::qwen3;
    c.rope_style = ops::RopeStyle::neox;
    c.qk_norm = true;
  } else {
    fail(f, "unsupported architecture '" + c.arch_name + "' (supported: llama, qwen2, qwen3)");
  }
  c.name = std::string(f.find_string("general.name").value_or(""));
  const std::string p = c.arch_name + ".";
  c.n_ctx_train = u32_key(f, p + "context_length");
  c.n_embd = u32_key(f, p + "embedding_length");
  c.n_layer = u32_key(f, p + "block_count");
  c.n_ff = u32_key(f, p + "feed_forward_length");
  c.n_head = u32_key(f, p + "attention.head_count");
  if (c.n_embd == 0 || c.n_layer == 0 || c.n_ff == 0 || c.n_head == 0) {
    fail(f, "embedding_length, block_count, feed_forward_length and attention.head_count must be positive");
  }
  c.n_head_kv = u32_key_or(f, p + "attention.head_count_kv", c.n_head);
  if (c.n_head_kv == 0 || c.n_head % c.n_head_kv != 0) {
    fail(f, "attention.head_count " + std::to_string(c.n_head) + " is not a multiple of head_count_kv " +
                std::to_string(c.n_head_kv));
  }
  if (f.find(p + "attention.key_length") == nullptr && c.n_embd % c.n_head != 0) {
    fail(f, "embedding_length " + std::to_string(c.n_embd) + " is not a multiple of head_count " +
                std::to_string(c.n_head) + " and attention.key_length is not given");
  }
  c.head_dim_k = u32_key_or(f, p + "attention.key_length", c.n_embd / c.n_head);
  c.head_dim_v = u32_key_or(f, p + "attention.value_length", c.head_dim_k);
  c.n_rot = u32_key_or(f, p + "rope.dimension_count", c.head_dim_k);
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
  c.rope_freq_base = static_cast<float>(f.find_float(p + "rope.freq_base").value_or(10000.0));
  if (!(c.rope_freq_base > 0.0f)) fail(f, "rope.freq_base must be positive");
  const std::string scaling = std::string(f.find_string(p + "rope.scaling.type").value_or("none"));
  if (scaling == "linear") {
    const double factor = f.get_float(p + "rope.scaling.factor");
    if (!(factor > 0.0)) fail(f, "rope.scaling.factor must be positive");
    c.rope_freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none") {
    fail(f, "rope scaling '" + scaling + "' is not supported (supported: none, linear)");
  }
  const double eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!(eps > 0.0 && eps < 1.0)) fail(f, "attention.layer_norm_rms_epsilon must be in (0, 1)");
  c.rms_eps = static_cast<float>(eps);
  c.n_vocab = u32_key_or(f, p + "vocab_size", 0);
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
    fail(f, "the vocabulary size is unknown (no " + p + "vocab_size, tokenizer.ggml.tokens or 2-D token_embd.weight)");
  }
  return c;
}

std::string ModelConfig::describe() const {
  std::string s = arch_name + ": " + std::to_string(n_layer) + " layers, n_embd " + std::to_string(n_embd) +
                  ", heads " + std::to_string(n_head) + "/" + std::to_string(n_head_kv) + " kv, head " +
                  std::to_string(head_dim_k) + ", n_ff " + std::to_string(n_ff) + ", vocab " +
                  std::to_string(n_vocab) + ", ctx " + std::to_string(n_ctx_train) + ", rope " +
                  (rope_style == ops::RopeStyle::neox ? "neox" : "normal") + " base ";
  // %g, not a cast to an integer: a base from the file can be any float (a
  // cast of 4.7e27 to int64 is undefined; found by the model_loader fuzzer).
  char base[32];
  std::snprintf(base, sizeof base, "%g", static_cast<double>(rope_freq_base));
  return s + base;
}

}  // namespace engine
