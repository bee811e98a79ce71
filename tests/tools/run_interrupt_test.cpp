// Ctrl-C during run: the generation stops, the figures for what was generated
// still print, and run exits 130 — the signal sent to a child process running
// a long generation on a tiny synth model.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>

#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;

class RunInterrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = engine_test::temp_dir("run-interrupt");
    model_ = (dir_ / "tiny-f32.gguf").string();
    tool_test::synth_tiny_model(model_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string model_;
};

TEST_F(RunInterrupt, CtrlCPrintsTheFiguresAndExits130) {
  // 60000 tokens in a context of 65536 with --ignore-eos: minutes of
  // generation, so the signal lands mid-generation however fast the machine.
  tool_test::Child run(tool_test::tool("run"),
                       {"-m", model_, "-n", "60000", "-c", "65536", "--ignore-eos", "--temp", "0", "-p", "hello"});
  ASSERT_TRUE(run.wait_for_stdout(64, std::chrono::seconds(60))) << "no generated text within a minute";
  run.send(SIGINT);
  const tool_test::Outcome o = run.finish(std::chrono::seconds(30));
  EXPECT_EQ(o.signal, 0) << "killed by signal " << o.signal << " instead of stopping\n" << o.err;
  EXPECT_EQ(o.exit_code, 130) << o.err;
  EXPECT_NE(o.err.find("run: interrupted"), std::string::npos) << o.err;
  // "decode:     N token(s), R tokens/s": some decode steps ran before the
  // signal (std::regex is avoided: GCC 12's -O1 ASan build warns inside it).
  const size_t decode = o.err.find("decode:");
  ASSERT_NE(decode, std::string::npos) << o.err;
  const size_t count = o.err.find_first_not_of(' ', decode + 7);
  ASSERT_NE(count, std::string::npos) << o.err;
  size_t digits = 0;
  EXPECT_GT(std::stoll(o.err.substr(count), &digits), 0) << o.err;
  EXPECT_EQ(o.err.compare(count + digits, 6, " token"), 0) << o.err;
  EXPECT_NE(o.err.find("tokens/s", count), std::string::npos) << o.err;
  for (const char* line : {"prompt: ", "first token: ", "sampler: ", "threads: "}) {
    EXPECT_NE(o.err.find(line), std::string::npos) << line << " missing:\n" << o.err;
  }
  EXPECT_EQ(o.err.find("is full; stopping"), std::string::npos) << "ended by a full context, not by the signal";
}

}  // namespace
