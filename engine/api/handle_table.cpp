#include "engine/api/handle_table.h"

namespace engine::api_detail {

HandleTable& handle_table() {
  // Never destroyed: an app's static objects may free handles during exit,
  // after a function-local static table would already be gone.
  static HandleTable* table = new HandleTable;
  return *table;
}

uintptr_t HandleTable::add(Kind kind, void* object) {
  std::lock_guard lock(mutex_);
  const uintptr_t handle = next_++;
  entries_.emplace(handle, Entry{kind, object});
  return handle;
}

Status HandleTable::enter(uintptr_t handle, Kind kind, Access access, void** object) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(handle);
  if (it == entries_.end() || it->second.kind != kind) return Status::invalid;
  Entry& e = it->second;
  if (e.exclusive || (access == Access::exclusive && e.users != 0)) return Status::busy;
  ++e.users;
  e.exclusive = access == Access::exclusive;
  *object = e.object;
  return Status::ok;
}

void HandleTable::leave(uintptr_t handle) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(handle);
  if (it == entries_.end()) return;  // cannot happen: remove() refuses handles in use
  --it->second.users;
  it->second.exclusive = false;
}

}  // namespace engine::api_detail
