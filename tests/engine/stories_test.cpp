// stories260K.gguf (a real trained model) against the documented outputs in
// ../shared/models/expected/stories260K.expected.json: the greedy 200 tokens
// from BOS (whose decoded text is llama2.c's documented text byte for byte) and
// the fp64 reference logits after BOS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/support/error.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "tests/support/json.h"
#include "tests/support/shared_data.h"

namespace {

using engine_test::Json;

TEST(Stories260K, GreedyFromBosMatchesTheReference) {
  const std::filesystem::path model_path = ::engine_test::default_model();
  ENGINE_REQUIRE_SHARED(expected_path, "models/expected/stories260K.expected.json");
  const Json expected = Json::parse_file(expected_path)["derived_by_fp64_reference_forward_pass"];
  const std::vector<int32_t> ids = expected["greedy_from_bos_200_token_ids"].ints();
  ASSERT_EQ(ids.size(), 200u);

  const auto model = engine::Model::load(model_path.string());
  engine::Session s(*model, {.n_ctx = 256, .kv_type = engine::KvType::f32});
  const int32_t bos = 1;
  s.eval({&bos, 1});

  // Logits after BOS against the fp64 reference, to 1e-4 relative.
  const auto logits = s.logits();
  for (const Json& pair : expected["pos0_after_bos_top5_logits"].array()) {
    const auto id = static_cast<size_t>(pair[0].number());
    const double want = pair[1].number();
    EXPECT_NEAR(logits[id], want, 1e-4 * std::fabs(want)) << "token " << id;
  }

  std::vector<int32_t> got;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto next = static_cast<int32_t>(std::max_element(s.logits().begin(), s.logits().end()) - s.logits().begin());
    got.push_back(next);
    s.eval({&next, 1});
  }
  EXPECT_EQ(got, ids);
}

// The repository's copy (models/, for the quickstart from a bare clone) is the
// file the references in ../shared were made from, byte for byte.
TEST(Stories260K, TheDefaultModelIsTheReferenceFile) {
  ENGINE_REQUIRE_SHARED(shared_path, "models/stories260K.gguf");
  const auto read_all = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string bundled = read_all(engine_test::default_model());
  ASSERT_EQ(bundled.size(), 1185376u) << engine_test::default_model();
  EXPECT_TRUE(bundled == read_all(shared_path)) << engine_test::default_model() << " differs from " << shared_path;
}

TEST(Stories260K, PromptInOneBatchEqualsTokenByToken) {
  const std::filesystem::path model_path = ::engine_test::default_model();
  const auto model = engine::Model::load(model_path.string());
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376};
  engine::Session batch(*model, {.n_ctx = 64, .kv_type = engine::KvType::f32});
  batch.eval(prompt, /*all_logits=*/true);
  engine::Session single(*model, {.n_ctx = 64, .kv_type = engine::KvType::f32});
  const size_t n_vocab = model->config().n_vocab;
  for (size_t i = 0; i < prompt.size(); ++i) {
    single.eval({&prompt[i], 1});
    for (size_t j = 0; j < n_vocab; ++j) {
      ASSERT_NEAR(single.logits()[j], batch.logits()[i * n_vocab + j], 1e-4f) << "position " << i << " token " << j;
    }
  }
}

TEST(Stories260K, ContextOverflowAndBadTokensAreErrors) {
  const std::filesystem::path model_path = ::engine_test::default_model();
  const auto model = engine::Model::load(model_path.string());
  engine::Session s(*model, {.n_ctx = 4});
  const std::vector<int32_t> five = {1, 2, 3, 4, 5};
  EXPECT_THROW(s.eval(five), engine::Error);
  EXPECT_EQ(s.n_past(), 0u);
  const std::vector<int32_t> bad = {1, 512};
  EXPECT_THROW(s.eval(bad), engine::Error);
  const std::vector<int32_t> four = {1, 2, 3, 4};
  s.eval(four);
  EXPECT_EQ(s.n_past(), 4u);
  const int32_t one = 5;
  try {
    s.eval({&one, 1});
    FAIL();
  } catch (const engine::Error& e) {
    EXPECT_STREQ(e.what(), "context full: 4 tokens in a context of 4, 1 more do not fit");
  }
}

}  // namespace
