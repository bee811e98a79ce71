// The sve tier at every vector length the CPU offers, inside one process: the
// test switches the SVE vector length with prctl(PR_SVE_SET_VL) (Linux; qemu
// -cpu max offers 128..2048 bits, a64fx 128, 256 and 512), so one run covers
// what the qemu matrix covers one length at a time, and more:
// - the weights are repacked once, at the starting length, and then used at
//   every length: the packed layout must not depend on the vector length;
// - pack_lhs must write the same bytes at every length;
// - the integer kernels must give the same bits at every length (exact
//   integer sums, the same float operations per output); F16 and F32
//   accumulate in VL/32 lanes, so they are compared with the reference within
//   tolerance.
// Kernels the CPU cannot run, and CPUs without SVE, are SKIPPED.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/prctl.h>
#endif

#ifndef PR_SVE_SET_VL
#define PR_SVE_SET_VL 50
#define PR_SVE_GET_VL 51
#endif
#ifndef PR_SVE_VL_LEN_MASK
#define PR_SVE_VL_LEN_MASK 0xffff
#endif

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;

// The current SVE vector length in bytes, 0 without SVE or prctl.
int vector_bytes() {
#if defined(__aarch64__) && defined(__linux__)
  const int r = prctl(PR_SVE_GET_VL);
  return r < 0 ? 0 : (r & PR_SVE_VL_LEN_MASK);
#else
  return 0;
#endif
}

// Sets the vector length; true when the CPU gave exactly `bytes`.
bool set_vector_bytes(int bytes) {
#if defined(__aarch64__) && defined(__linux__)
  const int r = prctl(PR_SVE_SET_VL, bytes);
  return r >= 0 && (r & PR_SVE_VL_LEN_MASK) == bytes;
#else
  (void)bytes;
  return false;
#endif
}

std::vector<const MatmulKernel*> sve_kernels() {
  std::vector<const MatmulKernel*> out;
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const MatmulKernel* k : kernels::matmul_table(static_cast<GgmlType>(id))) {
      if (k->tier == kernels::Tier::sve) out.push_back(k);
    }
  }
  return out;
}

size_t file_row_bytes(GgmlType t, size_t k) { return static_cast<size_t>(*gguf::row_bytes(t, k)); }

class SveVectorLength : public ::testing::TestWithParam<const MatmulKernel*> {
 protected:
  void SetUp() override {
    kern_ = GetParam();
    if (!kernels::can_run(*kern_, kernels::host_cpu_features())) {
      GTEST_SKIP() << kern_->name << " cannot run on this CPU (" << kernels::host_cpu_features().describe() << ")";
    }
    start_bytes_ = vector_bytes();
    if (start_bytes_ == 0) GTEST_SKIP() << "no PR_SVE_GET_VL: cannot change the vector length";
  }
  void TearDown() override {
    if (start_bytes_ != 0) set_vector_bytes(start_bytes_);
  }
  const MatmulKernel* kern_ = nullptr;
  int start_bytes_ = 0;
};

