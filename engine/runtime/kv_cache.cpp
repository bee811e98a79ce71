#include "engine/runtime/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "engine/support/memory.h"
#include "engine/support/saturating.h"
#include "engine/model/model_config.h"
#include "engine/ops/ops.h"

namespace engine {
namespace {

constexpr auto add = saturating_add;
constexpr auto mul = saturating_mul;

}  // namespace

const char* kv_type_name(KvType t) { return t == KvType::f16 ? "f16" : "f32"; }

AttentionCache::AttentionCache(KvType type, uint32_t n_pos, uint32_t window, uint32_t n_head_kv, uint32_t head_dim_k,
                               uint32_t head_dim_v)
    : type_(type),
      n_pos_(n_pos),
      window_(window),
      n_head_kv_(n_head_kv),
      head_dim_k_(head_dim_k),
      head_dim_v_(head_dim_v) {
  keys_.resize(uint64_t{n_head_kv} * n_pos * head_dim_k * elem_bytes());
  values_.resize(uint64_t{n_head_kv} * n_pos * head_dim_v * elem_bytes());
}

uint32_t AttentionCache::rows_needed(const AttentionSpec& a, uint32_t n_ctx, uint32_t n_batch) {
  if (a.window == 0) return n_ctx;
  return static_cast<uint32_t>(std::min<uint64_t>(n_ctx, uint64_t{a.window} + std::max(n_batch, 1u) - 1));
}

uint64_t AttentionCache::bytes_for(const AttentionSpec& a, uint32_t n_pos, KvType type) {
  const uint64_t values = uint64_t{a.kv_dim_k()} + a.kv_dim_v();
  return mul(mul(n_pos, values), kv_elem_bytes(type));
}

size_t AttentionCache::head_offset(uint32_t kv_head, uint32_t head_dim) const {
  return uint64_t{kv_head} * n_pos_ * head_dim * elem_bytes();
}

void AttentionCache::store(uint32_t pos, const float* key, const float* value) {
  pos %= n_pos_;  // the same row without a window, where pos < n_ctx = n_pos
  for (uint32_t h = 0; h < n_head_kv_; ++h) {
    uint8_t* k = keys_.data() + head_offset(h, head_dim_k_) + size_t{pos} * head_dim_k_ * elem_bytes();
    uint8_t* v = values_.data() + head_offset(h, head_dim_v_) + size_t{pos} * head_dim_v_ * elem_bytes();
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

const float* AttentionCache::rows(const std::vector<uint8_t>& cache, uint32_t kv_head, uint32_t head_dim,
                                  uint32_t n_pos, float* scratch) const {
  const uint8_t* head = cache.data() + head_offset(kv_head, head_dim);
  if (type_ == KvType::f32) return reinterpret_cast<const float*>(head);
  ops::fp16_to_fp32(reinterpret_cast<const uint16_t*>(head), scratch, size_t{n_pos} * head_dim);
  return scratch;
}

const float* AttentionCache::keys(uint32_t kv_head, uint32_t n_pos, float* scratch) const {
  return rows(keys_, kv_head, head_dim_k_, n_pos, scratch);
}

const float* AttentionCache::values(uint32_t kv_head, uint32_t n_pos, float* scratch) const {
  return rows(values_, kv_head, head_dim_v_, n_pos, scratch);
}

template <class Fn>
void AttentionCache::for_runs(uint32_t first, uint32_t count, Fn&& fn) const {
  // At most two runs: from first's row to the ring's end, then from its start.
  for (uint32_t done = 0; done < count;) {
    const uint32_t row = (first + done) % n_pos_;
    const uint32_t run = std::min(count - done, n_pos_ - row);
    fn(row, done, run);
    done += run;
  }
}

void AttentionCache::gather_rows(const std::vector<uint8_t>& cache, uint32_t kv_head, uint32_t head_dim,
                                 uint32_t first, uint32_t count, float* out) const {
  const uint8_t* head = cache.data() + head_offset(kv_head, head_dim);
  for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
    const uint8_t* src = head + size_t{row} * head_dim * elem_bytes();
    float* dst = out + size_t{done} * head_dim;
    if (type_ == KvType::f32) {
      std::memcpy(dst, src, size_t{run} * head_dim * sizeof(float));
    } else {
      ops::fp16_to_fp32(reinterpret_cast<const uint16_t*>(src), dst, size_t{run} * head_dim);
    }
  });
}

void AttentionCache::gather(uint32_t kv_head, uint32_t first, uint32_t count, float* keys, float* values) const {
  gather_rows(keys_, kv_head, head_dim_k_, first, count, keys);
  gather_rows(values_, kv_head, head_dim_v_, first, count, values);
}

uint64_t AttentionCache::raw_bytes(uint32_t count) const {
  return uint64_t{count} * n_head_kv_ * (head_dim_k_ + head_dim_v_) * elem_bytes();
}

void AttentionCache::read_raw(uint32_t first, uint32_t count, uint8_t* out) const {
  for (const auto& [cache, head_dim] : {std::pair{&keys_, head_dim_k_}, std::pair{&values_, head_dim_v_}}) {
    const size_t row_bytes = size_t{head_dim} * elem_bytes();
    for (uint32_t h = 0; h < n_head_kv_; ++h, out += size_t{count} * row_bytes) {
      const uint8_t* head = cache->data() + head_offset(h, head_dim);
      for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
        std::memcpy(out + size_t{done} * row_bytes, head + size_t{row} * row_bytes, size_t{run} * row_bytes);
      });
    }
  }
}

