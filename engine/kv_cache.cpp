#include "engine/kv_cache.h"

#include <cstring>

#include "engine/ops.h"
#include "kernels/ref/fp16.h"

namespace engine {

const char* kv_type_name(KvType t) { return t == KvType::f16 ? "f16" : "f32"; }

KvCache::KvCache(KvType type, uint32_t n_layer, uint32_t n_ctx, uint32_t kv_dim_k, uint32_t kv_dim_v)
    : type_(type), n_ctx_(n_ctx), kv_dim_k_(kv_dim_k), kv_dim_v_(kv_dim_v) {
  keys_.resize(uint64_t{n_layer} * n_ctx * kv_dim_k * elem_bytes());
  values_.resize(uint64_t{n_layer} * n_ctx * kv_dim_v * elem_bytes());
}

const uint8_t* KvCache::key_row(uint32_t layer, uint32_t pos) const {
  return keys_.data() + (uint64_t{layer} * n_ctx_ + pos) * kv_dim_k_ * elem_bytes();
}

const uint8_t* KvCache::value_row(uint32_t layer, uint32_t pos) const {
  return values_.data() + (uint64_t{layer} * n_ctx_ + pos) * kv_dim_v_ * elem_bytes();
}

void KvCache::store(uint32_t layer, uint32_t pos, const float* key, const float* value) {
  uint8_t* k = keys_.data() + (key_row(layer, pos) - keys_.data());
  uint8_t* v = values_.data() + (value_row(layer, pos) - values_.data());
  if (type_ == KvType::f32) {
    std::memcpy(k, key, kv_dim_k_ * sizeof(float));
    std::memcpy(v, value, kv_dim_v_ * sizeof(float));
  } else {
    ops::fp32_to_fp16(key, reinterpret_cast<uint16_t*>(k), kv_dim_k_);
    ops::fp32_to_fp16(value, reinterpret_cast<uint16_t*>(v), kv_dim_v_);
  }
}

float KvCache::dot_key(uint32_t layer, uint32_t pos, uint32_t offset, const float* q, uint32_t n) const {
  if (type_ == KvType::f32) {
    return ops::dot(q, reinterpret_cast<const float*>(key_row(layer, pos)) + offset, n);
  }
  const auto* k = reinterpret_cast<const uint16_t*>(key_row(layer, pos)) + offset;
  float sum = 0.0f;
  for (uint32_t i = 0; i < n; ++i) sum += q[i] * kernels::ref::fp16_to_fp32(k[i]);
  return sum;
}

void KvCache::add_value(uint32_t layer, uint32_t pos, uint32_t offset, float w, float* out, uint32_t n) const {
  if (type_ == KvType::f32) {
    ops::axpy(out, w, reinterpret_cast<const float*>(value_row(layer, pos)) + offset, n);
    return;
  }
  const auto* v = reinterpret_cast<const uint16_t*>(value_row(layer, pos)) + offset;
  for (uint32_t i = 0; i < n; ++i) out[i] += w * kernels::ref::fp16_to_fp32(v[i]);
}

}  // namespace engine
