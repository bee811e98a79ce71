// parallel_matmul: bitwise the same result as one single-threaded kernel call,
// for 1, 2, 3 and 8 threads, with the ref kernels, the kernel this CPU would
// get, and a tiled mock kernel that checks every split lands on its steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <cstring>
#include <random>
#include <sched.h>
#include <vector>

#include "engine/support/log.h"
#include "engine/threads/parallel_matmul.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"
#include "tests/threads/quantized_rows.h"

namespace {

// Every pool logs its placement at info; the dozens built here would bury the
// test output (LogCapture turns info back on where a test reads it).
[[maybe_unused]] const bool kQuietLog = (engine::set_log_level(engine::LogLevel::warning), true);

using engine::PoolOptions;
using engine::ThreadPlan;
using engine::ThreadPool;
using gguf::GgmlType;
using kernels::MatmulKernel;

struct Operands {
  std::vector<uint8_t> rhs_packed, lhs_packed;
};

Operands prepare(const MatmulKernel& kernel, size_t m, size_t n, size_t k, uint32_t seed) {
  std::vector<uint8_t> rhs = threads_test::quantized_rows(kernel.rhs_type, n, k, seed, 0.1f);
  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Operands o;
  if (kernel.pack_rhs != nullptr) {
    o.rhs_packed.resize(kernel.rhs_packed_size(n, k));
    kernel.pack_rhs(n, k, rhs.data(), o.rhs_packed.data());
  } else {
    o.rhs_packed = std::move(rhs);
  }
  std::vector<float> x(m * k);
  for (float& v : x) v = normal(rng);
  o.lhs_packed.resize(kernel.lhs_packed_size(m, k));
  kernel.pack_lhs(m, k, x.data(), k, o.lhs_packed.data());
  return o;
}

// dst_stride > n, with a canary column the matmul must leave alone.
void expect_identical_for_any_thread_count(const MatmulKernel& kernel, size_t m, size_t n, size_t k) {
  SCOPED_TRACE(std::string(kernel.name) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k));
  const Operands o = prepare(kernel, m, n, k, static_cast<uint32_t>(m * 131 + n * 7 + k));
  const size_t stride = n + 3;
  std::vector<float> expected(m * stride, -7.0f);
  kernel.run(m, n, k, o.lhs_packed.data(), o.rhs_packed.data(), expected.data(), stride);
  for (size_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(ThreadPlan::unpinned(threads), PoolOptions{std::chrono::microseconds(50), true});
    for (int repeat = 0; repeat < 2; ++repeat) {
      std::vector<float> got(m * stride, -7.0f);
      engine::parallel_matmul(pool, kernel, m, n, k, o.lhs_packed.data(), o.rhs_packed.data(), got.data(), stride);
      ASSERT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
          << threads << " threads: not bitwise identical to one call";
    }
  }
}

TEST(ParallelMatmul, RefKernelsBitwiseIdentical) {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const MatmulKernel* kernel = kernels::ref::ref_matmul_kernel(type);
    ASSERT_NE(kernel, nullptr) << gguf::type_name(type);
    expect_identical_for_any_thread_count(*kernel, 1, 67, 256);  // decode
    expect_identical_for_any_thread_count(*kernel, 5, 33, 512);  // prefill
  }
}

TEST(ParallelMatmul, SelectedKernelsBitwiseIdentical) {
  const auto& cpu = kernels::host_cpu_features();
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K}) {
    const kernels::MatmulSelection sel = kernels::select_matmul(type, cpu, std::nullopt);
    if (sel.kernel == nullptr) continue;
    std::printf("%s\n", sel.describe().c_str());
    expect_identical_for_any_thread_count(*sel.kernel, 1, 200, 512);
    expect_identical_for_any_thread_count(*sel.kernel, 19, 45, 256);
  }
}

