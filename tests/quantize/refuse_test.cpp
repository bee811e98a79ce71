// quantize refuses bad requests with a clear error and leaves every file as it
// was: the input, an output that already exists, and no temporary file left.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/quantize_model.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

using quantize_test::FileStamp;
using quantize_test::TempDir;

class Refuse : public testing::Test {
 protected:
  void SetUp() override {
    const auto f32 = engine_test::shared_file("models/reference/llama-d256-F32.gguf");
    const auto q4_0 = engine_test::shared_file("models/reference/llama-d256-Q4_0.gguf");
    const auto q8_0 = engine_test::shared_file("models/reference/llama-d256-Q8_0.gguf");
    const auto q4_k_m = engine_test::shared_file("models/reference/llama-d256-Q4_K_M.gguf");
    if (f32.empty() || q4_0.empty() || q8_0.empty() || q4_k_m.empty()) {
      GTEST_SKIP() << "missing the llama-d256 reference models in " << engine_test::shared_dir();
    }
    // Copies, so no bug here can touch the shared files.
    quantize_test::copy_file(f32.string(), dir_ / "f32.gguf");
    quantize_test::copy_file(q4_0.string(), dir_ / "q4_0.gguf");
    quantize_test::copy_file(q8_0.string(), dir_ / "q8_0.gguf");
    quantize_test::copy_file(q4_k_m.string(), dir_ / "q4_k_m.gguf");
    std::FILE* f = std::fopen((dir_ / "existing.gguf").c_str(), "wb");
    std::fputs("an output that exists already", f);
    std::fclose(f);
  }

  // Runs quantize expecting a refusal whose message contains `expected`, and
  // checks that every file in the folder is unchanged and nothing was added.
  void expect_refused(tools::QuantizeOptions o, const std::string& expected) {
    std::vector<std::pair<std::string, FileStamp>> before;
    for (const std::string& name : dir_.entries()) before.emplace_back(name, FileStamp::of(dir_ / name));
    o.out = nullptr;
    try {
      tools::quantize_model(o);
      ADD_FAILURE() << "quantize " << o.input << " " << o.output << " " << o.type << " was not refused";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << "message: " << e.what();
      std::printf("refused as expected: %s\n", e.what());
    }
    for (const auto& [name, stamp] : before) EXPECT_TRUE(FileStamp::of(dir_ / name) == stamp) << name << " changed";
    EXPECT_EQ(dir_.entries().size(), before.size()) << "a file was left behind";
  }

  tools::QuantizeOptions request(const std::string& in, const std::string& out, const std::string& type) {
    tools::QuantizeOptions o;
    o.input = dir_ / in;
    o.output = dir_ / out;
    o.type = type;
    return o;
  }

  TempDir dir_{"quantize-refuse"};
};

TEST_F(Refuse, UnknownType) {
  expect_refused(request("f32.gguf", "existing.gguf", "Q3_X"), "unknown type 'Q3_X'; known types: F32, F16");
}

TEST_F(Refuse, OutputThatIsTheInput) {
  expect_refused(request("f32.gguf", "f32.gguf", "Q4_0"), "is the input file");
  tools::QuantizeOptions o = request("f32.gguf", "", "Q4_0");
  o.output = (dir_.path() / "." / "f32.gguf").string();  // another name, same file
  expect_refused(o, "is the input file");
  ASSERT_EQ(::link((dir_ / "f32.gguf").c_str(), (dir_ / "hardlink.gguf").c_str()), 0);
  expect_refused(request("f32.gguf", "hardlink.gguf", "Q4_0"), "(same device and inode)");
  ASSERT_EQ(::symlink((dir_ / "f32.gguf").c_str(), (dir_ / "symlink.gguf").c_str()), 0);
  expect_refused(request("symlink.gguf", "f32.gguf", "Q4_0"), "is the input file");
}

TEST_F(Refuse, InputAlreadyQuantizedToFewerBits) {
  expect_refused(request("q4_0.gguf", "existing.gguf", "Q8_0"), "gains nothing");
  expect_refused(request("q4_0.gguf", "new.gguf", "F16"), "is Q4_0 (4.50 bits/weight)");
  expect_refused(request("q4_k_m.gguf", "new.gguf", "Q5_K_M"), "Quantize the original F32, F16 or BF16 file");
}

TEST_F(Refuse, RequantizingNeedsTheFlag) {
  expect_refused(request("q8_0.gguf", "existing.gguf", "Q4_0"), "--allow-requantize");
  tools::QuantizeOptions o = request("q8_0.gguf", "existing.gguf", "Q4_0");
  o.allow_requantize = true;
  o.pure = true;
  o.out = nullptr;
  const tools::QuantizeResult r = tools::quantize_model(o);
  EXPECT_EQ(r.n_requantized, 30u);
  const gguf::File out = gguf::File::open(dir_ / "existing.gguf");
  EXPECT_EQ(out.tensor("blk.0.attn_q.weight").type, gguf::GgmlType::Q4_0);
}

TEST_F(Refuse, NoInputOrNoWritableFolder) {
  expect_refused(request("missing.gguf", "new.gguf", "Q4_0"), "missing.gguf: cannot open");
  tools::QuantizeOptions o = request("f32.gguf", "", "Q4_0");
  o.output = (dir_.path() / "no-such-folder" / "out.gguf").string();
  expect_refused(o, "out.gguf: cannot write there: the folder '" + (dir_.path() / "no-such-folder").string() +
                        "' does not exist");
}

TEST_F(Refuse, RowLengthWithoutAFallbackType) {
  // 80-element rows fit no 32-element block: llama.cpp has no fallback for Q4_0.
  tools::SynthOptions s;
  s.shape.name = "odd";
  s.shape.arch = "llama";
  s.shape.n_embd = 80;
  s.shape.n_layer = 1;
  s.shape.n_head = 2;
  s.shape.n_head_kv = 2;
  s.shape.head_dim = 40;
  s.shape.n_ff = 160;
  s.shape.n_vocab = 300;
  s.shape.n_ctx = 64;
  s.type = "F32";
  s.output = dir_ / "odd.gguf";
  s.out = nullptr;
  tools::synth_model(s);
  expect_refused(request("odd.gguf", "existing.gguf", "Q4_0"), "has no fallback type");
  // K types fall back, here down to F16 (--pure: without it the LM head
  // rule asks for Q8_0, which has no fallback either).
  expect_refused(request("odd.gguf", "existing.gguf", "Q4_K"), "the block size of Q8_0, which has no fallback");
  tools::QuantizeOptions o = request("odd.gguf", "odd-q4k.gguf", "Q4_K");
  o.pure = true;
  o.out = nullptr;
  const tools::QuantizeResult r = tools::quantize_model(o);
  EXPECT_GT(r.n_fallbacks, 0u);
  EXPECT_EQ(gguf::File::open(dir_ / "odd-q4k.gguf").tensor("blk.0.attn_q.weight").type, gguf::GgmlType::F16);
}

TEST_F(Refuse, SameTypesAreCopiedUnchanged) {
  // Re-quantizing a Q4_K_M file to Q4_K_M changes no tensor: not a
  // re-quantization, and the file comes out identical.
  tools::QuantizeOptions o = request("q4_k_m.gguf", "again.gguf", "Q4_K_M");
  o.out = nullptr;
  EXPECT_EQ(tools::quantize_model(o).n_requantized, 0u);
  EXPECT_TRUE(quantize_test::read_bytes(dir_ / "again.gguf") == quantize_test::read_bytes(dir_ / "q4_k_m.gguf"));
}

}  // namespace
