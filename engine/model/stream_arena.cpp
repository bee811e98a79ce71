#include "engine/model/stream_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "engine/support/error.h"
#include "engine/support/memory.h"

namespace engine {
namespace {

constexpr uint64_t kHugePage = 2u << 20;
constexpr uint64_t kAlign = 64;

uint64_t page_size() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }
uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

StreamArena::StreamArena(uint64_t capacity, const std::string& what) {
  if (capacity == 0) return;
  const uint64_t bytes = round_up(capacity, page_size());
  // One huge page more than asked, to start at a 2 MiB boundary inside it.
  const uint64_t map_bytes = bytes + kHugePage;
  void* p = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    throw ResourceError(what + ": cannot reserve " + format_bytes(capacity) + " (" + std::strerror(e) + ")");
  }
  auto* map = static_cast<uint8_t*>(p);
  base_ = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(map), kHugePage));
  capacity_ = bytes;
  // The slack before the aligned start and after the capacity goes back now.
  const uint64_t head = static_cast<uint64_t>(base_ - map);
  if (head > 0) munmap(map, head);
  const uint64_t tail = map_bytes - head - capacity_;
  if (tail > 0) munmap(base_ + capacity_, tail);
#if defined(MADV_HUGEPAGE)
  advised_ = capacity_ >= kHugePage && madvise(base_, capacity_, MADV_HUGEPAGE) == 0;
#endif
}

StreamArena::~StreamArena() { reset(); }

void StreamArena::reset() noexcept {
  if (base_ != nullptr && capacity_ > 0) munmap(base_, capacity_);
  base_ = nullptr;
  capacity_ = used_ = 0;
  advised_ = false;
}

StreamArena::StreamArena(StreamArena&& other) noexcept { *this = std::move(other); }

StreamArena& StreamArena::operator=(StreamArena&& other) noexcept {
  if (this != &other) {
    reset();
    base_ = std::exchange(other.base_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    used_ = std::exchange(other.used_, 0);
    advised_ = std::exchange(other.advised_, false);
  }
  return *this;
}

uint8_t* StreamArena::allocate(uint64_t bytes) {
  const uint64_t start = round_up(used_, kAlign);
  if (start > capacity_ || bytes > capacity_ - start) return nullptr;
  used_ = start + bytes;
  return base_ + start;
}

void StreamArena::release_unused() {
  const uint64_t keep = round_up(used_, page_size());
  if (base_ == nullptr || keep >= capacity_) return;
  munmap(base_ + keep, capacity_ - keep);
  capacity_ = keep;
  if (keep == 0) base_ = nullptr;
}

uint64_t StreamArena::huge_page_bytes() const {
  if (base_ == nullptr) return 0;
  // The mapping's entry in /proc/self/smaps: "start-end perms ..." then
  // "AnonHugePages: N kB" among its fields.
  std::ifstream in("/proc/self/smaps");
  std::string line;
  const auto begin = reinterpret_cast<uintptr_t>(base_);
  bool inside = false;
  uint64_t bytes = 0;
  while (std::getline(in, line)) {
    uintmax_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%jx-%jx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      // Overlap, not containment: the kernel may merge the mapping with a
      // neighbour of the same flags.
      inside = lo < begin + capacity_ && hi > begin;
      continue;
    }
    unsigned long long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %llu kB", &kb) == 1) bytes += kb * 1024;
  }
  return bytes;
}

std::string parse_huge_pages_mode(std::string_view enabled) {
  const size_t open = enabled.find('['), close = enabled.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) return "unknown";
  return std::string(enabled.substr(open + 1, close - open - 1));
}

std::string transparent_huge_pages_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  return parse_huge_pages_mode(text);
}

}  // namespace engine
