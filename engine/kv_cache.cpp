#include "engine/kv_cache.h"

#include <cstring>

#include "engine/ops.h"

namespace engine {

const char* kv_type_name(KvType t) { return t == KvType::f16 ? "f16" : "f32"; }

KvCache::KvCache(KvType type, uint32_t n_layer, uint32_t n_ctx, uint32_t n_head_kv, uint32_t head_dim_k,
                 uint32_t head_dim_v)
    : type_(type), n_ctx_(n_ctx), n_head_kv_(n_head_kv), head_dim_k_(head_dim_k), head_dim_v_(head_dim_v) {
  keys_.resize(uint64_t{n_layer} * n_head_kv * n_ctx * head_dim_k * elem_bytes());
  values_.resize(uint64_t{n_layer} * n_head_kv * n_ctx * head_dim_v * elem_bytes());
}

size_t KvCache::head_offset(uint32_t layer, uint32_t kv_head, uint32_t head_dim) const {
  return (uint64_t{layer} * n_head_kv_ + kv_head) * n_ctx_ * head_dim * elem_bytes();
}

void KvCache::store(uint32_t layer, uint32_t pos, const float* key, const float* value) {
  for (uint32_t h = 0; h < n_head_kv_; ++h) {
    uint8_t* k = keys_.data() + head_offset(layer, h, head_dim_k_) + size_t{pos} * head_dim_k_ * elem_bytes();
    uint8_t* v = values_.data() + head_offset(layer, h, head_dim_v_) + size_t{pos} * head_dim_v_ * elem_bytes();
    const float* key_h = key + size_t{h} * head_dim_k_;
    const float* value_h = value + size_t{h} * head_dim_v_;
    if (type_ == KvType::f32) {
      std::memcpy(k, key_h, head_dim_k_ * sizeof(float));
      std::memcpy(v, value_h, head_dim_v_ * sizeof(float));
    } else {
      ops::fp32_to_fp16(key_h, reinterpret_cast<uint16_t*>(k), head_dim_k_);
      ops::fp32_to_fp16(value_h, reinterpret_cast<uint16_t*>(v), head_dim_v_);
    }
  }
}

const float* KvCache::rows(const std::vector<uint8_t>& cache, uint32_t layer, uint32_t kv_head, uint32_t head_dim,
                           uint32_t n_pos, float* scratch) const {
  const uint8_t* head = cache.data() + head_offset(layer, kv_head, head_dim);
  if (type_ == KvType::f32) return reinterpret_cast<const float*>(head);
  ops::fp16_to_fp32(reinterpret_cast<const uint16_t*>(head), scratch, size_t{n_pos} * head_dim);
  return scratch;
}

const float* KvCache::keys(uint32_t layer, uint32_t kv_head, uint32_t n_pos, float* scratch) const {
  return rows(keys_, layer, kv_head, head_dim_k_, n_pos, scratch);
}

const float* KvCache::values(uint32_t layer, uint32_t kv_head, uint32_t n_pos, float* scratch) const {
  return rows(values_, layer, kv_head, head_dim_v_, n_pos, scratch);
}

const uint16_t* KvCache::keys_f16(uint32_t layer, uint32_t kv_head) const {
  return reinterpret_cast<const uint16_t*>(keys_.data() + head_offset(layer, kv_head, head_dim_k_));
}

const uint16_t* KvCache::values_f16(uint32_t layer, uint32_t kv_head) const {
  return reinterpret_cast<const uint16_t*>(values_.data() + head_offset(layer, kv_head, head_dim_v_));
}

}  // namespace engine
