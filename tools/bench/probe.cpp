#include "tools/bench/probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "engine/model/stream_arena.h"
#include "engine/threads/parallel_matmul.h"
#include "kernels/cpu_features.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {

uint64_t probe_buffer_bytes(uint64_t llc_bytes, uint64_t mem_available_bytes, uint64_t requested) {
  constexpr uint64_t kMiB = 1ull << 20;
  if (requested > 0) return std::max<uint64_t>(requested, kMiB) / kMiB * kMiB;
  uint64_t bytes = std::max<uint64_t>(4 * llc_bytes, 128 * kMiB);
  bytes = std::min<uint64_t>(bytes, 1024 * kMiB);
  if (mem_available_bytes > 0) bytes = std::min<uint64_t>(bytes, std::max<uint64_t>(mem_available_bytes / 4, 16 * kMiB));
  return bytes / kMiB * kMiB;
}

uint64_t sum_words(const uint64_t* p, size_t n) {
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) a[k] += p[i + k];
  }
  for (; i < n; ++i) a[0] += p[i];
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

#if defined(__x86_64__)
namespace {

__attribute__((target("avx512f"))) uint64_t sum_words_avx512(const uint64_t* p, size_t n) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;  // four 64-byte loads in flight per step
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = _mm512_add_epi64(a, _mm512_loadu_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_loadu_si512(p + i + 8));
    c = _mm512_add_epi64(c, _mm512_loadu_si512(p + i + 16));
    d = _mm512_add_epi64(d, _mm512_loadu_si512(p + i + 24));
  }
  // Stored and added by hand: GCC 12's _mm512_reduce_add_epi64 trips -Wuninitialized.
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d)));
  return sum_words(lanes, 8) + sum_words(p + i, n - i);
}

__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a = _mm256_add_epi64(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_add_epi64(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_add_epi64(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + sum_words(p + i, n - i);
}

}  // namespace
#endif

SumWords widest_sum_words(const char** name) {
  const char* chosen = "baseline";
  SumWords fn = sum_words;
#if defined(__x86_64__)
  const kernels::CpuFeatures& cpu = kernels::host_cpu_features();
  if (cpu.has(kernels::Feature::avx512f)) {
    chosen = "avx512";
    fn = sum_words_avx512;
  } else if (cpu.has(kernels::Feature::avx2)) {
    chosen = "avx2";
    fn = sum_words_avx2;
  }
#endif
  if (name != nullptr) *name = chosen;
  return fn;
}

ProbeResult probe_read_bandwidth(engine::ThreadPool& pool, uint64_t bytes, int passes, StreamKernel decode) {
  constexpr size_t kChunk = 1 << 20;  // bytes per task: long streams, enough tasks to balance
  const size_t n_words = bytes / sizeof(uint64_t);
  const uint64_t buffer_bytes = n_words * sizeof(uint64_t);  // whole words
  const size_t chunk_words = kChunk / sizeof(uint64_t);
  const size_t n_tasks = (n_words + chunk_words - 1) / chunk_words;
  // The memory the repacked weights live in (2 MiB pages where the kernel
  // gives them): the decode efficiency compares like with like.
  engine::StreamArena buffer(buffer_bytes, "read-bandwidth probe");
  auto* data = reinterpret_cast<uint64_t*>(buffer.allocate(buffer_bytes));

  // Each worker writes (first-touches) chunks with distinct values: no shared
  // zero page, no page merging.
  pool.run(n_tasks, [&](size_t task, size_t) {
    const size_t begin = task * chunk_words, end = std::min(n_words, begin + chunk_words);
    for (size_t i = begin; i < end; ++i) data[i] = i * 0x9E3779B97F4A7C15ull;
  });

  struct alignas(128) Sink {
    uint64_t value = 0;
  };
  std::vector<Sink> sinks(pool.size());
  const char* loads = nullptr;
  const SumWords sum = widest_sum_words(&loads);
  // The kernel's rows: as many whole n_step groups as the buffer holds.
  const kernels::MatmulKernel* kernel = decode.k > 0 ? decode.kernel : nullptr;
  size_t rows = 0;
  std::vector<uint8_t> lhs;
  std::vector<float> out;
  if (kernel != nullptr) {
    const size_t step = std::max<size_t>(kernel->n_step, 1);
    rows = buffer_bytes / kernel->rhs_packed_size(step, decode.k) * step;
    while (rows > 0 && kernel->rhs_packed_size(rows, decode.k) > buffer_bytes) rows -= step;
    const std::vector<float> x(decode.k, 0.5f);
    lhs.resize(kernel->lhs_packed_size(1, decode.k));
    kernel->pack_lhs(1, decode.k, x.data(), decode.k, lhs.data());
    out.resize(rows);
  }
  const auto gb_s = [](uint64_t n, std::chrono::steady_clock::time_point t0) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s > 0 ? static_cast<double>(n) / s / 1e9 : 0.0;
  };
  std::vector<double> gb_per_s, kernel_gb_per_s, shares;
  for (int pass = -1; pass < passes; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    pool.run(n_tasks, [&](size_t task, size_t thread) {
      const size_t begin = task * chunk_words, end = std::min(n_words, begin + chunk_words);
      sinks[thread].value += sum(data + begin, end - begin);
    });
    const double plain = gb_s(buffer_bytes, t0);
    if (pass < 0 || plain <= 0) continue;
    gb_per_s.push_back(plain);
    if (rows == 0) continue;
    t0 = std::chrono::steady_clock::now();
    engine::parallel_matmul(pool, *kernel, 1, rows, decode.k, lhs.data(), data, out.data(), rows);
    kernel_gb_per_s.push_back(gb_s(kernel->rhs_packed_size(rows, decode.k), t0));
    shares.push_back(kernel_gb_per_s.back() / plain);
  }
  // Keeps the sums alive so the reads cannot be optimized away.
  static std::atomic<uint64_t> keep{0};
  for (const Sink& s : sinks) keep.fetch_xor(s.value, std::memory_order_relaxed);

  ProbeResult r;
  r.huge_page_bytes = buffer.huge_page_bytes();
  r.buffer_bytes = buffer_bytes;
  r.threads = static_cast<int>(pool.size());
  r.loads = loads;
  r.gb_per_s = Stats::of(std::move(gb_per_s));
  if (!kernel_gb_per_s.empty()) {
    r.kernel = kernel->name;
    r.kernel_gb_per_s = Stats::of(std::move(kernel_gb_per_s));
    r.kernel_share = Stats::of(std::move(shares)).median;
  }
  return r;
}

}  // namespace bench
