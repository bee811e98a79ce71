// A new family is a description and its registration, nothing else: "toy" is
// described and registered here, outside engine/, with what today's three
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

#include "engine/arch/registry.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "gguf/file.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

using engine::LayerSpec;
using engine::ModelConfig;

constexpr uint32_t kWindow = 3;

// The whole of the family: llama's layers, changed where the toy differs.
LayerSpec toy_layer(const ModelConfig& c, uint32_t il) {
  LayerSpec l = engine::arch::transformer_layer(c, il);
  l.attention.rope.style = engine::ops::RopeStyle::neox;
  l.attention.qk_norm = true;
  l.attention.window = il % 2 == 0 ? kWindow : 0;
  l.attention.scale = 0.2f;  // not 1/sqrt(head_dim) = 0.25
  l.attention.softcap = 4.0f;
  l.activation = engine::Activation::gelu;
  l.post_mixer_norm = true;
  l.post_ffn_norm = true;
  return l;
}

engine::arch::Architecture toy() {
  engine::arch::Architecture a;
  a.name = "toy";
  a.keys = engine::arch::transformer_keys();
  a.tensors = engine::arch::transformer_tensors();
  a.layer = toy_layer;
  a.model = [](ModelConfig& c) {
    c.embed_scale = 3.0f;
    c.final_softcap = 6.0f;
  };
  return a;
}

const bool kRegistered = (engine::arch::register_architecture(toy()), true);

tools::SynthShape toy_shape() {
  tools::SynthShape s;
  s.name = "toy";
  s.arch = "toy";
  s.n_embd = 64;
  s.n_layer = 3;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 16;
  s.n_ff = 96;
  s.n_vocab = 300;
  s.n_ctx = 64;
  return s;
}

using Vec = std::vector<double>;

// The plain forward pass, every weight read from the F32 file.
class Reference {
 public:
  Reference(const std::string& path, const ModelConfig& c) : f_(gguf::File::open(path)), c_(c) {}

