// gemma4's description read back from a file synth writes of it (the
// reference model of tests/reference/llamacpp/models.json, whose logits
// llamacpp_reference_test compares with llama.cpp's): which layers share
// which cache, the two head sizes, V from K, and the KV bytes the shared
// layers no longer take; a mixture-of-experts file is refused.
#include <gtest/gtest.h>

#include <string>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/support/error.h"
#include "tests/engine/gemma4_model.h"
#include "tests/engine/model_edit.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"
#include "tools/common/model_writing/synth_tensors.h"

namespace {

using engine_test::write_gemma4_model;

TEST(Gemma4, LayersShareCachesOfTheirKind) {
  const quantize_test::TempDir dir("gemma4");
  const auto model = engine::Model::load(write_gemma4_model(dir));
  const engine::ModelConfig& c = model->config();
  ASSERT_EQ(c.layers.size(), 6u);
  const uint32_t own = engine::AttentionSpec::kOwnCache;
  const uint32_t want_source[] = {own, own, own, 1, 1, 2};
  for (uint32_t il = 0; il < 6; ++il) {
    const engine::AttentionSpec& a = c.layers[il].attention;
    const bool global = il == 2 || il == 5;
    EXPECT_EQ(a.kv_source, want_source[il]) << il;
    EXPECT_EQ(a.window, global ? 0u : 8u) << il;
    EXPECT_EQ(a.head_dim_k, global ? 32u : 16u) << il;
    EXPECT_EQ(a.rope.freq_factors, global) << il;
    EXPECT_EQ(a.v_from_k, il == 2) << il;  // layer 5 computes no V at all
    EXPECT_FLOAT_EQ(a.scale, 1.0f);
    EXPECT_TRUE(c.layers[il].per_layer_input);
  }
  // The shared layers load no K or V projection; the global one with a cache no V.
  EXPECT_EQ(model->layers()[3].wk.rhs, nullptr);
  EXPECT_EQ(model->layers()[2].wv.rhs, nullptr);
  EXPECT_NE(model->layers()[2].wk.rhs, nullptr);
  EXPECT_EQ(c.per_layer_input.n_embd, 256u);

  // Only layers 0-2 hold a cache: two windows of 8 + 4 - 1 rows of 2 heads x
  // 16 (K and V), and 64 positions of 2 heads x 32.
  engine::SessionParams sp;
  sp.n_ctx = 64;
  sp.n_batch = 4;
  sp.kv_type = engine::KvType::f32;
  const engine::Session session(*model, sp);
  EXPECT_EQ(session.kv_cache().bytes(), (2u * 11 * 64 + 64 * 128) * 4);
  EXPECT_EQ(session.kv_cache().describe(),
            "f32: 2 windowed attention layers x 2816 bytes + 1 attention layer x 32768 bytes");
}

// synth's gemma-4-e2b as the loader reads it: layers 15-34 read the caches of
// layers 13 (sliding) and 14 (global), as in the real model, and their MLP
// is twice as wide; at 32k positions the cache is the 4 global layers' whole
// context plus the 11 sliding layers' windows.
TEST(Gemma4, TheE2BShapeSharesItsCachesAsTheRealModel) {
  const tools::SynthShape* s = tools::find_shape("gemma-4-e2b");
  ASSERT_NE(s, nullptr);
  const engine::ModelConfig c = tools::synth_config(*s, s->n_vocab);
  ASSERT_EQ(c.layers.size(), 35u);
  for (uint32_t il = 0; il < 35; ++il) {
    const engine::AttentionSpec& a = c.layers[il].attention;
    const bool global = il % 5 == 4;
    EXPECT_EQ(a.kv_source, il < 15 ? engine::AttentionSpec::kOwnCache : global ? 14u : 13u) << il;
    EXPECT_EQ(a.head_dim_k, global ? 512u : 256u) << il;
    EXPECT_EQ(a.rope.n_rot, global ? 512u : 256u) << il;
    EXPECT_EQ(a.window, global ? 0u : 512u) << il;
    EXPECT_EQ(c.layers[il].n_ff, il < 15 ? 6144u : 12288u) << il;
  }
  const uint32_t n_ctx = 32768;
  const auto uses = engine::cache_uses(c, n_ctx, 512, engine::KvType::f16);
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses[0].n_layers, 12u);  // sliding layers 0-3, 5-8, 10-13
  EXPECT_EQ(uses[1].n_layers, 3u);   // global layers 4, 9, 14
  // (512 + 511) rows of 1 KV head x 256 x 2 (K, V) x 2 bytes; 32768 rows of 512.
  EXPECT_EQ(uses[0].bytes_per_layer, 1023u * 256 * 2 * 2);
  EXPECT_EQ(uses[1].bytes_per_layer, 32768u * 512 * 2 * 2);
}

// The reference model with one key set, loaded: the loader's error message.
std::string refusal_with(const char* key, uint32_t value, const std::string& name) {
  const quantize_test::TempDir dir(name);
  const std::string bad = dir / (name + ".gguf");
  engine_test::write_edited(write_gemma4_model(dir), bad, {[&](gguf::Writer& w) { w.set_u32(key, value); }});
  try {
    engine::Model::load(bad);
  } catch (const engine::ModelError& e) {
    return e.what();
  }
  return "loaded";
}

// With 2 shared layers llama.cpp's rule has sliding layer 4 read layer 2,
// a global layer: refused, naming both.
TEST(Gemma4, ACacheSharedAcrossKindsIsRefused) {
  const std::string msg = refusal_with("gemma4.attention.shared_kv_layers", 2, "share");
  EXPECT_NE(msg.find("share.gguf: layer 4 shares the cache of layer 2, which is not a layer of its kind"),
            std::string::npos)
      << msg;
}

TEST(Gemma4, AMixtureOfExpertsFileIsRefusedByName) {
  const std::string msg = refusal_with("gemma4.expert_count", 128, "moe");
  EXPECT_NE(msg.find("moe.gguf: a Gemma 4 mixture-of-experts model (128 experts) is not supported"),
            std::string::npos)
      << msg;
}

}  // namespace
