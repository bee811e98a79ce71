// What the hybrid families' suites (lfm2_test.cpp, qwen35_test.cpp) share: a
// small model written by synth once per suite, sessions over it with an F32
// cache, and logits compared within float rounding.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/support/error.h"
#include "tests/engine/synth_files.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace engine_test {

struct HybridModel {
  const char* name;  // of the suite's temporary folder and file
  tools::SynthShape (*shape)();
  uint32_t n_ctx;
};

template <const HybridModel& M>
class HybridSession : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new quantize_test::TempDir(M.name);
    path_ = new std::string(write_synth(*dir_, M.shape(), std::string(M.name) + ".gguf"));
  }
  static void TearDownTestSuite() {
    delete path_;
    delete dir_;
  }
  void SetUp() override { model_ = engine::Model::load(*path_); }

  engine::Session session(uint32_t n_batch = 512) const {
    return engine::Session(*model_, {.n_ctx = M.n_ctx, .n_batch = n_batch, .kv_type = engine::KvType::f32});
  }
  static std::vector<float> last_row(const engine::Session& s) {
    const size_t n_vocab = s.model().config().n_vocab;
    return {s.logits().end() - static_cast<std::ptrdiff_t>(n_vocab), s.logits().end()};
  }
  // F32 weights and cache: batches, chunks and single tokens round
  // differently only in the order of their sums.
  static void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
  }

  // A session saved after p and loaded into a new one goes on from the saved
  // state: one token (17) evaluated, the saved session's logits bit for bit,
  // and the state is a checkpoint (cut back to the saved end, nothing to
  // redo). `saved` is left one token further; returns the file.
  std::string expect_a_loaded_session_goes_on(const std::vector<int32_t>& p, engine::Session& saved) const {
    saved.eval(p);
    const std::string file = *dir_ / "saved.session";
    engine::save_session(saved, file);
    saved.eval(std::vector<int32_t>{17});
    engine::Session loaded = session();
    engine::load_session(loaded, file);
    EXPECT_EQ(loaded.tokens().size(), p.size());
    EXPECT_EQ(loaded.n_past(), p.size());
    loaded.eval(std::vector<int32_t>{17});
    EXPECT_EQ(loaded.n_evaluated(), 1u);
    EXPECT_EQ(last_row(loaded), last_row(saved));
    loaded.truncate(static_cast<uint32_t>(p.size()));
    EXPECT_EQ(loaded.n_past(), p.size());
    return file;
  }

  // A stop half-way through a batch leaves the states of the layers before
  // it a batch ahead of the others: evaluating p in batches of 5, stopped
  // after `layers` layers, the session goes on from what it kept and still
  // gives the logits of one that was never stopped.
  void expect_an_aborted_batch_leaves_no_half_advanced_state(const std::vector<int32_t>& p, int layers) const {
    engine::Session fresh = session();
    fresh.eval(p);
    engine::Session s = session(5);
    s.set_abort([](void* left) { return --*static_cast<int*>(left) < 0; }, &layers);
    EXPECT_THROW(s.eval(p), engine::Aborted);
    EXPECT_EQ(s.tokens().size(), 5u);
    s.set_abort(nullptr, nullptr);
    s.eval(std::span<const int32_t>(p).subspan(s.tokens().size()));
    expect_close(last_row(s), last_row(fresh));
  }

  inline static quantize_test::TempDir* dir_ = nullptr;
  inline static std::string* path_ = nullptr;
  std::unique_ptr<engine::Model> model_;
};

}  // namespace engine_test
