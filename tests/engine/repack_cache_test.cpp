// The repack cache (engine/model/repack_cache.h): written at the first load,
// mapped at the next with the same weights bit for bit, and ignored (with the
// reason) and written again when the model, the kernels or the format change,
// or when the file is truncated or corrupt; a cache that cannot be written or
// a load cancelled while writing leaves no file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/repack_cache.h"
#include "engine/support/error.h"
#include "engine/support/log.h"
#include "tests/quantize/test_util.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;

// Every matrix of the model in its kernel's layout (the packed bytes, or the
// GGUF rows where the kernel reads those), concatenated.
std::vector<uint8_t> packed_weights(const engine::Model& m) {
  std::vector<uint8_t> all;
  const auto add = [&](const engine::Linear& l) {
    if (l.kernel == nullptr || l.rhs == nullptr) return;
    const uint64_t bytes = l.kernel->pack_rhs != nullptr ? l.kernel->rhs_packed_size(l.out, l.in)
                                                         : *gguf::row_bytes(l.type, l.in) * l.out;
    const auto* p = static_cast<const uint8_t*>(l.rhs);
    all.insert(all.end(), p, p + bytes);
  };
  add(m.output());
  for (const auto& layer : m.layers()) {
    for (const engine::Linear* l : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w_gate, &layer.w_up, &layer.w_down}) {
      add(*l);
    }
  }
  return all;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

class RepackCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    // Q4_0, which every tier above ref repacks (stories260K's F32 is read in
    // place on ARM); a copy of its own: the tests change its modification time.
    ENGINE_REQUIRE_SHARED(source, "models/reference/llama-d256-Q4_0.gguf");
    model_ = dir_ / "model.gguf";
    fs::copy_file(source, model_);
    options_.cache_dir = dir_ / "cache";
    cache_ = engine::repack_cache_path(options_.cache_dir, model_);
  }
  void TearDown() override { engine::set_log_level(engine::LogLevel::info); }

  std::unique_ptr<engine::Model> load() { return engine::Model::load(model_, options_); }
  // The first load writes the cache; skips where no kernel of this CPU repacks.
  bool write_first() {
    const auto m = load();
    if (m->load_stats().cache == engine::CacheState::off) return false;
    EXPECT_EQ(m->load_stats().cache, engine::CacheState::written) << m->load_stats().cache_note;
    EXPECT_TRUE(fs::exists(cache_));
    return true;
  }
  // The cache is not used, for `reason`, and written again: the next load maps it.
  void expect_rebuilt(const std::string& reason) {
    {
      const auto m = load();
      EXPECT_EQ(m->load_stats().cache, engine::CacheState::written);
      EXPECT_NE(m->load_stats().cache_note.find(reason), std::string::npos) << m->load_stats().cache_note;
      EXPECT_GT(m->load_stats().repack_seconds, 0);
    }
    const auto m = load();
    EXPECT_EQ(m->load_stats().cache, engine::CacheState::hit) << m->load_stats().cache_note;
  }
  void patch(uint64_t offset, const std::string& bytes) {
    std::fstream f(cache_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  quantize_test::TempDir dir_{"repack-cache"};
  std::string model_, cache_;
  engine::LoadOptions options_;
};

#define WRITE_FIRST_OR_SKIP() \
  if (!write_first()) GTEST_SKIP() << "no kernel of this CPU repacks the model's weights"

TEST_F(RepackCacheTest, SecondLoadMapsTheSameWeights) {
  const auto repacked = engine::Model::load(model_);  // no cache
  WRITE_FIRST_OR_SKIP();
  const auto cached = load();
  const engine::LoadStats& s = cached->load_stats();
  EXPECT_EQ(s.cache, engine::CacheState::hit) << s.cache_note;
  EXPECT_EQ(s.repack_seconds, 0);
  EXPECT_EQ(cached->repacked_bytes(), 0u);
  EXPECT_LT(cached->heap_weight_bytes(), repacked->heap_weight_bytes());
  EXPECT_EQ(packed_weights(*cached), packed_weights(*repacked));
  // Nothing else was left in the directory (no temporary file).
  EXPECT_EQ(names_in(fs::path(cache_).parent_path()).size(), 1u);
}

TEST_F(RepackCacheTest, ModelChangedOnDiskRebuilds) {
  WRITE_FIRST_OR_SKIP();
  fs::last_write_time(model_, fs::last_write_time(model_) + std::chrono::seconds(5));
  expect_rebuilt("stale");
}

TEST_F(RepackCacheTest, ModelReplacedByACopyRebuilds) {
  WRITE_FIRST_OR_SKIP();
  // Same bytes and (with copy_options) nearly the same times, another inode.
  fs::copy_file(model_, dir_ / "copy.gguf");
  fs::rename(dir_ / "copy.gguf", model_);
  expect_rebuilt("stale");
}

TEST_F(RepackCacheTest, OtherKernelsMakeItStale) {
  WRITE_FIRST_OR_SKIP();
  const auto m = load();
  const gguf::File file = gguf::File::open(model_);
  engine::KernelPlan plan = m->kernel_plan();
  std::string why;
  EXPECT_NE(engine::RepackCache::open(cache_, engine::repack_cache_key(file, plan), &why), nullptr) << why;
  // A weight type that is repacked, computed by another kernel (the reference one).
  auto& s = *std::find_if(plan.selections.begin(), plan.selections.end(),
                          [](const auto& sel) { return sel.kernel != nullptr && sel.kernel->pack_rhs != nullptr; });
  const kernels::MatmulKernel* before = s.kernel;
  s = kernels::select_matmul(s.weight_type, plan.cpu, kernels::Tier::ref);
  ASSERT_NE(s.kernel, before);
  EXPECT_EQ(engine::RepackCache::open(cache_, engine::repack_cache_key(file, plan), &why), nullptr);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
}

TEST_F(RepackCacheTest, OtherFormatVersionRebuilds) {
  WRITE_FIRST_OR_SKIP();
  patch(8, std::string("\x63\0\0\0", 4));  // the version after the 8-byte magic: 99
  expect_rebuilt("format version 99");
}

TEST_F(RepackCacheTest, CorruptHeaderRebuilds) {
  WRITE_FIRST_OR_SKIP();
  patch(60, "#");  // inside the key: the checksum no longer matches
  expect_rebuilt("checksum");
}

TEST_F(RepackCacheTest, TruncatedFileRebuilds) {
  WRITE_FIRST_OR_SKIP();
  fs::resize_file(cache_, fs::file_size(cache_) / 2);
  expect_rebuilt("truncated");
  fs::resize_file(cache_, 20);
  expect_rebuilt("truncated");
}

TEST_F(RepackCacheTest, NotACacheRebuilds) {
  WRITE_FIRST_OR_SKIP();
  std::ofstream(cache_, std::ios::binary | std::ios::trunc) << std::string(100000, 'x');
  expect_rebuilt("bad magic");
}

TEST_F(RepackCacheTest, UnwritableDirectoryStillLoads) {
  std::ofstream(dir_ / "file") << "not a directory";
  options_.cache_dir = dir_ / "file";
  const auto m = load();
  if (m->load_stats().cache == engine::CacheState::off) GTEST_SKIP() << "no kernel of this CPU repacks";
  EXPECT_EQ(m->load_stats().cache, engine::CacheState::write_failed);
}

TEST_F(RepackCacheTest, CancelledWhileWritingLeavesNothing) {
  bool writing = false;
  options_.progress = [&](double, const char* phase) {
    writing = std::string(phase) == "writing cache";
    return !writing;
  };
  try {
    load();
    GTEST_SKIP() << "no kernel of this CPU repacks";
  } catch (const engine::Cancelled& e) {
    EXPECT_TRUE(writing) << e.what();
  }
  EXPECT_TRUE(names_in(options_.cache_dir).empty());
  options_.progress = nullptr;
  EXPECT_EQ(load()->load_stats().cache, engine::CacheState::written);
}

}  // namespace
