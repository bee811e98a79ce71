// The models the session tests run on: the repository's stories260K (llama,
// every layer keeping all positions), synth's gemma4 reference model
// (sliding windows of 8 in rings, layers sharing caches) and its lfm2 one
// (short convolutions whose state is checkpointed), and what the tests
// compare: the logits a session ends with, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/api/engine.hpp"
#include "engine/support/log.h"
#include "tests/quantize/test_util.h"
#include "tests/support/shared_data.h"
#if ENGINE_TEST_SYNTH  // synth is built with the tools (not in the ThreadSanitizer tree)
#include "tests/engine/gemma4_model.h"
#endif

namespace session_test {

enum class Which { llama, gemma4, lfm2 };
inline std::string name_of(const testing::TestParamInfo<Which>& info) {
  return info.param == Which::llama ? "Llama" : info.param == Which::gemma4 ? "Gemma4Windows" : "Lfm2Recurrent";
}
// The models a tree can test: gemma4 and lfm2 where synth is built.
inline const std::vector<Which>& all_models() {
  static const std::vector<Which> models = ENGINE_TEST_SYNTH
                                               ? std::vector<Which>{Which::llama, Which::gemma4, Which::lfm2}
                                               : std::vector<Which>{Which::llama};
  return models;
}

// Loaded once per suite (the gemma4 file written by synth in a moment).
class Models {
 public:
  static engine::api::Model& get(Which w) {
    static Models models;
    return w == Which::llama ? *models.llama_ : w == Which::gemma4 ? *models.gemma4_ : *models.lfm2_;
  }

 private:
  Models() : dir_("session-models") {
    engine::set_log_level(engine::LogLevel::error);
    llama_ = std::make_unique<engine::api::Model>(engine_test::default_model().string());
#if ENGINE_TEST_SYNTH
    gemma4_ = std::make_unique<engine::api::Model>(engine_test::write_gemma4_model(dir_));
    lfm2_ = std::make_unique<engine::api::Model>(engine_test::write_lfm2_model(dir_));
#endif
  }
  quantize_test::TempDir dir_;
  std::unique_ptr<engine::api::Model> llama_, gemma4_, lfm2_;
};

// A session of one thread (the same thread count for every comparison), and a
// batch of 4 so a prompt of a few dozen tokens takes many batches and the
// gemma4 rings (8 + 4 - 1 positions) wrap several times.
inline engine::api::Session session(Which w, uint32_t n_batch = 4, uint32_t n_ctx = 128,
                                    engine_kv_type kv = ENGINE_KV_F16) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = n_ctx;
  p.n_batch = n_batch;
  p.n_threads = 1;
  p.kv_type = kv;
  return engine::api::Session(Models::get(w), p);
}

// n tokens of the vocabulary, varied by seed.
inline std::vector<int32_t> tokens(size_t n, uint32_t seed, int32_t n_vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 37 + seed * 101 + 5) % static_cast<size_t>(n_vocab));
  return t;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline std::vector<float> logits(const engine::api::Session& s) {
  const auto l = s.logits();
  return {l.begin(), l.end()};
}

}  // namespace session_test
