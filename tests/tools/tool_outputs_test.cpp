// Every tool that writes a file refuses an output path that exists and is not
// a regular file, leaves it as it was, and writes through a symbolic link:
// quantize and synth (models), bench (--save report, --plot chart), run
// (--dump-logits). The tools run as a user runs them, on a tiny synth model.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gguf/file.h"
#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;
using tool_test::tool;

class ToolOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = engine_test::temp_dir("tool-outputs");
    model_ = (dir_ / "tiny-f32.gguf").string();
    tool_test::synth_tiny_model(model_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    out_ = dir_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directory(out_);
  }
  // Names in the test's own folder, sorted: what a failed write left behind.
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(out_)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  static bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
  // A FIFO at `name` in the test's folder.
  std::string fifo(const std::string& name) const {
    const fs::path p = out_ / name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0) << std::strerror(errno);
    return p.string();
  }

  static fs::path dir_;
  static std::string model_;
  fs::path out_;
};

fs::path ToolOutputs::dir_;
std::string ToolOutputs::model_;

TEST_F(ToolOutputs, QuantizeRefusesACharacterDevice) {
  // /dev/full's node (1, 7), made here: the command that turned /dev/full
  // into a 223 MiB file.
  const fs::path dev = out_ / "full";
  if (::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0) {
    GTEST_SKIP() << "cannot make a device node here (mknod: " << std::strerror(errno) << "; needs root)";
  }
  const tool_test::Outcome o = tool_test::run(tool("quantize"), {"--no-progress", model_, dev.string(), "Q8_0"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "quantize: " + dev.string() + ": is a character device, not a regular file")) << o.err;
  EXPECT_FALSE(has(o.out + o.err, "wrote")) << o.out << o.err;
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  EXPECT_EQ(names(), std::vector<std::string>{"full"});
}

TEST_F(ToolOutputs, QuantizeWritesThroughASymlink) {
  std::ofstream(out_ / "real.gguf") << "old";
  fs::create_symlink("real.gguf", out_ / "link.gguf");
  const tool_test::Outcome o =
      tool_test::run(tool("quantize"), {"--no-progress", model_, (out_ / "link.gguf").string(), "Q8_0"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(fs::is_symlink(out_ / "link.gguf"));
  EXPECT_EQ(gguf::File::open((out_ / "real.gguf").string()).tensors().size(),
            gguf::File::open(model_).tensors().size());
  EXPECT_EQ(names(), (std::vector<std::string>{"link.gguf", "real.gguf"}));
}

TEST_F(ToolOutputs, SynthRefusesAFifoAndADirectory) {
  const std::vector<std::string> shape = {"--arch", "llama", "--n-embd", "64", "--n-layer", "1", "--n-head", "4",
                                          "--n-ff", "128", "--n-vocab", "300", "--type", "Q8_0", "--no-progress", "-o"};
  const std::string pipe = fifo("out.gguf");
  std::vector<std::string> args = shape;
  args.push_back(pipe);
  tool_test::Outcome o = tool_test::run(tool("synth"), args);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "synth: " + pipe + ": is a FIFO (named pipe), not a regular file")) << o.err;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(pipe)));

  fs::create_directory(out_ / "dir.gguf");
  args.back() = (out_ / "dir.gguf").string();
  o = tool_test::run(tool("synth"), args);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "dir.gguf: is a directory, not a regular file")) << o.err;
  EXPECT_EQ(names(), (std::vector<std::string>{"dir.gguf", "out.gguf"}));
}

TEST_F(ToolOutputs, BenchRefusesAFifoBeforeMeasuringAndWritesAPlotThroughALink) {
  const std::vector<std::string> small = {"-m", model_, "-p", "0", "-n", "2", "-r", "1", "--warmup", "0",
                                          "--no-hash", "--no-probe", "--no-progress", "-o", "json"};
  const std::string pipe = fifo("report.json");
  std::vector<std::string> args = small;
  args.insert(args.end(), {"--save", pipe});
  tool_test::Outcome o = tool_test::run(tool("bench"), args);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "bench: " + pipe + ": is a FIFO (named pipe), not a regular file")) << o.err;
  EXPECT_EQ(o.out, "") << "measured before refusing the output";
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(pipe)));

  std::ofstream(out_ / "chart.svg") << "old";
  fs::create_symlink("chart.svg", out_ / "plot.svg");
  args = small;
  args.insert(args.end(), {"--rounds", "2", "--plot", (out_ / "plot.svg").string()});
  o = tool_test::run(tool("bench"), args);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(fs::is_symlink(out_ / "plot.svg"));
  std::ifstream in(out_ / "chart.svg");
  const std::string svg{std::istreambuf_iterator<char>(in), {}};
  EXPECT_TRUE(has(svg, "<svg")) << svg.substr(0, 200);
  EXPECT_EQ(names(), (std::vector<std::string>{"chart.svg", "plot.svg", "report.json"}));
}

TEST_F(ToolOutputs, RunRefusesADanglingLinkForTheLogits) {
  fs::create_symlink("nowhere/logits.json", out_ / "logits.json");
  const tool_test::Outcome o =
      tool_test::run(tool("run"), {"-m", model_, "--tokens", "1,2", "--dump-logits", (out_ / "logits.json").string()});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(has(o.err, "logits.json: is a symbolic link to 'nowhere/logits.json', which does not exist")) << o.err;
  EXPECT_TRUE(fs::is_symlink(out_ / "logits.json"));
  EXPECT_EQ(names(), std::vector<std::string>{"logits.json"});
}

}  // namespace
