// What a session allocates beyond the model, computed from the sizes before
// anything is allocated, and the check that refuses a session (or a buffer)
// that would not fit in the memory available, with the numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/kv_cache.h"
#include "engine/model/model_config.h"
#include "engine/support/saturating.h"

namespace engine {

// Byte counts saturate at UINT64_MAX instead of wrapping.
struct SessionMemory {
  uint64_t kv_bytes = 0;       // the caches of every layer (keys and values of the positions each keeps)
  uint64_t kv_full_bytes = 0;  // what they would be with every layer keeping all n_ctx positions
  std::vector<CacheUse> kv_uses;  // the same by kind of layer
  uint64_t scratch_bytes = 0;  // activations of one batch, attention rows, one row of logits
  uint64_t total() const { return kv_bytes > UINT64_MAX - scratch_bytes ? UINT64_MAX : kv_bytes + scratch_bytes; }
};

// The widest ffn_up output of any layer: n_ff, or 2 n_ff where a layer's
// gate is fused into it.
uint64_t ffn_up_width(const ModelConfig& c);

SessionMemory session_memory_needed(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType kv_type,
                                    size_t n_threads);

// The need; engine::Error for n_ctx 0; engine::ResourceError naming the bytes needed (KV cache and
// scratch) and the bytes available (memory_available(), capped by `limit`
// when it is not 0).
SessionMemory reserve_session_memory(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType kv_type,
                                     size_t n_threads, uint64_t limit);

// engine::ResourceError "<what> need(s) N bytes but M are available" when
// `bytes` exceed what is available.
void check_allocation(uint64_t bytes, uint64_t limit, const std::string& what);

}  // namespace engine
