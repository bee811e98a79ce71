// run --prompt-cache FILE: the first run evaluates the prompt and saves the
// session; the next loads it and evaluates only the prompt's last token (for
// its logits), generating the same text; a longer prompt reuses the saved
// part; a saved session that cannot be used is said and replaced; a file that
// is not a saved session, or not a file, is refused before anything runs and kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;

std::string ids(int first, int last) {
  std::string s;
  for (int i = first; i <= last; ++i) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

class RunPromptCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = engine_test::temp_dir("run-prompt-cache");
    model_ = (dir_ / "tiny-f32.gguf").string();
    cache_ = (dir_ / "prompt.session").string();
    tool_test::synth_tiny_model(model_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  tool_test::Outcome run(const std::string& tokens) const {
    tool_test::Child child(tool_test::tool("run"), {"-m", model_, "--tokens", tokens, "-n", "6", "--temp", "0",
                                                    "--ignore-eos", "-t", "1", "--prompt-cache", cache_});
    return child.finish();
  }
  fs::path dir_;
  std::string model_, cache_;
};

TEST_F(RunPromptCache, TheSecondRunLoadsThePromptAndGeneratesTheSameText) {
  const tool_test::Outcome first = run(ids(10, 49));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("run: prompt cache: 40 tokens of the prompt saved to " + cache_), std::string::npos)
      << first.err;
  ASSERT_TRUE(fs::exists(cache_));

  const tool_test::Outcome second = run(ids(10, 49));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("39 tokens of the prompt reused"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("saved to"), std::string::npos) << "nothing new to save:\n" << second.err;
  EXPECT_EQ(second.out, first.out);

  const tool_test::Outcome longer = run(ids(10, 59));
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  EXPECT_NE(longer.err.find("40 tokens of the prompt reused"), std::string::npos) << longer.err;
  EXPECT_NE(longer.err.find("50 tokens of the prompt saved"), std::string::npos) << longer.err;
}

TEST_F(RunPromptCache, ASavedSessionThatCannotBeUsedIsSaidAndReplaced) {
  std::ofstream(cache_) << "ENGINEKV and then nothing a session holds";
  const tool_test::Outcome o = run(ids(10, 29));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("run: prompt cache not used: saved session " + cache_), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("20 tokens of the prompt saved"), std::string::npos) << o.err;
}

TEST_F(RunPromptCache, AFileThatIsNotASavedSessionIsRefusedAndKept) {
  std::ofstream(cache_) << "the user's notes";
  const tool_test::Outcome o = run(ids(10, 29));
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find(cache_ + ": not a saved session"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << "refused before generating:\n" << o.out;
  std::ifstream in(cache_);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "the user's notes");
}

TEST_F(RunPromptCache, ADeviceOrAFolderIsRefusedBeforeTheModelLoads) {
  for (const std::string& path : {std::string("/dev/null"), dir_.string()}) {
    tool_test::Child child(tool_test::tool("run"), {"-m", model_, "--tokens", ids(10, 19), "-n", "2", "--temp", "0",
                                                    "-t", "1", "--prompt-cache", path});
    const tool_test::Outcome o = child.finish();
    EXPECT_NE(o.exit_code, 0) << path;
    EXPECT_NE(o.err.find("not a regular file: refusing to replace it"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("model:"), std::string::npos) << "nothing ran:\n" << o.err;
  }
}

}  // namespace
