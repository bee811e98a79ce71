// quantize --imatrix refuses a bad importance matrix (not one, truncated, an
// entry of the wrong size, a half pair, no metadata, a non-finite value) with
// the file and tensor named, and a type that needs a matrix (Q2_K_S) given
// none or one without the tensor's entry; nothing is written in any case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>

#include "gguf/writer.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/quantize_model.h"
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

namespace fs = std::filesystem;
using quantize_test::FileStamp;
using quantize_test::TempDir;

const fs::path kReference = fs::path(ENGINE_SOURCE_DIR) / "tests/quantize/imatrix";

// One weight matrix's data as llama-imatrix writes it.
struct Entry {
  std::string name;
  std::vector<float> sums;
  std::vector<float> counts{13 * 128.0f};
};

class ImatrixRefuse : public testing::Test {
 protected:
  void SetUp() override {
    // A small llama (2 layers, every row 256 long) and a matrix that fits it.
    std::vector<std::string> args{"synth", "--arch", "llama", "--n-embd", "256", "--n-layer", "2", "--n-head", "4",
                                  "--n-head-kv", "1", "--n-ff", "256", "--n-vocab", "320", "--type", "F32", "-o",
                                  dir_ / "model.gguf", "--no-progress"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(argv.size()), argv.data());
    cmd.options.out = nullptr;
    tools::synth_model(cmd.options);
    for (int layer = 0; layer < 2; ++layer) {
      for (const char* w : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
        Entry e{"blk." + std::to_string(layer) + "." + w + ".weight", std::vector<float>(256)};
        for (size_t i = 0; i < e.sums.size(); ++i) e.sums[i] = 100.0f + static_cast<float>((i * 37) % 101);
        entries_.push_back(std::move(e));
      }
    }
  }

  std::string write_imatrix(const std::string& name, const std::vector<Entry>& entries, bool metadata = true) {
    gguf::Writer w;
    if (metadata) {
      w.set_string("general.type", "imatrix");
      const std::vector<std::string> datasets{"calibration.txt"};
      w.set_array_strings("imatrix.datasets", datasets);
      w.set_u32("imatrix.chunk_count", 13);
      w.set_u32("imatrix.chunk_size", 128);
    }
    for (const Entry& e : entries) {
      auto add = [&](const std::string& tensor, const std::vector<float>& v) {
        const std::vector<uint64_t> ne{v.size()};
        w.add_tensor(tensor, gguf::GgmlType::F32, ne,
                     std::span(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)));
      };
      if (!e.sums.empty()) add(e.name + ".in_sum2", e.sums);
      if (!e.counts.empty()) add(e.name + ".counts", e.counts);
    }
    const std::string path = dir_ / name;
    w.write(path);
    return path;
  }

  // quantize model.gguf out.gguf TYPE --imatrix `imatrix` must be refused with
  // a message containing every one of `expected`; nothing may be written.
  void expect_refused(const std::string& type, const std::string& imatrix, std::vector<std::string> expected) {
    const std::vector<std::string> before = dir_.entries();
    tools::QuantizeOptions o;
    o.input = dir_ / "model.gguf";
    o.output = dir_ / "out.gguf";
    o.type = type;
    o.imatrix = imatrix;
    o.out = nullptr;
    try {
      tools::quantize_model(o);
      ADD_FAILURE() << "quantize " << type << " --imatrix '" << imatrix << "' was not refused";
    } catch (const std::exception& e) {
      for (const std::string& part : expected) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "message: " << e.what();
      }
      std::printf("refused as expected: %s\n", e.what());
    }
    EXPECT_FALSE(fs::exists(dir_ / "out.gguf"));
    EXPECT_EQ(dir_.entries().size(), before.size()) << "a file was left behind";
  }

  TempDir dir_{"imatrix-refuse"};
  std::vector<Entry> entries_;
};

