// The server's sessions on its one model (--parallel N) and the requests
// waiting for one. A request takes the idle session that already holds the
// longest start of its prompt (a chat's earlier turns, a shared system
// prompt), so only its new tokens are evaluated. Waiting requests are served
// in arrival order; past the waiting bound (--queue) one is refused with 503
// at once rather than left to time out.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/api/engine.hpp"

namespace serve {

struct Slot {
  int index = 0;
  engine::api::Session session;
  uint64_t last_used = 0;  // the pool's clock when it was last released
};

class SlotPool {
 public:
  SlotPool(std::vector<std::unique_ptr<Slot>> slots, size_t max_waiting);

  // A slot held until the lease is destroyed.
  class Lease {
   public:
    Lease() = default;
    Lease(SlotPool* pool, Slot* slot) : pool_(pool), slot_(slot) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), slot_(o.slot_) { o.slot_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (slot_ != nullptr) pool_->release(*slot_);
    }
    explicit operator bool() const { return slot_ != nullptr; }
    Slot& operator*() const { return *slot_; }
    Slot* operator->() const { return slot_; }

   private:
    SlotPool* pool_ = nullptr;
    Slot* slot_ = nullptr;
  };

  // The idle slot sharing the longest prefix with `prompt` (the least
  // recently used among equals), waiting while all are busy. Throws
  // HttpError 503 when max_waiting requests already wait; an empty lease when
  // `abandoned` turns true while waiting (the client left).
  Lease acquire(std::span<const int32_t> prompt, const std::function<bool()>& abandoned);

  size_t size() const { return slots_.size(); }
  size_t max_waiting() const { return max_waiting_; }
  size_t busy() const;
  size_t waiting() const;

 private:
  void release(Slot& slot);

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<bool> in_use_;
  size_t max_waiting_;
  std::deque<uint64_t> queue_;  // the waiting requests' tickets, in arrival order
  uint64_t next_ticket_ = 0;
  size_t busy_ = 0;
  uint64_t clock_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace serve