  // The logits of every token of `tokens` evaluated from position 0.
  std::vector<Vec> logits(const std::vector<int32_t>& tokens, bool windows = true) const {
    const uint32_t d = c_.n_embd;
    std::vector<Vec> x(tokens.size());
    for (size_t t = 0; t < tokens.size(); ++t) {
      x[t] = row("token_embd.weight", tokens[t], d);
      for (double& v : x[t]) v *= c_.embed_scale;
    }
    for (uint32_t l = 0; l < c_.n_layer; ++l) {
      const LayerSpec& s = c_.layers[l];
      const std::string p = "blk." + std::to_string(l) + ".";
      std::vector<Vec> keys, values;
      std::vector<Vec> out(tokens.size());
      for (size_t t = 0; t < tokens.size(); ++t) {
        const Vec xn = norm(x[t], p + "attn_norm.weight");
        Vec q = matvec(p + "attn_q.weight", xn), k = matvec(p + "attn_k.weight", xn);
        keys.push_back(k);
        values.push_back(matvec(p + "attn_v.weight", xn));
        const engine::AttentionSpec& a = s.attention;
        for (uint32_t h = 0; h < a.n_head; ++h) head(q, h, p + "attn_q_norm.weight", a, t);
        for (uint32_t h = 0; h < a.n_head_kv; ++h) head(keys[t], h, p + "attn_k_norm.weight", a, t);
        Vec att(a.out_dim());
        const uint32_t group = a.n_head / a.n_head_kv;
        const size_t from = windows && a.window != 0 && t + 1 > a.window ? t + 1 - a.window : 0;
        for (uint32_t h = 0; h < a.n_head; ++h) {
          const uint32_t kvh = h / group;
          Vec w;
          double max = -INFINITY, sum = 0;
          for (size_t j = from; j <= t; ++j) {
            double dot = 0;
            for (uint32_t i = 0; i < a.head_dim_k; ++i) {
              dot += q[h * a.head_dim_k + i] * keys[j][kvh * a.head_dim_k + i];
            }
            w.push_back(a.softcap * std::tanh(dot * a.scale / a.softcap));
            max = std::max(max, w.back());
          }
          for (double& v : w) sum += (v = std::exp(v - max));
          for (size_t j = from; j <= t; ++j) {
            for (uint32_t i = 0; i < a.head_dim_v; ++i) {
              att[h * a.head_dim_v + i] += w[j - from] / sum * values[j][kvh * a.head_dim_v + i];
            }
          }
        }
        out[t] = norm(matvec(p + "attn_output.weight", att), p + "post_attention_norm.weight");
      }
      for (size_t t = 0; t < tokens.size(); ++t) {
        for (uint32_t i = 0; i < d; ++i) x[t][i] += out[t][i];
        const Vec xn = norm(x[t], p + "ffn_norm.weight");
        Vec gate = matvec(p + "ffn_gate.weight", xn);
        const Vec up = matvec(p + "ffn_up.weight", xn);
        for (size_t i = 0; i < gate.size(); ++i) {
          const double g = gate[i];
          gate[i] = 0.5 * g * (1 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g))) * up[i];
        }
        const Vec y = norm(matvec(p + "ffn_down.weight", gate), p + "post_ffw_norm.weight");
        for (uint32_t i = 0; i < d; ++i) x[t][i] += y[i];
      }
    }
    std::vector<Vec> logits;
    for (const Vec& xt : x) {
      Vec z = matvec(f_.find_tensor("output.weight") != nullptr ? "output.weight" : "token_embd.weight",
                     norm(xt, "output_norm.weight"));
      for (double& v : z) v = c_.final_softcap * std::tanh(v / c_.final_softcap);
      logits.push_back(z);
    }
    return logits;
  }

 private:
  const float* data(const std::string& name) const {
    const gguf::TensorInfo& t = f_.tensor(name);
    EXPECT_EQ(t.type, gguf::GgmlType::F32) << name;
    return reinterpret_cast<const float*>(f_.tensor_data(t));
  }
  Vec row(const std::string& name, size_t r, size_t n) const {
    const float* p = data(name) + r * n;
    return Vec(p, p + n);
  }
  // W x, W of (x.size(), out) in GGUF order: one row of x.size() per output.
  Vec matvec(const std::string& name, const Vec& x) const {
    const gguf::TensorInfo& t = f_.tensor(name);
    const float* w = data(name);
    Vec y(t.ne[1]);
    for (size_t o = 0; o < y.size(); ++o) {
      for (size_t i = 0; i < x.size(); ++i) y[o] += double{w[o * x.size() + i]} * x[i];
    }
    return y;
  }
  Vec norm(const Vec& x, const std::string& weight, size_t offset = 0, size_t n = 0) const {
    if (n == 0) n = x.size();
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += x[offset + i] * x[offset + i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(n) + c_.rms_eps);
    const float* w = data(weight);
    Vec y(n);
    for (size_t i = 0; i < n; ++i) y[i] = x[offset + i] * r * w[i];
    return y;
  }
  // Head h of v (Q or K) at position pos: RMSNorm over the head, then NeoX RoPE.
  void head(Vec& v, uint32_t h, const std::string& norm_weight, const engine::AttentionSpec& a, size_t pos) const {
    const size_t o = size_t{h} * a.head_dim_k;
    const Vec n = norm(v, norm_weight, o, a.head_dim_k);
    std::copy(n.begin(), n.end(), v.begin() + static_cast<std::ptrdiff_t>(o));
    const uint32_t half = a.rope.n_rot / 2;
    for (uint32_t j = 0; j < half; ++j) {
      const double theta = static_cast<double>(pos) * std::pow(double{a.rope.freq_base}, -2.0 * j / a.rope.n_rot);
      const double x0 = v[o + j], x1 = v[o + j + half];
      v[o + j] = x0 * std::cos(theta) - x1 * std::sin(theta);
      v[o + j + half] = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }

  gguf::File f_;
  const ModelConfig& c_;
};

class ToyArch : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kRegistered);
    dir_ = new quantize_test::TempDir("toy-arch");
    tools::SynthOptions o;
    o.shape = toy_shape();
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

  // The largest difference from the reference over every logit, in units
  // of the logits' own scale (1 + |reference|).
  static double worst(const std::vector<float>& got, const std::vector<Vec>& want) {
    double worst = 0;
    for (size_t t = 0; t < want.size(); ++t) {
      for (size_t v = 0; v < want[t].size(); ++v) {
        worst = std::max(worst, std::abs(got[t * want[t].size() + v] - want[t][v]) / (1 + std::abs(want[t][v])));
      }
    }
    return worst;
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
  const Reference ref(path(), model->config());
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
    EXPECT_LT(worst(got, want), tolerance);
    // The test can tell: attending past the window changes the logits by far
    // more than the tolerance.
    EXPECT_GT(worst(got, ref.logits(tokens(), /*windows=*/false)), 100 * kF16);
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
