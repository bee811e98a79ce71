// engine_model_load_ex: the progress callback (never backwards, 1 once at the
// end, on the loading thread), cancellation at its first call and half way
// (ENGINE_ERR_CANCELLED, nothing left: the ASan tree checks for leaks, and a
// load after it works), the options' size, the load's figures, and the repack
// cache through the API and $ENGINE_CACHE_DIR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/support/log.h"
#include "tests/quantize/test_util.h"
#include "tests/support/shared_data.h"

namespace {

struct Progress {
  std::vector<float> fractions;
  std::vector<std::string> phases;
  std::thread::id thread;
  bool other_thread = false;
  float cancel_at = 2;  // cancel at the first call whose fraction reaches this
  static bool call(float fraction, const char* phase, void* user) {
    auto* p = static_cast<Progress*>(user);
    p->fractions.push_back(fraction);
    p->phases.emplace_back(phase);
    p->other_thread = p->other_thread || std::this_thread::get_id() != p->thread;
    return fraction < p->cancel_at;
  }
};

class CApiLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    path_ = engine_test::default_model().string();
    progress_.thread = std::this_thread::get_id();
    options_ = engine_load_default_options();
    options_.progress = Progress::call;
    options_.user_data = &progress_;
  }
  void TearDown() override { engine::set_log_level(engine::LogLevel::info); }
  engine_status load(engine_model** m) { return engine_model_load_ex(path_.c_str(), &options_, m); }
  void expect_cancelled() {
    engine_model* m = nullptr;
    EXPECT_EQ(load(&m), ENGINE_ERR_CANCELLED);
    EXPECT_EQ(m, nullptr);
    EXPECT_NE(std::string(engine_last_error()).find("cancelled"), std::string::npos) << engine_last_error();
  }
  // A load after a cancelled one works (the callback no longer cancels).
  void expect_loads() {
    progress_.cancel_at = 2;
    engine_model* m = nullptr;
    ASSERT_EQ(load(&m), ENGINE_OK) << engine_last_error();
    EXPECT_EQ(progress_.fractions.back(), 1.0f);
    EXPECT_EQ(engine_model_free(m), ENGINE_OK);
  }

  std::string path_;
  Progress progress_;
  engine_load_options options_{};
};

TEST_F(CApiLoad, ProgressNeverGoesBackAndEndsAtOne) {
  engine_model* m = nullptr;
  ASSERT_EQ(load(&m), ENGINE_OK) << engine_last_error();
  const std::vector<float>& f = progress_.fractions;
  ASSERT_GE(f.size(), 3u);  // stories260K: several layers of tensors
  for (size_t i = 1; i < f.size(); ++i) EXPECT_LE(f[i - 1], f[i]) << "call " << i;
  EXPECT_EQ(f.back(), 1.0f);
  EXPECT_EQ(std::count(f.begin(), f.end(), 1.0f), 1);
  EXPECT_EQ(progress_.phases.back(), "done");
  EXPECT_NE(std::find(progress_.phases.begin(), progress_.phases.end(), "reading"), progress_.phases.end());
  EXPECT_FALSE(progress_.other_thread);
  EXPECT_EQ(engine_model_free(m), ENGINE_OK);
}

TEST_F(CApiLoad, CancelAtTheFirstCall) {
  progress_.cancel_at = 0;
  expect_cancelled();
  EXPECT_EQ(progress_.fractions.size(), 1u);
  expect_loads();
}

TEST_F(CApiLoad, CancelHalfWay) {
  progress_.cancel_at = 0.5f;
  expect_cancelled();
  ASSERT_GE(progress_.fractions.size(), 2u);
  EXPECT_GE(progress_.fractions.back(), 0.5f);
  EXPECT_LT(progress_.fractions.back(), 1.0f);
  expect_loads();
}

// The C++ wrapper throws an Error carrying the status.
TEST_F(CApiLoad, WrapperCancels) {
  progress_.cancel_at = 0;
  try {
    engine::api::Model m(path_, options_);
    FAIL() << "loaded";
  } catch (const engine::api::Error& e) {
    EXPECT_EQ(e.status(), ENGINE_ERR_CANCELLED);
  }
}

TEST_F(CApiLoad, OptionsSizeIsChecked) {
  engine_model* m = nullptr;
  options_.size = 4;
  EXPECT_EQ(load(&m), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("engine_load_default_options"), std::string::npos);
  options_.size = sizeof options_ + 8;
  EXPECT_EQ(load(&m), ENGINE_ERR_INVALID_ARGUMENT);
  // A caller compiled when the struct ended at user_data: the rest defaults.
  options_.size = offsetof(engine_load_options, cache_dir);
  options_.measure_read = true;
  ASSERT_EQ(load(&m), ENGINE_OK) << engine_last_error();
  engine_load_stats s{};
  ASSERT_EQ(engine_model_load_stats(m, &s), ENGINE_OK);
  EXPECT_EQ(s.read_seconds, -1);  // measure_read was past its size
  EXPECT_EQ(engine_model_free(m), ENGINE_OK);
  EXPECT_EQ(engine_model_load_stats(m, &s), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_model_load_ex(path_.c_str(), nullptr, &m), ENGINE_OK) << engine_last_error();
  EXPECT_EQ(engine_model_load_stats(m, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_model_free(m), ENGINE_OK);
}

TEST_F(CApiLoad, StatsAndThePlainRead) {
  options_.measure_read = true;
  engine::api::Model m(path_, options_);
  const engine_load_stats s = m.load_stats();
  EXPECT_GT(s.load_seconds, 0);
  EXPECT_GE(s.repack_seconds, 0);
  EXPECT_LE(s.repack_seconds, s.load_seconds);
  EXPECT_GT(s.read_seconds, 0);
  EXPECT_EQ(s.file_bytes, std::filesystem::file_size(path_));
  EXPECT_EQ(s.cache, ENGINE_CACHE_OFF);
  EXPECT_EQ(engine::api::Model(path_).load_stats().read_seconds, -1);  // not asked
}

TEST_F(CApiLoad, CacheDirectoryFromOptionsAndEnvironment) {
  ENGINE_REQUIRE_SHARED(q4_0, "models/reference/llama-d256-Q4_0.gguf");  // repacked on every tier but ref
  path_ = q4_0.string();
  quantize_test::TempDir dir("api-cache");
  options_.progress = nullptr;
  const std::string cache_dir = dir / "app";
  options_.cache_dir = cache_dir.c_str();
  const engine_cache_state first = engine::api::Model(path_, options_).load_stats().cache;
  if (first == ENGINE_CACHE_OFF) GTEST_SKIP() << "no kernel of this CPU repacks the model's weights";
  EXPECT_EQ(first, ENGINE_CACHE_WRITTEN);
  EXPECT_EQ(engine::api::Model(path_, options_).load_stats().cache, ENGINE_CACHE_HIT);
  // $ENGINE_CACHE_DIR serves the loads that give no directory; "" turns it off.
  const std::string env_dir = dir / "env";
  setenv("ENGINE_CACHE_DIR", env_dir.c_str(), 1);
  EXPECT_EQ(engine::api::Model(path_).load_stats().cache, ENGINE_CACHE_WRITTEN);
  EXPECT_EQ(engine::api::Model(path_).load_stats().cache, ENGINE_CACHE_HIT);
  options_.cache_dir = "";
  EXPECT_EQ(engine::api::Model(path_, options_).load_stats().cache, ENGINE_CACHE_OFF);
  unsetenv("ENGINE_CACHE_DIR");
  EXPECT_EQ(engine::api::Model(path_).load_stats().cache, ENGINE_CACHE_OFF);
}

}  // namespace
