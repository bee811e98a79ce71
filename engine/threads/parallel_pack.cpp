#include "engine/threads/parallel_pack.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

#include "engine/threads/affinity.h"

namespace engine {

size_t parallel_pack_rhs(const kernels::MatmulKernel& kernel, uint64_t n, uint64_t k, const uint8_t* rhs,
                         uint64_t row_bytes, uint8_t* packed, size_t threads, uint64_t min_bytes) {
  const uint64_t step = std::max<uint64_t>(kernel.n_step, 1);
  const uint64_t blocks = (n + step - 1) / step;
  const uint64_t workers = kernel.rhs_packed_size(n, k) < min_bytes ? 1 : std::min<uint64_t>(threads, blocks);
  if (workers <= 1) {
    kernel.pack_rhs(n, k, rhs, packed);
    return 1;
  }
  // A few slices per thread, so that one on a slow core does not hold up the rest.
  const uint64_t slices = std::min<uint64_t>(blocks, workers * 4);
  std::atomic<uint64_t> next{0};
  auto work = [&] {
    for (uint64_t s; (s = next.fetch_add(1, std::memory_order_relaxed)) < slices;) {
      const uint64_t n0 = blocks * s / slices * step, n1 = std::min(n, blocks * (s + 1) / slices * step);
      kernel.pack_rhs(n1 - n0, k, rhs + n0 * row_bytes, packed + kernel.rhs_packed_offset(n0, k));
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  for (uint64_t t = 1; t < workers; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones running and this one pack the rest
    }
  }
  work();
  for (std::thread& h : helpers) h.join();
  return helpers.size() + 1;
}

size_t pack_threads() {
  const auto allowed = os::thread_affinity();
  const size_t cpus = allowed && !allowed->empty() ? allowed->size() : std::thread::hardware_concurrency();
  return std::clamp<size_t>(cpus, 1, 8);
}

}  // namespace engine