void AttentionCache::write_raw(uint32_t first, uint32_t count, const uint8_t* in) {
  for (const auto& [cache, head_dim] : {std::pair{&keys_, head_dim_k_}, std::pair{&values_, head_dim_v_}}) {
    const size_t row_bytes = size_t{head_dim} * elem_bytes();
    for (uint32_t h = 0; h < n_head_kv_; ++h, in += size_t{count} * row_bytes) {
      uint8_t* head = cache->data() + head_offset(h, head_dim);
      for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
        std::memcpy(head + size_t{row} * row_bytes, in + size_t{done} * row_bytes, size_t{run} * row_bytes);
      });
    }
  }
}

const uint16_t* AttentionCache::keys_f16(uint32_t kv_head) const {
  return reinterpret_cast<const uint16_t*>(keys_.data() + head_offset(kv_head, head_dim_k_));
}

const uint16_t* AttentionCache::values_f16(uint32_t kv_head) const {
  return reinterpret_cast<const uint16_t*>(values_.data() + head_offset(kv_head, head_dim_v_));
}

uint64_t CacheUse::bytes() const { return mul(n_layers, bytes_per_layer); }

std::string CacheUse::describe() const {
  return std::to_string(n_layers) + " " + kind + (n_layers == 1 ? " layer x " : " layers x ") +
         format_bytes(bytes_per_layer);
}

std::vector<CacheUse> cache_uses(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type) {
  std::vector<CacheUse> uses;
  for (const LayerSpec& l : c.layers) {
    if (l.mixer == MixerKind::attention && l.attention.shares_kv()) continue;  // reads another layer's cache
    CacheUse use;
    switch (l.mixer) {
      case MixerKind::attention: {
        const AttentionSpec& a = l.attention;
        const uint32_t rows = AttentionCache::rows_needed(a, n_ctx, n_batch);
        use.kind = a.window != 0 ? "windowed attention" : "attention";
        use.window = a.window;
        use.bytes_per_position = AttentionCache::bytes_for(a, 1, type);
        use.bytes_per_layer = AttentionCache::bytes_for(a, rows, type);
        use.shape = std::to_string(rows) + " positions x " + std::to_string(uint64_t{a.kv_dim_k()} + a.kv_dim_v()) +
                    " values x " + std::to_string(kv_elem_bytes(type)) + " bytes";
        break;
      }
    }
    bool counted = false;
    for (CacheUse& u : uses) {
      if (u.kind == use.kind && u.shape == use.shape && u.window == use.window) {
        ++u.n_layers;
        counted = true;
        break;
      }
    }
    if (!counted) {
      use.n_layers = 1;
      uses.push_back(std::move(use));
    }
  }
  return uses;
}

KvCache::KvCache(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type)
    : type_(type), n_ctx_(n_ctx), uses_(cache_uses(c, n_ctx, n_batch, type)), size_(kv_size(c, n_ctx, n_batch, type)) {
  for (const LayerSpec& l : c.layers) {
    switch (l.mixer) {
      case MixerKind::attention: {
        const AttentionSpec& a = l.attention;
        if (a.shares_kv()) {  // the cache of an earlier layer, which holds the same positions
          index_.push_back(index_[a.kv_source]);
          break;
        }
        index_.push_back(static_cast<uint32_t>(attention_.size()));
        attention_.emplace_back(type, AttentionCache::rows_needed(a, n_ctx, n_batch), a.window, a.n_head_kv,
                                a.head_dim_k, a.head_dim_v);
        break;
      }
    }
  }
}

std::string describe_uses(const std::vector<CacheUse>& uses) {
  std::string s;
  for (const CacheUse& u : uses) s += (s.empty() ? "" : " + ") + u.describe();
  return s;
}

KvSize kv_size(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type) {
  KvSize s;
  s.type = type;
  for (const CacheUse& u : cache_uses(c, n_ctx, n_batch, type)) {
    s.bytes = add(s.bytes, u.bytes());
    s.full_bytes = add(s.full_bytes, mul(u.n_layers, mul(u.bytes_per_position, n_ctx)));
    s.n_layers += u.n_layers;
    if (u.window == 0) continue;
    s.n_windowed += u.n_layers;
    const auto at = std::lower_bound(s.windows.begin(), s.windows.end(), u.window);
    if (at == s.windows.end() || *at != u.window) s.windows.insert(at, u.window);
  }
  return s;
}

std::string KvSize::describe() const {
  std::string s = format_bytes(bytes) + " (" + kv_type_name(type);
  if (n_windowed != 0) {
    s += "; " + std::to_string(n_windowed) + " of " + std::to_string(n_layers) + " layers windowed to ";
    for (size_t i = 0; i < windows.size(); ++i) {
      s += (i == 0 ? "" : i + 1 == windows.size() ? " and " : ", ") + std::to_string(windows[i]);
    }
    s += " positions; a full cache would be " + format_bytes(full_bytes);
  }
  return s + ")";
}

std::string KvCache::describe() const { return std::string(kv_type_name(type_)) + ": " + describe_uses(uses_); }

uint64_t KvCache::bytes() const {
  uint64_t total = 0;
  for (const AttentionCache& a : attention_) total += a.bytes();
  return total;
}

}  // namespace engine
