// quantize --imatrix against llama-quantize --imatrix: the synth model of
// tests/quantize/imatrix/llama-quantize.json, quantized here with the
// importance matrix llama-imatrix wrote for it (imatrix.gguf, and the legacy
// imatrix.dat), must give the bytes whose SHA-256 llama-quantize's files had,
// for every type whose quantizer takes the matrix (COMMANDS.md has the
// commands). And a bad matrix, or a type that needs one given none, is refused
// with the file and tensor named and nothing written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "gguf/writer.h"
#include "tests/quantize/test_util.h"
#include "tests/support/json.h"
#include "tools/bench/sha256.h"
#include "tools/common/model_writing/imatrix.h"
#include "tools/common/model_writing/quantize_model.h"
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

namespace fs = std::filesystem;
using quantize_test::FileStamp;
using quantize_test::TempDir;

const fs::path kDir = fs::path(ENGINE_SOURCE_DIR) / "tests/quantize/imatrix";

const engine_test::Json& reference() {
  static const engine_test::Json j = engine_test::Json::parse_file(kDir / "llama-quantize.json");
  return j;
}

// The model, written once per run by synth with the recorded arguments and
// checked to be the file llama-quantize read.
const std::string& model_path() {
  static TempDir dir("imatrix-model");
  static const std::string path = [] {
    const std::string out = dir / "model-F32.gguf";
    std::vector<std::string> args{"synth"};
    std::istringstream words(reference()["synth"].string());
    for (std::string w; words >> w;) args.push_back(w);
    for (const char* w : {"-o", out.c_str(), "--no-progress"}) args.emplace_back(w);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(argv.size()), argv.data());
    cmd.options.out = nullptr;
    tools::synth_model(cmd.options);
    return out;
  }();
  return path;
}

// Runs from the reference folder: the output records the matrix's path as
// given, so it must be given as llama-quantize was given it ("imatrix.gguf").
class InReferenceDir {
 public:
  InReferenceDir() : previous_(fs::current_path()) { fs::current_path(kDir); }
  ~InReferenceDir() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

tools::QuantizeOptions options(const std::string& type, const std::string& imatrix, const std::string& out) {
  tools::QuantizeOptions o;
  o.input = model_path();
  o.output = out;
  o.type = type;
  o.imatrix = imatrix;
  o.out = nullptr;
  return o;
}

struct Case {
  std::string type, imatrix, sha256;
  bool pure = false;
  std::string name() const {
    std::string n = type + (pure ? "_pure" : "") + (imatrix == "imatrix.dat" ? "_dat" : "");
    return n;
  }
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const engine_test::Json& c : reference()["cases"].array()) {
    out.push_back({c["type"].string(), c["imatrix"].string(), c["sha256"].string(), c["pure"].boolean()});
  }
  return out;
}

class ImatrixBytes : public testing::TestWithParam<Case> {};

TEST_P(ImatrixBytes, EqualLlamaQuantizeWithTheSameMatrix) {
  const Case& c = GetParam();
  // Under qemu the searches are emulated floating point (a minute per file):
  // there Q4_0 stands for the writing path, and ref_ggml_rows_test checks
  // every weighted quantizer on every CPU model.
  if (quantize_test::reduced() && c.type != "Q4_0") {
    GTEST_SKIP() << "the other types run natively only (emulated: about a minute per file)";
  }
  ASSERT_EQ(bench::sha256_file(model_path()), reference()["model_sha256"].string())
      << "synth no longer writes the model llama-quantize read: regenerate per COMMANDS.md";
  TempDir dir("imatrix-bytes");
  const std::string out = dir / "out.gguf";
  {
    InReferenceDir here;
    tools::QuantizeOptions o = options(c.type, c.imatrix, out);
    o.pure = c.pure;
    const tools::QuantizeResult r = tools::quantize_model(o);
    EXPECT_GT(r.n_imatrix_used + (c.type == "Q8_0" ? 1 : 0), 0u);
  }
  EXPECT_EQ(bench::sha256_file(out), c.sha256) << c.name() << ": not llama-quantize's bytes";
}

INSTANTIATE_TEST_SUITE_P(LlamaQuantize, ImatrixBytes, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name(); });

// The rows are quantized independently: the thread count changes nothing.
TEST(Imatrix, ThreadCountChangesNothing) {
  if (quantize_test::reduced()) GTEST_SKIP() << "native only: the row split is the same code on every CPU";
  TempDir dir("imatrix-threads");
  InReferenceDir here;
  for (size_t n : {1, 3}) {
    tools::QuantizeOptions o = options("Q4_0", "imatrix.gguf", dir / ("t" + std::to_string(n) + ".gguf"));
    o.n_threads = n;
    tools::quantize_model(o);
  }
  EXPECT_EQ(quantize_test::read_bytes(dir / "t1.gguf"), quantize_test::read_bytes(dir / "t3.gguf"));
}

// The two rules that depend on having a matrix (llama-quantize's): IQ4_XS
// keeps the first ffn_down layer IQ4_XS instead of Q5_K, Q4_0 guards it with
// Q4_1.
TEST(Imatrix, MixRulesFollowLlamaQuantize) {
  InReferenceDir here;
  auto ffn_down_0 = [](const std::string& type, const std::string& imatrix) {
    tools::QuantizeOptions o = options(type, imatrix, "");
    o.dry_run = true;
    for (const tools::PlannedTensor& p : tools::quantize_model(o).plan) {
      if (p.name == "blk.0.ffn_down.weight") return p.to;
    }
    return gguf::GgmlType::F32;
  };
  EXPECT_EQ(ffn_down_0("IQ4_XS", ""), gguf::GgmlType::Q5_K);
  EXPECT_EQ(ffn_down_0("IQ4_XS", "imatrix.gguf"), gguf::GgmlType::IQ4_XS);
  EXPECT_EQ(ffn_down_0("Q4_0", ""), gguf::GgmlType::Q4_0);
  EXPECT_EQ(ffn_down_0("Q4_0", "imatrix.gguf"), gguf::GgmlType::Q4_1);
  EXPECT_EQ(ffn_down_0("Q5_0", "imatrix.gguf"), gguf::GgmlType::Q5_1);
}

// The legacy format's weights equal the GGUF one's within float rounding
// (they were stored multiplied by the chunk count).
TEST(Imatrix, LegacyDatReadsLikeGguf) {
  const tools::Imatrix g = tools::load_imatrix((kDir / "imatrix.gguf").string());
  const tools::Imatrix d = tools::load_imatrix((kDir / "imatrix.dat").string());
  EXPECT_FALSE(g.legacy);
  EXPECT_TRUE(d.legacy);
  ASSERT_EQ(g.entries.size(), 56u);
  ASSERT_EQ(d.entries.size(), g.entries.size());
  EXPECT_EQ(g.chunk_count, 13u);
  EXPECT_EQ(d.chunk_count, 13u);
  EXPECT_EQ(g.datasets, std::vector<std::string>{"calibration.txt"});
  EXPECT_EQ(d.datasets, g.datasets);
  for (const auto& [name, w] : g.entries) {
    const std::vector<float>& v = d.entries.at(name);
    ASSERT_EQ(v.size(), w.size()) << name;
    for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(v[i], w[i], 1e-5f * w[i]) << name << " " << i;
  }
}

}  // namespace
