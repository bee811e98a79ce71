// The C API: a whole generation through it, and misuse that must come back as
// an error code with a message, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/support/log.h"
#include "tests/support/json.h"
#include "tests/support/shared_data.h"

namespace {

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    model_path_ = engine_test::default_model();
    ASSERT_EQ(engine_model_load(model_path_.c_str(), &model_), ENGINE_OK) << engine_last_error();
  }
  void TearDown() override {
    if (model_ != nullptr) {
      EXPECT_EQ(engine_model_free(model_), ENGINE_OK) << engine_last_error();
    }
    engine::set_log_level(engine::LogLevel::info);
  }
  engine_session* new_session() {
    engine_session_params p = engine_session_default_params();
    p.n_ctx = 64;
    p.n_threads = 2;
    engine_session* s = nullptr;
    EXPECT_EQ(engine_session_create(model_, &p, &s), ENGINE_OK) << engine_last_error();
    return s;
  }
  std::filesystem::path model_path_;
  engine_model* model_ = nullptr;
};

// The API reports where each of the session's threads runs; on this machine
// pinning works, so every worker is pinned to the CPU it asked for, and thread
// 0, the app's own, is left alone.
TEST_F(CApi, ReportsWhereEachThreadRuns) {
  engine_session* s = new_session();
  ASSERT_NE(s, nullptr);
  int32_t bos = engine_model_bos(model_);
  ASSERT_EQ(engine_prefill(s, &bos, 1), ENGINE_OK) << engine_last_error();
  size_t n = 0;
  EXPECT_EQ(engine_session_workers(s, nullptr, 0, &n), ENGINE_ERR_BUFFER_TOO_SMALL);
  ASSERT_GE(n, 1u);
  std::vector<engine_worker_info> workers(n);
  ASSERT_EQ(engine_session_workers(s, workers.data(), workers.size(), &n), ENGINE_OK) << engine_last_error();
  EXPECT_EQ(workers[0].pin, ENGINE_PIN_NOT_PINNED);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(workers[i].thread, static_cast<int32_t>(i));
    if (workers[i].pin == ENGINE_PIN_PINNED) {
      EXPECT_GE(workers[i].cpu_asked, 0);
      EXPECT_EQ(workers[i].pin_errno, 0);
      EXPECT_EQ(workers[i].last_cpu, workers[i].cpu_asked);
    } else if (workers[i].pin == ENGINE_PIN_FAILED) {
      EXPECT_NE(workers[i].pin_errno, 0);
    }
  }
  EXPECT_EQ(engine_session_workers(s, nullptr, 0, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  EXPECT_EQ(engine_session_workers(s, workers.data(), workers.size(), &n), ENGINE_ERR_INVALID_HANDLE);
}

TEST_F(CApi, GreedyGenerationMatchesTheReference) {
  ENGINE_REQUIRE_SHARED(expected_path, "models/expected/stories260K.expected.json");
  const auto expected = engine_test::Json::parse_file(expected_path)["derived_by_fp64_reference_forward_pass"];
  const std::vector<int32_t> want = expected["greedy_from_bos_200_token_ids"].ints();

  EXPECT_EQ(engine_model_n_vocab(model_), 512);
  EXPECT_EQ(engine_model_bos(model_), 1);
  EXPECT_TRUE(engine_model_add_bos(model_));  // stories260K (llama) starts its prompts with BOS
  int32_t tokens[8];
  size_t n = 0;
  ASSERT_EQ(engine_tokenize(model_, "", 0, true, false, tokens, 8, &n), ENGINE_OK);
  ASSERT_EQ(n, 1u);
  engine_session* s = new_session();
  engine_sampler_params sp = engine_sampler_default_params();
  sp.temperature = 0.0f;
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(&sp, &sampler), ENGINE_OK);
  ASSERT_EQ(engine_prefill(s, tokens, n), ENGINE_OK);
  for (size_t i = 0; i < 30; ++i) {
    int32_t t = -1;
    ASSERT_EQ(engine_sample(sampler, s, &t), ENGINE_OK) << engine_last_error();
    ASSERT_EQ(t, want[i]) << "step " << i;
    ASSERT_EQ(engine_decode(s, t), ENGINE_OK);
  }
  EXPECT_EQ(engine_session_n_past(s), 31u);
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

// Detokenizing a tokenized text gives the text back: BOS is nothing, and the
// space SentencePiece puts before the first word is dropped (joining the
// pieces gives " Once upon ...").
TEST_F(CApi, DetokenizeGivesTheTextBack) {
  const std::string text = "Once upon a time, there was a little girl.";
  int32_t tokens[64];
  size_t n = 0;
  ASSERT_EQ(engine_tokenize(model_, text.data(), text.size(), true, false, tokens, 64, &n), ENGINE_OK);
  char out[128];
  size_t len = 0;
  ASSERT_EQ(engine_detokenize(model_, tokens, n, out, sizeof out, &len), ENGINE_OK) << engine_last_error();
  EXPECT_EQ(std::string(out, len), text);
  std::string joined;
  for (size_t i = 0; i < n; ++i) {
    char piece[32];
    size_t plen = 0;
    ASSERT_EQ(engine_token_to_piece(model_, tokens[i], piece, sizeof piece, &plen), ENGINE_OK);
    joined.append(piece, plen);
  }
  EXPECT_EQ(joined, " " + text);
  EXPECT_EQ(engine_detokenize(model_, tokens, n, out, 5, &len), ENGINE_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, text.size());
  EXPECT_EQ(engine_detokenize(model_, tokens, 0, nullptr, 0, &len), ENGINE_OK);
  EXPECT_EQ(len, 0u);
}

TEST_F(CApi, TheCppWrapperGivesTheSameText) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = 64;
  p.n_threads = 1;
  const std::string path = model_path_.string();
  engine::api::Model model(path);
  engine::api::Session session(model, p);
  engine_sampler_params sp = engine_sampler_default_params();
  sp.temperature = 0.0f;
  engine::api::Sampler sampler(sp);
  session.prefill(model.tokenize("Once upon a time", true));
  std::string text;
  for (int i = 0; i < 12; ++i) {
    const int32_t t = sampler.sample(session);
    text += model.piece(t);
    session.decode(t);
  }
  EXPECT_EQ(text.rfind(", there was a little girl named Lily.", 0), 0u) << text;
  EXPECT_EQ(model.detokenize(model.tokenize("Once upon a time", true)), "Once upon a time");
  EXPECT_THROW(engine::api::Model("/nonexistent.gguf"), engine::api::Error);
}

