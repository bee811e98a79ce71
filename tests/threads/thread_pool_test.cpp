// The pool under stress: many barrier rounds, nested runs with uneven work,
// shutdown while idle or spinning, exceptions; placement really applied on
// this machine. No timing assertions (shared machines are noisy): rounds per
// second are printed, not checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/support/log.h"
#include "engine/threads/affinity.h"
#include "engine/threads/cpu_list.h"
#include "engine/threads/thread_pool.h"
#include "tests/support/sanitized.h"
#include "log_capture.h"

namespace {

// Every pool logs its placement at info; the dozens built here would bury the
// test output (LogCapture turns info back on where a test reads it).
[[maybe_unused]] const bool kQuietLog = (engine::set_log_level(engine::LogLevel::warning), true);

using engine::PoolOptions;
using engine::ThreadPlan;
using engine::ThreadPool;
using engine::WorkerReport;
using std::chrono::microseconds;

// Sanitizers and qemu slow every round down by 10-100x: fewer rounds there.
constexpr bool kSlowBuild = engine_test::kSanitized;

size_t hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

PoolOptions spin(long us) {
  PoolOptions o;
  o.spin = microseconds(us);
  return o;
}

// Every task exactly once, every thread index in range.
void check_round(ThreadPool& pool, size_t n_tasks) {
  std::vector<std::atomic<int>> seen(n_tasks);
  std::atomic<bool> bad_thread{false};
  pool.run(n_tasks, [&](size_t task, size_t thread) {
    seen[task].fetch_add(1, std::memory_order_relaxed);
    if (thread >= pool.size()) bad_thread = true;
  });
  for (size_t i = 0; i < n_tasks; ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
  EXPECT_FALSE(bad_thread);
}

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (size_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(ThreadPlan::unpinned(threads), spin(100));
    ASSERT_EQ(pool.size(), threads);
    for (size_t n : {0, 1, 2, 7, 64, 1000}) check_round(pool, n);
  }
}

TEST(ThreadPool, CallerTakesPart) {
  // As many tasks as threads, each waiting until all have started: this only
  // finishes if every thread, the caller included, holds one task at once.
  constexpr size_t kThreads = 3;
  ThreadPool pool(ThreadPlan::unpinned(kThreads), spin(100));
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 20; ++round) {
    std::atomic<size_t> started{0};
    std::vector<std::atomic<int>> per_thread(kThreads);
    std::atomic<bool> zero_is_caller{true};
    pool.run(kThreads, [&](size_t, size_t thread) {
      per_thread[thread].fetch_add(1);
      if (thread == 0 && std::this_thread::get_id() != caller) zero_is_caller = false;
      started.fetch_add(1);
      while (started.load() < kThreads) std::this_thread::yield();
    });
    for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(per_thread[t].load(), 1) << "thread " << t;
    EXPECT_TRUE(zero_is_caller);
  }
}

TEST(ThreadPool, HundredThousandBarrierRounds) {
  const size_t threads = std::clamp<size_t>(hardware_threads(), 2, 4);
  const size_t rounds = 100000;  // 0.3-1 s natively, 1.5-2.5 s under TSan or qemu
  ThreadPool pool(ThreadPlan::unpinned(threads));  // default spin: the decode setting
  std::vector<std::atomic<uint64_t>> per_task(threads);
  const auto start = std::chrono::steady_clock::now();
  for (size_t r = 0; r < rounds; ++r) {
    pool.run(threads, [&](size_t task, size_t) { per_task[task].fetch_add(1, std::memory_order_relaxed); });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t t = 0; t < threads; ++t) EXPECT_EQ(per_task[t].load(), rounds);
  std::printf("%zu rounds on %zu threads: %.3f s, %.2f us per round\n", rounds, threads, seconds,
              seconds * 1e6 / static_cast<double>(rounds));
}

TEST(ThreadPool, OversubscribedRoundsSleepAndWake) {
  // More threads than CPUs, spinning off (every round wakes sleepers) and short.
  for (long us : {0L, 20L}) {
    ThreadPool pool(ThreadPlan::unpinned(hardware_threads() + 3), spin(us));
    const size_t rounds = kSlowBuild ? 500 : 3000;
    std::atomic<uint64_t> total{0};
    for (size_t r = 0; r < rounds; ++r) {
      pool.run(pool.size() * 2, [&](size_t, size_t) { total.fetch_add(1, std::memory_order_relaxed); });
    }
    EXPECT_EQ(total.load(), rounds * pool.size() * 2) << "spin " << us << " us";
  }
}

