// End to end against an independent engine: the random-weight llama, qwen2 and
// qwen3 models of ../shared/models/reference with llama.cpp's logits for a fixed
// token sequence, compared the way its README prescribes (47 rows: 32 prefill
// rows evaluated as one batch, 15 teacher-forced decode rows), within the
// tolerances of its manifest.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/model.h"
#include "engine/session.h"
#include "tests/support/json.h"
#include "tests/support/shared_data.h"

namespace {

using engine_test::Json;

struct Tolerance {
  double rel_max, top1_min, kld_max;
};

size_t argmax(const float* row, size_t n) { return static_cast<size_t>(std::max_element(row, row + n) - row); }

double kld(const float* ref, const float* eng, size_t n) {
  // KL(softmax(ref) || softmax(eng)) in nats, in double.
  auto log_softmax = [n](const float* x) {
    const double mx = *std::max_element(x, x + n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(x[i] - mx);
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = x[i] - mx - std::log(sum);
    return out;
  };
  const auto lr = log_softmax(ref);
  const auto le = log_softmax(eng);
  double k = 0;
  for (size_t i = 0; i < n; ++i) k += std::exp(lr[i]) * (lr[i] - le[i]);
  return k;
}

class ReferenceLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceLogits, AgreesWithLlamaCppWithinTheManifestTolerances) {
  ENGINE_REQUIRE_SHARED(manifest_path, "models/reference/manifest.json");
  const Json manifest = Json::parse_file(manifest_path);
  const std::string name = GetParam();
  const Json* entry = nullptr;
  for (const Json& f : manifest["files"].array()) {
    if (f["file"].string() == name + ".gguf") entry = &f;
  }
  ASSERT_NE(entry, nullptr) << name << " is not in manifest.json";
  const Json& tol_json = manifest["tolerances"][(*entry)["type"].string()];
  const Tolerance tol{tol_json["rel_max"].number(), tol_json["top1_min_frac"].number(),
                      tol_json["kld_mean_max"].number()};
  const auto dir = manifest_path.parent_path();
  const Json ref = Json::parse_file(dir / (*entry)["reference"].string());
  const std::vector<int32_t> tokens = ref["tokens"].ints();
  const std::vector<int32_t> greedy = ref["greedy"].ints();

  const auto model = engine::Model::load((dir / (name + ".gguf")).string());
  const size_t n_vocab = model->config().n_vocab;
  ASSERT_EQ(n_vocab, static_cast<size_t>(ref["n_vocab"].number()));
  // As the reference ran: F32 KV cache, one batch of 32 tokens.
  engine::Session session(*model, {.n_ctx = 256, .n_batch = 32, .kv_type = engine::KvType::f32});

  std::vector<std::vector<float>> engine_rows, ref_rows;
  session.eval(tokens, /*all_logits=*/true);
  for (size_t p = 0; p < tokens.size(); ++p) {
    engine_rows.emplace_back(session.logits().begin() + p * n_vocab, session.logits().begin() + (p + 1) * n_vocab);
    ref_rows.push_back(ref["logits"][p].floats());
  }
  for (size_t i = 1; i < greedy.size(); ++i) {  // teacher-forced decode
    const int32_t t = greedy[i - 1];
    session.eval({&t, 1});
    engine_rows.emplace_back(session.logits().begin(), session.logits().end());
    ref_rows.push_back(ref["greedy_logits"][i].floats());
  }
  ASSERT_EQ(engine_rows.size(), 47u);

  double max_ref = 0, max_diff = 0, kld_sum = 0;
  for (size_t r = 0; r < ref_rows.size(); ++r) {
    for (size_t j = 0; j < n_vocab; ++j) {
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref_rows[r][j])));
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(engine_rows[r][j]) - ref_rows[r][j]));
    }
  }
  size_t agree = 0;
  for (size_t r = 0; r < ref_rows.size(); ++r) {
    const size_t e = argmax(engine_rows[r].data(), n_vocab);
    const size_t k = argmax(ref_rows[r].data(), n_vocab);
    const bool near_tie = ref_rows[r][k] - ref_rows[r][e] <= 2 * tol.rel_max * max_ref;
    agree += (e == k || near_tie) ? 1 : 0;
    kld_sum += kld(ref_rows[r].data(), engine_rows[r].data(), n_vocab);
  }
  const double rel_max = max_diff / max_ref;
  const double top1 = static_cast<double>(agree) / static_cast<double>(ref_rows.size());
  const double kld_mean = kld_sum / static_cast<double>(ref_rows.size());
  std::printf("%s: rel_max %.3g (tol %.3g), top1 %.3f (min %.2f), kld_mean %.3g (max %.3g)\n", name.c_str(), rel_max,
              tol.rel_max, top1, tol.top1_min, kld_mean, tol.kld_max);
  EXPECT_LE(rel_max, tol.rel_max);
  EXPECT_GE(top1, tol.top1_min);
  EXPECT_LE(kld_mean, tol.kld_max);

  // Free-running greedy: equal up to the first step whose reference margin is
  // within the tolerance (a near-tie, after which sequences may part).
  engine::Session free_run(*model, {.n_ctx = 256, .n_batch = 32, .kv_type = engine::KvType::f32});
  free_run.eval(tokens);
  const Json& top5 = ref["greedy_logits_top5"];
  for (size_t i = 0; i < greedy.size(); ++i) {
    const double margin = top5[i][0][1].number() - top5[i][1][1].number();
    if (margin < 2 * tol.rel_max * max_ref) break;
    const auto next = static_cast<int32_t>(argmax(free_run.logits().data(), n_vocab));
    ASSERT_EQ(next, greedy[i]) << "greedy step " << i;
    free_run.eval({&next, 1});
  }
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
