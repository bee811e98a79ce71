// The C API under misuse and hostile input (issue 8, items 3 and 4): every
// case is an error code and a message, never an abort, and the handles stay
// sound: a freed handle is refused even after new ones were made, a session is
// used by one thread at a time, a model with sessions is not freed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/api/engine.h"
#include "engine/support/log.h"
#include "tests/engine/model_edit.h"
#include "tests/support/shared_data.h"

namespace {

#define EXPECT_CONTAINS(text, needle) EXPECT_NE(std::string(text).find(needle), std::string::npos) << (text)

class CApiMisuse : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    path_ = engine_test::default_model();
    ASSERT_EQ(engine_model_load(path_.c_str(), &model_), ENGINE_OK) << engine_last_error();
  }
  void TearDown() override {
    if (model_ != nullptr) {
      EXPECT_EQ(engine_model_free(model_), ENGINE_OK) << engine_last_error();
    }
    engine::set_log_level(engine::LogLevel::info);
  }
  engine_session* session(uint32_t n_ctx = 64, int32_t n_threads = 1) {
    engine_session_params p = engine_session_default_params();
    p.n_ctx = n_ctx;
    p.n_threads = n_threads;
    engine_session* s = nullptr;
    EXPECT_EQ(engine_session_create(model_, &p, &s), ENGINE_OK) << engine_last_error();
    return s;
  }
  std::filesystem::path path_;
  engine_model* model_ = nullptr;
};

// The allocator may give a new session the freed one's memory; the freed
// handle must still be refused, and must not free the new session.
TEST_F(CApiMisuse, AFreedHandleStaysInvalidAfterNewOnes) {
  engine_session* old_session = session();
  ASSERT_EQ(engine_session_free(old_session), ENGINE_OK);
  std::vector<engine_session*> fresh;
  for (int i = 0; i < 8; ++i) fresh.push_back(session());
  for (engine_session* s : fresh) ASSERT_NE(s, old_session) << "a handle was given out twice";
  EXPECT_EQ(engine_session_free(old_session), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_CONTAINS(engine_last_error(), "engine_session_free: invalid, freed or null handle");
  const int32_t bos = 1;
  EXPECT_EQ(engine_prefill(old_session, &bos, 1), ENGINE_ERR_INVALID_HANDLE);
  for (engine_session* s : fresh) {
    EXPECT_EQ(engine_prefill(s, &bos, 1), ENGINE_OK) << engine_last_error();
    EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  }
  // A handle of another kind is refused too.
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(nullptr, &sampler), ENGINE_OK);
  EXPECT_EQ(engine_session_free(reinterpret_cast<engine_session*>(sampler)), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_model_free(reinterpret_cast<engine_model*>(sampler)), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_ERR_INVALID_HANDLE);
}