// parallel_matmuls (Q, K and V in one round): each output bitwise the same as
// its own single-threaded call, for matrices of different heights.
TEST(ParallelMatmul, SeveralMatricesInOneRoundBitwiseIdentical) {
  const auto& cpu = kernels::host_cpu_features();
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q4_K}) {
    const MatmulKernel& kernel = *kernels::select_matmul(type, cpu, std::nullopt).kernel;
    for (size_t m : {1, 7}) {
      SCOPED_TRACE(std::string(kernel.name) + " m=" + std::to_string(m));
      const size_t k = 512, heights[3] = {200, 40, 33};
      std::vector<Operands> ops;
      std::vector<std::vector<float>> expected;
      for (size_t i = 0; i < 3; ++i) {
        ops.push_back(prepare(kernel, m, heights[i], k, static_cast<uint32_t>(i + 1)));
        ops[i].lhs_packed = ops[0].lhs_packed;  // the same activations for every matrix
        expected.emplace_back(m * heights[i]);
        kernel.run(m, heights[i], k, ops[0].lhs_packed.data(), ops[i].rhs_packed.data(), expected[i].data(), heights[i]);
      }
      for (size_t threads : {1, 2, 3, 8}) {
        ThreadPool pool(ThreadPlan::unpinned(threads), PoolOptions{std::chrono::microseconds(50), true});
        std::vector<std::vector<float>> got;
        engine::MatmulOutput outs[3];
        for (size_t i = 0; i < 3; ++i) {
          got.emplace_back(m * heights[i], -7.0f);
          outs[i] = engine::MatmulOutput{heights[i], ops[i].rhs_packed.data(), got[i].data()};
        }
        engine::parallel_matmuls(pool, kernel, m, k, ops[0].lhs_packed.data(), outs, 3);
        for (size_t i = 0; i < 3; ++i) {
          ASSERT_EQ(std::memcmp(got[i].data(), expected[i].data(), got[i].size() * sizeof(float)), 0)
              << threads << " threads, matrix " << i << ": not bitwise identical to one call";
        }
      }
    }
  }
}

// A tiled F32 kernel (m_step 4, n_step 8) that flags any offset or call that
// does not start on a step, and computes Y = X W^T with plain loops.
std::atomic<bool> g_misaligned{false};

size_t mock_rhs_size(size_t n, size_t k) { return n * k * sizeof(float); }
size_t mock_rhs_offset(size_t n_idx, size_t k) {
  if (n_idx % 8 != 0) g_misaligned = true;
  return n_idx * k * sizeof(float);
}
size_t mock_lhs_size(size_t m, size_t k) { return m * k * sizeof(float); }
size_t mock_lhs_offset(size_t m_idx, size_t k) {
  if (m_idx % 4 != 0) g_misaligned = true;
  return m_idx * k * sizeof(float);
}
void mock_pack_lhs(size_t m, size_t k, const float* lhs, size_t stride, void* out) {
  for (size_t i = 0; i < m; ++i) std::memcpy(static_cast<float*>(out) + i * k, lhs + i * stride, k * sizeof(float));
}
void mock_run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t dst_stride) {
  const auto* x = static_cast<const float*>(lhs);
  const auto* w = static_cast<const float*>(rhs);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (size_t kk = 0; kk < k; ++kk) acc += x[i * k + kk] * w[j * k + kk];
      dst[i * dst_stride + j] = acc;
    }
  }
}

constexpr MatmulKernel kMockTiled{
    .name = "matmul_f32_f32_f32_4x8_mock",
    .tier = kernels::Tier::ref,
    .arch = kernels::Arch::unknown,
    .required_features = 0,
    .rhs_type = GgmlType::F32,
    .lhs_type = GgmlType::F32,
    .m_step = 4,
    .n_step = 8,
    .rhs_packed_size = mock_rhs_size,
    .rhs_packed_offset = mock_rhs_offset,
    .pack_rhs = nullptr,
    .lhs_packed_size = mock_lhs_size,
    .lhs_packed_offset = mock_lhs_offset,
    .pack_lhs = mock_pack_lhs,
    .run = mock_run,
};

