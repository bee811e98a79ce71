// Saved sessions: engine_session_save / engine_session_load keep a session's
// tokens and cache across sessions (and launches). A restored session goes on
// with the logits, bit for bit, of the session that was saved, evaluating
// only what is new, also with another n_batch (another ring size on gemma4).
// A file of another model or KV type, too long for the context, truncated,
// corrupt or missing is refused with ENGINE_ERR_FILE and a message naming the
// problem, and the session is unchanged; the file is written through a
// temporary file and a rename, leaving nothing else behind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/runtime/session_file.h"
#include "tests/api/session_models.h"
#include "tests/quantize/test_util.h"

namespace {

using engine::api::Session;
using session_test::concat;
using session_test::logits;
using session_test::Which;

std::vector<char> read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class SessionFile : public testing::TestWithParam<Which> {
 protected:
  int32_t n_vocab() const { return session_test::Models::get(GetParam()).n_vocab(); }
  std::vector<int32_t> tokens(size_t n, uint32_t seed) const { return session_test::tokens(n, seed, n_vocab()); }
  quantize_test::TempDir dir_{"session-file"};
};

TEST_P(SessionFile, ARestoredSessionGoesOnAsTheSavedOne) {
  // 30 tokens, then 3 more: on gemma4 the rings have wrapped (positions
  // 19..29 of 11 rows), and the file holds each ring's last 7 positions.
  const std::vector<int32_t> prompt = tokens(30, 1), more = tokens(3, 2);
  const std::string path = dir_ / "prompt.session";
  Session saved = session_test::session(GetParam());
  saved.prefill(prompt);
  saved.save(path);
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"prompt.session"});  // no temporary file left
  saved.prefill(more);

  for (uint32_t n_batch : {4u, 16u}) {
    Session restored = session_test::session(GetParam(), n_batch);
    restored.load(path);
    EXPECT_EQ(restored.tokens(), prompt);
    EXPECT_EQ(restored.n_past(), 30u);
    EXPECT_EQ(restored.n_evaluated(), 0u);
    EXPECT_THROW(restored.logits(), engine::api::Error);  // none until an evaluation
    EXPECT_EQ(restored.prefill_prompt(concat(prompt, more)), 30u);
    EXPECT_EQ(restored.n_evaluated(), 3u);
    EXPECT_EQ(logits(restored), logits(saved)) << "n_batch " << n_batch;
  }
}

TEST_P(SessionFile, TheSavedPromptAloneEvaluatesItsLastTokenForItsLogits) {
  const std::vector<int32_t> prompt = tokens(20, 3);
  const std::string path = dir_ / "p.session";
  Session saved = session_test::session(GetParam());
  saved.prefill(std::vector<int32_t>(prompt.begin(), prompt.end() - 1));
  saved.save(path);
  saved.decode(prompt.back());

  Session restored = session_test::session(GetParam());
  restored.load(path);
  EXPECT_EQ(restored.prefill_prompt(prompt), 19u);
  EXPECT_EQ(restored.n_evaluated(), 1u);
  EXPECT_EQ(logits(restored), logits(saved));
}

// What a refused load must leave: the same tokens, count and logits.
void expect_unchanged(Session& s, const std::vector<int32_t>& t, const std::vector<float>& want) {
  EXPECT_EQ(s.tokens(), t);
  EXPECT_EQ(logits(s), want);
  EXPECT_EQ(s.prefill_prompt(t), t.size());  // nothing evaluated: the same prompt, its logits there
}

void expect_refused(Session& s, const std::string& path, const std::string& problem) {
  EXPECT_EQ(engine_session_load(s.get(), path.c_str()), ENGINE_ERR_FILE) << problem;
  const std::string msg = engine_last_error();
  if (std::getenv("SHOW") != nullptr) std::printf("%s\n", msg.c_str());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos) << msg;
}

TEST_P(SessionFile, ABadFileIsRefusedNamingTheProblemAndTheSessionIsUnchanged) {
  const std::string path = dir_ / "good.session";
  {
    Session saved = session_test::session(GetParam());
    saved.prefill(tokens(24, 4));
    saved.save(path);
  }
  const std::vector<char> good = read(path);
  Session s = session_test::session(GetParam());
  const std::vector<int32_t> t = tokens(9, 5);
  s.prefill(t);
  const std::vector<float> want = logits(s);

  expect_refused(s, dir_ / "missing.session", "cannot open");
  write(dir_ / "short.session", std::vector<char>(good.begin(), good.begin() + static_cast<long>(good.size() / 2)));
  expect_refused(s, dir_ / "short.session", "truncated");
  write(dir_ / "tiny.session", std::vector<char>(good.begin(), good.begin() + 5));
  expect_refused(s, dir_ / "tiny.session", "truncated");
  std::vector<char> flipped = good;
  flipped[flipped.size() - 100] ^= 0x10;  // a bit of the cache
  write(dir_ / "flipped.session", flipped);
  expect_refused(s, dir_ / "flipped.session", "checksum");
  // A value of the cache made NaN (F16 0x7fff or F32 0xffffffff: all-ones
  // exponent either way) behind a checksum made right again: an edited file.
  std::vector<char> nan = good;
  nan[nan.size() - 100] = nan[nan.size() - 99] = nan[nan.size() - 98] = nan[nan.size() - 97] = '\xff';
  engine::reseal_session_bytes({reinterpret_cast<uint8_t*>(nan.data()), nan.size()});
  write(dir_ / "nan.session", nan);
  expect_refused(s, dir_ / "nan.session", "not finite");
  std::vector<char> longer = good;
  longer.push_back(0);
  write(dir_ / "long.session", longer);
  expect_refused(s, dir_ / "long.session", "after the end");
  std::vector<char> magic = good;
  magic[0] = 'X';
  write(dir_ / "magic.session", magic);
  expect_refused(s, dir_ / "magic.session", "not a saved session");
  std::vector<char> version = good;
  version[8] = 9;
  write(dir_ / "version.session", version);
  expect_refused(s, dir_ / "version.session", "version 9; this engine reads versions 1 to 2");

  // The other model's file (where both are built).
  if (session_test::all_models().size() > 1) {
    const Which other = GetParam() == Which::llama ? Which::gemma4 : Which::llama;
    Session o = session_test::session(other);
    o.prefill(session_test::tokens(5, 6, session_test::Models::get(other).n_vocab()));
    o.save(dir_ / "other.session");
    expect_refused(s, dir_ / "other.session", "saved with another model");
  }
  expect_unchanged(s, t, want);

  // Another KV type, and a context too small for the saved tokens.
  Session f32 = session_test::session(GetParam(), 4, 128, ENGINE_KV_F32);
  expect_refused(f32, path, "saved with a f16 KV cache; this session's is f32");
  Session small = session_test::session(GetParam(), 4, 16);
  expect_refused(small, path, "holds 24 tokens; this session's context is 16");
}

