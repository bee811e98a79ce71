#include "engine/runtime/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "engine/support/memory.h"
#include "engine/support/saturating.h"
#include "engine/model/model_config.h"
#include "engine/ops/ops.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/quants.h"

namespace engine {
namespace {

constexpr auto add = saturating_add;
constexpr auto mul = saturating_mul;

}  // namespace

const char* kv_type_name(KvType t) {
  switch (t) {
    case KvType::f16: return "f16";
    case KvType::f32: return "f32";
    case KvType::q8_0: return "q8_0";
    case KvType::q4_0: return "q4_0";
  }
  return "?";
}

std::optional<KvType> parse_kv_type(std::string_view name) {
  for (KvType t : {KvType::f16, KvType::f32, KvType::q8_0, KvType::q4_0}) {
    if (name == kv_type_name(t)) return t;
  }
  return std::nullopt;
}

uint64_t kv_row_bytes(KvType t, uint64_t head_dim) {
  switch (t) {
    case KvType::f16: return head_dim * 2;
    case KvType::f32: return head_dim * 4;
    case KvType::q8_0: return head_dim / kernels::ref::QK * sizeof(kernels::ref::BlockQ8_0);
    case KvType::q4_0: return head_dim / kernels::ref::QK * sizeof(kernels::ref::BlockQ4_0);
  }
  return 0;
}

std::string kv_value_bytes(KvType t) {
  switch (t) {
    case KvType::f16: return "2";
    case KvType::f32: return "4";
    case KvType::q8_0: return "1.0625";  // 34 bytes per 32 values
    case KvType::q4_0: return "0.5625";  // 18 bytes per 32 values
  }
  return "?";
}

std::string kv_type_unsupported(const ModelConfig& c, KvType t) {
  if (!kv_quantized(t)) return "";
  for (size_t i = 0; i < c.layers.size(); ++i) {
    const LayerSpec& l = c.layers[i];
    if (l.mixer != MixerKind::attention) continue;
    for (uint32_t hd : {l.attention.head_dim_k, l.attention.head_dim_v}) {
      if (hd % kernels::ref::QK != 0) {
        return std::string("a ") + kv_type_name(t) + " KV cache stores blocks of 32 values; layer " +
               std::to_string(i) + " has a head dimension of " + std::to_string(hd) + " (use f16 or f32)";
      }
    }
  }
  return "";
}

AttentionCache::AttentionCache(KvType type, uint32_t n_pos, uint32_t window, uint32_t n_head_kv, uint32_t head_dim_k,
                               uint32_t head_dim_v)
    : type_(type),
      n_pos_(n_pos),
      window_(window),
      n_head_kv_(n_head_kv),
      head_dim_k_(head_dim_k),
      head_dim_v_(head_dim_v) {
  keys_.resize(uint64_t{n_head_kv} * n_pos * row_bytes(head_dim_k));
  values_.resize(uint64_t{n_head_kv} * n_pos * row_bytes(head_dim_v));
}

uint32_t AttentionCache::rows_needed(const AttentionSpec& a, uint32_t n_ctx, uint32_t n_batch) {
  if (a.window == 0) return n_ctx;
  return static_cast<uint32_t>(std::min<uint64_t>(n_ctx, uint64_t{a.window} + std::max(n_batch, 1u) - 1));
}

uint64_t AttentionCache::bytes_for(const AttentionSpec& a, uint32_t n_pos, KvType type) {
  const uint64_t row = kv_row_bytes(type, a.head_dim_k) + kv_row_bytes(type, a.head_dim_v);
  return mul(mul(n_pos, a.n_head_kv), row);
}

size_t AttentionCache::head_offset(uint32_t kv_head, uint32_t head_dim) const {
  return uint64_t{kv_head} * n_pos_ * row_bytes(head_dim);
}

// The quantized rows round as ggml's reference quantizers do (the same codes
// as llama.cpp's -ctk / -ctv q8_0 and q4_0 caches).
void AttentionCache::store_row(const float* x, uint8_t* row, uint32_t head_dim) const {
  switch (type_) {
    case KvType::f32: std::memcpy(row, x, head_dim * sizeof(float)); break;
    case KvType::f16: ops::fp32_to_fp16(x, reinterpret_cast<uint16_t*>(row), head_dim); break;
    case KvType::q8_0: kernels::ref::quantize_row_q8_0(x, row, head_dim); break;
    case KvType::q4_0: kernels::ref::quantize_row_q4_0(x, row, head_dim); break;
  }
}

void AttentionCache::store(uint32_t pos, const float* key, const float* value) {
  pos %= n_pos_;  // the same row without a window, where pos < n_ctx = n_pos
  for (uint32_t h = 0; h < n_head_kv_; ++h) {
    uint8_t* k = keys_.data() + head_offset(h, head_dim_k_) + size_t{pos} * row_bytes(head_dim_k_);
    uint8_t* v = values_.data() + head_offset(h, head_dim_v_) + size_t{pos} * row_bytes(head_dim_v_);
    store_row(key + size_t{h} * head_dim_k_, k, head_dim_k_);
    store_row(value + size_t{h} * head_dim_v_, v, head_dim_v_);
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

void AttentionCache::gather_rows(const std::vector<uint8_t>& cache, uint32_t kv_head, uint32_t head_dim,
                                 uint32_t first, uint32_t count, float* out) const {
  const uint8_t* head = cache.data() + head_offset(kv_head, head_dim);
  for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
    const uint8_t* src = head + size_t{row} * row_bytes(head_dim);
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
  return uint64_t{count} * n_head_kv_ * (row_bytes(head_dim_k_) + row_bytes(head_dim_v_));
}

void AttentionCache::read_raw(uint32_t first, uint32_t count, uint8_t* out) const {
  for (const auto& [cache, head_dim] : {std::pair{&keys_, head_dim_k_}, std::pair{&values_, head_dim_v_}}) {
    const size_t rb = row_bytes(head_dim);
    for (uint32_t h = 0; h < n_head_kv_; ++h, out += size_t{count} * rb) {
      const uint8_t* head = cache->data() + head_offset(h, head_dim);
      for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
        std::memcpy(out + size_t{done} * rb, head + size_t{row} * rb, size_t{run} * rb);
      });
    }
  }
}

void AttentionCache::write_raw(uint32_t first, uint32_t count, const uint8_t* in) {
  for (const auto& [cache, head_dim] : {std::pair{&keys_, head_dim_k_}, std::pair{&values_, head_dim_v_}}) {
    const size_t rb = row_bytes(head_dim);
    for (uint32_t h = 0; h < n_head_kv_; ++h, in += size_t{count} * rb) {
      uint8_t* head = cache->data() + head_offset(h, head_dim);
      for_runs(first, count, [&](uint32_t row, uint32_t done, uint32_t run) {
        std::memcpy(head + size_t{row} * rb, in + size_t{done} * rb, size_t{run} * rb);
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

const uint8_t* AttentionCache::key_row(uint32_t kv_head, uint32_t row) const {
  return keys_.data() + head_offset(kv_head, head_dim_k_) + size_t{row} * row_bytes(head_dim_k_);
}

const uint8_t* AttentionCache::value_row(uint32_t kv_head, uint32_t row) const {
  return values_.data() + head_offset(kv_head, head_dim_v_) + size_t{row} * row_bytes(head_dim_v_);
}

uint64_t RecurrentCache::window_floats(const LayerSpec& l, uint32_t n_embd) {
  switch (l.mixer) {
    case MixerKind::attention: return 0;
    case MixerKind::shortconv: return uint64_t{l.conv_kernel - 1} * n_embd;
    case MixerKind::delta_net: return uint64_t{l.conv_kernel - 1} * l.delta_net.conv_dim();
  }
  return 0;
}

uint64_t RecurrentCache::matrix_floats(const LayerSpec& l) {
  return l.mixer == MixerKind::delta_net ? l.delta_net.state_floats() : 0;
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
                    " values x " + kv_value_bytes(type) + " bytes";
        break;
      }
      case MixerKind::shortconv:
        // The same few rows whatever the context: nothing per position.
        use.kind = "short convolution";
        use.bytes_per_layer = RecurrentCache::window_floats(l, c.n_embd) * sizeof(float);
        use.shape = std::to_string(l.conv_kernel - 1) + " rows x " + std::to_string(c.n_embd) + " values x 4 bytes";
        break;
      case MixerKind::delta_net: {
        // Its window and state matrices whatever the context.
        const DeltaNetSpec& d = l.delta_net;
        use.kind = "gated delta net";
        use.bytes_per_layer =
            (RecurrentCache::window_floats(l, c.n_embd) + RecurrentCache::matrix_floats(l)) * sizeof(float);
        use.shape = std::to_string(l.conv_kernel - 1) + " rows x " + std::to_string(d.conv_dim()) + " values + " +
                    std::to_string(d.n_v_heads) + " x " + std::to_string(d.head_k_dim) + " x " +
                    std::to_string(d.head_v_dim) + " state x 4 bytes";
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
      case MixerKind::shortconv:
      case MixerKind::delta_net:
        index_.push_back(static_cast<uint32_t>(recurrent_.size()));
        recurrent_.emplace_back(RecurrentCache::window_floats(l, c.n_embd), RecurrentCache::matrix_floats(l));
        break;
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
    // A state of fixed size (bytes_per_position 0) is the same in a full cache.
    s.full_bytes = add(s.full_bytes, u.bytes_per_position != 0 ? mul(u.n_layers, mul(u.bytes_per_position, n_ctx)) : u.bytes());
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
  for (const RecurrentCache& s : recurrent_) total += s.bytes();
  return total;
}

std::vector<float> KvCache::recurrent_state() const {
  std::vector<float> state;
  copy_recurrent_state(state);
  return state;
}

void KvCache::copy_recurrent_state(std::vector<float>& out) const {
  size_t total = 0;
  for (const RecurrentCache& c : recurrent_) total += c.rows().size();
  out.resize(total);
  float* at = out.data();
  for (const RecurrentCache& c : recurrent_) at = std::copy(c.rows().begin(), c.rows().end(), at);
}

void KvCache::set_recurrent_state(const std::vector<float>& state, uint32_t n) {
  size_t at = 0;
  for (RecurrentCache& c : recurrent_) {
    c.set(state.data() + at, n);
    at += c.rows().size();
  }
}

}  // namespace engine