TEST(ParallelMatmul, SplitsOnTheKernelSteps) {
  g_misaligned = false;
  for (size_t m : {1, 3, 4, 9, 64}) {
    for (size_t n : {1, 7, 8, 41, 300}) expect_identical_for_any_thread_count(kMockTiled, m, n, 32);
  }
  EXPECT_FALSE(g_misaligned) << "an offset was not a multiple of m_step / n_step";
}

TEST(ParallelMatmul, SplitShapes) {
  // Prefill: about kTasksPerThread tasks per thread over N, whole steps.
  engine::MatmulSplit s = engine::split_matmul(kMockTiled, 64, 4096, 6);
  EXPECT_EQ(s.n_tasks, 24u);
  EXPECT_EQ(s.n_chunk % 8, 0u);
  EXPECT_EQ(s.m_tasks, 1u);
  // One thread: one call.
  s = engine::split_matmul(kMockTiled, 64, 4096, 1);
  EXPECT_EQ(s.tasks(), 1u);
  // Few rows of W: the split moves to M.
  s = engine::split_matmul(kMockTiled, 64, 8, 4);
  EXPECT_EQ(s.n_tasks, 1u);
  EXPECT_EQ(s.m_chunk % 4, 0u);
  EXPECT_EQ(s.m_tasks, 16u);
  // Empty.
  EXPECT_EQ(engine::split_matmul(kMockTiled, 0, 8, 4).tasks(), 0u);
}

// Decode: every row of W computed once, by calls that start on an n_step and
// run in ascending, back-to-back chunks within each thread's own range (the
// stream the kernel prefetches along) until the thread turns to helping.
struct Call {
  std::thread::id thread;
  size_t n0, n1;
};
std::mutex g_calls_mutex;
std::vector<Call> g_calls;
const float* g_dst_base = nullptr;

void recording_run(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t dst_stride) {
  mock_run(m, n, k, lhs, rhs, dst, dst_stride);
  const size_t n0 = static_cast<size_t>(dst - g_dst_base);
  std::lock_guard lock(g_calls_mutex);
  g_calls.push_back({std::this_thread::get_id(), n0, n0 + n});
}

TEST(ParallelMatmul, DecodeStreamsContiguousRanges) {
  MatmulKernel kernel = kMockTiled;
  kernel.run = recording_run;
  for (size_t threads : {2, 3, 8}) {
    for (size_t n : {8, 41, 300, 4096}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, n=" + std::to_string(n));
      const Operands o = prepare(kernel, 1, n, 32, static_cast<uint32_t>(n));
      std::vector<float> dst(n);
      g_dst_base = dst.data();
      g_calls.clear();
      ThreadPool pool(ThreadPlan::unpinned(threads), PoolOptions{std::chrono::microseconds(1000), true});
      engine::parallel_matmul(pool, kernel, 1, n, 32, o.lhs_packed.data(), o.rhs_packed.data(), dst.data(), n);
      std::vector<int> computed(n, 0);
      for (const Call& c : g_calls) {
        EXPECT_EQ(c.n0 % 8, 0u);
        for (size_t j = c.n0; j < c.n1; ++j) ++computed[j];
      }
      for (size_t j = 0; j < n; ++j) ASSERT_EQ(computed[j], 1) << "row " << j;
      // The first range is rows 0 .. first_range - 1. The thread that began
      // it at row 0 streams it in back-to-back chunks, and whatever it did not
      // reach was taken from the back by other threads: none of its other
      // calls fall in the range (as they would with tasks from a counter). If
      // row 0 went to a helper (the thread of range 0 came late), there is no
      // such thread to check.
      const size_t blocks = (n + 7) / 8, first_range = blocks / std::min(threads, blocks) * 8;
      const auto first = std::find_if(g_calls.begin(), g_calls.end(), [](const Call& c) { return c.n0 == 0; });
      const auto owner = first->thread;
      const bool began_at_zero =
          std::find_if(g_calls.begin(), g_calls.end(), [&](const Call& c) { return c.thread == owner; }) == first;
      if (!began_at_zero) continue;
      size_t end = 0;
      bool in_prefix = true;
      for (const Call& c : g_calls) {
        if (c.thread != owner) continue;
        if (in_prefix && c.n0 == end) {
          end = c.n1;
          continue;
        }
        in_prefix = false;
        EXPECT_GE(c.n0, first_range) << "the first range's thread took rows " << c.n0 << ".." << c.n1
                                      << " of its own range out of order";
      }
      EXPECT_GE(end, std::min(first_range, engine::kMinChunkBlocks * 8));
    }
  }
}