TEST_F(ImatrixRefuse, AGoodMatrixIsAccepted) {
  tools::QuantizeOptions o;
  o.input = dir_ / "model.gguf";
  o.output = dir_ / "out.gguf";
  o.type = "Q2_K_S";
  o.imatrix = write_imatrix("good.gguf", entries_);
  o.out = nullptr;
  const tools::QuantizeResult r = tools::quantize_model(o);
  EXPECT_EQ(r.n_imatrix_used, 14u);
  // llama-imatrix has no entries for the LM head and the embeddings: as
  // llama-quantize, they are quantized without.
  EXPECT_EQ(r.imatrix_missing, (std::vector<std::string>{"output.weight", "token_embd.weight"}));
  const gguf::File out = gguf::File::open(o.output);
  EXPECT_EQ(out.get_string("quantize.imatrix.file"), o.imatrix.substr(0, 127));
  EXPECT_EQ(out.get_string("quantize.imatrix.dataset"), "calibration.txt");
  EXPECT_EQ(out.get_uint("quantize.imatrix.entries_count"), 14u);
  EXPECT_EQ(out.get_uint("quantize.imatrix.chunks_count"), 13u);
}

TEST_F(ImatrixRefuse, NotAnImatrix) {
  const std::string text = (kReference / "calibration.txt").string();
  expect_refused("Q4_K_M", text, {text, "not an importance matrix", "legacy .dat"});
  expect_refused("Q4_K_M", dir_ / "model.gguf", {"model.gguf", "missing importance matrix metadata"});
  expect_refused("Q4_K_M", dir_ / "absent.gguf", {"absent.gguf", "cannot open"});
}

TEST_F(ImatrixRefuse, TruncatedFiles) {
  const std::string good = write_imatrix("good.gguf", entries_);
  auto truncated = [&](const std::string& from, const std::string& name, size_t bytes) {
    std::vector<uint8_t> b = quantize_test::read_bytes(from);
    b.resize(bytes);
    std::FILE* f = std::fopen((dir_ / name).c_str(), "wb");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
    return dir_ / name;
  };
  expect_refused("Q4_K_M", truncated(good, "cut.gguf", 3000), {"cut.gguf"});
  const std::string dat = (kReference / "imatrix.dat").string();
  expect_refused("Q4_K_M", truncated(dat, "cut.dat", 1000),
                 {"cut.dat", "reading the 256 values of entry 'blk.0.attn_k.weight' goes past the end of the file (1000 bytes)"});
  // A damaged value count is named, not allocated.
  const int32_t header[] = {1, 4, 0x64636261 /* "abcd" */, 1, 2000000000};
  std::FILE* f = std::fopen((dir_ / "huge.dat").c_str(), "wb");
  std::fwrite(header, sizeof header, 1, f);
  std::fclose(f);
  expect_refused("Q4_K_M", dir_ / "huge.dat",
                 {"huge.dat", "reading the 2000000000 values of entry 'abcd' goes past the end of the file (20 bytes)"});
}

TEST_F(ImatrixRefuse, AnEntryOfTheWrongSize) {
  entries_[0].sums.resize(128);  // blk.0.attn_q.weight, made for a model of width 128
  const std::string path = write_imatrix("other-model.gguf", entries_);
  expect_refused("IQ4_XS", path,
                 {path, "entry 'blk.0.attn_q.weight' has 128 weights, but tensor 'blk.0.attn_q.weight' needs 256"});
}

TEST_F(ImatrixRefuse, AHalfPair) {
  entries_[12].counts.clear();  // blk.1.ffn_up.weight
  const std::string path = write_imatrix("half.gguf", entries_);
  expect_refused("Q4_K_M", path, {path, "'blk.1.ffn_up.weight.in_sum2' has no 'blk.1.ffn_up.weight.counts'"});
  entries_[12].counts = {1.0f, 1.0f, 1.0f};  // 256 sums do not split into 3 experts
  expect_refused("Q4_K_M", write_imatrix("experts.gguf", entries_), {"'blk.1.ffn_up.weight.in_sum2' [256]"});
}

TEST_F(ImatrixRefuse, NoMetadata) {
  const std::string path = write_imatrix("bare.gguf", entries_, false);
  expect_refused("Q4_K_M", path, {path, "missing importance matrix metadata"});
}

TEST_F(ImatrixRefuse, ANonFiniteValue) {
  entries_[3].sums[7] = std::numeric_limits<float>::infinity();
  const std::string path = write_imatrix("inf.gguf", entries_);
  expect_refused("Q4_K_M", path, {path, "entry 'blk.0.attn_output.weight': value 7 is not finite"});
}

