// The compute a forward pass is made of, shared by the session and its
// mixers (engine/mixers/): matrix products through the chosen kernels, work
// split across the thread pool, and the time of each step added to a profile.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "engine/model/model_weights.h"
#include "engine/runtime/profile.h"
#include "engine/threads/thread_pool.h"

namespace engine {

class Compute {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Compute(ThreadPool* pool) : pool_(pool), n_threads_(pool != nullptr ? pool->size() : 1) {}

  size_t n_threads() const { return n_threads_; }
  Profile* profile() const { return profile_; }
  void set_profile(Profile* profile);

  // y[i, l.out] = x[i, l.in] * W^T for i < m.
  void linear(const Linear& l, const float* x, uint32_t m, float* y);
  // Several matrices applied to the same x: the activations are packed once
  // when their kernels share the packing.
  void linear_same_input(const float* x, uint32_t m, std::initializer_list<std::pair<const Linear*, float*>> outs);

  // fn(task, thread) for task < n_tasks, on the pool when there is one.
  template <class Fn>
  void parallel(size_t n_tasks, Fn&& fn) {
    if (pool_ != nullptr && n_tasks > 1) {
      pool_->run(n_tasks, fn);
    } else {
      for (size_t t = 0; t < n_tasks; ++t) fn(t, 0);
    }
  }

  // fn(first, last) over [0, n) in pieces of at least `grain` items, about 2
  // per thread: the elementwise work of a prefill batch (norms, RoPE, SwiGLU
  // over n tokens) ran on the calling thread alone while the others waited,
  // 11% of a Q4_0 prefill token on this 2-core machine (bench --profile; 6%
  // more in activation quantization). Each item is computed by the same code
  // whatever the split, so results do not depend on the thread count.
  template <class Fn>
  void parallel_range(size_t n, size_t grain, Fn&& fn) {
    const size_t units = (n + grain - 1) / grain;
    const size_t pieces = std::min(units, 2 * n_threads_);
    if (pieces <= 1) {
      fn(size_t{0}, n);
      return;
    }
    const size_t per_piece = (units + pieces - 1) / pieces * grain;
    parallel((n + per_piece - 1) / per_piece, [&](size_t task, size_t) {
      fn(task * per_piece, std::min(n, (task + 1) * per_piece));
    });
  }

  // step(), its time added to the profile when one is attached: a parallel
  // step's wall time W, split by the share of the threads' time spent in
  // tasks (B of W x threads): W x share to the step's class (the kernel's
  // weight type, or the class named), the rest to pool_wait.
  template <class Step>
  void profiled(const kernels::MatmulKernel* kernel, Step&& step) {
    profiled_into(kernel, nullptr, step);
  }
  template <class Step>
  void profiled(double Profile::*op_class, Step&& step) {
    profiled_into(nullptr, op_class, step);
  }

  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

 private:
  template <class Step>
  void profiled_into(const kernels::MatmulKernel* kernel, double Profile::*op_class, Step& step) {
    if (profile_ == nullptr) {
      step();
      return;
    }
    const double busy_before = pool_ != nullptr ? pool_->task_seconds() : 0.0;
    const auto t0 = Clock::now();
    step();
    account(kernel != nullptr ? profile_->matmul[static_cast<uint32_t>(kernel->rhs_type)] : profile_->*op_class,
            seconds_since(t0), busy_before);
  }
  void account(double& op_class, double wall, double busy_before);

  ThreadPool* pool_;
  size_t n_threads_;
  Profile* profile_ = nullptr;
  std::vector<uint8_t> packed_;  // activations packed for a kernel
};

}  // namespace engine