TEST(ThreadPool, NestedRunWithUnevenWorkRunsInline) {
  ThreadPool pool(ThreadPlan::unpinned(4), spin(200));
  constexpr size_t kOuter = 23, kInner = 17;
  std::vector<std::atomic<int>> done(kOuter * kInner);
  std::atomic<bool> wrong_thread{false};
  for (int repeat = 0; repeat < (kSlowBuild ? 20 : 200); ++repeat) {
    for (auto& d : done) d.store(0, std::memory_order_relaxed);
    pool.run(kOuter, [&](size_t outer, size_t thread) {
      // Uneven: task i spins ~i^2 units, so threads finish at different times.
      volatile uint64_t sink = 0;
      for (size_t i = 0; i < outer * outer * 20; ++i) sink = sink + i;
      const auto me = std::this_thread::get_id();
      pool.run(kInner, [&](size_t inner, size_t inner_thread) {
        if (inner_thread != thread || std::this_thread::get_id() != me) wrong_thread = true;
        done[outer * kInner + inner].fetch_add(1, std::memory_order_relaxed);
      });
    });
    for (size_t i = 0; i < done.size(); ++i) ASSERT_EQ(done[i].load(), 1) << i;
  }
  EXPECT_FALSE(wrong_thread) << "a nested run must stay on the calling thread, under its index";
}

TEST(ThreadPool, TaskOfOnePoolRunsAnotherPool) {
  ThreadPool outer(ThreadPlan::unpinned(3), spin(50));
  ThreadPool inner(ThreadPlan::unpinned(2), spin(50));
  std::atomic<int> inner_tasks{0};
  // Only one outer task drives the inner pool at a time (run() from several
  // threads is serialized, so several would also be fine).
  outer.run(6, [&](size_t, size_t) {
    inner.run(10, [&](size_t, size_t) { inner_tasks.fetch_add(1, std::memory_order_relaxed); });
  });
  EXPECT_EQ(inner_tasks.load(), 60);
}

TEST(ThreadPool, RunsFromSeveralThreadsAreSerialized) {
  ThreadPool pool(ThreadPlan::unpinned(3), spin(50));
  std::atomic<int> inside{0}, overlap{0}, total{0};
  const auto client = [&] {
    for (int r = 0; r < (kSlowBuild ? 50 : 300); ++r) {
      pool.run(8, [&](size_t task, size_t) {
        if (task == 0 && inside.fetch_add(1) != 0) overlap = 1;
        total.fetch_add(1, std::memory_order_relaxed);
        if (task == 0) inside.fetch_sub(1);
      });
    }
  };
  std::thread a(client), b(client);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 8 * (kSlowBuild ? 50 : 300));
  EXPECT_EQ(overlap.load(), 0);
}

TEST(ThreadPool, ExceptionFromATaskReachesTheCaller) {
  ThreadPool pool(ThreadPlan::unpinned(3), spin(50));
  EXPECT_THROW(pool.run(100,
                        [](size_t task, size_t) {
                          if (task == 37) throw std::runtime_error("task 37");
                        }),
               std::runtime_error);
  check_round(pool, 50);  // still usable
}

TEST(ThreadPool, ShutdownWhileIdleSpinningOrStarting) {
  {  // idle: workers asleep
    ThreadPool pool(ThreadPlan::unpinned(4), spin(50));
    check_round(pool, 16);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {  // right after a round: workers spinning
    ThreadPool pool(ThreadPlan::unpinned(4), spin(100000));
    check_round(pool, 16);
  }
  for (int i = 0; i < (kSlowBuild ? 20 : 100); ++i) {  // never used
    ThreadPool pool(ThreadPlan::unpinned(3), spin(i % 2 ? 0 : 1000));
  }
  SUCCEED();
}

TEST(ThreadPool, ReportsUnpinnedThreads) {
  threads_test::LogCapture log;
  ThreadPool pool(ThreadPlan::unpinned(3), spin(50));
  check_round(pool, 30);
  const std::vector<WorkerReport> report = pool.report();
  ASSERT_EQ(report.size(), 3u);
  for (const WorkerReport& r : report) {
    EXPECT_EQ(r.pin, WorkerReport::Pin::not_pinned);
    EXPECT_EQ(r.cpu_asked, -1);
    if (engine::os::affinity_supported()) {
      EXPECT_GE(r.last_cpu, 0);
    }
  }
  EXPECT_TRUE(threads_test::contains(report[0].describe(), "t0 (caller): not pinned")) << report[0].describe();
  const auto info = log.at(engine::LogLevel::info);
  ASSERT_FALSE(info.empty());
  EXPECT_TRUE(threads_test::contains(info.back(), "thread pool: 3 threads (none)")) << info.back();
  std::printf("%s\n", pool.describe().c_str());
}

// The description lists a screenful of workers and counts the rest.
TEST(ThreadPool, DescriptionSummarisesWorkersPastAScreenful) {
  engine::ThreadPool pool(engine::ThreadPlan::unpinned(40));
  const std::string text = pool.describe();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 17) << text;
  EXPECT_TRUE(threads_test::contains(text, "\n  t15: not pinned")) << text;
  EXPECT_TRUE(threads_test::contains(text, "\n  t16-t39: 0 pinned, 0 pinning failed, 24 not pinned")) << text;
}

