#include "engine/threads/thread_pool.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/support/log.h"
#include "engine/threads/affinity.h"

namespace engine {

// Per waiting thread: how many upcoming waits skip spinning (see spin_until).
struct SpinState {
  uint32_t skip = 0;
  uint32_t backoff = 0;
};

struct ThreadPool::Worker {
  // Written by the thread itself before it first arrives, read-only after.
  int cpu_asked = -1;
  WorkerReport::Pin pin = WorkerReport::Pin::not_pinned;
  int pin_error = 0;
  bool nice_asked = false;
  int nice_error = 0;
  std::atomic<int> last_cpu{-1};
  // Used only by the thread itself (slot 0: by run(), under run_mutex_).
  SpinState spin;
  uint64_t rounds = 0;
  bool woke = false;
  double task_seconds = 0;  // inside tasks, while task timing is on
};

namespace {

// The pool and thread index the current thread is working for, so a nested
// run() can tell it is nested.
thread_local const ThreadPool* t_pool = nullptr;
thread_local size_t t_thread = 0;

class ScopedCurrent {
 public:
  ScopedCurrent(const ThreadPool* pool, size_t thread) : pool_(t_pool), thread_(t_thread) {
    t_pool = pool;
    t_thread = thread;
  }
  ~ScopedCurrent() {
    t_pool = pool_;
    t_thread = thread_;
  }
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

