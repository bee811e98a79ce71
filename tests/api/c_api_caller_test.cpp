// The library does not touch the caller (issue 24 item 6): engine_session_create
// once pinned the calling thread (2 allowed CPUs -> 1 for the session's life).
// The app's thread keeps its CPU set through create, prefill and decode, and a
// second session working next to the first is warned about in the log.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/api/engine.h"
#include "tests/support/shared_data.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

#if defined(__linux__)
// The CPU set of thread `tid` (0: the calling thread), by sched_getaffinity.
std::vector<int> cpu_set_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(tid, sizeof set, &set) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}
#endif

// The warnings a log callback received.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> lines;
  static void callback(engine_log_level level, const char* message, void* user) {
    auto* self = static_cast<Warnings*>(user);
    std::lock_guard lock(self->mutex);
    if (level == ENGINE_LOG_WARNING) self->lines.emplace_back(message);
  }
  size_t containing(const std::string& part) {
    std::lock_guard lock(mutex);
    size_t n = 0;
    for (const std::string& l : lines) n += l.find(part) != std::string::npos;
    return n;
  }
};

class CApiCaller : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(engine_set_log_level(ENGINE_LOG_WARNING), ENGINE_OK);
    ASSERT_EQ(engine_set_log_callback(&Warnings::callback, &warnings_), ENGINE_OK);
    const std::string path = engine_test::default_model().string();
    ASSERT_EQ(engine_model_load(path.c_str(), &model_), ENGINE_OK) << engine_last_error();
  }
  void TearDown() override {
    if (model_ != nullptr) {
      EXPECT_EQ(engine_model_free(model_), ENGINE_OK) << engine_last_error();
    }
    EXPECT_EQ(engine_set_log_callback(nullptr, nullptr), ENGINE_OK);
    EXPECT_EQ(engine_set_log_level(ENGINE_LOG_INFO), ENGINE_OK);
  }
  engine_session* create(int32_t n_threads) {
    engine_session_params p = engine_session_default_params();
    p.n_ctx = 64;
    p.n_threads = n_threads;
    engine_session* s = nullptr;
    EXPECT_EQ(engine_session_create(model_, &p, &s), ENGINE_OK) << engine_last_error();
    return s;
  }
  engine_model* model_ = nullptr;
  Warnings warnings_;
};

TEST_F(CApiCaller, TheCallersCpuSetIsUnchangedThroughCreateAndDecode) {
#if !defined(__linux__)
  GTEST_SKIP() << "sched_getaffinity is Linux's";
#else
  const std::vector<int> before = cpu_set_of(0);
  ASSERT_FALSE(before.empty());
  if (before.size() < 2) GTEST_SKIP() << "one allowed CPU: pinning would not change the set";
  // Another thread watches this one's set while it decodes.
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  std::atomic<bool> stop{false};
  std::atomic<int> samples{0}, changed{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      if (cpu_set_of(tid) != before) changed.fetch_add(1);
      samples.fetch_add(1);
      std::this_thread::yield();
    }
  });
  engine_session* s = create(0);  // the default plan: every fast core, pinned
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(cpu_set_of(0), before) << "engine_session_create changed the caller's CPU set";
  int32_t token = engine_model_bos(model_);
  ASSERT_EQ(engine_prefill(s, &token, 1), ENGINE_OK) << engine_last_error();
  for (int i = 0; i < 32; ++i) ASSERT_EQ(engine_decode(s, 100 + i), ENGINE_OK) << engine_last_error();
  EXPECT_EQ(cpu_set_of(0), before) << "decoding changed the caller's CPU set";
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  stop.store(true);
  watcher.join();
  EXPECT_GT(samples.load(), 0);
  EXPECT_EQ(changed.load(), 0) << "of " << samples.load() << " looks while the session lived";
  EXPECT_EQ(cpu_set_of(0), before);
#endif
}

// Two sessions on one model from two threads: the second one's threads and the
// first one's add up to more than the CPUs, and the log says so.
TEST_F(CApiCaller, ASecondConcurrentSessionWarnsOfOversubscription) {
#if defined(__linux__)
  const auto allowed = static_cast<int32_t>(cpu_set_of(0).size());
#else
  const auto allowed = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
#endif
  ASSERT_GT(allowed, 0);
  constexpr const char* kWarning = "more in other thread pools alive in this process";
  engine_session* first = nullptr;
  std::thread([&] { first = create(1); }).join();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(warnings_.containing(kWarning), 0u) << "one session of one thread fits";
  engine_session* second = nullptr;
  std::thread([&] {
    second = create(allowed);  // 1 + allowed threads
    int32_t token = engine_model_bos(model_);
    EXPECT_EQ(engine_prefill(second, &token, 1), ENGINE_OK) << engine_last_error();
  }).join();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(warnings_.containing(kWarning), 1u);
  EXPECT_EQ(warnings_.containing(" CPUs this process may use"), 1u);
  EXPECT_EQ(engine_session_free(second), ENGINE_OK);
  EXPECT_EQ(engine_session_free(first), ENGINE_OK);
  // Alone again: no warning.
  engine_session* alone = create(allowed);
  EXPECT_EQ(warnings_.containing(kWarning), 1u);
  EXPECT_EQ(engine_session_free(alone), ENGINE_OK);
}

}  // namespace