// Affinity really applied: pin the caller to CPU 0 (pin_caller, as the tools
// ask), and a worker to the last allowed CPU, and watch sched_getcpu. Skipped,
// with the reason, where the system refuses (a cpuset without CPU 0, a sandbox
// without the syscall).
TEST(ThreadPool, PinsToCpu0OnThisMachine) {
  if (!engine::os::affinity_supported()) GTEST_SKIP() << "no thread affinity on this OS";
  const auto before = engine::os::thread_affinity();
  ASSERT_TRUE(before.has_value());
  if (std::find(before->begin(), before->end(), 0) == before->end()) {
    GTEST_SKIP() << "CPU 0 is not in this process's CPU set";
  }
  const int last = before->back();
  ThreadPlan plan = ThreadPlan::unpinned(2);
  plan.cpus = {0, last};
  plan.roles = {"test", "test"};
  plan.affinity = engine::Affinity::list;
  {
    PoolOptions options = spin(100);
    options.pin_caller = true;
    ThreadPool pool(plan, options);
    const std::vector<WorkerReport> report = pool.report();
    std::printf("%s\n", pool.describe().c_str());
    if (report[0].pin == WorkerReport::Pin::failed) {
      GTEST_SKIP() << "sched_setaffinity refused: " << report[0].describe();
    }
    ASSERT_EQ(report[0].pin, WorkerReport::Pin::pinned);
    EXPECT_EQ(engine::os::current_cpu(), 0);
    std::vector<std::atomic<int>> ran_on(2);
    for (auto& r : ran_on) r = -2;
    std::vector<std::atomic<bool>> moved(2);
    pool.run(64, [&](size_t, size_t thread) {
      const int cpu = engine::os::current_cpu();
      ran_on[thread] = cpu;
      if (cpu != plan.cpus[thread]) moved[thread] = true;
    });
    EXPECT_FALSE(moved[0]) << "the caller ran off cpu 0";
    if (report[1].pin == WorkerReport::Pin::pinned) {
      EXPECT_FALSE(moved[1]) << "worker 1 ran off cpu " << last;
      EXPECT_EQ(pool.report()[1].last_cpu, last);
    } else {
      std::printf("worker pinning refused here: %s\n", report[1].describe().c_str());
    }
    EXPECT_EQ(pool.report()[0].last_cpu, 0);
  }
  EXPECT_EQ(engine::os::thread_affinity(), before) << "the caller's CPU set is restored";
}

TEST(ThreadPool, PinningFailureIsReportedAndLogged) {
  if (!engine::os::affinity_supported()) GTEST_SKIP() << "no thread affinity on this OS";
  threads_test::LogCapture log;
  ThreadPlan plan = ThreadPlan::unpinned(2);
  plan.cpus = {-1, engine::kMaxCpus - 1};  // no machine has it online
  ThreadPool pool(plan, spin(50));
  check_round(pool, 8);
  const WorkerReport r = pool.report()[1];
  EXPECT_EQ(r.pin, WorkerReport::Pin::failed);
  EXPECT_EQ(r.pin_error, EINVAL);
  EXPECT_TRUE(threads_test::contains(r.describe(), "pinning failed (EINVAL")) << r.describe();
  const auto warnings = log.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(threads_test::contains(warnings[0], "thread 1: pinning to cpu 8191 failed (EINVAL")) << warnings[0];
  EXPECT_TRUE(threads_test::contains(warnings[0], "Recommended:")) << warnings[0];
}

TEST(ThreadPool, NiceIsAppliedToWorkers) {
  if (!engine::os::affinity_supported()) GTEST_SKIP() << "no per-thread nice on this OS";
  ThreadPlan plan = ThreadPlan::unpinned(3);
  plan.nice = 1;  // raising nice is always allowed
  ThreadPool pool(plan, spin(50));
  const std::vector<WorkerReport> report = pool.report();
  EXPECT_FALSE(report[0].nice_asked) << "the caller's priority is the app's";
  for (size_t t = 1; t < report.size(); ++t) {
    EXPECT_TRUE(report[t].nice_asked);
    if (report[t].nice_error == ENOSYS) GTEST_SKIP() << "setpriority not available here";
    EXPECT_EQ(report[t].nice_error, 0) << report[t].describe();
  }
}

}  // namespace
