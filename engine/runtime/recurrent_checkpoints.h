// Copies of a session's recurrent states (the short convolutions' windows) at
// a few positions. Such a state holds only the end of what was evaluated, so a
// session cut back to n tokens (regenerate, edit, a chat turn that reuses a
// common prefix) cannot go on from it; it goes on from the newest copy at or
// before n, and only the tokens after that copy are evaluated again, instead
// of all n.
//
// A copy is taken after every batch of more than one token (the end of each
// prompt or chat turn, and every n_batch tokens of a long one) and every
// kEvery positions of a decode: with the state of LFM2-1.2B (10 layers x 2 x
// 2048 floats, 160 KiB), the kMax copies take 2.5 MiB at most. A gated
// DeltaNet's state is far larger (Qwen3.5-0.8B: 18 layers x 16 heads x 128 x
// 128 floats and the windows, 19 MiB), so the copies are also held to
// kMaxBytes, keeping at least kMin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/kv_cache.h"

namespace engine {

class RecurrentCheckpoints {
 public:
  static constexpr size_t kMax = 16;
  static constexpr uint32_t kEvery = 64;
  static constexpr uint64_t kMaxBytes = uint64_t{64} << 20;
  static constexpr size_t kMin = 2;
  // The copies kept of a state of copy_bytes.
  static size_t max_copies(uint64_t copy_bytes);

  // After a batch of n tokens that ended at position `end`.
  void after_batch(uint32_t end, uint32_t n, const KvCache& kv);
  // A copy of the states as those after `end` positions (a restored session's).
  void take(uint32_t end, const KvCache& kv);
  // Drops the copies of positions after n (their tokens were dropped).
  void drop_after(uint32_t n);
  // Restores the newest copy at or before n whose position the attention
  // caches still hold, and returns its position (nullopt: none).
  std::optional<uint32_t> restore(uint32_t n, KvCache& kv) const;
  // Drops every copy (the memory of one is kept for the next).
  void clear();

  size_t size() const { return copies_.size(); }
  // The copies' bytes and the spare one's.
  uint64_t bytes() const;

 private:
  struct Copy {
    uint32_t at;
    std::vector<float> state;
  };
  void recycle(std::vector<Copy>::iterator copy);
  std::vector<Copy> copies_;  // ascending positions
  std::vector<float> spare_;  // the memory of the last copy dropped, reused by the next
};

// A session's state memory by kind, for the reports of run, bench and the
// C API (engine_session_memory_info): the attention layers' KV cache, the
// recurrent layers' states, and the checkpoints' copies of those states.
struct StateMemory {
  uint64_t attention_bytes = 0;
  uint64_t recurrent_bytes = 0;
  uint64_t checkpoint_bytes = 0;
  uint32_t n_attention_layers = 0;
  uint32_t n_recurrent_layers = 0;
  uint32_t n_checkpoints = 0;
  // "recurrent states 160.0 KiB (10 layers); checkpoints 480.0 KiB (3 copies)";
  // empty for a model without recurrent layers.
  std::string describe_recurrent() const;
};
StateMemory state_memory(const KvCache& kv, const RecurrentCheckpoints& checkpoints);

}  // namespace engine