 private:
  const ThreadPool* pool_;
  size_t thread_;
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spin-then-sleep, adapting to a shared CPU. Every 64 polls a spinner yields
// (so a thread of this pool queued on the same CPU gets to run) and reads the
// clock. A gap of more than kPreemptedGap means another task ran meanwhile: the
// CPU is shared (another app, more threads than cores). The spinner then sleeps,
// and sleeps at once for its next `skip` waits (8, doubling up to 4096 while it
// keeps happening), because a sleeper that is woken preempts the other task at
// once, while a spinner waits for the other task's time slice to end. A
// successful spin halves the backoff.
// Measured on this 2-core VM, 2 threads, us per round (100k rounds):
//   spin + yield, no backoff:     ~2700 next to two busy processes;
//   spin, no yield, no backoff:   ~1800 when both threads share one CPU;
//   sleep at once (spin 0):       ~7 idle, 7-11 next to two busy processes;
//   this scheme (spin 1000 us):   ~2.9 idle, ~2.9 on one CPU (taskset -c 0),
//                                 22-33 next to two busy processes.
constexpr auto kPreemptedGap = std::chrono::microseconds(50);
constexpr uint32_t kMinBackoff = 8, kMaxBackoff = 4096;

template <class Done>
bool spin_until(Done done, std::chrono::microseconds spin, SpinState& state) {
  if (spin.count() <= 0) return done();
  if (state.skip > 0) {
    --state.skip;
    return done();
  }
  auto last = std::chrono::steady_clock::now();
  const auto deadline = last + spin;
  for (unsigned i = 1;; ++i) {
    if (done()) {
      state.backoff /= 2;  // decays: one lucky spin on a shared CPU is no proof it is free
      return true;
    }
    cpu_relax();
    if (i % 64 == 0) {
      std::this_thread::yield();
      const auto now = std::chrono::steady_clock::now();
      if (now - last > kPreemptedGap) {
        state.backoff = std::clamp(state.backoff * 2, kMinBackoff, kMaxBackoff);
        state.skip = state.backoff;
        return done();
      }
      if (now >= deadline) return done();
      last = now;
    }
  }
}

// "EINVAL: Invalid argument"; "errno 12: Cannot allocate memory" for the rest.
std::string errno_text(int e) {
  const char* name = e == EINVAL ? "EINVAL"
                     : e == EPERM  ? "EPERM"
                     : e == EACCES ? "EACCES"
                     : e == ESRCH  ? "ESRCH"
                     : e == ENOSYS ? "ENOSYS"
                                   : nullptr;
  return (name ? std::string(name) : "errno " + std::to_string(e)) + ": " + std::strerror(e);
}

// Sample sched_getcpu (a syscall on bionic) once every this many rounds, and
// after every sleep: enough to see migrations, cheap enough for decode.
constexpr uint64_t kCpuSampleRounds = 256;

// The threads of every pool alive in this process, each pool's caller
// included (it works too): what warn_if_oversubscribed compares with the CPUs.
std::atomic<size_t> g_live_pool_threads{0};

}  // namespace

std::string WorkerReport::describe() const {
  // Appends, not "t" + std::to_string(): GCC 12 warns falsely (-Wrestrict, PR 105651) on the latter.
  std::string out = "t";
  out += std::to_string(thread);
  out += thread == 0 ? " (caller): " : ": ";
  switch (pin) {
    case Pin::pinned:
      out += "cpu " + std::to_string(cpu_asked) + " pinned";
      break;
    case Pin::failed:
      out += "cpu " + std::to_string(cpu_asked) + " pinning failed (" + errno_text(pin_error) + ")";
      break;
    case Pin::not_pinned:
      out += thread == 0 && cpu_asked >= 0 ? "not pinned (the calling thread is the app's)" : "not pinned";
      break;
  }
  out += last_cpu >= 0 ? ", last seen on cpu " + std::to_string(last_cpu) : ", last CPU unknown";
  if (nice_asked) out += nice_error == 0 ? ", nice set" : ", nice failed (" + errno_text(nice_error) + ")";
  return out;
}

ThreadPool::ThreadPool(const ThreadPlan& plan, PoolOptions options)
    : plan_(plan.size() > 0 ? plan : ThreadPlan::unpinned(1)),
      options_(options),
      n_threads_(plan_.size()),
      owner_(std::this_thread::get_id()),
      slots_(new Worker[plan_.size()]) {
  for (size_t t = 0; t < n_threads_; ++t) slots_[t].cpu_asked = plan_.cpus[t];
  // The CPUs this process may use, as the constructing thread sees them before
  // this pool pins anything.
  const auto caller_cpus = os::thread_affinity();
  const size_t allowed_cpus = caller_cpus ? caller_cpus->size() : std::max(1u, std::thread::hardware_concurrency());
  Worker& caller = slots_[0];
  if (caller.cpu_asked >= 0 && options_.pin_caller) {
    const int e = os::pin_thread_to(caller.cpu_asked);
    caller.pin = e == 0 ? WorkerReport::Pin::pinned : WorkerReport::Pin::failed;
    caller.pin_error = e;
    if (e == 0 && caller_cpus) owner_affinity_ = *caller_cpus;
  }
  caller.last_cpu.store(os::current_cpu(), std::memory_order_relaxed);

  threads_.reserve(n_threads_ - 1);
  try {
    for (size_t t = 1; t < n_threads_; ++t) threads_.emplace_back(&ThreadPool::worker_main, this, t);
  } catch (...) {  // out of threads: stop the ones that started
    shutdown();
    throw;
  }
  wait_for_workers();  // every worker has pinned itself and reported
  finished_.store(0, std::memory_order_relaxed);

  log_info("thread pool: " + describe());
  for (const WorkerReport& r : report()) {
    if (r.pin == WorkerReport::Pin::failed) {
      log_warning("thread " + std::to_string(r.thread) + ": pinning to cpu " + std::to_string(r.cpu_asked) +
                  " failed (" + errno_text(r.pin_error) +
                  "). Expected effect: the scheduler may run it on a little core or next to another worker. "
                  "Recommended: --cpus with CPUs this process may use (see the topology), or --cpus none.");
    }
    if (r.nice_asked && r.nice_error != 0) {
      log_warning("thread " + std::to_string(r.thread) + ": setting nice " + std::to_string(*plan_.nice) +
                  " failed (" + errno_text(r.nice_error) + "); it keeps the inherited priority");
    }
  }
  warn_if_oversubscribed(allowed_cpus);
}

ThreadPool::~ThreadPool() {
  shutdown();
  // Counted at the constructor's end: a pool whose destructor runs was counted.
  g_live_pool_threads.fetch_sub(n_threads_, std::memory_order_relaxed);
}

// One pool with more threads than CPUs is its plan's warning (ThreadPlan::make
// names the threads that share); here, pools that each fit but crowd each
// other. Every session has a pool of its own, so two sessions decoding at once
// from two threads run twice the threads on the same CPUs.
void ThreadPool::warn_if_oversubscribed(size_t allowed_cpus) {
  const size_t others = g_live_pool_threads.fetch_add(n_threads_, std::memory_order_relaxed);
  if (others == 0 || others + n_threads_ <= allowed_cpus) return;
  log_warning("thread pool: its " + std::to_string(n_threads_) + " threads and " + std::to_string(others) +
              " more in other thread pools alive in this process (other sessions) add up to " +
              std::to_string(others + n_threads_) + " threads on the " + std::to_string(allowed_cpus) +
              " CPUs this process may use. Expected effect: when the sessions work at the same time, their threads "
              "preempt each other in the middle of every step and each runs slower than alone. Recommended: fewer "
              "threads per session (n_threads, --threads) so that the sum fits the CPUs, or sessions that take turns.");
}

void ThreadPool::shutdown() {
  {
    std::lock_guard run_lock(run_mutex_);
    stop_.store(true, std::memory_order_seq_cst);
    round_.fetch_add(1, std::memory_order_seq_cst);
    std::lock_guard lock(sleep_mutex_);
    round_cv_.notify_all();
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (!owner_affinity_.empty() && std::this_thread::get_id() == owner_) os::set_thread_affinity(owner_affinity_);
}

void ThreadPool::worker_main(size_t thread) {
  ScopedCurrent current(this, thread);
  Worker& self = slots_[thread];
  if (self.cpu_asked >= 0) {
    const int e = os::pin_thread_to(self.cpu_asked);
    self.pin = e == 0 ? WorkerReport::Pin::pinned : WorkerReport::Pin::failed;
    self.pin_error = e;
  }
  if (plan_.nice) {
    self.nice_asked = true;
    self.nice_error = os::set_thread_nice(*plan_.nice);
  }
  self.last_cpu.store(os::current_cpu(), std::memory_order_relaxed);

  const auto arrive = [this] {
    if (finished_.fetch_add(1, std::memory_order_seq_cst) + 1 == n_threads_ - 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard lock(sleep_mutex_);
      done_cv_.notify_one();
    }
  };
  arrive();
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_round(seen, self);
    if (stop_.load(std::memory_order_acquire)) return;
    if (self.woke || ++self.rounds % kCpuSampleRounds == 0) {
      self.last_cpu.store(os::current_cpu(), std::memory_order_relaxed);
      self.woke = false;
    }
    work(thread);
    arrive();
  }
}

// Spin, then sleep. The sleeper registers in sleepers_ and re-reads round_
// under the mutex; run() bumps round_ and then reads sleepers_, both seq_cst,
// so either run() sees the sleeper and notifies, or the sleeper sees the round.
uint64_t ThreadPool::wait_for_round(uint64_t seen, Worker& self) {
  uint64_t round = seen;
  const auto changed = [&] {
    round = round_.load(std::memory_order_acquire);
    return round != seen;
  };
  if (spin_until(changed, options_.spin, self.spin)) return round;
  std::unique_lock lock(sleep_mutex_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while ((round = round_.load(std::memory_order_seq_cst)) == seen) round_cv_.wait(lock);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  self.woke = true;
  return round;
}

// The caller's side of the barrier, with the same protocol on finished_ and
// caller_sleeping_. Every Dekker-style "announce, then look" here announces
// with a read-modify-write, never a plain store: a seq_cst store followed by a
// seq_cst load (STLR; LDAR) is ordered on Arm hardware, but qemu-user's
// translation puts its barriers before the store and after the load, so on an
// x86 host the load can pass the store. One qemu run hung in exactly the state
// that allows (caller asleep, worker waiting for the next round) while this
// was a store; not reproduced since in 120 stress runs with either form.
void ThreadPool::wait_for_workers() {
  const size_t target = n_threads_ - 1;
  if (spin_until([&] { return finished_.load(std::memory_order_acquire) == target; }, options_.spin, slots_[0].spin)) {
    return;
  }
  std::unique_lock lock(sleep_mutex_);
  caller_sleeping_.exchange(true, std::memory_order_seq_cst);
  while (finished_.load(std::memory_order_seq_cst) != target) done_cv_.wait(lock);
  caller_sleeping_.store(false, std::memory_order_relaxed);
}

void ThreadPool::work(size_t thread) {
  for (;;) {
    const size_t i = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_tasks_) return;
    try {
      call(task_, i, thread);
    } catch (...) {
      {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      next_task_.store(n_tasks_, std::memory_order_relaxed);  // hand out no more tasks
    }
  }
}

void ThreadPool::call(const Task& task, size_t i, size_t thread) {
  if (!task_timing_) {
    task.call(task.fn, i, thread);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  task.call(task.fn, i, thread);
  slots_[thread].task_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double ThreadPool::task_seconds() const {
  double s = 0;
  for (size_t t = 0; t < n_threads_; ++t) s += slots_[t].task_seconds;
  return s;
}

void ThreadPool::run_tasks(size_t n_tasks, Task task) {
  if (n_tasks == 0) return;
  if (t_pool == this) {  // nested: inline, on this thread, under its index
    for (size_t i = 0; i < n_tasks; ++i) task.call(task.fn, i, t_thread);
    return;
  }
  std::lock_guard run_lock(run_mutex_);
  ScopedCurrent current(this, 0);
  Worker& caller = slots_[0];
  if (++caller.rounds % kCpuSampleRounds == 1) caller.last_cpu.store(os::current_cpu(), std::memory_order_relaxed);
  if (n_threads_ == 1 || n_tasks == 1) {
    for (size_t i = 0; i < n_tasks; ++i) call(task, i, 0);
    return;
  }

  task_ = task;
  n_tasks_ = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  round_.fetch_add(1, std::memory_order_seq_cst);  // publishes the round
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard lock(sleep_mutex_);
    round_cv_.notify_all();
  }
  work(0);
  wait_for_workers();

  std::exception_ptr error;
  {
    std::lock_guard lock(error_mutex_);
    std::swap(error, error_);
  }
  if (error) std::rethrow_exception(error);
}

std::vector<WorkerReport> ThreadPool::report() const {
  if (std::this_thread::get_id() == owner_) slots_[0].last_cpu.store(os::current_cpu(), std::memory_order_relaxed);
  std::vector<WorkerReport> out;
  for (size_t t = 0; t < n_threads_; ++t) {
    const Worker& w = slots_[t];
    WorkerReport r;
    r.thread = t;
    r.cpu_asked = w.cpu_asked;
    r.pin = w.pin;
    r.pin_error = w.pin_error;
    r.last_cpu = w.last_cpu.load(std::memory_order_relaxed);
    r.nice_asked = w.nice_asked;
    r.nice_error = w.nice_error;
    out.push_back(r);
  }
  return out;
}

bool ThreadPool::in_order(size_t thread) const {
  if (thread >= n_threads_) return false;
  if (slots_[thread].pin != WorkerReport::Pin::pinned) return plan_.only_in_order_cpus;
  return thread < plan_.in_order.size() && plan_.in_order[thread];
}

std::string ThreadPool::describe() const {
  // One line per worker up to a screenful; past it, the rest counted by how
  // they are placed (-t 10000 once printed 10,011 lines).
  constexpr size_t kListed = 16;
  std::string out = plan_.describe();
  const std::vector<WorkerReport> workers = report();
  size_t counts[3] = {0, 0, 0};  // by WorkerReport::Pin
  for (const WorkerReport& r : workers) {
    if (r.thread < kListed) {
      out += "\n  " + r.describe();
    } else {
      ++counts[static_cast<size_t>(r.pin)];
    }
  }
  if (workers.size() > kListed) {
    out += "\n  t" + std::to_string(kListed) + "-t" + std::to_string(workers.size() - 1) + ": " +
           std::to_string(counts[0]) + " pinned, " + std::to_string(counts[1]) + " pinning failed, " +
           std::to_string(counts[2]) + " not pinned";
  }
  return out;
}

}  // namespace engine
