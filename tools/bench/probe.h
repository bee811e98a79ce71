// The memory-read bandwidth probe: the wall decode runs into. Decode reads
// every weight once per token, so its speed is bounded by how fast the cores
// the engine uses can stream memory; the probe measures exactly that, with the
// same thread pool (same threads, same pinning) over a buffer well beyond the
// last-level cache, read the way the kernels read weights: each task streams
// a contiguous chunk, tasks handed out from the pool's shared counter.
#pragma once

#include <cstdint>

#include "engine/threads/thread_pool.h"
#include "kernels/matmul.h"
#include "tools/bench/report.h"

namespace bench {

// 4x the last-level cache, at least 128 MiB, at most 1 GiB and a quarter of
// MemAvailable (a phone must not start swapping or killing apps for a probe);
// `requested` (bytes, > 0) overrides.
uint64_t probe_buffer_bytes(uint64_t llc_bytes, uint64_t mem_available_bytes, uint64_t requested = 0);

// A decode matrix-vector product for the probe to stream: a kernel and the
// length of the rows (the model's largest matrix of that kernel).
struct StreamKernel {
  const kernels::MatmulKernel* kernel = nullptr;
  size_t k = 0;
};

// One untimed pass (faults in the pages), then `passes` timed ones. With a
// kernel, each timed pass is followed by one M = 1 product of that kernel
// over the same buffer read as packed weights, through the same pool's
// parallel_matmul (garbage values; only the time counts).
ProbeResult probe_read_bandwidth(engine::ThreadPool& pool, uint64_t bytes, int passes = 5, StreamKernel decode = {});

// Sum of n 64-bit words (mod 2^64) with eight independent accumulators:
// loads stream without a dependency chain; the compiler vectorizes it for the
// build's baseline (SSE2 on x86-64, NEON on aarch64).
uint64_t sum_words(const uint64_t* p, size_t n);

// The same sum with the widest loads this CPU has: on x86-64 AVX-512 or AVX2
// intrinsics. Load width matters: one Sapphire Rapids core streamed 8.1 GB/s
// with 64-byte loads against 6.2 GB/s with 16-byte ones (this machine, 1 GiB,
// one thread), and the kernels use the widest. `name` gets "avx512", "avx2" or
// "baseline".
using SumWords = uint64_t (*)(const uint64_t* p, size_t n);
SumWords widest_sum_words(const char** name = nullptr);

}  // namespace bench
