// serve's session pool (tools/serve/slot_pool.h) on stories260K: a request
// takes the idle session holding the longest start of its prompt, waiting
// requests are served in arrival order, one past the bound gets 503 at once,
// and one whose client left stops waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/api/engine.hpp"
#include "tests/support/shared_data.h"
#include "tools/serve/http_error.h"
#include "tools/serve/slot_pool.h"

namespace {

using namespace std::chrono_literals;

engine::api::Model& model() {
  static engine::api::Model m(engine_test::default_model().string());
  return m;
}

serve::SlotPool make_pool(int n, size_t max_waiting) {
  std::vector<std::unique_ptr<serve::Slot>> slots;
  engine_session_params p = engine_session_default_params();
  p.n_ctx = 64;
  p.n_threads = 1;
  for (int i = 0; i < n; ++i) {
    slots.push_back(std::make_unique<serve::Slot>(serve::Slot{i, engine::api::Session(model(), p), 0}));
  }
  return serve::SlotPool(std::move(slots), max_waiting);
}

TEST(SlotPool, TakesTheSessionHoldingTheLongestStartOfThePrompt) {
  serve::SlotPool pool = make_pool(3, 0);
  const std::vector<int32_t> a = model().tokenize("Once upon a time there was a cat", true);
  const std::vector<int32_t> b = model().tokenize("Lily and Tom went to the park", true);
  {
    serve::SlotPool::Lease first = pool.acquire(a, {});
    first->session.prefill_prompt(a);
    serve::SlotPool::Lease second = pool.acquire(b, {});
    second->session.prefill_prompt(b);
    EXPECT_NE(first->index, second->index);
  }
  std::vector<int32_t> b_more = b;
  b_more.push_back(b.back());
  serve::SlotPool::Lease again = pool.acquire(b_more, {});
  EXPECT_EQ(again->session.tokens(), b);  // the session with b's tokens
  serve::SlotPool::Lease fresh = pool.acquire(model().tokenize("Zebras", true), {});
  EXPECT_TRUE(fresh->session.tokens().empty() || fresh->session.tokens() == a);
  EXPECT_EQ(pool.busy(), 2u);
}

TEST(SlotPool, WaitersAreServedInOrderAndOnePastTheBoundGets503) {
  serve::SlotPool pool = make_pool(1, 3);
  std::optional<serve::SlotPool::Lease> held(pool.acquire({}, {}));
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&, i] {
      serve::SlotPool::Lease l = pool.acquire({}, {});
      const std::lock_guard lock(m);
      order.push_back(i);
    });
    while (pool.waiting() != static_cast<size_t>(i + 1)) std::this_thread::sleep_for(1ms);
  }
  try {
    (void)pool.acquire({}, {});
    ADD_FAILURE() << "a fourth waiter was queued";
  } catch (const serve::HttpError& e) {
    EXPECT_EQ(e.status, 503);
    EXPECT_NE(std::string(e.what()).find("3 requests wait"), std::string::npos) << e.what();
  }
  held.reset();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(pool.busy(), 0u);
  EXPECT_EQ(pool.waiting(), 0u);
}

TEST(SlotPool, AWaiterWhoseClientLeftStopsWaiting) {
  serve::SlotPool pool = make_pool(1, 2);
  serve::SlotPool::Lease held = pool.acquire({}, {});
  std::atomic<bool> gone{false};
  std::thread leaver([&] {
    const serve::SlotPool::Lease l = pool.acquire({}, [&] { return gone.load(); });
    EXPECT_FALSE(l);
  });
  while (pool.waiting() != 1) std::this_thread::sleep_for(1ms);
  gone = true;
  leaver.join();
  EXPECT_EQ(pool.waiting(), 0u);
  EXPECT_EQ(pool.busy(), 1u);
}

}  // namespace
