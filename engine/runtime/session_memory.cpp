#include "engine/runtime/session_memory.h"

#include <algorithm>

#include "engine/support/error.h"
#include "engine/support/memory.h"
#include "engine/support/saturating.h"
#include "engine/mixers/attention.h"
#include "engine/mixers/delta_net.h"
#include "engine/mixers/shortconv.h"

namespace engine {
namespace {

// The memory available to a session: the system's, capped by the app's limit.
MemoryAvailable available(uint64_t limit) {
  MemoryAvailable a = memory_available();
  if (limit != 0 && (!a.known || limit < a.bytes)) {
    a.bytes = limit;
    a.source = "the session's memory_limit";
    a.known = true;
  }
  return a;
}

// "5 layers x 2048 positions x 64 values x 2 bytes", the kind of layer named
// when there are several.
std::string cache_formula(const std::vector<CacheUse>& uses) {
  std::string s;
  for (const CacheUse& u : uses) {
    if (!s.empty()) s += " + ";
    s += std::to_string(u.n_layers) + (u.n_layers == 1 ? " layer x " : " layers x ") + u.shape;
    if (uses.size() > 1) s += " (" + u.kind + ")";
  }
  return s;
}

std::string bytes_text(uint64_t bytes) { return std::to_string(bytes) + " bytes (" + format_bytes(bytes) + ")"; }

}  // namespace

uint64_t ffn_up_width(const ModelConfig& c) {
  uint64_t width = c.n_ff;
  for (const LayerSpec& l : c.layers) width = std::max<uint64_t>(width, l.fused_gate_up ? 2 * uint64_t{l.n_ff} : l.n_ff);
  return width;
}

SessionMemory session_memory_needed(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType kv_type,
                                    size_t n_threads) {
  SessionMemory m;
  // Sliding-window layers count their ring, not the context: a long context
  // fits where the windows make it fit.
  m.kv_uses = cache_uses(c, n_ctx, n_batch, kv_type);
  const KvSize kv = kv_size(c, n_ctx, n_batch, kv_type);
  m.kv_bytes = kv.bytes;
  m.kv_full_bytes = kv.full_bytes;
  // Per batch row: x, xn, q, k, v, att, gate, up, rope, the per-layer inputs
  // (two rows of every layer's and one layer's gate) and one row of logits;
  // the packed activations take at most 4 bytes per value of the widest input.
  const uint64_t att = uint64_t{c.n_head} * c.head_dim_v;
  const uint64_t per_layer = uint64_t{c.per_layer_input.n_embd} * (2 * uint64_t{c.n_layer} + 1);
  uint64_t per_row = saturating_add(per_layer, saturating_add(ShortConvMixer::row_floats(c), DeltaNetMixer::row_floats(c)));
  // Gated attention's wider Q rows and its gates: q_dim each more.
  if (AttentionMixer::gated_q_rows(c) != c.q_dim()) per_row = saturating_add(per_row, 2 * uint64_t{c.q_dim()});
  for (uint64_t n : {uint64_t{c.n_embd}, uint64_t{c.n_embd}, uint64_t{c.q_dim()}, uint64_t{c.kv_dim_k()},
                     uint64_t{c.kv_dim_v()}, att, uint64_t{c.n_ff}, ffn_up_width(c), uint64_t{c.n_rot},
                     uint64_t{c.n_vocab}, std::max<uint64_t>({c.n_embd, c.n_ff, c.q_dim(), att})}) {
    per_row = saturating_add(per_row, n);
  }
  // Per thread: the attention scores of a KV head's query heads and that
  // head's key and value rows converted to F32, for the positions one task
  // attends to (all n_ctx, or only the windows when every layer has one).
  const uint64_t per_thread =
      saturating_add(AttentionMixer::thread_scratch_floats(c, n_ctx), DeltaNetMixer::thread_floats(c));
  const uint64_t floats = saturating_add(saturating_mul(per_row, n_batch), saturating_mul(n_threads, per_thread));
  m.scratch_bytes = saturating_mul(floats, sizeof(float));
  return m;
}

SessionMemory reserve_session_memory(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType kv_type,
                                     size_t n_threads, uint64_t limit) {
  if (n_ctx == 0) throw Error("session: n_ctx is 0 and the model gives no context_length; pass n_ctx");
  if (const std::string why = kv_type_unsupported(c, kv_type); !why.empty()) throw Error("session: " + why);
  const SessionMemory need = session_memory_needed(c, n_ctx, n_batch, kv_type, n_threads);
  const MemoryAvailable avail = available(limit);
  if (avail.known && need.total() > avail.bytes) {
    throw ResourceError("session: n_ctx " + std::to_string(n_ctx) + " with n_batch " + std::to_string(n_batch) +
                        " needs " + bytes_text(need.total()) + " (KV cache " + format_bytes(need.kv_bytes) + " = " +
                        cache_formula(need.kv_uses) + "; scratch " + format_bytes(need.scratch_bytes) +
                        ") but " + bytes_text(avail.bytes) + " are available (" + avail.source +
                        "); use a smaller n_ctx or n_batch");
  }
  return need;
}

void check_allocation(uint64_t bytes, uint64_t limit, const std::string& what) {
  const MemoryAvailable avail = available(limit);
  if (avail.known && bytes > avail.bytes) {
    throw ResourceError(what + " need " + bytes_text(bytes) + " but " + bytes_text(avail.bytes) +
                        " are available (" + avail.source + ")");
  }
}

}  // namespace engine
