// A session keeps its tokens: engine_prefill_prompt reuses the prompt's common
// prefix with them and evaluates only the rest, engine_session_truncate keeps
// the first n (regenerate, edit). Counted in tokens evaluated, and checked in
// logits: a session that reused or truncated ends with the logits, bit for
// bit, of a fresh session that evaluated the same tokens in the same batches.
// On gemma4 a truncation further back than the rings hold recomputes the kept
// tokens, and says so (0 reused).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "tests/api/session_models.h"

namespace {

using engine::api::Session;
using session_test::concat;
using session_test::logits;
using session_test::Which;

class SessionTokens : public testing::TestWithParam<Which> {
 protected:
  int32_t n_vocab() const { return session_test::Models::get(GetParam()).n_vocab(); }
  std::vector<int32_t> tokens(size_t n, uint32_t seed) const { return session_test::tokens(n, seed, n_vocab()); }
  Session session(uint32_t n_batch = 4) const { return session_test::session(GetParam(), n_batch); }
};

TEST_P(SessionTokens, ANextTurnEvaluatesOnlyItsNewTokens) {
  const std::vector<int32_t> turn1 = tokens(40, 1), turn2 = concat(turn1, tokens(10, 2));
  Session s = session();
  EXPECT_EQ(s.prefill_prompt(turn1), 0u);
  EXPECT_EQ(s.n_evaluated(), 40u);
  EXPECT_EQ(s.prefill_prompt(turn2), 40u);
  EXPECT_EQ(s.n_evaluated(), 50u);
  EXPECT_EQ(s.tokens(), turn2);
  EXPECT_EQ(s.n_past(), 50u);

  Session fresh = session();
  fresh.prefill(turn1);
  fresh.prefill(std::vector<int32_t>(turn2.begin() + 40, turn2.end()));
  EXPECT_EQ(logits(s), logits(fresh));

  // The same prompt again: its logits are there, nothing is evaluated.
  EXPECT_EQ(s.prefill_prompt(turn2), 50u);
  EXPECT_EQ(s.n_evaluated(), 50u);
  EXPECT_EQ(logits(s), logits(fresh));
}

// engine_session_memory_info: the attention cache and the recurrent states
// add up to engine_kv_info's bytes; each checkpoint is one copy of the
// states, taken after each batch of more than one token (at most 16) and
// dropped with the tokens after it.
TEST_P(SessionTokens, MemoryInfoGivesEachKindOfState) {
  Session s = session();
  const engine_kv_info kv = s.kv_info();
  engine_memory_info m = s.memory_info();
  EXPECT_EQ(m.attention_bytes + m.recurrent_bytes, kv.bytes);
  EXPECT_EQ(m.n_attention_layers + m.n_recurrent_layers, kv.n_layers);
  EXPECT_EQ(m.n_checkpoints, 0u);
  EXPECT_EQ(m.checkpoint_bytes, 0u);
  s.prefill(tokens(40, 1));  // 10 batches of 4
  m = s.memory_info();
  if (GetParam() != Which::lfm2) {
    EXPECT_EQ(m.n_recurrent_layers, 0u);
    EXPECT_EQ(m.recurrent_bytes, 0u);
    EXPECT_EQ(m.n_checkpoints, 0u);
    return;
  }
  EXPECT_GT(m.n_recurrent_layers, 0u);
  EXPECT_GT(m.n_attention_layers, 0u);
  EXPECT_GT(m.recurrent_bytes, 0u);
  EXPECT_EQ(m.n_checkpoints, 10u);
  EXPECT_EQ(m.checkpoint_bytes, m.n_checkpoints * m.recurrent_bytes);
  s.truncate(18);  // the copies after position 18 go: those at 4, 8, 12 and 16 stay
  m = s.memory_info();
  EXPECT_EQ(m.n_checkpoints, 4u);
  // and the memory of one dropped copy, kept for the next checkpoint.
  EXPECT_EQ(m.checkpoint_bytes, 5 * m.recurrent_bytes);
}

TEST_P(SessionTokens, AnEditedTurnKeepsTheCommonPrefix) {
  // Turn 2 differs from turn 1 from token 36 on (a batch boundary: the same
  // batches as the fresh session's).
  const std::vector<int32_t> turn1 = tokens(40, 1);
  const std::vector<int32_t> turn2 = concat(std::vector<int32_t>(turn1.begin(), turn1.begin() + 36), tokens(8, 3));
  Session s = session();
  s.prefill_prompt(turn1);
  EXPECT_EQ(s.prefill_prompt(turn2), 36u);
  EXPECT_EQ(s.n_evaluated(), 40u + 8);
  EXPECT_EQ(s.tokens(), turn2);

  Session fresh = session();
  fresh.prefill(std::vector<int32_t>(turn2.begin(), turn2.begin() + 36));
  fresh.prefill(std::vector<int32_t>(turn2.begin() + 36, turn2.end()));
  EXPECT_EQ(logits(s), logits(fresh));
}

TEST_P(SessionTokens, RegenerateTruncatesToThePromptAndEvaluatesItsLastTokenAgain) {
  // A reply of 2 tokens: on gemma4 the rings (8 + 4 - 1 positions) still
  // hold the window of token 23 (a reply longer than n_batch - 1 tokens would
  // make it evaluate the prompt again, as TruncateThenPrefill shows).
  const std::vector<int32_t> prompt = tokens(24, 4), reply = tokens(2, 5);
  Session s = session();
  s.prefill(prompt);
  for (int32_t t : reply) s.decode(t);
  s.truncate(24);
  EXPECT_EQ(s.tokens(), prompt);
  EXPECT_THROW(s.logits(), engine::api::Error);  // no logits after a truncate
  const uint64_t before = s.n_evaluated();
  // On lfm2 the state goes back to the checkpoint at or before token 23: the
  // end of the batch 16..19 (a copy after every batch of more than one token).
  const uint32_t reused = GetParam() == Which::lfm2 ? 20u : 23u;
  EXPECT_EQ(s.prefill_prompt(prompt), reused);
  EXPECT_EQ(s.n_evaluated(), before + 24 - reused);

  Session fresh = session();
  fresh.prefill(std::vector<int32_t>(prompt.begin(), prompt.end() - 1));
  fresh.decode(prompt.back());
  EXPECT_EQ(logits(s), logits(fresh));
}

TEST_P(SessionTokens, TruncateBeyondTheTokensIsAnErrorAndChangesNothing) {
  const std::vector<int32_t> t = tokens(12, 6);
  Session s = session();
  s.prefill(t);
  const std::vector<float> want = logits(s);
  EXPECT_EQ(engine_session_truncate(s.get(), 13), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("13 tokens to keep, but the session holds 12"), std::string::npos)
      << engine_last_error();
  EXPECT_EQ(s.tokens(), t);
  EXPECT_EQ(logits(s), want);
  EXPECT_EQ(engine_session_truncate(nullptr, 0), ENGINE_ERR_INVALID_HANDLE);
}

TEST_P(SessionTokens, TruncateThenPrefillMatchesAFreshSession) {
  // 40 tokens in batches of 4; keep 32 and add 6 others.
  const std::vector<int32_t> all = tokens(40, 7), more = tokens(6, 8);
  Session s = session();
  s.prefill(all);
  s.truncate(32);
  EXPECT_EQ(s.n_past(), 32u);
  const uint64_t before = s.n_evaluated();
  const std::vector<int32_t> kept(all.begin(), all.begin() + 32);
  const size_t reused = s.prefill_prompt(concat(kept, more));

  Session fresh = session();
  fresh.prefill(kept);
  fresh.prefill(more);
  if (GetParam() != Which::gemma4) {  // lfm2: a checkpoint at 32, the end of a batch
    EXPECT_EQ(reused, 32u);
    EXPECT_EQ(s.n_evaluated(), before + 6);
    EXPECT_EQ(logits(s), logits(fresh));
  } else {
    // The rings hold positions 29..39 (8 + 4 - 1 of them); token 32 attends
    // to 25..31: gone, so the 32 kept tokens are evaluated again, with the 6
    // new ones, in one call: batches 0..3, .., 36..37 like a fresh prefill of
    // all 38.
    EXPECT_EQ(reused, 0u);
    EXPECT_EQ(s.n_evaluated(), before + 38);
    Session one_call = session();
    one_call.prefill(concat(kept, more));
    EXPECT_EQ(logits(s), logits(one_call));
  }
  EXPECT_EQ(s.tokens(), concat(kept, more));
}

TEST_P(SessionTokens, ATruncateTheRingsStillHoldKeepsTheirCache) {
  // Keep 36 of 40: token 36 attends to 29..35, which the rings (29..39) hold.
  const std::vector<int32_t> all = tokens(40, 9), more = tokens(4, 10);
  const std::vector<int32_t> kept(all.begin(), all.begin() + 36);
  Session s = session();
  s.prefill(all);
  s.truncate(36);
  EXPECT_EQ(s.n_past(), 36u);
  const uint64_t before = s.n_evaluated();
  EXPECT_EQ(s.prefill_prompt(concat(kept, more)), 36u);
  EXPECT_EQ(s.n_evaluated(), before + 4);

  Session fresh = session();
  fresh.prefill(kept);
  fresh.prefill(more);
  EXPECT_EQ(logits(s), logits(fresh));
}

TEST_P(SessionTokens, DecodingAfterARecomputingTruncateMatchesAFreshSession) {
  // Truncated far back, then decoded token by token: the first decode
  // evaluates the kept tokens again first.
  const std::vector<int32_t> all = tokens(30, 11), more = tokens(3, 12);
  Session s = session();
  s.prefill(all);
  s.truncate(10);
  for (int32_t t : more) s.decode(t);
  EXPECT_EQ(s.tokens(), concat(std::vector<int32_t>(all.begin(), all.begin() + 10), more));

  const std::vector<int32_t> kept(all.begin(), all.begin() + 10);
  Session fresh = session();
  if (GetParam() == Which::llama) {
    fresh.prefill(kept);
    for (int32_t t : more) fresh.decode(t);
  } else {
    // The rings hold 19..29, token 10 attends to 3..9: the first decode
    // evaluates the 10 kept tokens and itself in one call.
    fresh.prefill(concat(kept, {more[0]}));
    fresh.decode(more[1]);
    fresh.decode(more[2]);
  }
  EXPECT_EQ(logits(s), logits(fresh));
}

TEST_P(SessionTokens, APromptTheSessionCannotTakeIsRefusedBeforeAnythingIsDropped) {
  const std::vector<int32_t> t = tokens(20, 13);
  Session s = session();
  s.prefill(t);
  std::vector<int32_t> bad(t.begin(), t.begin() + 5);
  bad.push_back(n_vocab());
  size_t reused = 7;
  EXPECT_EQ(engine_prefill_prompt(s.get(), bad.data(), bad.size(), &reused), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("outside the vocabulary"), std::string::npos) << engine_last_error();
  EXPECT_EQ(reused, 0u);
  const std::vector<int32_t> too_long = tokens(129, 14);  // the context is 128
  EXPECT_EQ(engine_prefill_prompt(s.get(), too_long.data(), too_long.size(), nullptr), ENGINE_ERR_CONTEXT_FULL);
  EXPECT_EQ(s.tokens(), t);
  EXPECT_EQ(s.prefill_prompt(t), 20u);  // its logits still there: nothing evaluated
  EXPECT_EQ(s.n_evaluated(), 20u);
}

TEST(SessionTokensApi, BadArgumentsAreErrors) {
  Session s = session_test::session(Which::llama);
  size_t n = 0;
  EXPECT_EQ(engine_prefill_prompt(s.get(), nullptr, 3, &n), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(engine_last_error()).find("engine_prefill_prompt: no tokens"), std::string::npos);
  EXPECT_EQ(engine_session_tokens(s.get(), nullptr, 0, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  const int32_t t[3] = {1, 2, 3};
  EXPECT_EQ(engine_prefill_prompt(s.get(), t, 3, nullptr), ENGINE_OK);
  int32_t out[2] = {};
  EXPECT_EQ(engine_session_tokens(s.get(), out, 2, &n), ENGINE_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(engine_session_n_evaluated(nullptr), 0u);
  s.reset();
  EXPECT_TRUE(s.tokens().empty());
  EXPECT_EQ(s.n_past(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, SessionTokens, testing::ValuesIn(session_test::all_models()), session_test::name_of);

}  // namespace
