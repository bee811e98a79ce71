// Resource limits (issue 8, item 5): a session or a buffer that would not fit
// is refused before anything is allocated, with the bytes needed and
// available; loading keeps the weights in the file mapping.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_memory.h"
#include "tests/support/shared_data.h"

namespace {

#define EXPECT_CONTAINS(text, needle) EXPECT_NE(std::string(text).find(needle), std::string::npos) << (text)

class ResourceLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    const auto path = engine_test::default_model();
    model_ = engine::Model::load(path.string());
  }
  void TearDown() override { engine::set_log_level(engine::LogLevel::info); }
  std::unique_ptr<engine::Model> model_;
};

TEST_F(ResourceLimits, AContextLargerThanMemoryIsRefusedWithTheNumbers) {
  // 5 layers x 4294967295 positions x (32 + 32) F16 values: 2.7 TB of KV cache.
  try {
    engine::Session s(*model_, {.n_ctx = UINT32_MAX});
    FAIL() << "a 2.7 TB session was created";
  } catch (const engine::ResourceError& e) {
    EXPECT_CONTAINS(e.what(), "session: n_ctx 4294967295 with n_batch 512 needs ");
    EXPECT_CONTAINS(e.what(), "(KV cache 2560.0 GiB = 5 layers x 4294967295 positions x 64 values x 2 bytes");
    EXPECT_CONTAINS(e.what(), " are available (");
  }
}

TEST_F(ResourceLimits, TheAppsMemoryLimitIsHonoured) {
  // KV cache 5 x 2048 x 64 x 2 = 1.25 MiB: refused under 1 MiB, created under 64 MiB.
  try {
    engine::Session s(*model_, {.n_ctx = 2048, .memory_limit = 1 << 20});
    FAIL() << "created";
  } catch (const engine::ResourceError& e) {
    EXPECT_CONTAINS(e.what(), "but 1048576 bytes (1.0 MiB) are available (the session's memory_limit)");
  }
  engine::Session s(*model_, {.n_ctx = 2048, .memory_limit = 64 << 20});
  // The estimate is what the cache really holds.
  const engine::SessionMemory need =
      engine::session_memory_needed(model_->config(), 2048, 512, engine::KvType::f16, 1);
  EXPECT_EQ(s.kv_cache().bytes(), need.kv_bytes);
}

TEST_F(ResourceLimits, AllLogitsOfALongPromptAreChecked) {
  // The session fits in 2 MiB with one token per batch; the logits of 2048
  // tokens (2048 x 512 floats = 4 MiB) do not.
  engine::Session s(*model_, {.n_ctx = 2048, .n_batch = 1, .memory_limit = 2 << 20});
  const std::vector<int32_t> prompt(2048, 1);
  try {
    s.eval(prompt, /*all_logits=*/true);
    FAIL() << "evaluated";
  } catch (const engine::ResourceError& e) {
    EXPECT_CONTAINS(e.what(), "eval: the logits of all 2048 tokens need 4194304 bytes (4.0 MiB) but 2097152 bytes");
  }
  EXPECT_EQ(s.n_past(), 0u);
}

TEST_F(ResourceLimits, SizesThatOverflowSaturate) {
  // The KV cache is sized by each layer's spec, the scratch by the largest.
  engine::ModelConfig c = model_->config();
  c.n_head_kv = 1u << 16;
  c.head_dim_k = c.head_dim_v = 1u << 15;
  for (engine::LayerSpec& l : c.layers) {
    l.attention.n_head_kv = c.n_head_kv;
    l.attention.head_dim_k = l.attention.head_dim_v = c.head_dim_k;
  }
  const engine::SessionMemory m = engine::session_memory_needed(c, UINT32_MAX, UINT32_MAX, engine::KvType::f32, 64);
  EXPECT_EQ(m.kv_bytes, UINT64_MAX);
  EXPECT_EQ(m.total(), UINT64_MAX);
}

TEST_F(ResourceLimits, MemoryAvailableIsKnownOnLinux) {
  const engine::MemoryAvailable a = engine::memory_available();
  ASSERT_TRUE(a.known);
  EXPECT_GT(a.bytes, 0u);
  EXPECT_FALSE(a.source.empty());
}

#if defined(__SANITIZE_ADDRESS__)
#define ENGINE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENGINE_UNDER_ASAN 1
#endif
#endif

// Loading maps the file: the heap grows by the repacked copies and the small
// 1-D tensors converted to float, nothing more. Measured as resident anonymous
// memory (RssAnon), which the mapping's pages never count in.
TEST(LoadMemory, LoadingCommitsNoMemoryForTheWeightsBeyondTheMapping) {
#ifdef ENGINE_UNDER_ASAN
  GTEST_SKIP() << "ASan's shadow memory and quarantine count as anonymous memory";
#endif
  if (std::getenv("ENGINE_QEMU_CPU") != nullptr) GTEST_SKIP() << "qemu's own translation memory counts as anonymous";
  const auto path = engine_test::shared_file("models/reference/llama-d256-F32.gguf");
  if (path.empty()) GTEST_SKIP() << "missing shared file models/reference/llama-d256-F32.gguf";
  engine::set_log_level(engine::LogLevel::error);
  const engine::MemoryUsage before = engine::memory_usage();
  if (!before.known || before.anon_bytes == 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  const auto model = engine::Model::load(path.string());
  const engine::MemoryUsage after = engine::memory_usage();
  engine::set_log_level(engine::LogLevel::info);
  const uint64_t grown = after.anon_bytes > before.anon_bytes ? after.anon_bytes - before.anon_bytes : 0;
  const uint64_t resident = after.rss_bytes > before.rss_bytes ? after.rss_bytes - before.rss_bytes : 0;
  const uint64_t file = model->file().file_size();
  std::printf("file %llu bytes; heap weights %llu bytes; anonymous memory grew by %llu bytes, all resident by %llu\n",
              static_cast<unsigned long long>(file), static_cast<unsigned long long>(model->heap_weight_bytes()),
              static_cast<unsigned long long>(grown), static_cast<unsigned long long>(resident));
  // Slack for the allocator, the kernel plan and the tensor index: 4 MiB.
  EXPECT_LE(grown, model->heap_weight_bytes() + (4u << 20));
  // Weights are read in place or repacked once with their source pages
  // released: never two copies resident, never more than the file.
  EXPECT_LT(model->heap_weight_bytes(), file + (1u << 20));
  EXPECT_LE(resident, file + (4u << 20));
}

}  // namespace
