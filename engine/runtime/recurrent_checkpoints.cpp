#include "engine/runtime/recurrent_checkpoints.h"

#include <algorithm>

namespace engine {

void RecurrentCheckpoints::after_batch(uint32_t end, uint32_t n, const KvCache& kv) {
  const uint32_t last = copies_.empty() ? 0 : copies_.back().at;
  if (end <= last || (n == 1 && end / kEvery == last / kEvery)) return;
  take(end, kv);
}

void RecurrentCheckpoints::take(uint32_t end, const KvCache& kv) {
  drop_after(end);
  if (!copies_.empty() && copies_.back().at == end) copies_.pop_back();
  copies_.push_back({end, kv.recurrent_state()});
  if (copies_.size() <= kMax) return;
  // Full: the copy closest after the one before it goes (never the newest),
  // which keeps the others spread over the session.
  size_t drop = 0;
  for (size_t i = 1; i + 1 < copies_.size(); ++i) {
    const uint32_t gap = copies_[i].at - copies_[i - 1].at;
    const uint32_t best = drop == 0 ? copies_[0].at : copies_[drop].at - copies_[drop - 1].at;
    if (gap < best) drop = i;
  }
  copies_.erase(copies_.begin() + static_cast<std::ptrdiff_t>(drop));
}

void RecurrentCheckpoints::drop_after(uint32_t n) {
  std::erase_if(copies_, [&](const Copy& c) { return c.at > n; });
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
  return total;
}

}  // namespace engine
