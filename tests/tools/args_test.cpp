// The option parsing every tool shares (tools/common/args.h) and the counts
// they print (plural.h), in-process: what the tool tests cannot enumerate.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/common/args.h"
#include "tools/common/plural.h"

namespace {

tools::Args args(std::vector<std::string> words) {
  words.insert(words.begin(), "tool");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return tools::Args(static_cast<int>(argv.size()), argv.data());
}

// The ArgError message `f` throws, or "" when it throws none.
template <typename F>
std::string arg_error(F f) {
  try {
    f();
  } catch (const tools::ArgError& e) {
    return e.what();
  }
  return "";
}

const std::vector<std::string> kRunOptions = {"-m", "--model", "-n", "--n-predict", "-t", "--threads",
                                              "--temp", "--top-k", "--top-p", "--seed", "--json"};

TEST(NearestOption, NamesTheCloseOne) {
  EXPECT_EQ(tools::nearest_option("--tread", kRunOptions), "--threads");
  EXPECT_EQ(tools::nearest_option("--theads", kRunOptions), "--threads");
  EXPECT_EQ(tools::nearest_option("--n-predit", kRunOptions), "--n-predict");
  EXPECT_EQ(tools::nearest_option("--jsn", kRunOptions), "--json");
  EXPECT_EQ(tools::nearest_option("-json", kRunOptions), "--json");  // one dash too few
}

TEST(NearestOption, APrefixEitherWay) {
  EXPECT_EQ(tools::nearest_option("--temperature", kRunOptions), "--temp");
  EXPECT_EQ(tools::nearest_option("--thr", kRunOptions), "--threads");
}

TEST(NearestOption, IgnoresTheValueAfterEquals) {
  EXPECT_EQ(tools::nearest_option("--temperature=0.5", kRunOptions), "--temp");
}

TEST(NearestOption, NothingWhenNoneIsClose) {
  EXPECT_EQ(tools::nearest_option("--frobnicate", kRunOptions), "");
  EXPECT_EQ(tools::nearest_option("--xyz", kRunOptions), "");
  // A single letter is near every short option: no guess.
  EXPECT_EQ(tools::nearest_option("-x", kRunOptions), "");
  EXPECT_EQ(tools::nearest_option("--", kRunOptions), "");
}

TEST(ArgsModel, TakesDashMAndAPlainPath) {
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"-m", "a.gguf"}, {"--model", "a.gguf"}, {"--model=a.gguf"}, {"a.gguf"}}) {
    tools::Args a = args(words);
    std::string path;
    ASSERT_TRUE(a.model(path)) << words[0];
    EXPECT_EQ(path, "a.gguf");
    EXPECT_TRUE(a.done());
  }
}

TEST(ArgsModel, ASecondModelIsAUsageErrorNamingBoth) {
  tools::Args a = args({"a.gguf", "-m", "b.gguf"});
  std::string path;
  ASSERT_TRUE(a.model(path));
  EXPECT_EQ(arg_error([&] { a.model(path); }), "more than one model given ('a.gguf', 'b.gguf')");
}

TEST(ArgsModel, SeveralForATakingTool) {
  tools::Args a = args({"a.gguf", "-m", "b.gguf", "c.gguf"});
  std::vector<std::string> paths;
  while (a.model(paths)) {
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"a.gguf", "b.gguf", "c.gguf"}));
}

TEST(ArgsModel, AnOptionIsNotAPath) {
  tools::Args a = args({"--bos"});
  std::string path;
  EXPECT_FALSE(a.model(path));
  EXPECT_EQ(a.peek(), "--bos");
}

TEST(ArgsUnknown, SuggestsFromTheOptionsAskedAbout) {
  tools::Args a = args({"--tread", "4"});
  int64_t n = 0;
  std::string s;
  EXPECT_FALSE(a.option({"-t", "--threads"}, n));
  EXPECT_FALSE(a.option({"-p", "--prompt"}, s));
  EXPECT_EQ(arg_error([&] { a.unknown(); }), "unknown option '--tread'; did you mean '--threads'?");
}

TEST(ArgsUnknown, APlainArgumentNoOneTakes) {
  tools::Args a = args({"extra"});
  EXPECT_EQ(arg_error([&] { a.unknown(); }), "unexpected argument 'extra'");
}

TEST(Plural, SingularOnlyForOne) {
  EXPECT_EQ(tools::plural(1, "token"), "1 token");
  EXPECT_EQ(tools::plural(0, "token"), "0 tokens");
  EXPECT_EQ(tools::plural(2, "repetition"), "2 repetitions");
  EXPECT_EQ(tools::plural(-1, "token"), "-1 tokens");
  EXPECT_EQ(tools::plural(1, "pass", "passes"), "1 pass");
  EXPECT_EQ(tools::plural(3, "pass", "passes"), "3 passes");
}

}  // namespace
