// The C API's log (issue 24 item 5): an app routes the engine's messages to its
// own log with engine_set_log_callback, and engine_set_log_level filters them,
// from C and from the C++ wrapper.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/support/log.h"
#include "tests/support/shared_data.h"

namespace {

// What a callback received.
struct Received {
  std::mutex mutex;
  std::vector<std::pair<engine_log_level, std::string>> lines;
  std::atomic<size_t> count{0};

  static void callback(engine_log_level level, const char* message, void* user) {
    auto* self = static_cast<Received*>(user);
    std::lock_guard lock(self->mutex);
    self->lines.emplace_back(level, message);
    self->count.fetch_add(1);
  }
  // The lines at `level` that contain `part`.
  size_t matching(engine_log_level level, const std::string& part) {
    std::lock_guard lock(mutex);
    size_t n = 0;
    for (const auto& [l, m] : lines) n += l == level && m.find(part) != std::string::npos;
    return n;
  }
};

class CApiLog : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(engine_set_log_level(ENGINE_LOG_WARNING), ENGINE_OK);
    const std::string path = engine_test::default_model().string();
    ASSERT_EQ(engine_model_load(path.c_str(), &model_), ENGINE_OK) << engine_last_error();
  }
  void TearDown() override {
    EXPECT_EQ(engine_set_log_callback(nullptr, nullptr), ENGINE_OK);
    EXPECT_EQ(engine_set_log_level(ENGINE_LOG_INFO), ENGINE_OK);
    if (model_ != nullptr) {
      EXPECT_EQ(engine_model_free(model_), ENGINE_OK) << engine_last_error();
    }
  }
  // A session with a context above the model's trained one: the engine warns
  // about it (engine/runtime/session.cpp), every time, on every machine.
  void create_session_that_warns() {
    engine_session_params p = engine_session_default_params();
    p.n_ctx = static_cast<uint32_t>(engine_model_n_ctx_train(model_)) + 64;
    p.n_threads = 1;
    engine_session* s = nullptr;
    ASSERT_EQ(engine_session_create(model_, &p, &s), ENGINE_OK) << engine_last_error();
    EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  }
  engine_model* model_ = nullptr;
};

constexpr const char* kWarning = "this model was trained for";

TEST_F(CApiLog, TheCallbackReceivesWarningsWithTheirLevel) {
  Received got;
  ASSERT_EQ(engine_set_log_level(ENGINE_LOG_INFO), ENGINE_OK);
  ASSERT_EQ(engine_set_log_callback(&Received::callback, &got), ENGINE_OK);
  testing::internal::CaptureStderr();
  create_session_that_warns();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, kWarning), 1u);
  EXPECT_EQ(got.matching(ENGINE_LOG_INFO, "thread pool: "), 1u) << "info lines pass at level info";
  EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, "engine: WARNING"), 0u) << "the text only, no stderr prefix";
  EXPECT_EQ(err.find(kWarning), std::string::npos) << "the callback replaces stderr:\n" << err;
}

TEST_F(CApiLog, TheLevelFilters) {
  Received got;
  ASSERT_EQ(engine_set_log_callback(&Received::callback, &got), ENGINE_OK);
  ASSERT_EQ(engine_set_log_level(ENGINE_LOG_WARNING), ENGINE_OK);
  create_session_that_warns();
  EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, kWarning), 1u);
  EXPECT_EQ(got.matching(ENGINE_LOG_INFO, ""), 0u) << "info is below warning";
  for (engine_log_level above : {ENGINE_LOG_ERROR, ENGINE_LOG_OFF}) {
    ASSERT_EQ(engine_set_log_level(above), ENGINE_OK);
    create_session_that_warns();
    EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, kWarning), 1u) << "a warning passed level " << above;
  }
  EXPECT_EQ(engine_set_log_level(static_cast<engine_log_level>(7)), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("engine_set_log_level: 7 is not a level"), std::string::npos)
      << engine_last_error();
  EXPECT_EQ(engine::log_level(), engine::LogLevel::off) << "a bad level changes nothing";
}

TEST_F(CApiLog, NullRestoresStderr) {
  Received got;
  ASSERT_EQ(engine_set_log_level(ENGINE_LOG_WARNING), ENGINE_OK);
  ASSERT_EQ(engine_set_log_callback(&Received::callback, &got), ENGINE_OK);
  ASSERT_EQ(engine_set_log_callback(nullptr, &got), ENGINE_OK);
  testing::internal::CaptureStderr();
  create_session_that_warns();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(got.count.load(), 0u);
  EXPECT_NE(err.find(std::string("engine: WARNING: context of ")), std::string::npos) << err;
}

TEST_F(CApiLog, TheCppWrapperSetsTheSame) {
  Received got;
  engine::api::set_log_level(ENGINE_LOG_WARNING);
  engine::api::set_log_callback(&Received::callback, &got);
  create_session_that_warns();
  EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, kWarning), 1u);
  engine::api::set_log_level(ENGINE_LOG_ERROR);
  create_session_that_warns();
  EXPECT_EQ(got.matching(ENGINE_LOG_WARNING, kWarning), 1u);
  try {
    engine::api::set_log_level(static_cast<engine_log_level>(-1));
    FAIL() << "a bad level did not throw";
  } catch (const engine::api::Error& e) {
    EXPECT_EQ(e.status(), ENGINE_ERR_INVALID_ARGUMENT);
  }
}

// Threads log while the app swaps callbacks: every message reaches exactly one
// of them, and a replaced callback is never called after the swap returned
// (its user data may then be freed). Run under TSan too.
TEST_F(CApiLog, SwappingCallbacksWhileThreadsLogIsSafe) {
  Received a, b;
  ASSERT_EQ(engine_set_log_level(ENGINE_LOG_WARNING), ENGINE_OK);
  ASSERT_EQ(engine_set_log_callback(&Received::callback, &a), ENGINE_OK);
  std::atomic<bool> stop{false};
  std::atomic<size_t> sent{0};
  std::vector<std::thread> loggers;
  for (int t = 0; t < 2; ++t) {
    loggers.emplace_back([&] {
      while (!stop.load()) {
        engine::log_warning("from a worker");
        sent.fetch_add(1);
        std::this_thread::yield();  // the swapping thread gets a CPU on a 2-core machine
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    Received& next = i % 2 ? a : b;
    Received& previous = i % 2 ? b : a;
    const size_t before = next.count.load();
    ASSERT_EQ(engine_set_log_callback(&Received::callback, &next), ENGINE_OK);
    const size_t after_swap = previous.count.load();
    while (next.count.load() == before) std::this_thread::yield();  // messages reach the new one
    EXPECT_EQ(previous.count.load(), after_swap) << "a replaced callback was called, swap " << i;
  }
  stop.store(true);
  for (std::thread& t : loggers) t.join();
  ASSERT_EQ(engine_set_log_callback(nullptr, nullptr), ENGINE_OK);
  EXPECT_EQ(a.count.load() + b.count.load(), sent.load());
  EXPECT_GT(sent.load(), 0u);
}

}  // namespace
