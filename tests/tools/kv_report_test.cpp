// run and bench on a Gemma 3 1B-shaped file (synth gemma-3-1b with its cache
// dimensions and small widths) report the KV cache with its windows: run's
// session line the bytes beside a full cache's at 32k context, bench's JSON
// report the windows and both figures.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/json.h"
#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;
using tool_test::tool;

class KvReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = engine_test::temp_dir("kv-report");
    model_ = (dir_ / "gemma-3-1b-narrow.gguf").string();
    const tool_test::Outcome o =
        tool_test::run(tool("synth"), {"gemma-3-1b", "--n-embd", "64", "--n-ff", "64", "--n-vocab", "320", "--type",
                                       "Q8_0", "--no-progress", "-o", model_});
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
  static std::string model_;
};

fs::path KvReport::dir_;
std::string KvReport::model_;

TEST_F(KvReport, RunGivesTheCacheBesideAFullOne) {
  const tool_test::Outcome o = tool_test::run(tool("run"), {"-m", model_, "-c", "32768", "-n", "2", "--temp", "0"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // 4 global layers x 32768 positions + 22 local ones x (512 + 512 - 1), 1 KiB each.
  EXPECT_NE(o.err.find("context 32768 tokens, set up in "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(" ms; KV cache 150.0 MiB (f16; 22 of 26 layers windowed to 512 positions; a full cache would "
                       "be 832.0 MiB)\n"),
            std::string::npos)
      << o.err;
}

TEST_F(KvReport, BenchRecordsTheWindowsAndTheBytes) {
  const std::string report = (dir_ / "report.json").string();
  const tool_test::Outcome o =
      tool_test::run(tool("bench"), {"-m", model_, "-p", "0", "-n", "2", "-d", "540", "-b", "8", "-r", "1", "--warmup",
                                     "0", "-t", "1", "--no-hash", "--no-probe", "--no-progress", "--save", report});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // 542 positions (a depth of 540 and 2 decoded): the 4 global layers keep
  // them all, the 22 local ones a ring of 512 + 8 - 1, 1 KiB per position.
  EXPECT_NE(o.out.find("KV cache of 542 positions: "), std::string::npos) << o.out;
  const engine_test::Json m = engine_test::Json::parse_file(report)["runs"][0]["model"];
  EXPECT_EQ(m["kv_n_ctx"].number(), 542);
  EXPECT_EQ(m["kv_bytes"].number(), (4 * 542 + 22 * 519) * 1024);
  EXPECT_EQ(m["kv_full_bytes"].number(), 26 * 542 * 1024);
  EXPECT_EQ(m["kv_cached_layers"].number(), 26);
  EXPECT_EQ(m["kv_windowed_layers"].number(), 22);
  EXPECT_EQ(m["kv_windows"].floats(), std::vector<float>{512});
}

}  // namespace