// A 3-D tensor of experts is quantized with each expert's own row of the
// matrix (llama-imatrix writes one per expert, each divided by its own count).
TEST_F(ImatrixRefuse, ExpertsUseTheirOwnWeights) {
  constexpr uint64_t kCols = 256, kRows = 4, kExperts = 2;
  std::vector<float> w(kCols * kRows * kExperts);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
  gguf::Writer model;
  model.set_string("general.architecture", "llama");
  model.set_u32("llama.block_count", 1);
  model.set_u32("llama.expert_count", kExperts);
  const std::vector<uint64_t> ne{kCols, kRows, kExperts};
  model.add_tensor("blk.0.ffn_down_exps.weight", gguf::GgmlType::F32, ne,
                   std::span(reinterpret_cast<const uint8_t*>(w.data()), w.size() * sizeof(float)));
  model.write(dir_ / "experts-model.gguf");
  Entry e{"blk.0.ffn_down_exps.weight", std::vector<float>(kCols * kExperts), {10.0f, 40.0f}};
  for (size_t i = 0; i < e.sums.size(); ++i) e.sums[i] = i < kCols ? 1.0f + static_cast<float>(i % 5) : 100.0f / (1 + i % 3);
  tools::QuantizeOptions o;
  o.input = dir_ / "experts-model.gguf";
  o.output = dir_ / "out.gguf";
  o.type = "Q4_0";
  o.pure = true;
  o.imatrix = write_imatrix("experts.gguf", {e});
  o.out = nullptr;
  EXPECT_EQ(tools::quantize_model(o).n_imatrix_used, 1u);

  const gguf::File out = gguf::File::open(o.output);
  const gguf::TensorInfo& t = out.tensor("blk.0.ffn_down_exps.weight");
  const size_t row_bytes = *gguf::row_bytes(gguf::GgmlType::Q4_0, kCols);
  const auto* ops = kernels::ref::type_ops(gguf::GgmlType::Q4_0);
  for (uint64_t expert = 0; expert < kExperts; ++expert) {
    std::vector<float> weights(kCols);
    for (size_t i = 0; i < kCols; ++i) weights[i] = e.sums[expert * kCols + i] / e.counts[expert];
    for (uint64_t r = 0; r < kRows; ++r) {
      const uint64_t row = expert * kRows + r;
      std::vector<uint8_t> want(row_bytes);
      ops->quantize_row_weighted(w.data() + row * kCols, want.data(), kCols, weights.data());
      EXPECT_EQ(std::memcmp(out.tensor_data(t) + row * row_bytes, want.data(), row_bytes), 0)
          << "expert " << expert << " row " << r;
    }
  }
}

// Q2_K_S's Q2_K tensors need a matrix, as in llama-quantize: refused without
// one, or with one that lacks a Q2_K tensor's entry; --dry-run says so.
TEST_F(ImatrixRefuse, Q2KSNeedsAMatrix) {
  expect_refused("Q2_K_S", "",
                 {"Q2_K_S needs an importance matrix: tensor 'blk.0.attn_k.weight' (and 11 more) would be Q2_K",
                  "Pass --imatrix FILE"});
  std::vector<Entry> without_gate;
  for (const Entry& e : entries_) {
    if (e.name != "blk.0.ffn_gate.weight") without_gate.push_back(e);
  }
  const std::string path = write_imatrix("no-gate.gguf", without_gate);
  expect_refused("Q2_K_S", path, {path, "has no entry for tensor 'blk.0.ffn_gate.weight', which Q2_K_S writes as Q2_K"});

  tools::QuantizeOptions o;
  o.input = dir_ / "model.gguf";
  o.type = "Q2_K_S";
  o.dry_run = true;
  TempDir log_dir("imatrix-dry-run");
  std::FILE* log = std::fopen((log_dir / "log").c_str(), "w+");
  o.out = log;
  tools::quantize_model(o);
  std::fclose(log);
  const std::vector<uint8_t> text = quantize_test::read_bytes(log_dir / "log");
  EXPECT_NE(std::string(text.begin(), text.end()).find("WARNING: Q2_K_S needs an importance matrix"), std::string::npos);
}

}  // namespace
