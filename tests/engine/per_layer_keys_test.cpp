// Metadata keys that may hold one value per layer (head_count, head_count_kv,
// feed_forward_length) are read as arrays, not refused: a model whose arrays
// repeat its scalars is the same model, and a layer whose value differs is
// held to tensors of its own shape. Keys that are one value for the whole
// model still refuse an array. Copies of stories260K.gguf (5 layers).
#include <gtest/gtest.h>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "tests/engine/model_edit.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(text, needle) EXPECT_NE(std::string(text).find(needle), std::string::npos) << (text)

class PerLayerKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_level(engine::LogLevel::error);
    src_ = engine_test::shared_file("models/stories260K.gguf");
    if (src_.empty()) GTEST_SKIP() << "missing shared file models/stories260K.gguf";
    dir_ = engine_test::temp_dir("per-layer-keys");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    engine::set_log_level(engine::LogLevel::info);
  }
  std::string with_array(const std::string& key, std::vector<uint32_t> values) {
    const fs::path dst = dir_ / "edited.gguf";
    engine_test::write_edited(src_, dst, {.metadata = [&](gguf::Writer& w) { w.set_array_u32(key, values); }});
    return dst.string();
  }
  static std::string load_error(const std::string& path) {
    try {
      engine::Model::load(path);
    } catch (const engine::Error& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " loaded";
    return "";
  }
  static std::vector<float> logits(const engine::Model& model) {
    engine::Session s(model, {.n_ctx = 16, .kv_type = engine::KvType::f32});
    const std::vector<int32_t> prompt = {1, 403, 407, 261};
    s.eval(prompt, /*all_logits=*/true);
    return {s.logits().begin(), s.logits().end()};
  }

  fs::path src_, dir_;
};

TEST_F(PerLayerKeys, ArraysThatRepeatTheScalarsGiveTheSameModel) {
  const auto model = engine::Model::load(src_.string());
  const std::vector<float> want = logits(*model);
  for (const char* key : {"llama.attention.head_count_kv", "llama.attention.head_count", "llama.feed_forward_length"}) {
    const uint32_t scalar = static_cast<uint32_t>(model->file().get_uint(key));
    const auto edited = engine::Model::load(with_array(key, std::vector<uint32_t>(5, scalar)));
    EXPECT_EQ(logits(*edited), want) << key;
    EXPECT_EQ(edited->config().layers[4].attention.n_head_kv, model->config().n_head_kv);
  }
}

TEST_F(PerLayerKeys, EachLayerIsHeldToItsOwnValue) {
  // stories260K has 8 heads of 8 over 4 KV heads: layer 2 with 2 KV heads
  // wants attn_k.weight of 16 rows, and the file has 32.
  const std::string msg = load_error(with_array("llama.attention.head_count_kv", {4, 4, 2, 4, 4}));
  EXPECT_CONTAINS(msg, "tensor 'blk.2.attn_k.weight' has shape [64, 32], expected [64, 16]");
  EXPECT_CONTAINS(load_error(with_array("llama.attention.head_count_kv", {4, 4, 3, 4, 4})),
                  "attention.head_count 8 is not a multiple of head_count_kv 3 in layer 2");
  EXPECT_CONTAINS(load_error(with_array("llama.feed_forward_length", {172, 172, 172, 172, 100})),
                  "tensor 'blk.4.ffn_gate.weight' has shape [64, 172], expected [64, 100]");
}

TEST_F(PerLayerKeys, ArraysOfTheWrongLengthOrForWholeModelKeysAreRefused) {
  EXPECT_CONTAINS(load_error(with_array("llama.attention.head_count_kv", {4, 4, 4})),
                  "metadata 'llama.attention.head_count_kv' has 3 values for 5 layers");
  EXPECT_CONTAINS(load_error(with_array("llama.embedding_length", {64, 64, 64, 64, 64})),
                  "metadata 'llama.embedding_length' is a per-layer array; llama reads one value for every layer");
}

}  // namespace
