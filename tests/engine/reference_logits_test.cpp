// End to end against an independent engine: the random-weight llama, qwen2 and
// qwen3 models of ../shared/models/reference with llama.cpp's logits for a fixed
// token sequence, compared the way its README prescribes (tests/support/
// logit_compare.h) within the tolerances of its manifest.json.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/json.h"
#include "tests/support/logit_compare.h"
#include "tests/support/shared_data.h"

namespace {

class ReferenceLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceLogits, AgreesWithLlamaCppWithinTheManifestTolerances) {
  ENGINE_REQUIRE_SHARED(manifest_path, "models/reference/manifest.json");
  const std::string name = GetParam();
  const engine_test::ReferenceEntry entry = engine_test::reference_entry(manifest_path, name);
  const engine_test::Json ref = engine_test::Json::parse_file(entry.reference);
  const engine_test::LogitComparison c = engine_test::compare_logits(entry.model.string(), ref, entry.tol);
  std::printf("%s: %s\n", name.c_str(), c.describe(entry.tol).c_str());
  EXPECT_EQ(c.rows, 47u);
  EXPECT_TRUE(c.all_finite);
  EXPECT_LE(c.rel_max, entry.tol.rel_max);
  EXPECT_GE(c.top1, entry.tol.top1_min);
  EXPECT_LE(c.kld_mean, entry.tol.kld_max);
  EXPECT_EQ(c.greedy_mismatch, -1) << "free-running greedy differs before the first near-tie";
}

INSTANTIATE_TEST_SUITE_P(
    Models, ReferenceLogits,
    ::testing::Values("llama-d256-F32", "llama-d256-F16", "llama-d256-Q8_0", "llama-d256-Q4_0", "llama-d256-Q4_K_M",
                      "qwen2-d256-F32", "qwen2-d256-F16", "qwen2-d256-Q8_0", "qwen2-d256-Q4_0", "qwen2-d256-Q4_K_M",
                      "qwen3-d256-F32", "qwen3-d256-F16", "qwen3-d256-Q8_0", "qwen3-d256-Q4_0", "qwen3-d256-Q4_K_M"),
    [](const ::testing::TestParamInfo<std::string>& param) {
      std::string s = param.param;
      std::replace(s.begin(), s.end(), '-', '_');
      return s;
    });

}  // namespace
