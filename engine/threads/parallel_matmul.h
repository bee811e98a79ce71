// Y = X * W^T with one MatmulKernel (kernels/matmul.h), split across a pool.
//
// Decode (M within one m_step) splits the N rows of W (guided, below); prefill
// splits N first and then M, so each task streams its slice of W once for all its rows. Every
// split starts on a multiple of the kernel's m_step / n_step and never splits
// K, so each output element is computed by the same code on the same data
// whatever the thread count: results are bitwise identical for 1..N threads
// (tests/threads check it). About kTasksPerThread tasks per thread let fast
// cores take more of them than slow ones on a prime + big layout.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "engine/threads/thread_pool.h"
#include "kernels/matmul.h"

namespace engine {

inline constexpr size_t kTasksPerThread = 4;

// Decode splits the rows of W into tasks of decreasing size (guided
// scheduling): each task takes 1/(2 x threads) of the rows not yet handed out,
// down to kMinGuidedBlocks n_steps, so the threads finish a round within one
// small task of each other. Equal tasks of 1/(4 x threads) could leave one
// large task's time at the end of a round (TinyLlama's 704-row gate/up tasks
// stream 0.8 MB, ~70 us on one core). Pool wait per decode token, Q4_0
// TinyLlama, 2 threads, 4 alternating runs of `bench -p 0 -n 32 --profile`:
// 1.24 / 1.55 / 1.58 / 1.47 ms with equal tasks, 0.93 / 1.18 / 1.03 / 1.06 guided.
inline constexpr size_t kMinGuidedBlocks = 2;
inline constexpr size_t kMaxGuidedTasks = 64;

struct MatmulSplit {
  size_t m_chunk = 0, n_chunk = 0;  // rows of X / rows of W per task (multiples of the steps); n_chunk 0: guided
  size_t m_tasks = 0, n_tasks = 0;  // task grid; tasks = m_tasks * n_tasks
  uint32_t n_bounds[kMaxGuidedTasks + 1] = {};  // guided: task t covers rows n_bounds[t] .. n_bounds[t + 1] - 1
  size_t tasks() const { return m_tasks * n_tasks; }
  // Rows of W of the task in column t of the grid: [first, last).
  std::pair<size_t, size_t> n_range(size_t t, size_t n) const {
    if (n_chunk == 0) return {n_bounds[t], n_bounds[t + 1]};
    return {t * n_chunk, std::min(n, (t + 1) * n_chunk)};
  }
};

MatmulSplit split_matmul(const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t threads);

// lhs_packed: kernel.pack_lhs output for m rows; rhs_packed: W as the kernel
// reads it (pack_rhs output, or the GGUF rows when pack_rhs is nullptr).
// dst: (m, dst_stride) floats, the first n columns written.
void parallel_matmul(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t k,
                     const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride);

// Several matrices of one kernel applied to the same packed activations (Q, K
// and V; gate and up) in one round of the pool: each matrix split as
// parallel_matmul splits it, all the tasks handed out together. One barrier
// instead of one per matrix, and the small matrices (K and V of a GQA model)
// fill the gaps the large one leaves at its end.
struct MatmulOutput {
  size_t n = 0;                      // rows of W
  const void* rhs_packed = nullptr;  // W, as for parallel_matmul
  float* dst = nullptr;              // (m, n) floats, row stride n
};
inline constexpr size_t kMaxMatmulOutputs = 4;  // outputs parallel_matmuls takes in one round
void parallel_matmuls(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t k,
                      const void* lhs_packed, const MatmulOutput* outs, size_t n_outs);

}  // namespace engine
