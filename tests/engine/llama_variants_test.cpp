// Llama-architecture files of other families keep loading with what sets
// each apart in its file, read as llama.cpp's llama architecture reads it
// (src/models/llama.cpp and the generic keys of src/llama-model.cpp):
//   Llama 3.2  rope_freqs.weight (llama3 frequency divisors, whatever the
//              context), rope.freq_base 500000, the LM head tied to the embeddings
//   Mistral    rope.freq_base 1e6; a llama.attention.sliding_window key, which
//              llama.cpp's llama architecture does not read: every position is attended
//   Ministral  rope.freq_base 1e8; attention.key_length other than
//              n_embd / n_head (Mistral Nemo, Mistral Small 3)
//   SmolLM2    15 heads over 5 KV heads (groups of 3), tied, rope.freq_base 100000
// Small synth models of each; their logits against llama.cpp's are in
// tests/reference/llamacpp (llama32-d256, ministral-d256, smollm2-d240).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "gguf/file.h"
#include "tests/engine/model_edit.h"
#include "tests/engine/synth_files.h"

namespace {

tools::SynthShape small(tools::SynthShape s) {
  s.n_embd = 256;
  s.n_layer = 2;
  s.n_ff = 512;
  s.n_vocab = 320;
  return s;
}

tools::SynthShape custom(uint32_t n_head, uint32_t n_head_kv, uint32_t head_dim, float rope_base, bool tied) {
  tools::SynthShape s;
  s.name = "custom";
  s.arch = "llama";
  s.n_head = n_head;
  s.n_head_kv = n_head_kv;
  s.head_dim = head_dim;
  s.n_ctx = 4096;
  s.rope_base = rope_base;
  s.tied = tied;
  return small(s);
}

std::vector<float> logits(const engine::Model& model, uint32_t n_ctx = 64) {
  engine::Session s(model, {.n_ctx = n_ctx, .kv_type = engine::KvType::f32});
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 12; ++i) prompt.push_back(3 + (i * 53) % 300);
  s.eval(prompt, /*all_logits=*/true);
  return {s.logits().begin(), s.logits().end()};
}

TEST(LlamaVariants, Llama32ReadsItsRopeFrequencyFactorsAndTiedHead) {
  const quantize_test::TempDir dir("llama-variants");
  const tools::SynthShape* named = tools::find_shape("llama-3.2-1b");
  ASSERT_NE(named, nullptr);
  tools::SynthShape s = small(*named);
  s.n_head = 4;
  s.n_head_kv = 1;
  const std::string path = engine_test::write_synth(dir, s, "llama32.gguf");
  const auto model = engine::Model::load(path);
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.rope_freq_base, 500000.0f);
  EXPECT_TRUE(c.layers[0].attention.rope.freq_factors);
  const std::vector<float> factors = engine_test::f32_values(model->file(), "rope_freqs.weight");
  ASSERT_EQ(factors.size(), s.head_dim / 2);
  EXPECT_EQ(factors.back(), 32.0f);  // the slowest pairs: divided by the scaling factor
  // The same divisors at any context: they are not LongRoPE's.
  EXPECT_EQ(model->rope_freq_factors(64), factors);
  EXPECT_EQ(model->rope_freq_factors(1u << 20), factors);
  EXPECT_EQ(model->output().name, "token_embd.weight");

  // They are applied: with every divisor 1 the logits change.
  const std::string ones = dir / "ones.gguf";
  engine_test::write_edited(path, ones, {.f32_tensors = {{"rope_freqs.weight", [](float* x, size_t n) {
                                                           std::fill(x, x + n, 1.0f);
                                                         }}}});
  const std::vector<float> with = logits(*model), without = logits(*engine::Model::load(ones));
  double diff = 0;
  for (size_t i = 0; i < with.size(); ++i) diff = std::max(diff, std::fabs(double{with[i]} - without[i]));
  EXPECT_GT(diff, 1e-3);
}

TEST(LlamaVariants, MistralsSlidingWindowKeyIsNotAppliedAsInLlamaCpp) {
  const quantize_test::TempDir dir("llama-variants");
  const std::string path = engine_test::write_synth(dir, custom(8, 2, 32, 1e6f, false), "mistral.gguf");
  const std::string windowed = dir / "windowed.gguf";
  engine_test::write_edited(path, windowed,
                            {.metadata = [](gguf::Writer& w) { w.set_u32("llama.attention.sliding_window", 2); }});
  const auto plain = engine::Model::load(path);
  const auto with_key = engine::Model::load(windowed);
  EXPECT_EQ(with_key->config().rope_freq_base, 1e6f);
  for (const engine::LayerSpec& l : with_key->config().layers) EXPECT_EQ(l.attention.window, 0u);
  EXPECT_EQ(logits(*plain), logits(*with_key));  // a window of 2 over 12 tokens would change every later row
}

TEST(LlamaVariants, MinistralsHeadSizeAndLargeRopeBase) {
  const quantize_test::TempDir dir("llama-variants");
  // 8 heads of 64 over n_embd 256: attention.key_length 64, not 256 / 8.
  const std::string path = engine_test::write_synth(dir, custom(8, 2, 64, 1e8f, false), "ministral.gguf");
  const gguf::File f = gguf::File::open(path);
  EXPECT_EQ(f.get_uint("llama.attention.key_length"), 64u);
  const auto model = engine::Model::load(path);
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.head_dim_k, 64u);
  EXPECT_EQ(c.q_dim(), 512u);
  EXPECT_EQ(c.n_rot, 64u);
  EXPECT_EQ(c.rope_freq_base, 1e8f);
  EXPECT_EQ(model->layers()[0].wo.in, 512u);  // attn_output reads the 8 x 64 values
  for (float x : logits(*model)) ASSERT_TRUE(std::isfinite(x));
}

TEST(LlamaVariants, SmolLM2sGroupsOfThreeHeadsAndTiedHead) {
  const quantize_test::TempDir dir("llama-variants");
  tools::SynthShape s = custom(15, 5, 16, 100000.0f, true);
  s.n_embd = 240;
  const auto model = engine::Model::load(engine_test::write_synth(dir, s, "smollm2.gguf"));
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.n_head, 15u);
  EXPECT_EQ(c.n_head_kv, 5u);
  EXPECT_EQ(c.head_dim_k, 16u);
  EXPECT_EQ(c.rope_freq_base, 100000.0f);
  EXPECT_EQ(model->output().name, "token_embd.weight");
  for (float x : logits(*model)) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace
