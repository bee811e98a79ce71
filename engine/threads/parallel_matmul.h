// Y = X * W^T with one MatmulKernel (kernels/matmul.h), split across a pool.
//
// Decode (M within one m_step) gives each thread one contiguous range of W's
// rows (below); prefill splits N first and then M, so each task streams its
// slice of W once for all its rows. Every split starts on a multiple of the
// kernel's m_step / n_step and never splits K, so each output element is
// computed by the same code on the same data whatever the thread count:
// results are bitwise identical for 1..N threads (tests/threads check it).
// A thread on an in-order core (ThreadPool::in_order) calls the kernel's
// run_in_order when it has one: the same results, in an order of
// instructions made for a core that issues them as written.
// About kTasksPerThread prefill tasks per thread let fast cores take more of
// them than slow ones on a prime + big layout.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "engine/threads/thread_pool.h"
#include "kernels/matmul.h"

namespace engine {

inline constexpr size_t kTasksPerThread = 4;

// Decode: each thread streams its own contiguous range of W's rows front to
// back, in chunks of 1/8 of what is left of the range (kMinChunkBlocks to
// kMaxChunkBlocks n_steps), so the weights the kernel prefetches past the end
// of one chunk are the start of its next. A thread done with its range takes
// chunks of 1/4 of what is left from the back of the largest range, so the
// threads finish within a small chunk of each other. With guided tasks from a
// shared counter instead, a thread's next task was rarely the one after its
// last: each began with a cold stream, and the prefetches past its end served
// the other core. Q4_0 TinyLlama, 2 threads, tokens alternating between the two
// schemes within one run (6 x 64 tokens a run, median matmul time per token):
// 1.4-3.4% less with ranges in one series of 4 runs (0.0-0.4% between tokens
// of one scheme), 1.2-1.4% less in a second series of 2, whose control showed
// 0.4-1.1%; Q8_0 1.1% less. Whole runs alternating the two builds were
// too noisy on this shared machine to show a difference either way.
inline constexpr size_t kMinChunkBlocks = 2;
inline constexpr size_t kMaxChunkBlocks = 16;

struct MatmulSplit {
  size_t m_chunk = 0, n_chunk = 0;  // rows of X / rows of W per task (multiples of the steps)
  size_t m_tasks = 0, n_tasks = 0;  // task grid; tasks = m_tasks * n_tasks
  size_t tasks() const { return m_tasks * n_tasks; }
  // Rows of W of the task in column t of the grid: [first, last).
  std::pair<size_t, size_t> n_range(size_t t, size_t n) const { return {t * n_chunk, std::min(n, (t + 1) * n_chunk)}; }
};

// The task grid of prefill, and of any matmul on one thread (one task).
MatmulSplit split_matmul(const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t threads);

// lhs_packed: kernel.pack_lhs output for m rows; rhs_packed: W as the kernel
// reads it (pack_rhs output, or the GGUF rows when pack_rhs is nullptr).
// dst: (m, dst_stride) floats, the first n columns written.
void parallel_matmul(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t k,
                     const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride);

// Several matrices of one kernel applied to the same packed activations (Q, K
// and V; gate and up) in one round of the pool: one barrier instead of one per
// matrix. Decode lays their rows end to end and splits them as one matrix,
// so the small matrices (K and V of a GQA model) fill the ranges like any
// other rows; prefill splits each as parallel_matmul does and hands out all
// the tasks together.
struct MatmulOutput {
  size_t n = 0;                      // rows of W
  const void* rhs_packed = nullptr;  // W, as for parallel_matmul
  float* dst = nullptr;              // (m, n) floats, row stride n
};
inline constexpr size_t kMaxMatmulOutputs = 4;  // outputs parallel_matmuls takes in one round
void parallel_matmuls(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t k,
                      const void* lhs_packed, const MatmulOutput* outs, size_t n_outs);

}  // namespace engine
