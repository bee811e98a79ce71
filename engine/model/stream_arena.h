// Memory for large buffers that are streamed from DRAM again and again: the
// repacked weights (every matrix once per decoded token) and bench's
// read-bandwidth probe, which must see the same kind of memory.
//
// One anonymous mapping, aligned to 2 MiB and marked MADV_HUGEPAGE, so that
// where the kernel has transparent huge pages (enabled "always" or "madvise")
// the buffer is backed by 2 MiB pages: one TLB entry instead of 512. In a
// virtual machine a TLB miss walks two page tables; on a 2-core VM
// (docs/memory.md) a read loop over 512 MiB ran at 12.4 GB/s in huge pages against
// 10.1 GB/s in 4 KiB pages (2 threads, alternating). Where the advice is
// refused (THP disabled, or no such call) the buffer works in small pages.
//
// Allocation is a bump pointer over a capacity reserved up front; pages are
// committed only when first written, and release_unused() gives back the
// reserved range after the last allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace engine {

class StreamArena {
 public:
  StreamArena() = default;
  // Reserves `capacity` bytes of address space. Throws ResourceError naming
  // `what` when the reservation fails.
  StreamArena(uint64_t capacity, const std::string& what);
  ~StreamArena();
  StreamArena(StreamArena&& other) noexcept;
  StreamArena& operator=(StreamArena&& other) noexcept;
  StreamArena(const StreamArena&) = delete;
  StreamArena& operator=(const StreamArena&) = delete;

  // `bytes` at a 64-byte boundary; nullptr when the capacity is used up.
  uint8_t* allocate(uint64_t bytes);
  // Unmaps the reserved pages after the last allocation.
  void release_unused();

  uint64_t used() const { return used_; }
  // Whether the kernel accepted MADV_HUGEPAGE for the buffer (it then uses
  // 2 MiB pages where it can find them; huge_page_bytes() says how many).
  bool huge_pages_advised() const { return advised_; }
  // Bytes of the buffer resident in huge pages now (/proc/self/smaps), 0
  // where unknown.
  uint64_t huge_page_bytes() const;

 private:
  void reset() noexcept;

  uint8_t* base_ = nullptr;  // the mapping, 2 MiB-aligned
  uint64_t capacity_ = 0;     // its bytes
  uint64_t used_ = 0;
  bool advised_ = false;
};

// The kernel's transparent huge page mode: "always", "madvise", "never", or
// "unknown" where /sys/kernel/mm/transparent_hugepage/enabled is not readable.
std::string transparent_huge_pages_mode();
// The same from the file's text ("always [madvise] never": the bracketed word).
std::string parse_huge_pages_mode(std::string_view enabled);

}  // namespace engine