// Each function names itself in its message: engine_decode on a freed session
// once reported "engine_prefill: invalid, freed or null handle".
TEST_F(CApiMisuse, EveryFunctionNamesItselfOnAFreedHandle) {
  engine_session* s = session();
  ASSERT_EQ(engine_session_free(s), ENGINE_OK);
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(nullptr, &sampler), ENGINE_OK);
  ASSERT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  engine_model* model = nullptr;
  ASSERT_EQ(engine_model_load(path_.c_str(), &model), ENGINE_OK) << engine_last_error();
  ASSERT_EQ(engine_model_free(model), ENGINE_OK);
  int32_t token = 1;
  size_t n = 0;
  const float* logits = nullptr;
  engine_worker_info info{};
  engine_kv_info kv{};
  engine_memory_info mem{};
  char piece[8];
  engine_session* out = nullptr;
  engine_sampler* live = nullptr;  // engine_sample checks the sampler first
  ASSERT_EQ(engine_sampler_create(nullptr, &live), ENGINE_OK);
  const std::vector<std::pair<std::string, std::function<engine_status()>>> calls = {
      {"engine_prefill", [&] { return engine_prefill(s, &token, 1); }},
      {"engine_decode", [&] { return engine_decode(s, token); }},
      {"engine_logits", [&] { return engine_logits(s, &logits, &n); }},
      {"engine_session_reset", [&] { return engine_session_reset(s); }},
      {"engine_session_workers", [&] { return engine_session_workers(s, &info, 1, &n); }},
      {"engine_session_kv_info", [&] { return engine_session_kv_info(s, &kv); }},
      {"engine_session_memory_info", [&] { return engine_session_memory_info(s, &mem); }},
      {"engine_session_free", [&] { return engine_session_free(s); }},
      {"engine_sample (session)", [&] { return engine_sample(live, s, &token); }},
      {"engine_sample (sampler)", [&] { return engine_sample(sampler, s, &token); }},
      {"engine_sampler_accept", [&] { return engine_sampler_accept(sampler, token); }},
      {"engine_sampler_free", [&] { return engine_sampler_free(sampler); }},
      {"engine_tokenize", [&] { return engine_tokenize(model, "a", 1, false, false, &token, 1, &n); }},
      {"engine_token_to_piece", [&] { return engine_token_to_piece(model, 1, piece, sizeof piece, &n); }},
      {"engine_detokenize", [&] { return engine_detokenize(model, &token, 1, piece, sizeof piece, &n); }},
      {"engine_session_create", [&] { return engine_session_create(model, nullptr, &out); }},
      {"engine_model_free", [&] { return engine_model_free(model); }},
  };
  for (const auto& [name, call] : calls) {
    EXPECT_EQ(call(), ENGINE_ERR_INVALID_HANDLE) << name;
    EXPECT_EQ(std::string(engine_last_error()).rfind(name + ": invalid, freed or null handle", 0), 0u)
        << name << " said: " << engine_last_error();
  }
  EXPECT_EQ(engine_sampler_free(live), ENGINE_OK);
}