TEST_P(SveVectorLength, SameResultsAtEveryLength) {
  const GgmlType type = kern_->rhs_type;
  const size_t bs = gguf::traits(type).block_size < 32 ? 32 : gguf::traits(type).block_size;
  // Rows: a full kMr group and a leftover row; columns: a full group of 16, a
  // partial one; k: two blocks.
  const size_t m = kern_->m_step + 1, n = 16 + 7, k = 2 * bs;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(m * k), row(k);
  for (float& v : x) v = normal(rng);
  std::vector<uint8_t> w(n * file_row_bytes(type, k));
  for (size_t j = 0; j < n; ++j) {
    for (float& v : row) v = normal(rng) * 0.1f;
    kernels::ref::type_ops(type)->quantize_row(row.data(), w.data() + j * file_row_bytes(type, k), k);
  }
  // Packed once, at the starting length.
  std::vector<uint8_t> rhs = w;
  if (kern_->pack_rhs != nullptr) {
    rhs.assign(kern_->rhs_packed_size(n, k), 0);
    kern_->pack_rhs(n, k, w.data(), rhs.data());
  }
  std::vector<float> y_ref(m * n);
  {
    const MatmulKernel* ref = kernels::ref::ref_matmul_kernel(type);
    std::vector<uint8_t> lhs(ref->lhs_packed_size(m, k));
    ref->pack_lhs(m, k, x.data(), k, lhs.data());
    ref->run(m, n, k, lhs.data(), w.data(), y_ref.data(), n);
  }

  std::vector<uint8_t> first_lhs;
  std::vector<float> first_y;
  int first_bytes = 0;
  int tested = 0;
  for (int bytes : {16, 32, 48, 64, 128, 256}) {
    if (!set_vector_bytes(bytes)) continue;
    SCOPED_TRACE("SVE " + std::to_string(8 * bytes) + "-bit");
    std::vector<uint8_t> lhs(kern_->lhs_packed_size(m, k));
    kern_->pack_lhs(m, k, x.data(), k, lhs.data());
    std::vector<float> y(m * n, -1.0f);
    kern_->run(m, n, k, lhs.data(), rhs.data(), y.data(), n);
    ++tested;
    if (first_y.empty()) {
      first_lhs = lhs;
      first_y = y;
      first_bytes = bytes;
    }
    EXPECT_EQ(lhs, first_lhs) << "pack_lhs differs from its output at " << 8 * first_bytes << " bits";
    for (size_t i = 0; i < y.size(); ++i) {
      if (type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::F32) {
        // FP32 accumulation in a different number of lanes: within float
        // rounding of the reference (which sums in double).
        ASSERT_NEAR(y[i], y_ref[i], 1e-5 * (1 + std::fabs(y_ref[i]))) << "element " << i;
      } else {
        ASSERT_EQ(y[i], first_y[i]) << "element " << i << " differs from its value at " << 8 * first_bytes << " bits";
      }
    }
  }
  ASSERT_GT(tested, 0) << "the CPU accepted none of the vector lengths";
  std::printf("%s: %d vector lengths, packed at %d bits\n", kern_->name, tested, 8 * start_bytes_);
}

// The contract lets pack_rhs run on slices of n_step rows (rhs advanced by
// whole rows, rhs_packed by rhs_packed_offset): the same bytes as one call.
// And the packed weights are the file's bytes, padded to whole groups only.
TEST_P(SveVectorLength, PackingInSlicesWritesTheSameBytes) {
  if (kern_->pack_rhs == nullptr) GTEST_SKIP() << kern_->name << " reads the GGUF rows as they are";
  const GgmlType type = kern_->rhs_type;
  const size_t k = 2 * gguf::traits(type).block_size, n = 3 * kern_->n_step + 5;
  std::mt19937 rng(3);
  std::vector<uint8_t> w(n * file_row_bytes(type, k));
  for (auto& b : w) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> whole(kern_->rhs_packed_size(n, k), 0xCD), sliced(whole.size(), 0xCD);
  kern_->pack_rhs(n, k, w.data(), whole.data());
  for (size_t n0 = 0; n0 < n; n0 += kern_->n_step) {
    const size_t rows = n - n0 < kern_->n_step ? n - n0 : kern_->n_step;
    kern_->pack_rhs(rows, k, w.data() + n0 * file_row_bytes(type, k), sliced.data() + kern_->rhs_packed_offset(n0, k));
  }
  EXPECT_EQ(whole, sliced);
  for (size_t rows : {size_t{1}, kern_->n_step, size_t{4096 + 1}}) {
    const size_t groups = (rows + kern_->n_step - 1) / kern_->n_step;
    EXPECT_EQ(kern_->rhs_packed_size(rows, k), groups * kern_->n_step * file_row_bytes(type, k)) << "n=" << rows;
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SveVectorLength);
INSTANTIATE_TEST_SUITE_P(Registry, SveVectorLength, ::testing::ValuesIn(sve_kernels()),
                         [](const ::testing::TestParamInfo<const MatmulKernel*>& p) {
                           return std::string(p.param->name);
                         });

}  // namespace
