// Cancellation: engine_session_set_abort's callback is asked before every
// layer; a stop requested from another thread during a long prefill ends the
// call after at most the layer in flight, with ENGINE_ERR_ABORTED. The session
// keeps the whole batches it completed, and going on with the same prompt
// gives the logits, bit for bit, of a run that was never stopped. Layers are
// counted through the callback, not timed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "tests/api/session_models.h"

namespace {

using engine::api::Session;
using session_test::logits;
using session_test::Which;

struct Case {
  Which model;
  uint32_t n_layer, n_tokens, n_batch;
};
// stories260K: 5 layers, the 2000 tokens. gemma4: 6 layers with
// windows of 8 (its rings wrap inside the stopped batch), 200 tokens.
std::vector<Case> cases() {
  std::vector<Case> c{{Which::llama, 5, 2000, 512}};
  if (session_test::all_models().size() > 1) c.push_back({Which::gemma4, 6, 200, 32});
  return c;
}

// The app's side: a callback counting the checks and reading a flag another
// thread sets. Check number `pause_at` reads the flag and then waits until the
// other thread has set it: the stop comes while that layer is about to run.
struct StopButton {
  std::atomic<uint32_t> checks{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> paused{false}, pressed{false};
  uint32_t pause_at = 0;

  static bool check(void* user) {
    auto* b = static_cast<StopButton*>(user);
    const uint32_t n = b->checks.fetch_add(1) + 1;
    const bool stop = b->stop.load();
    if (n == b->pause_at) {
      b->paused.store(true);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!b->pressed.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    }
    return stop;
  }
};

class Abort : public testing::TestWithParam<Case> {
 protected:
  std::vector<int32_t> prompt() const {
    return session_test::tokens(GetParam().n_tokens, 1, session_test::Models::get(GetParam().model).n_vocab());
  }
  Session session() const { return session_test::session(GetParam().model, GetParam().n_batch, 2048); }
};

TEST_P(Abort, AStopFromAnotherThreadEndsThePrefillAfterOneLayer) {
  const Case c = GetParam();
  const std::vector<int32_t> tokens = prompt();
  const uint32_t n_batches = (c.n_tokens + c.n_batch - 1) / c.n_batch;

  // Uninterrupted: one check per layer of every batch.
  StopButton idle;
  Session whole = session();
  whole.set_abort(&StopButton::check, &idle);
  whole.prefill(tokens);
  EXPECT_EQ(idle.checks.load(), n_batches * c.n_layer);

  // Stopped in the second batch, at its third layer.
  StopButton button;
  button.pause_at = c.n_layer + 3;
  Session s = session();
  s.set_abort(&StopButton::check, &button);
  uint32_t checks_when_pressed = 0;
  std::thread app([&] {
    while (!button.paused.load()) std::this_thread::yield();
    button.stop.store(true);
    checks_when_pressed = button.checks.load();
    button.pressed.store(true);
  });
  const engine_status status = engine_prefill(s.get(), tokens.data(), tokens.size());
  app.join();
  ASSERT_EQ(status, ENGINE_ERR_ABORTED) << engine_last_error();
  EXPECT_NE(std::string(engine_last_error()).find("aborted before layer 3"), std::string::npos) << engine_last_error();
  // The layer whose check came before the press ran; the next check stopped.
  EXPECT_EQ(checks_when_pressed, c.n_layer + 3);
  EXPECT_EQ(button.checks.load(), checks_when_pressed + 1);

  // The first batch stays, the second is dropped, no logits.
  EXPECT_EQ(s.n_past(), c.n_batch);
  EXPECT_EQ(s.tokens(), std::vector<int32_t>(tokens.begin(), tokens.begin() + c.n_batch));
  EXPECT_EQ(s.n_evaluated(), c.n_batch);
  EXPECT_THROW(s.logits(), engine::api::Error);

  // Going on: the same prompt evaluates what was not done, in the same batches.
  s.set_abort(nullptr, nullptr);
  EXPECT_EQ(s.prefill_prompt(tokens), c.n_batch);
  EXPECT_EQ(s.n_evaluated(), c.n_tokens);
  EXPECT_EQ(logits(s), logits(whole));
}

TEST_P(Abort, AnAbortedDecodeLeavesTheSessionAtItsLastTokenAndTheNextWorks) {
  const std::vector<int32_t> tokens = prompt();
  const std::vector<int32_t> head(tokens.begin(), tokens.begin() + 40);
  Session s = session();
  s.prefill(head);
  StopButton always;
  always.stop.store(true);
  s.set_abort(&StopButton::check, &always);
  EXPECT_EQ(engine_decode(s.get(), tokens[40]), ENGINE_ERR_ABORTED);
  EXPECT_EQ(always.checks.load(), 1u);
  EXPECT_EQ(s.tokens(), head);
  EXPECT_EQ(s.n_evaluated(), 40u);
  // Another thread may not change the callback during a call; idle, it may.
  s.set_abort(nullptr, nullptr);
  s.decode(tokens[40]);

  Session fresh = session();
  fresh.prefill(head);
  fresh.decode(tokens[40]);
  EXPECT_EQ(logits(s), logits(fresh));
}

std::string case_name(const testing::TestParamInfo<Case>& c) {
  return c.param.model == Which::llama ? "Llama2000" : "Gemma4Windows";
}
INSTANTIATE_TEST_SUITE_P(Models, Abort, testing::ValuesIn(cases()), case_name);

}  // namespace
