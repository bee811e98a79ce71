// End-of-generation tokens named only by their text (<end_of_turn>, <|im_end|>,
// <|end|>, ...), or by tokenizer.ggml.eot_token_id, stop generation: in `run`
// and in a C API loop (engine_model_is_end_of_generation, as README's example
// uses it). The model is a tiny synth model; its vocabulary is rewritten so
// that the token it picks greedily after BOS carries the end-of-turn text.
// synth's weights depend on the seed and the shape only, not on the token
// texts, so the rewritten model still picks that token.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/api/engine.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "tests/support/shared_data.h"
#include "tests/tools/child_process.h"

namespace {

namespace fs = std::filesystem;

void synth(const std::string& path, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--arch", "llama", "--n-embd", "64", "--n-layer", "2", "--n-head", "4",
                                   "--n-ff", "128", "--type", "F32", "--seed", "7", "--no-progress", "-o", path};
  args.insert(args.end(), extra.begin(), extra.end());
  const tool_test::Outcome o = tool_test::run(tool_test::tool("synth"), args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
}

// The C API loop of README: greedy tokens after BOS until an end-of-generation
// token or `limit`; returns the tokens generated before the stop.
std::vector<int32_t> generate(const std::string& model_path, int limit, bool* stopped) {
  engine_model* model = nullptr;
  EXPECT_EQ(engine_model_load(model_path.c_str(), &model), ENGINE_OK) << engine_last_error();
  engine_session_params sp = engine_session_default_params();
  sp.n_ctx = 64;
  sp.n_threads = 1;
  engine_session* session = nullptr;
  EXPECT_EQ(engine_session_create(model, &sp, &session), ENGINE_OK) << engine_last_error();
  engine_sampler_params gp = engine_sampler_default_params();
  gp.temperature = 0;
  engine_sampler* sampler = nullptr;
  EXPECT_EQ(engine_sampler_create(&gp, &sampler), ENGINE_OK) << engine_last_error();
  const int32_t bos = engine_model_bos(model);
  EXPECT_EQ(engine_prefill(session, &bos, 1), ENGINE_OK) << engine_last_error();
  std::vector<int32_t> out;
  *stopped = false;
  for (int i = 0; i < limit; ++i) {
    int32_t t = -1;
    EXPECT_EQ(engine_sample(sampler, session, &t), ENGINE_OK) << engine_last_error();
    if (engine_model_is_end_of_generation(model, t)) {
      *stopped = true;
      break;
    }
    out.push_back(t);
    EXPECT_EQ(engine_decode(session, t), ENGINE_OK) << engine_last_error();
  }
  engine_sampler_free(sampler);
  engine_session_free(session);
  engine_model_free(model);
  return out;
}

class EndOfGeneration : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = engine_test::temp_dir("end-of-generation");
    base_ = (dir_ / "base.gguf").string();
    synth(base_, {"--n-vocab", "300"});
    bool stopped = false;
    const std::vector<int32_t> tokens = generate(base_, 4, &stopped);
    ASSERT_FALSE(stopped) << "the byte-level vocabulary's EOS came first; pick another seed";
    ASSERT_EQ(tokens.size(), 4u);
    first_ = tokens[0];
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The base model's vocabulary with token first_ renamed to `text` (typed
  // normal, as a careless converter leaves it) and `keys` set; then the same
  // model with it.
  std::string model_with(const std::string& name, const std::string& text, const std::vector<std::string>& keys) {
    const gguf::File base = gguf::File::open(base_);
    std::vector<std::string> tokens;
    const gguf::Value* list = base.find_array("tokenizer.ggml.tokens");
    for (uint64_t i = 0; i < list->array_size(); ++i) tokens.emplace_back(*list->at(i).to_string());
    std::vector<int32_t> types(tokens.size(), 1);
    const gguf::Value* type_list = base.find_array("tokenizer.ggml.token_type");
    for (uint64_t i = 0; type_list != nullptr && i < type_list->array_size(); ++i) {
      types[i] = static_cast<int32_t>(*type_list->at(i).to_int());
    }
    if (!text.empty()) {
      tokens[static_cast<size_t>(first_)] = text;
      types[static_cast<size_t>(first_)] = 1;  // it may have been a <0xNN> byte token
    }
    gguf::Writer w;
    w.copy_metadata(base);
    w.set_array_strings("tokenizer.ggml.tokens", tokens);
    w.set_array_i32("tokenizer.ggml.token_type", types);
    for (const std::string& key : keys) w.set_u32(key, static_cast<uint32_t>(first_));
    const std::string vocab = (dir_ / (name + "-vocab.gguf")).string();
    w.write(vocab);
    const std::string model = (dir_ / (name + ".gguf")).string();
    synth(model, {"--vocab", vocab});
    return model;
  }

  fs::path dir_;
  std::string base_;
  int32_t first_ = -1;
};

TEST_F(EndOfGeneration, TokensNamedByTextStopTheCApiLoop) {
  for (const char* text : {"<end_of_turn>", "<|im_end|>", "<|end|>", "<|eot_id|>", "<turn|>", "<|end_of_text|>"}) {
    bool stopped = false;
    const std::vector<int32_t> tokens = generate(model_with("eog", text, {}), 4, &stopped);
    EXPECT_TRUE(stopped) << text << " did not end generation";
    EXPECT_TRUE(tokens.empty()) << text << ": " << tokens.size() << " tokens before the stop";
  }
  // An ordinary text does not stop it.
  bool stopped = false;
  EXPECT_EQ(generate(model_with("plain", "<not_an_end>", {}), 4, &stopped).size(), 4u);
  EXPECT_FALSE(stopped);
}

TEST_F(EndOfGeneration, EotKeyStopsTheCApiLoop) {
  bool stopped = false;
  EXPECT_TRUE(generate(model_with("eot-key", "", {"tokenizer.ggml.eot_token_id"}), 4, &stopped).empty());
  EXPECT_TRUE(stopped);
}

TEST_F(EndOfGeneration, RunStopsAtEndOfTurnUnlessIgnoringIt) {
  const std::string model = model_with("gemma-style", "<end_of_turn>", {});
  const std::vector<std::string> args = {"-m", model, "-n", "6", "--temp", "0", "-t", "1", "-p", ""};
  tool_test::Outcome o = tool_test::run(tool_test::tool("run"), args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("no decode steps (generated 1 token)"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("<end_of_turn>"), std::string::npos) << "the end token was printed: " << o.out;

  std::vector<std::string> ignoring = args;
  ignoring.push_back("--ignore-eos");
  o = tool_test::run(tool_test::tool("run"), ignoring);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("decode:     5 tokens"), std::string::npos) << o.err;
}

}  // namespace
