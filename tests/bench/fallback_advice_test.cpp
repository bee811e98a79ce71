// The advice run, bench and doctor give when a weight type runs below this
// CPU's tier: a quantize command to a type that has a kernel here, and the
// speed-up from measured times per weight. Every tier this build has now
// computes Q2_K, so the test puts it on the ref kernel below the CPU's tier,
// the plan of a CPU whose tier lacks it; a CPU with no tier above ref skips.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "engine/model/kernel_plan.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/registry.h"
#include "tests/support/shared_data.h"
#include "tools/common/fallback_advice.h"

namespace {

using gguf::GgmlType;

// A file with a Q2_K matrix (64 x 256), a Q6_K output (32 x 256) and Q2_K
// token embeddings, which a token does not multiply.
std::filesystem::path write_model(const std::filesystem::path& dir) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  const auto add = [&](const char* name, GgmlType type, uint64_t rows) {
    const std::vector<uint64_t> ne = {256, rows};
    static std::vector<std::vector<uint8_t>> keep;
    keep.emplace_back(*gguf::row_bytes(type, 256) * rows, uint8_t{0});
    w.add_tensor(name, type, ne, keep.back());
  };
  add("token_embd.weight", GgmlType::Q2_K, 1000);
  add("blk.0.ffn_down.weight", GgmlType::Q2_K, 64);
  add("output.weight", GgmlType::Q6_K, 32);
  const auto path = dir / "model.gguf";
  w.write(path.string());
  return path;
}

// A temporary folder removed however the test ends (a skip returns early).
struct TempDir {
  std::filesystem::path path = engine_test::temp_dir("advice");
  ~TempDir() { std::filesystem::remove_all(path); }
};

// Ten times slower on a fallback: the speed-up is then known exactly.
double fake_timer(const kernels::MatmulKernel& k) { return k.tier == kernels::Tier::ref ? 10e-9 : 1e-9; }

TEST(FallbackAdvice, NoneWhereEveryTypeRunsAtTheTier) {
  const TempDir tmp;
  const auto& dir = tmp.path;
  const auto path = write_model(dir);
  const gguf::File file = gguf::File::open(path.string());
  const std::vector<GgmlType> types = {GgmlType::Q4_0, GgmlType::Q8_0};
  const engine::KernelPlan plan = engine::plan_kernels(types);
  if (plan.has_fallback()) GTEST_SKIP() << "Q4_0 or Q8_0 is on a fallback on this CPU";
  EXPECT_TRUE(tools::advise_on_fallbacks(file, plan, path.string(), fake_timer).empty());
}

TEST(FallbackAdvice, AQuantizeCommandToATypeThatRunsHereWithTheSpeedup) {
  const TempDir tmp;
  const auto& dir = tmp.path;
  const auto path = write_model(dir);
  const gguf::File file = gguf::File::open(path.string());
  const std::vector<GgmlType> types = {GgmlType::Q2_K, GgmlType::Q6_K};
  engine::KernelPlan plan = engine::plan_kernels(types);
  for (kernels::MatmulSelection& s : plan.selections) {
    if (s.weight_type == GgmlType::Q2_K) s.kernel = kernels::ref::ref_matmul_kernel(GgmlType::Q2_K);
  }
  if (!plan.has_fallback()) GTEST_SKIP() << "no tier above ref on this CPU: ref is no fallback";
  if (plan.kernel_for(GgmlType::Q6_K)->tier == kernels::Tier::ref) GTEST_SKIP() << "Q6_K is on ref here too";

  const tools::FallbackAdvice advice = tools::advise_on_fallbacks(file, plan, path.string(), fake_timer);
  ASSERT_EQ(advice.slow_types, std::vector<std::string>{"Q2_K"});
  ASSERT_FALSE(advice.options.empty());
  const tools::QuantizeAdvice& first = advice.options.front();
  EXPECT_EQ(first.target, "Q4_K_M");
  EXPECT_EQ(first.command, "quantize --allow-requantize " + path.string() + " " + (dir / "model-Q4_K_M.gguf").string() +
                               " Q4_K_M");
  // 64 x 256 Q2_K weights at 10 ns and 32 x 256 Q6_K at 1 ns, against all at
  // 1 ns: (163840 + 8192) / (16384 + 8192) ns. The embeddings do not count.
  EXPECT_NEAR(first.matmul_ms_now, 1e-6 * (163840 + 8192), 1e-9);
  EXPECT_NEAR(first.matmul_ms_after, 1e-6 * (16384 + 8192), 1e-9);
  EXPECT_NEAR(first.speedup(), 7.0, 1e-9);

  const std::vector<std::string> lines = advice.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_NE(lines[0].find("slow weights: Q2_K on "), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(first.command + "  (matrix products about 7.0x faster"), std::string::npos) << lines[1];
  EXPECT_NE(lines.back().find("requantizing adds error"), std::string::npos) << lines.back();
}

// The measurement itself: a positive time per weight for a kernel this CPU
// runs (the one it picks for Q8_0).
TEST(FallbackAdvice, TimesAKernelPerWeight) {
  const kernels::MatmulSelection s = kernels::select_matmul(GgmlType::Q8_0, kernels::host_cpu_features(), std::nullopt);
  ASSERT_NE(s.kernel, nullptr);
  const double seconds = tools::time_per_weight(*s.kernel);
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 1e-6) << s.kernel->name;  // a microsecond a weight would be absurd even under qemu
}

}  // namespace
