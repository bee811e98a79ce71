#include "engine/threads/parallel_matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <tuple>

namespace engine {
namespace {

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Splits `blocks` into at most `parts` chunks of whole blocks: {blocks per chunk, chunks}.
std::pair<size_t, size_t> split_blocks(size_t blocks, size_t parts) {
  parts = std::clamp<size_t>(parts, 1, std::max<size_t>(blocks, 1));
  const size_t per_chunk = ceil_div(blocks, parts);
  return {per_chunk, ceil_div(blocks, per_chunk)};
}

// The kernel's run() for the core thread `thread` of the pool runs on.
auto run_for(const kernels::MatmulKernel& kernel, const ThreadPool& pool, size_t thread) {
  return kernel.run_in_order != nullptr && pool.in_order(thread) ? kernel.run_in_order : kernel.run;
}

bool is_decode(const ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m) {
  return pool.size() > 1 && m > 0 && m <= std::max<size_t>(kernel.m_step, 1);
}

}  // namespace

MatmulSplit split_matmul(const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t threads) {
  MatmulSplit s;
  if (m == 0 || n == 0) return s;
  const size_t m_step = std::max<size_t>(kernel.m_step, 1), n_step = std::max<size_t>(kernel.n_step, 1);
  const size_t m_blocks = ceil_div(m, m_step), n_blocks = ceil_div(n, n_step);
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
void run_task(const ThreadPool& pool, size_t thread, const kernels::MatmulKernel& kernel, const MatmulSplit& s,
              size_t task, size_t m, size_t n, size_t k, const uint8_t* lhs, const uint8_t* rhs, float* dst,
              size_t dst_stride) {
  const size_t m0 = task / s.n_tasks * s.m_chunk;
  const auto [n0, n1] = s.n_range(task % s.n_tasks, n);
  const size_t rows = std::min(s.m_chunk, m - m0), cols = n1 - n0;
  run_for(kernel, pool, thread)(rows, cols, k, lhs + kernel.lhs_packed_offset(m0, k),
                                rhs + kernel.rhs_packed_offset(n0, k), dst + m0 * dst_stride + n0, dst_stride);
}

// Decode's rows: those of every output, end to end, in blocks of n_step.
struct DecodeRows {
  const ThreadPool& pool;
  const kernels::MatmulKernel& kernel;
  size_t m, k;
  const uint8_t* lhs;
  const MatmulOutput* outs;
  size_t n_outs;
  size_t dst_stride;  // 0: each output's own n
  size_t first_block[kMaxMatmulOutputs + 1] = {};

  // Blocks [b0, b1), which may span outputs, on thread `thread`.
  void run(size_t thread, size_t b0, size_t b1) const {
    const size_t n_step = std::max<size_t>(kernel.n_step, 1);
    const auto run_kernel = run_for(kernel, pool, thread);
    for (size_t i = 0; i < n_outs; ++i) {
      const size_t lo = std::max(b0, first_block[i]), hi = std::min(b1, first_block[i + 1]);
      if (lo >= hi) continue;
      const MatmulOutput& o = outs[i];
      const size_t n0 = (lo - first_block[i]) * n_step, n1 = std::min(o.n, (hi - first_block[i]) * n_step);
      run_kernel(m, n1 - n0, k, lhs, static_cast<const uint8_t*>(o.rhs_packed) + kernel.rhs_packed_offset(n0, k),
                 o.dst + n0, dst_stride != 0 ? dst_stride : o.n);
    }
  }
};

// One thread's blocks [front, back) in one word (front in the low half), so
// that taking from either end is one compare-exchange.
struct alignas(64) BlockRange {
  std::atomic<uint64_t> bounds{0};
};
constexpr uint64_t pack_range(uint64_t front, uint64_t back) { return front | back << 32; }
size_t blocks_left(uint64_t bounds) {
  const size_t front = bounds & 0xFFFFFFFFu, back = bounds >> 32;
  return back > front ? back - front : 0;
}

// Takes blocks from the front or the back of r, `share` of what is left
// (1/8 or 1/4) within the chunk bounds: [first, last), empty when none are left.
std::pair<size_t, size_t> take(BlockRange& r, bool from_front, size_t share) {
  uint64_t b = r.bounds.load(std::memory_order_relaxed);
  for (;;) {
    const size_t left = blocks_left(b);
    if (left == 0) return {0, 0};
    const size_t n = std::min(left, std::clamp(left / share, kMinChunkBlocks, kMaxChunkBlocks));
    const size_t front = b & 0xFFFFFFFFu, back = b >> 32;
    const uint64_t next = from_front ? pack_range(front + n, back) : pack_range(front, back - n);
    if (r.bounds.compare_exchange_weak(b, next, std::memory_order_relaxed)) {
      return from_front ? std::pair{front, front + n} : std::pair{back - n, back};
    }
  }
}

// Block indices share a word in BlockRange: more rows than this go in turns.
constexpr size_t kMaxBlocksPerRound = size_t{1} << 31;

void run_decode(ThreadPool& pool, DecodeRows& rows) {
  const size_t n_step = std::max<size_t>(rows.kernel.n_step, 1);
  for (size_t i = 0; i < rows.n_outs; ++i) {
    rows.first_block[i + 1] = rows.first_block[i] + ceil_div(rows.outs[i].n, n_step);
  }
  const size_t ranges = std::min(pool.size(), rows.first_block[rows.n_outs]);
  std::unique_ptr<BlockRange[]> range(new BlockRange[ranges]);
  for (size_t base = 0; base < rows.first_block[rows.n_outs]; base += kMaxBlocksPerRound) {
    const size_t blocks = std::min(kMaxBlocksPerRound, rows.first_block[rows.n_outs] - base);
    for (size_t r = 0; r < ranges; ++r) {
      range[r].bounds.store(pack_range(blocks * r / ranges, blocks * (r + 1) / ranges), std::memory_order_relaxed);
    }
    // Task r < ranges streams range r and then helps; the others only help,
    // so a thread that comes late still finds work.
    pool.run(2 * ranges, [&](size_t task, size_t thread) {
      if (task < ranges) {
        for (auto [b0, b1] = take(range[task], true, 8); b0 != b1; std::tie(b0, b1) = take(range[task], true, 8)) {
          rows.run(thread, base + b0, base + b1);
        }
      }
      for (;;) {
        size_t victim = ranges, most = 0;
        for (size_t r = 0; r < ranges; ++r) {
          const size_t left = blocks_left(range[r].bounds.load(std::memory_order_relaxed));
          if (left > most) most = left, victim = r;
        }
        if (victim == ranges) return;
        const auto [b0, b1] = take(range[victim], false, 4);
        rows.run(thread, base + b0, base + b1);
      }
    });
  }
}

}  // namespace

void parallel_matmul(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t n, size_t k,
                     const void* lhs_packed, const void* rhs_packed, float* dst, size_t dst_stride) {
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  if (is_decode(pool, kernel, m)) {
    const MatmulOutput out{n, rhs_packed, dst};
    DecodeRows rows{pool, kernel, m, k, lhs, &out, 1, dst_stride};
    run_decode(pool, rows);
    return;
  }
  const MatmulSplit s = split_matmul(kernel, m, n, pool.size());
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  pool.run(s.tasks(), [&](size_t task, size_t thread) {
    run_task(pool, thread, kernel, s, task, m, n, k, lhs, rhs, dst, dst_stride);
  });
}

void parallel_matmuls(ThreadPool& pool, const kernels::MatmulKernel& kernel, size_t m, size_t k,
                      const void* lhs_packed, const MatmulOutput* outs, size_t n_outs) {
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  if (n_outs <= kMaxMatmulOutputs && is_decode(pool, kernel, m)) {
    DecodeRows rows{pool, kernel, m, k, lhs, outs, n_outs, 0};
    run_decode(pool, rows);
    return;
  }
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
  pool.run(first_task[n_outs], [&](size_t task, size_t thread) {
    size_t i = 0;
    while (task >= first_task[i + 1]) ++i;
    const MatmulOutput& o = outs[i];
    run_task(pool, thread, kernel, splits[i], task - first_task[i], m, o.n, k, lhs,
             static_cast<const uint8_t*>(o.rhs_packed), o.dst, o.n);
  });
}

}  // namespace engine
