// What the phi3, smollm3 and granite descriptions read from a file, rule by
// rule, on small synth models (their logits against llama.cpp's are in
// tests/reference/llamacpp): LongRoPE's long or short factors by the
// session's context against the original one, the rope.scaling.type a
// converter may write for them, smollm3's layers without RoPE, granite's
// required logit scale.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "gguf/file.h"
#include "tests/engine/model_edit.h"
#include "tests/engine/synth_files.h"

namespace {

tools::SynthShape small(const char* arch) {
  tools::SynthShape s;
  s.name = "custom";
  s.arch = arch;
  s.n_embd = 128;
  s.n_layer = 8;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 32;
  s.n_ff = 256;
  s.n_vocab = 300;
  s.n_ctx = 4096;
  return s;
}

std::vector<float> logits(const engine::Model& model) {
  engine::Session s(model, {.n_ctx = 64, .kv_type = engine::KvType::f32});
  const std::vector<int32_t> prompt = {1, 40, 90, 7, 250, 13};
  s.eval(prompt, /*all_logits=*/true);
  return {s.logits().begin(), s.logits().end()};
}

TEST(FamilyKeys, Phi3PicksLongRopeFactorsByTheSessionContext) {
  const quantize_test::TempDir dir("family-keys");
  tools::SynthShape s = small("phi3");
  s.longrope = true;
  s.rope_original_ctx = 256;
  s.n_rot = 24;
  const auto model = engine::Model::load(engine_test::write_synth(dir, s, "phi3.gguf"));
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.n_ctx_orig, 256u);
  EXPECT_EQ(c.n_rot, 24u);
  EXPECT_FLOAT_EQ(c.layers[0].attention.rope.attn_factor, s.longrope_attn_factor());
  EXPECT_GT(s.longrope_attn_factor(), 1.0f);  // sqrt(1 + ln 16 / ln 256)
  const std::vector<float> long_factors = engine_test::f32_values(model->file(), "rope_factors_long.weight");
  const std::vector<float> short_factors = engine_test::f32_values(model->file(), "rope_factors_short.weight");
  ASSERT_EQ(long_factors.size(), 12u);
  EXPECT_NE(long_factors, short_factors);
  // llama.cpp: long when the context exceeds the original, short up to it.
  EXPECT_EQ(model->rope_freq_factors(256), short_factors);
  EXPECT_EQ(model->rope_freq_factors(257), long_factors);
  EXPECT_EQ(model->rope_factors_note(256), ", LongRoPE short factors (context 256 <= original 256)");
  EXPECT_EQ(model->rope_factors_note(257), ", LongRoPE long factors (context 257 > original 256)");
  EXPECT_TRUE(c.layers[0].attention.fused_qkv);
  EXPECT_TRUE(c.layers[0].fused_gate_up);
  EXPECT_EQ(model->layers()[0].wqkv.out, 128u + 2 * 64);  // Q, K, V in one matrix, not split
  EXPECT_EQ(model->layers()[0].w_up.out, 2u * 256);       // gate and up in one
  EXPECT_EQ(model->layers()[0].wq.rhs, nullptr);
}

TEST(FamilyKeys, Phi3AcceptsTheLongRopeScalingType) {
  const quantize_test::TempDir dir("family-keys");
  tools::SynthShape s = small("phi3");
  s.longrope = true;
  s.rope_original_ctx = 32;
  const std::string path = engine_test::write_synth(dir, s, "phi3.gguf");
  const std::string typed = dir / "typed.gguf";
  engine_test::write_edited(path, typed,
                            {.metadata = [](gguf::Writer& w) { w.set_string("phi3.rope.scaling.type", "longrope"); }});
  EXPECT_EQ(logits(*engine::Model::load(path)), logits(*engine::Model::load(typed)));
}

TEST(FamilyKeys, SmolLM3RotatesNothingInEveryFourthLayer) {
  const quantize_test::TempDir dir("family-keys");
  const auto model = engine::Model::load(engine_test::write_synth(dir, small("smollm3"), "smollm3.gguf"));
  const engine::ModelConfig& c = model->config();
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    EXPECT_EQ(c.layers[il].attention.rope.n_rot, il == 3 || il == 7 ? 0u : 32u) << "layer " << il;
  }
}

TEST(FamilyKeys, GraniteReadsItsMultipliersAndRequiresTheLogitScale) {
  const quantize_test::TempDir dir("family-keys");
  tools::SynthShape s = small("granite");
  s.embedding_scale = 12.0f;
  s.residual_scale = 0.22f;
  s.attention_scale = 0.015625f;
  s.logit_scale = 8.0f;
  const std::string path = engine_test::write_synth(dir, s, "granite.gguf");
  const auto model = engine::Model::load(path);
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.embed_scale, 12.0f);
  EXPECT_EQ(c.logit_scale, 8.0f);
  EXPECT_EQ(c.layers[0].residual_scale, 0.22f);
  EXPECT_EQ(c.layers[0].attention.scale, 0.015625f);

  // llama.cpp refuses a granite file without granite.logit_scale; so do we, naming it.
  const gguf::File f = gguf::File::open(path);
  gguf::Writer w;
  for (const gguf::KeyValue& kv : f.metadata()) {
    if (kv.key != "granite.logit_scale") w.set_raw(kv.key, kv.raw_value);
  }
  for (const gguf::TensorInfo& t : f.tensors()) {
    w.add_tensor(t.name, t.type, std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims),
                 std::span<const uint8_t>(f.tensor_data(t), t.n_bytes));
  }
  w.write(dir / "no_scale.gguf");
  try {
    engine::Model::load(dir / "no_scale.gguf");
    ADD_FAILURE() << "loaded without granite.logit_scale";
  } catch (const std::exception& e) {  // gguf's missing-key error
    EXPECT_NE(std::string(e.what()).find("granite.logit_scale"), std::string::npos) << e.what();
  }
}

}  // namespace
