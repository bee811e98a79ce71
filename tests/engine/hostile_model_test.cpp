// Hostile and broken model files (issue 8, item 3): each gives an error that
// names the file, the tensor or key and the problem, and never a crash. The
// bad files are copies of stories260K.gguf with one thing changed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "gguf/file.h"
#include "tests/engine/model_edit.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
using engine_test::ModelEdit;

class HostileModel : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    src_ = engine_test::default_model();
    dir_ = engine_test::temp_dir("hostile-model");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    engine::set_log_level(engine::LogLevel::info);
  }

  // The copy with `edit` applied.
  std::string edited(const ModelEdit& edit, const std::string& name = "bad.gguf") {
    const fs::path dst = dir_ / name;
    engine_test::write_edited(src_, dst, edit);
    return dst.string();
  }
  // The copy with raw bytes poked into it.
  template <class T>
  std::string poked(uint64_t offset, T value) {
    std::ifstream in(src_, std::ios::binary);
    std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    const fs::path dst = dir_ / "poked.gguf";
    std::ofstream(dst, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return dst.string();
  }
  // The message of loading `path`, which must fail with an engine or GGUF error.
  static std::string load_error(const std::string& path) {
    try {
      engine::Model::load(path);
    } catch (const engine::Error& e) {
      return e.what();
    } catch (const gguf::Error& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " loaded";
    return "";
  }

  fs::path src_, dir_;
};

#define EXPECT_CONTAINS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

// Offsets and sizes that pass the header's syntax but point outside the data
// section: refused when the file is opened, before any tensor is read.
TEST_F(HostileModel, TensorOffsetsAndSizesOutsideTheData) {
  const gguf::File f = gguf::File::open(src_.string());
  const gguf::TensorInfo& last = f.tensors().back();  // blk.4.ffn_norm.weight, the data's last bytes
  const uint64_t field = engine_test::tensor_offset_field(last);
  std::string msg = load_error(poked<uint64_t>(field, f.data_size()));
  EXPECT_CONTAINS(msg, "poked.gguf: offset " + std::to_string(last.info_offset));
  EXPECT_CONTAINS(msg, "tensor '" + std::string(last.name) + "': data [" + std::to_string(f.data_size()));
  EXPECT_CONTAINS(msg, "runs past the end of the data section");
  // An offset near 2^64 must not wrap around the check.
  msg = load_error(poked<uint64_t>(field, std::numeric_limits<uint64_t>::max() - 31));
  EXPECT_CONTAINS(msg, "runs past the end of the data section");
  // A size that does: token_embd.weight with 4096 rows instead of 512.
  const gguf::TensorInfo& embd = f.tensor("token_embd.weight");
  msg = load_error(poked<uint64_t>(embd.info_offset + 8 + embd.name.size() + 4 + 8, 4096));
  EXPECT_CONTAINS(msg, "tensor 'token_embd.weight'");
}

// Hyperparameters that disagree with the tensors: the tensor, its shape and
// the expected shape are named.
TEST_F(HostileModel, HyperparametersThatDisagreeWithTheShapes) {
  std::string msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.embedding_length", 128); }}));
  EXPECT_CONTAINS(msg, "bad.gguf: tensor 'token_embd.weight' has shape [64, 512], expected [128, 512]");
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.feed_forward_length", 171); }}));
  EXPECT_CONTAINS(msg, "tensor 'blk.0.ffn_gate.weight' has shape [64, 172], expected [64, 171]");
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.attention.head_count_kv", 8); }}));
  EXPECT_CONTAINS(msg, "tensor 'blk.0.attn_k.weight' has shape [64, 32], expected [64, 64]");
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.attention.head_count", 3); }}));
  EXPECT_CONTAINS(msg, "attention.head_count 3 is not a multiple of head_count_kv 4");
  // More blocks than the file has tensors for: refused before sizing anything
  // by it (by the 5 tensors every layer of any spec has), then exactly (the 9
  // of a llama layer) once the layers' specs are known.
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.block_count", 4000000000u); }}));
  EXPECT_CONTAINS(msg, "block_count 4000000000 needs at least 20000000000 tensors, the file has 48");
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.block_count", 6); }}));
  EXPECT_CONTAINS(msg, "block_count 6 needs at least 54 tensors, the file has 48");
  // Fewer blocks than the file has: the model loads, the extra tensors are unused.
  EXPECT_NO_THROW(engine::Model::load(edited({.metadata = [](gguf::Writer& w) { w.set_u32("llama.block_count", 4); }})));
  // Sizes whose product wraps 32 bits would match tensors of the wrapped size.
  msg = load_error(edited({.metadata = [](gguf::Writer& w) {
    w.set_u32("llama.attention.head_count", 65536);
    w.set_u32("llama.attention.head_count_kv", 65536);
    w.set_u32("llama.attention.key_length", 65536);
  }}));
  EXPECT_CONTAINS(msg, "attention.head_count 65536 x attention.key_length 65536 overflows 32 bits");
  msg = load_error(edited({.metadata = [](gguf::Writer& w) { w.set_string("llama.embedding_length", "64"); }}));
  EXPECT_CONTAINS(msg, "metadata 'llama.embedding_length' is string \"64\", expected a non-negative integer");
}

// NaN or Inf produced by the weights: reported with the layer that produced
// it, the session left as it was, never garbage logits.
TEST_F(HostileModel, NanFromTheWeightsNamesTheLayer) {
  const auto model = engine::Model::load(
      edited({.f32_tensors = {{"blk.2.ffn_norm.weight", [](float* v, size_t) { v[5] = NAN; }}}}));
  engine::Session s(*model, {.n_ctx = 16});
  const std::vector<int32_t> prompt = {1, 403, 407};
  try {
    s.eval(prompt);
    FAIL() << "evaluated";
  } catch (const engine::ModelError& e) {
    // The norm's NaN reaches every element through the FFN's matmuls.
    EXPECT_STREQ(e.what(),
                 (dir_ / "bad.gguf").string()
                     .append(": layer 2 (blk.2.*) produced NaN in the residual stream (position 0, element 0); the "
                             "model's weights are likely corrupt")
                     .c_str());
  }
  EXPECT_EQ(s.n_past(), 0u);
  EXPECT_TRUE(s.logits().empty());
}

TEST_F(HostileModel, InfFromTheWeightsNamesTheLayer) {
  // An attention output projection with huge weights overflows fp32 in layer 1.
  const auto model = engine::Model::load(edited({.f32_tensors = {{"blk.1.attn_output.weight", [](float* v, size_t n) {
                                                                    for (size_t i = 0; i < n; ++i) v[i] = 3e38f;
                                                                  }}}}));
  engine::Session s(*model, {.n_ctx = 16});
  const int32_t bos = 1;
  try {
    s.eval({&bos, 1});
    FAIL() << "evaluated";
  } catch (const engine::ModelError& e) {
    EXPECT_CONTAINS(std::string(e.what()), "bad.gguf: layer 1 (blk.1.*) produced ");
    EXPECT_CONTAINS(std::string(e.what()), " in the residual stream (position 0, element ");
  }
}

TEST_F(HostileModel, NanInTheOutputLayerIsReportedThere) {
  const auto model = engine::Model::load(
      edited({.f32_tensors = {{"output.weight", [](float* v, size_t) { v[64 * 7 + 3] = INFINITY; }}}}));
  engine::Session s(*model, {.n_ctx = 16});
  const std::vector<int32_t> prompt = {1, 403};
  try {
    s.eval(prompt);  // the logits of the last token, at position 1
    FAIL() << "evaluated";
  } catch (const engine::ModelError& e) {
    EXPECT_CONTAINS(std::string(e.what()), "the output layer (output_norm.weight, output.weight) produced ");
    EXPECT_CONTAINS(std::string(e.what()), "in the logits (position 1, token id 7)");
  }
  EXPECT_EQ(s.n_past(), 0u);  // neither token is in the context
}

// The reader fixes the file's size before mapping it; what a file does after
// that is documented in gguf/file.cpp (File::open). A file replaced by a
// rename (how gguf::Writer and most downloaders write) leaves the mapping on
// the old contents.
TEST_F(HostileModel, AFileReplacedAfterLoadingKeepsTheMappedContents) {
  const fs::path path = dir_ / "model.gguf";
  fs::copy_file(src_, path);
  const auto model = engine::Model::load(path.string());
  engine::Session s(*model, {.n_ctx = 16});
  const int32_t bos = 1;
  s.eval({&bos, 1});
  const std::vector<float> before(s.logits().begin(), s.logits().end());
  // Replace it with a model whose weights are all zero, then evaluate again.
  engine_test::write_edited(src_, dir_ / "other.gguf",
                            {.f32_tensors = {{"output.weight", [](float* v, size_t n) { std::fill(v, v + n, 0.0f); }}}});
  fs::rename(dir_ / "other.gguf", path);
  s.reset();
  s.eval({&bos, 1});
  EXPECT_EQ(std::vector<float>(s.logits().begin(), s.logits().end()), before);
}

}  // namespace
