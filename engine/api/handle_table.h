// The C API's handles are numbers from this table, not object addresses. Every
// call looks its handle up, and a number is never given out twice, so a freed
// handle (double free, use after free) stays invalid even after the allocator
// has reused the object's memory for a new object, and a pointer that never was
// a handle is refused without being dereferenced.
//
// The table also counts the calls in flight on each handle, under its lock: a
// session or sampler admits one call at a time (a second thread gets "busy"
// instead of a data race), a model any number; and a free is refused while a
// call is in flight, so no object is ever deleted under a running call.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace engine::api_detail {

enum class Kind : uint8_t { model, session, sampler };
enum class Access : uint8_t { shared, exclusive };
enum class Status : uint8_t { ok, invalid, busy, refused };

class HandleTable {
 public:
  // A new handle for `object` (never 0, never reused). Throws std::bad_alloc.
  uintptr_t add(Kind kind, void* object);

  // Starts a call on the handle; on ok, *object is set and leave() must follow.
  Status enter(uintptr_t handle, Kind kind, Access access, void** object);
  void leave(uintptr_t handle);

  // Runs fn(object) under the table's lock if the handle is live: for reads
  // that need no call slot (immutable data, atomics). False for a bad handle.
  template <class Fn>
  bool peek(uintptr_t handle, Kind kind, Fn&& fn) {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(handle);
    if (it == entries_.end() || it->second.kind != kind) return false;
    fn(it->second.object);
    return true;
  }

  // Removes a handle no call is using, if may_remove(object) agrees (a model
  // with sessions does not); *object is then the caller's to delete.
  template <class Check>
  Status remove(uintptr_t handle, Kind kind, void** object, Check&& may_remove) {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(handle);
    if (it == entries_.end() || it->second.kind != kind) return Status::invalid;
    if (it->second.users != 0) return Status::busy;
    if (!may_remove(it->second.object)) return Status::refused;
    *object = it->second.object;
    entries_.erase(it);
    return Status::ok;
  }

 private:
  struct Entry {
    Kind kind;
    void* object;
    uint32_t users = 0;      // calls in flight
    bool exclusive = false;  // the one call in flight wants the object alone
  };
  std::mutex mutex_;
  std::unordered_map<uintptr_t, Entry> entries_;
  uintptr_t next_ = 1;
};

HandleTable& handle_table();

// A call's claim on a handle, released when it goes out of scope.
template <class T, Kind K, Access A>
class Claim {
 public:
  explicit Claim(const void* handle) : handle_(reinterpret_cast<uintptr_t>(handle)) {
    void* object = nullptr;
    status_ = handle_table().enter(handle_, K, A, &object);
    object_ = static_cast<T*>(object);
  }
  ~Claim() {
    if (status_ == Status::ok) handle_table().leave(handle_);
  }
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;

  Status status() const { return status_; }
  T* operator->() const { return object_; }
  T& operator*() const { return *object_; }

 private:
  uintptr_t handle_;
  Status status_;
  T* object_ = nullptr;
};

}  // namespace engine::api_detail