TEST_F(CApi, NullAndFreedHandlesAreErrors) {
  engine_session* s = new_session();
  ASSERT_EQ(engine_session_free(s), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_ERR_INVALID_HANDLE);  // double free
  EXPECT_NE(std::string(engine_last_error()).find("invalid, freed or null handle"), std::string::npos);
  const int32_t t = 1;
  EXPECT_EQ(engine_prefill(s, &t, 1), ENGINE_ERR_INVALID_HANDLE);  // use after free
  EXPECT_EQ(engine_prefill(nullptr, &t, 1), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_session_free(nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_model_free(nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_model_n_vocab(nullptr), -1);
  auto* fake = reinterpret_cast<engine_model*>(&s);  // a pointer that was never a handle
  EXPECT_EQ(engine_model_n_vocab(fake), -1);
  engine_session* out = nullptr;
  EXPECT_EQ(engine_session_create(fake, nullptr, &out), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(engine_model_load(nullptr, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
}

TEST_F(CApi, WrongOrderAndBadArgumentsAreErrors) {
  engine_session* s = new_session();
  const float* logits = nullptr;
  size_t n = 0;
  EXPECT_EQ(engine_logits(s, &logits, &n), ENGINE_ERR_STATE);  // before any evaluation
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(nullptr, &sampler), ENGINE_OK);
  int32_t t = 0;
  EXPECT_EQ(engine_sample(sampler, s, &t), ENGINE_ERR_STATE);
  EXPECT_EQ(engine_decode(s, 512), ENGINE_ERR_INVALID_ARGUMENT);  // outside the vocabulary
  EXPECT_NE(std::string(engine_last_error()).find("outside the vocabulary"), std::string::npos);
  EXPECT_EQ(engine_decode(s, -1), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_prefill(s, nullptr, 3), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_model_free(model_), ENGINE_ERR_IN_USE);  // the session still uses it
  int32_t few[2];
  size_t needed = 0;
  const char* text = "Once upon a time there was";
  EXPECT_EQ(engine_tokenize(model_, text, std::strlen(text), true, false, few, 2, &needed), ENGINE_ERR_BUFFER_TOO_SMALL);
  EXPECT_GT(needed, 2u);
  engine_sampler_params bad = engine_sampler_default_params();
  bad.top_p = -1.0f;
  engine_sampler* bad_sampler = nullptr;
  EXPECT_EQ(engine_sampler_create(&bad, &bad_sampler), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(bad_sampler, nullptr);
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

TEST_F(CApi, AFullContextIsAnError) {
  engine_session* s = new_session();  // n_ctx 64
  std::vector<int32_t> many(65, 1);
  EXPECT_EQ(engine_prefill(s, many.data(), many.size()), ENGINE_ERR_CONTEXT_FULL);
  EXPECT_EQ(engine_prefill(s, many.data(), 64), ENGINE_OK);
  EXPECT_EQ(engine_decode(s, 1), ENGINE_ERR_CONTEXT_FULL);
  EXPECT_NE(std::string(engine_last_error()).find("context full"), std::string::npos);
  EXPECT_EQ(engine_session_reset(s), ENGINE_OK);
  EXPECT_EQ(engine_decode(s, 1), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

TEST(CApiLoad, ABadFileIsAModelError) {
  engine_model* m = nullptr;
  EXPECT_EQ(engine_model_load("/nonexistent/model.gguf", &m), ENGINE_ERR_MODEL);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(engine_last_error()).find("/nonexistent/model.gguf: cannot open"), std::string::npos);
  ENGINE_REQUIRE_SHARED(v1, "models/legacy/tinyllamas-stories-260k-f32.gguf");
  EXPECT_EQ(engine_model_load(v1.c_str(), &m), ENGINE_ERR_MODEL);
  EXPECT_NE(std::string(engine_last_error()).find("unsupported GGUF version 1"), std::string::npos);
}

}  // namespace