// Per-core choice: a thread pinned to an in-order core (a Cortex-A55 by its
// MIDR, in a topology made for the test over this machine's CPUs 0 and 1)
// calls the kernel's run_in_order, the other thread run(), in decode and in
// prefill; the results equal one call of run().
std::mutex g_cores_mutex;
std::vector<std::pair<int, bool>> g_cores;  // (CPU, in-order schedule) of every call

void record_core(bool in_order) {
  std::lock_guard lock(g_cores_mutex);
  g_cores.emplace_back(sched_getcpu(), in_order);
}
void run_recording_core(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst, size_t stride) {
  mock_run(m, n, k, lhs, rhs, dst, stride);
  record_core(false);
}
void run_in_order_recording_core(size_t m, size_t n, size_t k, const void* lhs, const void* rhs, float* dst,
                                 size_t stride) {
  mock_run(m, n, k, lhs, rhs, dst, stride);
  record_core(true);
}

TEST(ParallelMatmul, ThreadsOnInOrderCoresRunTheInOrderSchedule) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs to pin to";
  const uint32_t a55 = engine::make_midr(0x41, 0, 0xD05, 0), a76 = engine::make_midr(0x41, 0, 0xD0B, 0);
  std::vector<engine::CoreInfo> cores(2);
  for (int cpu : {0, 1}) {
    cores[cpu].cpu = cpu;
    cores[cpu].midr = cpu == 0 ? a55 : a76;
  }
  engine::ThreadOptions options;
  options.set_cpus("1,0");
  const ThreadPlan plan = ThreadPlan::make(engine::CpuTopology::from_cores(cores), options);
  ASSERT_EQ(plan.in_order, (std::vector<bool>{false, true}));
  ThreadPool pool(plan, PoolOptions{std::chrono::microseconds(1000), true});
  for (const engine::WorkerReport& r : pool.report()) {
    if (r.pin != engine::WorkerReport::Pin::pinned) GTEST_SKIP() << "could not pin: " << r.describe();
  }
  EXPECT_FALSE(pool.in_order(0));
  EXPECT_TRUE(pool.in_order(1));
  MatmulKernel kernel = kMockTiled;
  kernel.run = run_recording_core;
  kernel.run_in_order = run_in_order_recording_core;
  for (size_t m : {size_t{1}, size_t{64}}) {
    const size_t n = 4096, k = 32;
    SCOPED_TRACE("m=" + std::to_string(m));
    const Operands o = prepare(kernel, m, n, k, 5);
    std::vector<float> dst(m * n), expected(m * n);
    mock_run(m, n, k, o.lhs_packed.data(), o.rhs_packed.data(), expected.data(), n);
    g_cores.clear();
    engine::parallel_matmul(pool, kernel, m, n, k, o.lhs_packed.data(), o.rhs_packed.data(), dst.data(), n);
    EXPECT_EQ(dst, expected);
    ASSERT_FALSE(g_cores.empty());
    for (const auto& [cpu, in_order] : g_cores) EXPECT_EQ(in_order, cpu == 0) << "a call on cpu " << cpu;
  }
}

}  // namespace
