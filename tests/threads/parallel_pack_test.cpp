// parallel_pack_rhs: the same bytes as one pack_rhs call, for every kernel of
// the registry this CPU runs that repacks, on 1 to 8 threads, with a last slice
// of fewer than n_step rows; and the size threshold below which it stays on the
// calling thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "engine/threads/parallel_pack.h"
#include "kernels/registry.h"
#include "tests/threads/quantized_rows.h"

namespace {

using kernels::MatmulKernel;

// Every kernel of every weight type's table that this CPU can run.
std::vector<const MatmulKernel*> runnable_kernels() {
  std::vector<const MatmulKernel*> out;
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const MatmulKernel* k : kernels::matmul_table(static_cast<gguf::GgmlType>(id))) {
      if (kernels::can_run(*k, kernels::host_cpu_features())) out.push_back(k);
    }
  }
  return out;
}

TEST(ParallelPack, SameBytesAsOneCallOnAnyThreadCount) {
  size_t tested = 0;
  for (const MatmulKernel* kernel : runnable_kernels()) {
    if (kernel->pack_rhs == nullptr) continue;
    SCOPED_TRACE(kernel->name);
    const size_t k = 2 * std::max<size_t>(gguf::traits(kernel->rhs_type).block_size, 32);
    const size_t n = 9 * std::max<size_t>(kernel->n_step, 1) + 3;  // a partial last slice
    const std::vector<uint8_t> rows =
        threads_test::quantized_rows(kernel->rhs_type, n, k, static_cast<uint32_t>(n + k), 1.0f);
    const size_t row = *gguf::row_bytes(kernel->rhs_type, k);
    std::vector<uint8_t> whole(kernel->rhs_packed_size(n, k), 0xA5);
    kernel->pack_rhs(n, k, rows.data(), whole.data());
    for (size_t threads : {1, 2, 3, 8}) {
      std::vector<uint8_t> parallel(whole.size(), 0x5A);
      const size_t used =
          engine::parallel_pack_rhs(*kernel, n, k, rows.data(), row, parallel.data(), threads, /*min_bytes=*/0);
      ASSERT_EQ(parallel, whole) << threads << " threads";
      EXPECT_EQ(used, threads);  // 9 n_steps or more: room for each
    }
    ++tested;
  }
  EXPECT_GT(tested, 0u) << "no kernel here repacks its weights";
}

// Below the threshold the caller packs alone: a kernel whose pack_rhs records
// the calling thread sees only this one.
std::thread::id g_packer;
size_t g_calls = 0;
void recording_pack(size_t, size_t, const void*, void*) {
  g_packer = std::this_thread::get_id();
  ++g_calls;
}
size_t packed_size(size_t n, size_t) { return n * 100; }
size_t packed_offset(size_t n_idx, size_t) { return n_idx * 100; }

TEST(ParallelPack, SmallMatricesStayOnTheCallingThread) {
  MatmulKernel kernel{};
  kernel.name = "recording";
  kernel.n_step = 4;
  kernel.m_step = 1;
  kernel.rhs_packed_size = packed_size;
  kernel.rhs_packed_offset = packed_offset;
  kernel.pack_rhs = recording_pack;
  std::vector<uint8_t> rows(64 * 10), packed(64 * 100);
  const size_t used = engine::parallel_pack_rhs(kernel, 64, 32, rows.data(), 10, packed.data(), 8,
                                                /*min_bytes=*/64 * 100 + 1);
  EXPECT_EQ(used, 1u);
  EXPECT_EQ(g_calls, 1u);
  EXPECT_EQ(g_packer, std::this_thread::get_id());
  EXPECT_GE(engine::pack_threads(), 1u);
  EXPECT_LE(engine::pack_threads(), 8u);
}

}  // namespace
