// What a pool does to the threads around it (issue 24 item 6): it pins its own
// workers, never the thread that builds or runs it unless asked (a session
// once left the app's thread pinned to one CPU for its whole life), and it
// warns when the pools alive together hold more threads than the process has
// CPUs (two sessions decoding at once).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/threads/affinity.h"
#include "engine/threads/thread_pool.h"
#include "log_capture.h"

namespace {

using engine::PoolOptions;
using engine::ThreadPlan;
using engine::ThreadPool;
using engine::WorkerReport;

constexpr const char* kOversubscribed = "in other thread pools alive in this process";

PoolOptions short_spin() {
  PoolOptions o;
  o.spin = std::chrono::microseconds(50);
  return o;
}

// The CPUs this process may use, as the pool counts them.
size_t allowed_cpus() {
  const auto cpus = engine::os::thread_affinity();
  return cpus ? cpus->size() : std::max(1u, std::thread::hardware_concurrency());
}

size_t count_containing(const std::vector<std::string>& lines, const std::string& part) {
  return static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find(part) != std::string::npos;
  }));
}

TEST(PoolPlacement, TheCallersThreadIsLeftAlone) {
  if (!engine::os::affinity_supported()) GTEST_SKIP() << "no thread affinity on this OS";
  const auto before = engine::os::thread_affinity();
  ASSERT_TRUE(before.has_value());
  if (before->size() < 2) GTEST_SKIP() << "one allowed CPU: pinning the caller would not change its set";
  ThreadPlan plan = ThreadPlan::unpinned(2);
  plan.cpus = {before->front(), before->back()};
  plan.roles = {"test", "test"};
  plan.affinity = engine::Affinity::list;
  {
    ThreadPool pool(plan, short_spin());  // default options: the caller is not pinned
    EXPECT_EQ(engine::os::thread_affinity(), before) << "the constructor changed the caller's CPU set";
    std::atomic<int> changed{0};
    pool.run(64, [&](size_t, size_t thread) {
      if (thread == 0 && engine::os::thread_affinity() != before) changed.fetch_add(1);
    });
    EXPECT_EQ(changed.load(), 0) << "the caller's CPU set changed while it worked in run()";
    const std::vector<WorkerReport> report = pool.report();
    EXPECT_EQ(report[0].pin, WorkerReport::Pin::not_pinned);
    EXPECT_TRUE(threads_test::contains(report[0].describe(), "t0 (caller): not pinned (the calling thread is the app's)"))
        << report[0].describe();
    EXPECT_NE(report[1].pin, WorkerReport::Pin::not_pinned) << "the worker is the pool's: pinned or tried";
  }
  EXPECT_EQ(engine::os::thread_affinity(), before);
}

TEST(PoolPlacement, PoolsThatTogetherExceedTheCpusAreWarnedAbout) {
  const size_t cpus = allowed_cpus();
  threads_test::LogCapture log;
  {
    // One pool alone, even with more threads than CPUs, is its plan's warning
    // (ThreadPlan::make), not this one.
    ThreadPool alone(ThreadPlan::unpinned(cpus + 1), short_spin());
  }
  EXPECT_EQ(count_containing(log.warnings(), kOversubscribed), 0u);
  auto first = std::make_unique<ThreadPool>(ThreadPlan::unpinned(1), short_spin());
  if (cpus >= 2) {
    ThreadPool fits(ThreadPlan::unpinned(cpus - 1), short_spin());  // 1 + (cpus - 1): all fit
  }
  EXPECT_EQ(count_containing(log.warnings(), kOversubscribed), 0u);
  {
    ThreadPool second(ThreadPlan::unpinned(cpus), short_spin());
    const std::vector<std::string> warnings = log.warnings();
    ASSERT_EQ(count_containing(warnings, kOversubscribed), 1u);
    const std::string expected = "its " + std::to_string(cpus) + " threads and 1 more in other thread pools alive "
                                 "in this process (other sessions) add up to " + std::to_string(cpus + 1) +
                                 " threads on the " + std::to_string(cpus) + " CPUs";
    EXPECT_TRUE(threads_test::contains(warnings.back(), expected)) << warnings.back();
  }
  first.reset();  // the count goes down with the pools
  ThreadPool after(ThreadPlan::unpinned(cpus), short_spin());
  EXPECT_EQ(count_containing(log.warnings(), kOversubscribed), 1u);
}

// Two threads build their pools at the same moment (two sessions created at
// once): the count is shared, so at least one of them warns. Run under TSan.
TEST(PoolPlacement, PoolsBuiltFromTwoThreadsAtOnceAreCounted) {
  const size_t cpus = allowed_cpus();
  threads_test::LogCapture log;
  std::latch built(2);
  std::vector<std::thread> apps;
  for (int i = 0; i < 2; ++i) {
    apps.emplace_back([&] {
      ThreadPool pool(ThreadPlan::unpinned(cpus), short_spin());
      built.arrive_and_wait();  // both alive before either runs or ends
      std::atomic<int> tasks{0};
      pool.run(16, [&](size_t, size_t) { tasks.fetch_add(1); });
      EXPECT_EQ(tasks.load(), 16);
    });
  }
  for (std::thread& t : apps) t.join();
  EXPECT_GE(count_containing(log.warnings(), kOversubscribed), 1u);
}

}  // namespace
