// The engine's thread pool: persistent workers (created once, never per op),
// the calling thread takes part as thread 0, tasks handed out one at a time
// from a shared counter (fast cores take more of them on a prime + big
// layout), and a barrier that spins for a while and then sleeps:
//
// - decode calls run() hundreds of times per token with microseconds between
//   calls; a worker that slept would pay a futex wake-up (tens of microseconds
//   on a phone, more once the governor has lowered the clock) each time, so
//   workers spin first;
// - an idle engine (the user is typing) must use no CPU, so after `spin` they
//   sleep on a condition variable until the next run().
//
// Placement follows a ThreadPlan: each worker pins itself to its CPU at start.
// Thread 0 (the thread that calls run()) belongs to the app: it is left where
// it is unless PoolOptions::pin_caller asks (the tools do, for their main
// thread), and then gets its previous affinity back when the pool is destroyed
// on that same thread. report() says, per thread, what was asked and what
// happened.
//
// Pools do not share CPUs knowingly: each pool (one per session) pins to its
// own plan. When a new pool's threads and those of the pools alive in the
// process add up to more than the CPUs this process may use (two sessions
// decoding at once), the constructor logs a WARNING: the threads then preempt
// each other mid-step.
//
// Nesting: run() called from inside a task of the same pool runs all of its
// tasks inline on the calling thread, with that thread's index: the pool is
// already busy, and waiting for it would deadlock. run() from other threads is
// serialized (one run at a time), so a task must not wait for another thread
// that calls run() on the same pool. If a task throws, no further tasks are
// handed out and run() rethrows the first exception once every thread is done.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/threads/thread_plan.h"

namespace engine {

struct WorkerReport {
  enum class Pin { pinned, failed, not_pinned };

  size_t thread = 0;     // 0 = the caller
  int cpu_asked = -1;    // -1: not pinned by the plan
  Pin pin = Pin::not_pinned;
  int pin_error = 0;     // errno when pin == failed
  int last_cpu = -1;     // CPU it was last seen running on (sched_getcpu); -1 unknown
  bool nice_asked = false;
  int nice_error = 0;    // errno when setting nice failed

  // "t3: cpu 4 pinned, last seen on cpu 4" / "t1: cpu 2 pinning failed (EINVAL:
  // Invalid argument), last seen on cpu 0"
  std::string describe() const;
};

struct PoolOptions {
  // How long an idle thread spins before it sleeps. 0: sleep at once (lowest
  // CPU use; every run() then pays a wake-up per worker).
  std::chrono::microseconds spin{1000};
  // Pin the constructing thread (thread 0) to plan.cpus[0], restored by the
  // destructor. Off by default: a library must not change its caller's thread
  // (an app's thread pinned to one CPU stayed there for the session's life).
  bool pin_caller = false;
};

class ThreadPool {
 public:
  explicit ThreadPool(const ThreadPlan& plan, PoolOptions options = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return n_threads_; }  // threads, the caller included
  const ThreadPlan& plan() const { return plan_; }
  // Thread `thread` runs on an in-order core: pinned to one (ThreadPlan::
  // in_order), or not pinned where every CPU the process may use is one.
  bool in_order(size_t thread) const;

  // Calls fn(task, thread) for every task in [0, n_tasks), spread over the
  // threads; the calling thread works too. Returns when all tasks are done.
  // `thread` < size() identifies the executing thread (per-thread scratch).
  template <class Fn>
  void run(size_t n_tasks, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    run_tasks(n_tasks, Task{const_cast<void*>(static_cast<const void*>(&fn)), [](void* f, size_t task, size_t thread) {
                              (*static_cast<F*>(f))(task, thread);
                            }});
  }

  // Seconds all threads have spent inside tasks while task timing was on
  // (`bench --profile` splits a step's time into work and waiting with it).
  // Off by default: then no clock is read per task.
  void set_task_timing(bool on) { task_timing_ = on; }
  double task_seconds() const;

  std::vector<WorkerReport> report() const;
  // One line per thread, preceded by the plan.
  std::string describe() const;

 private:
  struct Task {
    void* fn = nullptr;
    void (*call)(void*, size_t, size_t) = nullptr;
  };
  struct Worker;

  void run_tasks(size_t n_tasks, Task task);
  void work(size_t thread);  // takes tasks until none are left
  void call(const Task& task, size_t i, size_t thread);  // one task, timed when task_timing_
  void worker_main(size_t thread);
  uint64_t wait_for_round(uint64_t seen, Worker& self);
  void wait_for_workers();
  void shutdown();  // stops and joins the workers, restores the caller's affinity
  void warn_if_oversubscribed(size_t allowed_cpus);  // counts this pool among the live ones

  ThreadPlan plan_;
  PoolOptions options_;
  size_t n_threads_;
  bool task_timing_ = false;  // changed only between runs; a round's start publishes it
  std::thread::id owner_;
  std::vector<int> owner_affinity_;  // to restore; empty: nothing to restore
  std::unique_ptr<Worker[]> slots_;  // per thread, 0 = the caller
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;             // one run() at a time

  // The current round, written by run() before `round_` is bumped.
  Task task_;
  size_t n_tasks_ = 0;
  alignas(128) std::atomic<size_t> next_task_{0};
  alignas(128) std::atomic<uint64_t> round_{0};
  alignas(128) std::atomic<size_t> finished_{0};  // workers done with the round
  std::atomic<bool> stop_{false};

  // Sleeping: workers wait for a new round, the caller for the last worker.
  std::mutex sleep_mutex_;
  std::condition_variable round_cv_;
  std::condition_variable done_cv_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};

  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace engine