TEST_P(SessionFile, SavingWritesThroughATemporaryFileAndARename) {
  Session s = session_test::session(GetParam());
  s.prefill(tokens(12, 7));
  const std::string path = dir_ / "s.session";
  s.save(path);
  const std::vector<char> first = read(path);
  s.prefill(tokens(3, 8));
  s.save(path);  // replaces it
  EXPECT_NE(read(path), first);
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"s.session"});

  // A path that is a folder is refused before anything is written.
  std::filesystem::create_directory(dir_ / "folder");
  EXPECT_EQ(engine_session_save(s.get(), (dir_ / "folder").c_str()), ENGINE_ERR_FILE);
  EXPECT_NE(std::string(engine_last_error()).find("is a directory"), std::string::npos) << engine_last_error();
  // A folder that does not exist.
  EXPECT_EQ(engine_session_save(s.get(), (dir_ / "none/s.session").c_str()), ENGINE_ERR_FILE);
  EXPECT_NE(std::string(engine_last_error()).find("does not exist"), std::string::npos) << engine_last_error();
  // A device node is never replaced (renaming over /dev/null as root would
  // turn it into a file), and a FIFO is not opened (that would block).
  EXPECT_EQ(engine_session_save(s.get(), "/dev/null"), ENGINE_ERR_FILE);
  EXPECT_NE(std::string(engine_last_error()).find("character device"), std::string::npos) << engine_last_error();
  struct stat null_stat {};
  ASSERT_EQ(::stat("/dev/null", &null_stat), 0);
  EXPECT_TRUE(S_ISCHR(null_stat.st_mode));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(engine_session_save(s.get(), (dir_ / "fifo").c_str()), ENGINE_ERR_FILE);
  EXPECT_NE(std::string(engine_last_error()).find("FIFO"), std::string::npos) << engine_last_error();
  std::filesystem::remove(dir_ / "fifo");
  // A new file holds the user's text: readable by its owner only.
  struct stat saved {};
  ASSERT_EQ(::stat(path.c_str(), &saved), 0);
  EXPECT_EQ(saved.st_mode & 0777, 0600u);
  auto entries = dir_.entries();
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"folder", "s.session"}));
  EXPECT_EQ(engine_session_save(s.get(), nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_session_load(nullptr, path.c_str()), ENGINE_ERR_INVALID_HANDLE);
}

TEST_P(SessionFile, ASessionTruncatedPastItsRingsSavesItsTokensToEvaluateAgain) {
  // On gemma4 a truncate to 10 of 30 tokens cannot keep the rings: the file
  // holds the 10 tokens and no cache, and the restored session evaluates
  // them with what follows. On llama the cache of the 10 is kept and saved.
  // On lfm2 the truncate goes back to the checkpoint at 8 (the end of a batch
  // of 4): the file holds 8 positions and their recurrent states, and the
  // restored session evaluates tokens 8 and 9 with what follows.
  const std::vector<int32_t> all = tokens(30, 9), more = tokens(2, 10);
  const std::vector<int32_t> kept(all.begin(), all.begin() + 10);
  const std::string path = dir_ / "t.session";
  Session s = session_test::session(GetParam());
  s.prefill(all);
  s.truncate(10);
  s.save(path);
  Session restored = session_test::session(GetParam());
  restored.load(path);
  EXPECT_EQ(restored.tokens(), kept);
  const size_t reused = restored.prefill_prompt(concat(kept, more));
  EXPECT_EQ(reused, GetParam() == Which::llama ? 10u : GetParam() == Which::lfm2 ? 8u : 0u);

  s.prefill(more);
  EXPECT_EQ(logits(restored), logits(s));
}

TEST_P(SessionFile, AnEmptySessionSavesAndLoads) {
  const std::string path = dir_ / "empty.session";
  session_test::session(GetParam()).save(path);
  Session s = session_test::session(GetParam());
  s.prefill(tokens(6, 11));
  s.load(path);
  EXPECT_TRUE(s.tokens().empty());
  EXPECT_EQ(s.n_past(), 0u);
  EXPECT_THROW(s.logits(), engine::api::Error);
  const std::vector<int32_t> t = tokens(5, 12);
  EXPECT_EQ(s.prefill_prompt(t), 0u);
  Session fresh = session_test::session(GetParam());
  fresh.prefill(t);
  EXPECT_EQ(logits(s), logits(fresh));
}

INSTANTIATE_TEST_SUITE_P(Models, SessionFile, testing::ValuesIn(session_test::all_models()), session_test::name_of);

}  // namespace