TEST_F(CApiMisuse, NullPointersEverywhere) {
  engine_session* s = session();
  const int32_t bos = 1;
  size_t n = 0;
  EXPECT_EQ(engine_tokenize(nullptr, "a", 1, false, false, nullptr, 0, &n), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_tokenize(model_, nullptr, 5, false, false, nullptr, 0, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_tokenize(model_, "a", 1, false, false, nullptr, 4, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_tokenize(model_, "a", 1, false, false, nullptr, 0, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_token_to_piece(model_, 5, nullptr, 4, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_token_to_piece(model_, 100000, nullptr, 0, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_detokenize(model_, nullptr, 2, nullptr, 0, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_detokenize(model_, &bos, 1, nullptr, 4, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_detokenize(model_, &bos, 1, nullptr, 0, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  const int32_t outside = 100000;
  EXPECT_EQ(engine_detokenize(model_, &outside, 1, nullptr, 0, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_logits(s, nullptr, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_logits(nullptr, nullptr, nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_sample(nullptr, s, nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_session_create(model_, nullptr, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_sampler_create(nullptr, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_sampler_accept(nullptr, 1), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_session_reset(nullptr), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_session_n_past(nullptr), 0u);
  EXPECT_EQ(engine_model_bos(nullptr), -1);
  EXPECT_FALSE(engine_model_add_bos(nullptr));
  EXPECT_FALSE(engine_model_is_end_of_generation(nullptr, 2));
  EXPECT_EQ(engine_prefill(s, &bos, 0), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_session_memory_info(s, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

// A session used from two threads at once: one call runs, the other gets
// ENGINE_ERR_BUSY (always, not only in debug builds), and the session is sound
// afterwards. Only the worker changes the context (reset, then a prompt of half
// of it), so its prompts always fit; the main thread asks for the logits, a
// call that claims the session without evaluating, so it cannot crowd the
// worker out of the context (it did when it decoded: under qemu its tokens
// filled the context and every prompt of the worker failed).
TEST_F(CApiMisuse, ASessionUsedFromTwoThreadsAtOnceIsBusy) {
  engine_session* s = session(/*n_ctx=*/512, /*n_threads=*/1);
  const std::vector<int32_t> prompt(256, 1);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::thread worker([&] {
    while (!stop.load()) {
      while (engine_session_reset(s) == ENGINE_ERR_BUSY) {
      }
      const engine_status st = engine_prefill(s, prompt.data(), prompt.size());
      if (st == ENGINE_OK) {
        ++ok;
      } else if (st != ENGINE_ERR_BUSY) {
        ++failed;
      }
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int busy_here = 0;
  std::string message;
  while (busy_here == 0 && std::chrono::steady_clock::now() < deadline) {
    const float* logits = nullptr;
    size_t n_vocab = 0;
    if (engine_logits(s, &logits, &n_vocab) == ENGINE_ERR_BUSY) {
      ++busy_here;
      message = engine_last_error();
    }
  }
  stop.store(true);
  worker.join();
  EXPECT_GT(busy_here, 0) << "never saw the other thread inside a call";
  EXPECT_EQ(message, "engine_logits: the session is in use by another thread");
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(engine_session_reset(s), ENGINE_OK);
  EXPECT_EQ(engine_decode(s, 1), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

// A model is read-only: many threads may tokenize and create sessions on it at
// once, and it cannot be freed under them.
TEST_F(CApiMisuse, AModelIsSharedAndNotFreedUnderItsUsers) {
  constexpr int kThreads = 4;
  std::atomic<int> ready{0}, failures{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      engine_session_params p = engine_session_default_params();
      p.n_ctx = 16;
      p.n_threads = 1;
      engine_session* held = nullptr;
      if (engine_session_create(model_, &p, &held) != ENGINE_OK) ++failures;
      ++ready;
      while (!go.load()) std::this_thread::yield();
      for (int j = 0; j < 20; ++j) {
        int32_t ids[64];
        size_t n = 0;
        if (engine_tokenize(model_, "Once upon a time", 16, true, false, ids, 64, &n) != ENGINE_OK) ++failures;
        engine_session* s = nullptr;
        if (engine_session_create(model_, &p, &s) != ENGINE_OK || engine_session_free(s) != ENGINE_OK) ++failures;
      }
      if (engine_session_free(held) != ENGINE_OK) ++failures;
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  go.store(true);
  // While the threads tokenize and create sessions: never freed under them.
  for (int k = 0; k < 200; ++k) {
    const engine_status st = engine_model_free(model_);
    ASSERT_TRUE(st == ENGINE_ERR_IN_USE || st == ENGINE_ERR_BUSY) << engine_status_name(st);
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(CApiMisuse, WrongOrderOfCalls) {
  engine_session* s = session();
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(nullptr, &sampler), ENGINE_OK);
  int32_t t = -1;
  const float* logits = nullptr;
  size_t n = 0;
  // Sampling and logits before any evaluation, and after a reset.
  EXPECT_EQ(engine_sample(sampler, s, &t), ENGINE_ERR_STATE);
  EXPECT_CONTAINS(engine_last_error(), "engine_sample: no logits");
  const int32_t bos = 1;
  ASSERT_EQ(engine_prefill(s, &bos, 1), ENGINE_OK);
  ASSERT_EQ(engine_session_reset(s), ENGINE_OK);
  EXPECT_EQ(engine_logits(s, &logits, &n), ENGINE_ERR_STATE);
  // After a failed evaluation (context full) there are no logits either.
  ASSERT_EQ(engine_prefill(s, &bos, 1), ENGINE_OK);
  const std::vector<int32_t> too_many(64, 1);
  EXPECT_EQ(engine_prefill(s, too_many.data(), too_many.size()), ENGINE_ERR_CONTEXT_FULL);
  EXPECT_EQ(engine_logits(s, &logits, &n), ENGINE_ERR_STATE);
  EXPECT_EQ(engine_session_n_past(s), 1u);
  // Freeing the model before its session is refused; the other way round works.
  EXPECT_EQ(engine_model_free(model_), ENGINE_ERR_IN_USE);
  EXPECT_CONTAINS(engine_last_error(), "the model still has 1 session(s)");
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

// Prompts: empty, longer than the context, with NULs and ill-formed UTF-8.
TEST_F(CApiMisuse, HostilePrompts) {
  engine_session* s = session(/*n_ctx=*/32);
  int32_t ids[1024];
  size_t n = 99;
  // Empty without BOS: no tokens, and prefill of nothing is an argument error.
  ASSERT_EQ(engine_tokenize(model_, "", 0, false, false, ids, 1024, &n), ENGINE_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(engine_prefill(s, ids, n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(engine_last_error(), "engine_prefill: no tokens");
  // Longer than the context: refused as a whole, nothing evaluated.
  const std::string long_text(400, 'x');
  ASSERT_EQ(engine_tokenize(model_, long_text.data(), long_text.size(), true, false, ids, 1024, &n), ENGINE_OK);
  ASSERT_GT(n, 32u);
  EXPECT_EQ(engine_prefill(s, ids, n), ENGINE_ERR_CONTEXT_FULL);
  EXPECT_CONTAINS(engine_last_error(), "context full: 0 tokens in a context of 32");
  EXPECT_EQ(engine_session_n_past(s), 0u);
  // NULs and ill-formed UTF-8: tokenized byte by byte, evaluated, sampled.
  const char text[] = "Once\0upon\xFF\xFE a \xC3(time";
  ASSERT_EQ(engine_tokenize(model_, text, sizeof text - 1, true, false, ids, 1024, &n), ENGINE_OK);
  ASSERT_GT(n, 5u);
  ASSERT_EQ(engine_prefill(s, ids, n), ENGINE_OK) << engine_last_error();
  engine_sampler_params sp = engine_sampler_default_params();
  sp.seed = 5;
  engine_sampler* sampler = nullptr;
  ASSERT_EQ(engine_sampler_create(&sp, &sampler), ENGINE_OK);
  int32_t t = -1;
  EXPECT_EQ(engine_sample(sampler, s, &t), ENGINE_OK);
  EXPECT_TRUE(t >= 0 && t < engine_model_n_vocab(model_));
  EXPECT_EQ(engine_sampler_free(sampler), ENGINE_OK);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
}

// A session that would not fit in memory is refused before anything is
// allocated, with the numbers.
TEST_F(CApiMisuse, ASessionLargerThanMemoryIsRefused) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = 4000000000u;
  p.n_threads = 1;
  engine_session* s = nullptr;
  EXPECT_EQ(engine_session_create(model_, &p, &s), ENGINE_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(s, nullptr);
  EXPECT_CONTAINS(engine_last_error(), "session: n_ctx 4000000000 with n_batch 512 needs ");
  EXPECT_CONTAINS(engine_last_error(), " are available (");
}

// Models that are files but not usable models: ENGINE_ERR_MODEL with the file
// and the problem; and a model that produces NaN: the layer is named.
TEST_F(CApiMisuse, BadModelsAreModelErrors) {
  const std::filesystem::path dir = engine_test::temp_dir("c-api-misuse");
  const std::string mismatch = (dir / "mismatch.gguf").string();
  engine_test::write_edited(path_, mismatch, {.metadata = [](gguf::Writer& w) { w.set_u32("llama.feed_forward_length", 100); }});
  engine_model* m = nullptr;
  EXPECT_EQ(engine_model_load(mismatch.c_str(), &m), ENGINE_ERR_MODEL);
  EXPECT_CONTAINS(engine_last_error(), "mismatch.gguf: tensor 'blk.0.ffn_gate.weight' has shape [64, 172], expected [64, 100]");

  const std::string nan = (dir / "nan.gguf").string();
  engine_test::write_edited(path_, nan, {.f32_tensors = {{"blk.3.attn_norm.weight", [](float* v, size_t) { v[0] = NAN; }}}});
  ASSERT_EQ(engine_model_load(nan.c_str(), &m), ENGINE_OK) << engine_last_error();
  engine_session_params p = engine_session_default_params();
  p.n_ctx = 16;
  p.n_threads = 1;
  engine_session* s = nullptr;
  ASSERT_EQ(engine_session_create(m, &p, &s), ENGINE_OK);
  const int32_t bos = 1;
  EXPECT_EQ(engine_prefill(s, &bos, 1), ENGINE_ERR_MODEL);
  EXPECT_CONTAINS(engine_last_error(), "nan.gguf: layer 3 (blk.3.*) produced NaN in the residual stream (position 0");
  const float* logits = nullptr;
  size_t n = 0;
  EXPECT_EQ(engine_logits(s, &logits, &n), ENGINE_ERR_STATE);
  EXPECT_EQ(engine_session_n_past(s), 0u);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  EXPECT_EQ(engine_model_free(m), ENGINE_OK);
  std::filesystem::remove_all(dir);
}

}  // namespace
