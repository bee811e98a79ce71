#include "engine/arch/registry.h"

#include <deque>
#include <mutex>

#include "engine/arch/families.h"

namespace engine::arch {
namespace {

struct Registry {
  std::mutex mutex;
  std::deque<Architecture> list;  // a deque: registering keeps earlier pointers valid
};

Registry& registry() {
  // One entry per family.
  static Registry r{{}, {llama(), qwen2(), qwen3(), phi3(), smollm3(), granite(), gemma2(), gemma3(), gemma4(), lfm2(), qwen35()}};
  return r;
}

}  // namespace

const Architecture* find_architecture(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Architecture& a : r.list) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<const Architecture*> architectures() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<const Architecture*> out;
  for (const Architecture& a : r.list) out.push_back(&a);
  return out;
}

std::string architecture_names() {
  std::string s;
  for (const Architecture* a : architectures()) s += (s.empty() ? "" : ", ") + a->name;
  return s;
}

void register_architecture(Architecture a) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (Architecture& known : r.list) {
    if (known.name == a.name) {
      known = std::move(a);
      return;
    }
  }
  r.list.push_back(std::move(a));
}

}  // namespace engine::arch
