#include "engine/threads/parallel_matmul.h"

#include <algorithm>
#include <cstdint>

namespace engine {
namespace {

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Splits `blocks` into at most `parts` chunks of whole blocks: {blocks per chunk, chunks}.
std::pair<size_t, size_t> split_blocks(size_t blocks, size_t parts) {
  parts = std::clamp<size_t>(parts, 1, std::max<size_t>(blocks, 1));
  const size_t per_chunk = ceil_div(blocks, parts);
  return {per_chunk, ceil_div(blocks, per_chunk)};
}

}  // namespace

MatmulSplit split_matmul(const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t threads) {
  MatmulSplit s;
  if (m == 0 || n == 0) return s;
  const size_t m_step = std::max<size_t>(kernel.m_step, 1), n_step = std::max<size_t>(kernel.n_step, 1);
  const size_t m_blocks = ceil_div(m, m_step), n_blocks = ceil_div(n, n_step);
  if (m_blocks == 1 && threads > 1) {
    s.m_chunk = m_blocks * m_step;
    s.m_tasks = 1;
    size_t done = 0;
    while (done < n_blocks) {
      size_t take = std::max(kMinGuidedBlocks, ceil_div(n_blocks - done, 2 * threads));
      if (s.n_tasks + 1 == kMaxGuidedTasks) take = n_blocks - done;
      done += std::min(take, n_blocks - done);
      s.n_bounds[++s.n_tasks] = static_cast<uint32_t>(std::min(n, done * n_step));
    }
    return s;
  }
  const size_t target = threads <= 1 ? 1 : threads * kTasksPerThread;
  const auto [n_per, n_tasks] = split_blocks(n_blocks, target);
  const auto [m_per, m_tasks] = split_blocks(m_blocks, ceil_div(target, n_tasks));
  s.n_chunk = n_per * n_step;
  s.n_tasks = n_tasks;
  s.m_chunk = m_per * m_step;
  s.m_tasks = m_tasks;
  return s;
}

namespace {

// Task `task` of split s: its block of rows of X and of W.
void run_task(const kernels::MatmulKernel& kernel, const MatmulSplit& s, size_t task, size_t m, size_t n, size_t k,
              const uint8_t* lhs, const uint8_t* rhs, float* dst, size_t dst_stride) {
  const size_t m0 = task / s.n_tasks * s.m_chunk;
  const auto [n0, n1] = s.n_range(task % s.n_tasks, n);
  const size_t rows = std::min(s.m_chunk, m - m0), cols = n1 - n0;
  kernel.run(rows, cols, k, lhs + kernel.lhs_packed_offset(m0, k), rhs + kernel.rhs_packed_offset(n0, k),
             dst + m0 * dst_stride + n0, dst_stride);
}

}  // namespace

void parallel_matmul(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t k,
                     const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  const MatmulSplit s = split_matmul(kernel, m, n, pool.size());
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  pool.run(s.tasks(), [&](size_t task, size_t) { run_task(kernel, s, task, m, n, k, lhs, rhs, dst, dst_stride); });
}

void parallel_matmuls(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t k,
                      const void* lhs_packed, const MatmulOutput* outs, size_t n_outs) {
  if (n_outs == 1 || n_outs > kMaxMatmulOutputs) {
    for (size_t i = 0; i < n_outs; ++i) {
      parallel_matmul(pool, kernel, m, outs[i].n, k, lhs_packed, outs[i].rhs_packed, outs[i].dst, outs[i].n);
    }
    return;
  }
  MatmulSplit splits[kMaxMatmulOutputs];
  size_t first_task[kMaxMatmulOutputs + 1] = {};
  for (size_t i = 0; i < n_outs; ++i) {
    splits[i] = split_matmul(kernel, m, outs[i].n, pool.size());
    first_task[i + 1] = first_task[i] + splits[i].tasks();
  }
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  pool.run(first_task[n_outs], [&](size_t task, size_t) {
    size_t i = 0;
    while (task >= first_task[i + 1]) ++i;
    const MatmulOutput& o = outs[i];
    run_task(kernel, splits[i], task - first_task[i], m, o.n, k, lhs, static_cast<const uint8_t*>(o.rhs_packed), o.dst,
             o.n);
  });
}

}  // namespace engine
