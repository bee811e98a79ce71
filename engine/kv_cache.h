// The key/value cache: for each layer, the keys and values of every position
// evaluated so far, in F16 (default: half the memory, what phones need) or F32
// (exact attention, for comparing against references).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine {

enum class KvType { f16, f32 };
const char* kv_type_name(KvType t);

class KvCache {
 public:
  KvCache(KvType type, uint32_t n_layer, uint32_t n_ctx, uint32_t kv_dim_k, uint32_t kv_dim_v);

  KvType type() const { return type_; }
  uint32_t n_ctx() const { return n_ctx_; }
  uint64_t bytes() const { return keys_.size() + values_.size(); }

  // Stores the key and value rows (kv_dim_k, kv_dim_v floats) of one position.
  void store(uint32_t layer, uint32_t pos, const float* key, const float* value);

  // q . key[pos][offset .. offset + n), q in floats.
  float dot_key(uint32_t layer, uint32_t pos, uint32_t offset, const float* q, uint32_t n) const;
  // out[0..n) += w * value[pos][offset .. offset + n).
  void add_value(uint32_t layer, uint32_t pos, uint32_t offset, float w, float* out, uint32_t n) const;

 private:
  size_t elem_bytes() const { return type_ == KvType::f16 ? 2 : 4; }
  const uint8_t* key_row(uint32_t layer, uint32_t pos) const;
  const uint8_t* value_row(uint32_t layer, uint32_t pos) const;

  KvType type_;
  uint32_t n_ctx_, kv_dim_k_, kv_dim_v_;
  std::vector<uint8_t> keys_;    // (layer, n_ctx, kv_dim_k) elements
  std::vector<uint8_t> values_;  // (layer, n_ctx, kv_dim_v) elements
};

}  // namespace engine
