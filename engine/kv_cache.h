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
  KvCache(KvType type, uint32_t n_layer, uint32_t n_ctx, uint32_t n_head_kv, uint32_t head_dim_k,
          uint32_t head_dim_v);

  KvType type() const { return type_; }
  uint32_t n_ctx() const { return n_ctx_; }
  uint64_t bytes() const { return keys_.size() + values_.size(); }

  // Stores the key and value rows (n_head_kv x head_dim floats) of one position.
  void store(uint32_t layer, uint32_t pos, const float* key, const float* value);

  // The keys (values) of positions 0 .. n_pos - 1 of one KV head as (n_pos,
  // head_dim) floats: the cache itself when it is F32, else converted into
  // `scratch`, which holds n_pos x head_dim floats.
  const float* keys(uint32_t layer, uint32_t kv_head, uint32_t n_pos, float* scratch) const;
  const float* values(uint32_t layer, uint32_t kv_head, uint32_t n_pos, float* scratch) const;
  // The same rows as stored, (n_ctx, head_dim) halves, in an F16 cache: for
  // attention that widens them in registers (ops::dot_rows over F16 rows).
  const uint16_t* keys_f16(uint32_t layer, uint32_t kv_head) const;
  const uint16_t* values_f16(uint32_t layer, uint32_t kv_head) const;

 private:
  size_t elem_bytes() const { return type_ == KvType::f16 ? 2 : 4; }
  // Start of one KV head's rows in one layer: (n_ctx, head_dim) elements, so a
  // head's history is contiguous and converts in one pass.
  size_t head_offset(uint32_t layer, uint32_t kv_head, uint32_t head_dim) const;
  const float* rows(const std::vector<uint8_t>& cache, uint32_t layer, uint32_t kv_head, uint32_t head_dim,
                    uint32_t n_pos, float* scratch) const;

  KvType type_;
  uint32_t n_ctx_, n_head_kv_, head_dim_k_, head_dim_v_;
  std::vector<uint8_t> keys_;    // (layer, kv head, n_ctx, head_dim_k) elements
  std::vector<uint8_t> values_;  // (layer, kv head, n_ctx, head_dim_v) elements
};

}  // namespace engine
