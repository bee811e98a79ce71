// A new family is a description and its registration, nothing else: "toy" is
// described (toy_family.h) and registered here, outside engine/, with what today's three
// families lack (a sliding window on every other layer, GeGLU, post-norms, its
// own attention scale, soft-caps of the scores and of the logits, a scaled
// embedding). synth writes a model of it from the same description, the
// engine runs it, and its logits are checked against a plain double-precision
// forward pass written from the layer specs' definitions (engine/arch/layer_spec.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "tests/engine/toy_family.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

using engine::ModelConfig;
using toy::Vec;

constexpr uint32_t kWindow = 3;

// The whole of the family: the toy's layers (toy_family.h), the window on
// every other layer.
const bool kRegistered =
    (engine::arch::register_architecture(toy::architecture("toy", toy::layer<kWindow, 2>)), true);

class ToyArch : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kRegistered);
    dir_ = new quantize_test::TempDir("toy-arch");
    tools::SynthOptions o;
    o.shape = toy::shape("toy", 3, 64);
    o.type = "F32";
    o.output = *dir_ / "toy.gguf";
    o.out = nullptr;
    tools::synth_model(o);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path() { return *dir_ / "toy.gguf"; }

  static std::vector<int32_t> tokens() {
    std::vector<int32_t> t;
    for (int32_t i = 0; i < 20; ++i) t.push_back((i * 37 + 5) % 300);
    return t;
  }

  static quantize_test::TempDir* dir_;
};

quantize_test::TempDir* ToyArch::dir_ = nullptr;

TEST_F(ToyArch, TheLoaderReadsItsLayerSpecs) {
  const auto model = engine::Model::load(path());
  const ModelConfig& c = model->config();
  EXPECT_EQ(c.arch_name, "toy");
  ASSERT_EQ(c.layers.size(), 3u);
  EXPECT_EQ(c.layers[0].attention.window, kWindow);
  EXPECT_EQ(c.layers[1].attention.window, 0u);
  EXPECT_EQ(c.layers[2].activation, engine::Activation::gelu);
  EXPECT_FLOAT_EQ(c.embed_scale, 3.0f);
  // The post-norms and Q/K norms the spec asks for were written and loaded.
  EXPECT_EQ(model->layers()[1].post_ffn_norm.size(), 64u);
  EXPECT_EQ(model->layers()[1].q_norm.size(), 16u);
}

// The same logits in one batch, in batches of 4 (the windowed layers' ring
// of 3 + 4 - 1 rows wraps several times) and one token at a time (a ring of
// 3 rows), with an F32 cache; with an F16 one within its rounding.
TEST_F(ToyArch, LogitsMatchAPlainForwardPass) {
  const auto model = engine::Model::load(path());
  const toy::Reference ref(path(), model->config());
  const std::vector<Vec> want = ref.logits(tokens());
  // F32 weights and cache: the engine differs only by float rounding over 3
  // layers of width 64 to 96 (measured 2.0e-6 of 1 + |logit| on x86-64); an
  // F16 cache rounds every key and value to 11 bits (measured 2.4e-3).
  constexpr double kF32 = 2e-5, kF16 = 1e-2;
  using engine::KvType;
  for (auto [batch, kv, tolerance] : {std::tuple{32u, KvType::f32, kF32}, std::tuple{4u, KvType::f32, kF32},
                                      std::tuple{1u, KvType::f32, kF32}, std::tuple{4u, KvType::f16, kF16}}) {
    SCOPED_TRACE("n_batch " + std::to_string(batch) + ", " + engine::kv_type_name(kv));
    engine::SessionParams sp;
    sp.n_ctx = 64;
    sp.n_batch = batch;
    sp.kv_type = kv;
    engine::Session session(*model, sp);
    std::vector<float> got;
    if (batch == 1) {
      for (int32_t t : tokens()) {
        session.eval(std::span<const int32_t>(&t, 1), false);
        got.insert(got.end(), session.logits().begin(), session.logits().end());
      }
    } else {
      session.eval(tokens(), true);
      got.assign(session.logits().begin(), session.logits().end());
    }
    EXPECT_LT(toy::worst(got, want), tolerance);
    // The test can tell: attending past the window changes the logits by far
    // more than the tolerance.
    EXPECT_GT(toy::worst(got, ref.logits(tokens(), /*windows=*/false)), 100 * kF16);
  }
}

// The cache holds what each layer can attend to: the windowed layers their
// window and a batch, the other layer the whole context.
TEST_F(ToyArch, TheCacheIsSizedPerLayer) {
  const auto model = engine::Model::load(path());
  engine::SessionParams sp;
  sp.n_ctx = 64;
  sp.n_batch = 4;
  sp.kv_type = engine::KvType::f32;
  engine::Session session(*model, sp);
  const auto& uses = session.kv_cache().uses();
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses[0].kind, "windowed attention");
  EXPECT_EQ(uses[0].n_layers, 2u);
  EXPECT_EQ(uses[0].shape, "6 positions x 64 values x 4 bytes");  // window 3 + batch 4 - 1; 2 KV heads x 16, K and V
  EXPECT_EQ(uses[1].kind, "attention");
  EXPECT_EQ(uses[1].n_layers, 1u);
  EXPECT_EQ(uses[1].shape, "64 positions x 64 values x 4 bytes");
  EXPECT_EQ(session.kv_cache().bytes(), (2 * 6 + 64) * 64 * 4u);
  EXPECT_EQ(session.kv_cache().describe(),
            "f32: 2 windowed attention layers x 1536 bytes + 1 attention layer x 16384 bytes");
}

}  // namespace
