#include "tools/serve/slot_pool.h"

#include <algorithm>
#include <chrono>

#include "tools/serve/http_error.h"

namespace serve {

SlotPool::SlotPool(std::vector<std::unique_ptr<Slot>> slots, size_t max_waiting)
    : slots_(std::move(slots)), in_use_(slots_.size(), false), max_waiting_(max_waiting) {}

SlotPool::Lease SlotPool::acquire(std::span<const int32_t> prompt, const std::function<bool()>& abandoned) {
  std::unique_lock lock(mutex_);
  if (busy_ == slots_.size() || !queue_.empty()) {
    if (queue_.size() >= max_waiting_) {
      throw HttpError(503, "the server is busy: all " + std::to_string(slots_.size()) + " sessions are generating and " +
                               std::to_string(queue_.size()) + " requests wait; retry later");
    }
    // First come, first served: a condition variable wakes waiters in no
    // particular order, and one request waited 8 s while others took 1.5 s.
    const uint64_t ticket = next_ticket_++;
    queue_.push_back(ticket);
    while (busy_ == slots_.size() || queue_.front() != ticket) {
      freed_.wait_for(lock, std::chrono::milliseconds(100));
      if ((busy_ == slots_.size() || queue_.front() != ticket) && abandoned && abandoned()) {
        queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
        freed_.notify_all();  // the next in line may be first now
        return {};
      }
    }
    queue_.pop_front();
    freed_.notify_all();  // a second free slot serves the next in line
  }
  Slot* best = nullptr;
  size_t best_common = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (in_use_[i]) continue;
    Slot& s = *slots_[i];
    const std::vector<int32_t> held = s.session.tokens();  // idle: no one else touches it
    size_t common = 0;
    while (common < held.size() && common < prompt.size() && held[common] == prompt[common]) ++common;
    if (best == nullptr || common > best_common || (common == best_common && s.last_used < best->last_used)) {
      best = &s;
      best_common = common;
    }
  }
  in_use_[static_cast<size_t>(best->index)] = true;
  ++busy_;
  return Lease(this, best);
}

void SlotPool::release(Slot& slot) {
  {
    const std::lock_guard lock(mutex_);
    in_use_[static_cast<size_t>(slot.index)] = false;
    --busy_;
    slot.last_used = ++clock_;
  }
  freed_.notify_all();
}

size_t SlotPool::busy() const {
  const std::lock_guard lock(mutex_);
  return busy_;
}

size_t SlotPool::waiting() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace serve
