#include "engine/runtime/recurrent_checkpoints.h"

#include <algorithm>

#include "engine/support/memory.h"

namespace engine {

void RecurrentCheckpoints::after_batch(uint32_t end, uint32_t n, const KvCache& kv) {
  const uint32_t last = copies_.empty() ? 0 : copies_.back().at;
  if (end <= last || (n == 1 && end / kEvery == last / kEvery)) return;
  take(end, kv);
}

void RecurrentCheckpoints::take(uint32_t end, const KvCache& kv) {
  drop_after(end);
  if (!copies_.empty() && copies_.back().at == end) recycle(copies_.end() - 1);
  // Into the last copy dropped, when there is one: a fresh allocation of a
  // DeltaNet model's state is page-faulted in at every prompt (Qwen3.5-2B's
  // 20 MiB took 68 ms a prompt, 0.53 ms of each of 128 tokens' prefill).
  copies_.push_back({end, std::move(spare_)});
  spare_ = {};
  kv.copy_recurrent_state(copies_.back().state);
  if (copies_.size() <= max_copies(copies_.back().state.size() * sizeof(float))) return;
  // Full: the copy closest after the one before it goes (never the newest),
  // which keeps the others spread over the session.
  size_t drop = 0;
  for (size_t i = 1; i + 1 < copies_.size(); ++i) {
    const uint32_t gap = copies_[i].at - copies_[i - 1].at;
    const uint32_t best = drop == 0 ? copies_[0].at : copies_[drop].at - copies_[drop - 1].at;
    if (gap < best) drop = i;
  }
  recycle(copies_.begin() + static_cast<std::ptrdiff_t>(drop));
}

void RecurrentCheckpoints::recycle(std::vector<Copy>::iterator copy) {
  spare_ = std::move(copy->state);
  copies_.erase(copy);
}

void RecurrentCheckpoints::clear() {
  if (!copies_.empty()) recycle(copies_.end() - 1);
  copies_.clear();
}

size_t RecurrentCheckpoints::max_copies(uint64_t copy_bytes) {
  if (copy_bytes == 0) return kMax;
  return static_cast<size_t>(std::clamp<uint64_t>(kMaxBytes / copy_bytes, kMin, kMax));
}

void RecurrentCheckpoints::drop_after(uint32_t n) {
  while (!copies_.empty() && copies_.back().at > n) recycle(copies_.end() - 1);
}

std::optional<uint32_t> RecurrentCheckpoints::restore(uint32_t n, KvCache& kv) const {
  for (auto c = copies_.rbegin(); c != copies_.rend(); ++c) {
    if (c->at <= n && kv.attention_holds_history(c->at)) {
      kv.set_recurrent_state(c->state, c->at);
      return c->at;
    }
  }
  return std::nullopt;
}

uint64_t RecurrentCheckpoints::bytes() const {
  uint64_t total = 0;
  for (const Copy& c : copies_) total += c.state.size() * sizeof(float);
  return total + spare_.capacity() * sizeof(float);
}

StateMemory state_memory(const KvCache& kv, const RecurrentCheckpoints& checkpoints) {
  StateMemory m;
  for (const CacheUse& u : kv.uses()) {
    // A state of fixed size (nothing per position) is a recurrent layer's.
    if (u.bytes_per_position == 0) {
      m.recurrent_bytes += u.bytes();
      m.n_recurrent_layers += u.n_layers;
    } else {
      m.attention_bytes += u.bytes();
      m.n_attention_layers += u.n_layers;
    }
  }
  m.checkpoint_bytes = checkpoints.bytes();
  m.n_checkpoints = static_cast<uint32_t>(checkpoints.size());
  return m;
}

std::string StateMemory::describe_recurrent() const {
  if (n_recurrent_layers == 0) return "";
  return "recurrent states " + format_bytes(recurrent_bytes) + " (" + std::to_string(n_recurrent_layers) +
         " layers); checkpoints " + format_bytes(checkpoint_bytes) + " (" + std::to_string(n_checkpoints) +
         (n_checkpoints == 1 ? " copy)" : " copies)");
}

}  // namespace engine
