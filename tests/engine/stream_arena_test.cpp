// The memory the repacked weights and bench's probe live in: a bump allocator
// over one reserved mapping, advised into 2 MiB pages.
#include "engine/model/stream_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

namespace {

TEST(StreamArena, AllocatesAlignedDisjointBlocksUpToItsCapacity) {
  engine::StreamArena arena(1u << 20, "test arena");
  std::set<uintptr_t> starts;
  uint8_t* previous_end = nullptr;
  for (uint64_t bytes : {1u, 100u, 64u, 4096u, 777u}) {
    uint8_t* p = arena.allocate(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    if (previous_end != nullptr) {
      EXPECT_GE(p, previous_end);
    }
    std::memset(p, 0xA5, bytes);  // writable, all of it
    previous_end = p + bytes;
    starts.insert(reinterpret_cast<uintptr_t>(p));
  }
  EXPECT_EQ(starts.size(), 5u);
  EXPECT_EQ(arena.allocate(2u << 20), nullptr);  // more than is left
  uint8_t* rest = arena.allocate((1u << 20) - arena.used() - 64);
  EXPECT_NE(rest, nullptr);
}

TEST(StreamArena, ReleasingTheUnusedTailKeepsWhatWasAllocated) {
  engine::StreamArena arena(64u << 20, "test arena");
  uint8_t* p = arena.allocate(5000);
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, 5000);
  arena.release_unused();
  EXPECT_EQ(arena.used(), 5000u);
  EXPECT_EQ(p[4999], 7);  // still mapped
  EXPECT_EQ(arena.allocate(1u << 20), nullptr);  // the released range is gone
}

TEST(StreamArena, AnEmptyArenaOwnsNothing) {
  engine::StreamArena none(0, "test arena");
  EXPECT_EQ(none.used(), 0u);
  EXPECT_EQ(none.huge_page_bytes(), 0u);
  engine::StreamArena moved(4u << 20, "test arena");
  ASSERT_NE(moved.allocate(100), nullptr);
  none = std::move(moved);
  EXPECT_EQ(none.used(), 100u);
  EXPECT_EQ(moved.used(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(moved.allocate(1), nullptr);
}

TEST(StreamArena, AsksForHugePagesWhereTheKernelOffersThem) {
  const std::string mode = engine::transparent_huge_pages_mode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "transparent huge pages: " << mode;
  if (std::getenv("ENGINE_QEMU_CPU") != nullptr) GTEST_SKIP() << "qemu-user answers madvise itself";
  engine::StreamArena arena(16u << 20, "test arena");
  EXPECT_TRUE(arena.huge_pages_advised());
  uint8_t* p = arena.allocate(16u << 20);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 16u << 20);
  // Whether the kernel found free 2 MiB pages depends on the machine's
  // fragmentation; the count is bounded by the buffer either way.
  const uint64_t huge = arena.huge_page_bytes();
  std::printf("16 MiB arena: %llu bytes in 2 MiB pages (mode %s)\n", static_cast<unsigned long long>(huge), mode.c_str());
  EXPECT_LE(huge, 16u << 20);
  EXPECT_EQ(huge % (2u << 20), 0u);
}

TEST(StreamArena, ReadsTheHugePageMode) {
  EXPECT_EQ(engine::parse_huge_pages_mode("always [madvise] never\n"), "madvise");
  EXPECT_EQ(engine::parse_huge_pages_mode("[always] madvise never"), "always");
  EXPECT_EQ(engine::parse_huge_pages_mode("always madvise [never]"), "never");
  EXPECT_EQ(engine::parse_huge_pages_mode(""), "unknown");
  EXPECT_EQ(engine::parse_huge_pages_mode("always madvise never"), "unknown");
  EXPECT_EQ(engine::parse_huge_pages_mode("[]"), "unknown");
  EXPECT_EQ(engine::parse_huge_pages_mode("] ["), "unknown");
}

}  // namespace
