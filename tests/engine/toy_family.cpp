#include "tests/engine/toy_family.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace toy {

using engine::LayerSpec;

// llama's layers, changed where the toy differs.
LayerSpec layer_without_window(const engine::ModelConfig& c, uint32_t il) {
  LayerSpec l = engine::arch::transformer_layer(c, il);
  l.attention.rope.style = engine::ops::RopeStyle::neox;
  l.attention.qk_norm = true;
  l.attention.scale = 0.2f;  // not 1/sqrt(head_dim) = 0.25
  l.attention.softcap = 4.0f;
  l.activation = engine::Activation::gelu;
  l.post_mixer_norm = true;
  l.post_ffn_norm = true;
  return l;
}

engine::arch::Architecture architecture(const std::string& name,
                                        LayerSpec (*layer_fn)(const engine::ModelConfig&, uint32_t)) {
  engine::arch::Architecture a;
  a.name = name;
  a.keys = engine::arch::transformer_keys();
  a.tensors = engine::arch::transformer_tensors();
  a.layer = layer_fn;
  a.model = [](engine::ModelConfig& c) {
    c.embed_scale = 3.0f;
    c.final_softcap = 6.0f;
  };
  return a;
}

tools::SynthShape shape(const std::string& arch, uint32_t n_layer, uint32_t n_ctx) {
  tools::SynthShape s;
  s.name = arch;
  s.arch = arch;
  s.n_embd = 64;
  s.n_layer = n_layer;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 16;
  s.n_ff = 96;
  s.n_vocab = 300;
  s.n_ctx = n_ctx;
  return s;
}

std::vector<Vec> Reference::logits(const std::vector<int32_t>& tokens, bool windows) const {
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

const float* Reference::data(const std::string& name) const {
  const gguf::TensorInfo& t = f_.tensor(name);
  EXPECT_EQ(t.type, gguf::GgmlType::F32) << name;
  return reinterpret_cast<const float*>(f_.tensor_data(t));
}

Vec Reference::row(const std::string& name, size_t r, size_t n) const {
  const float* p = data(name) + r * n;
  return Vec(p, p + n);
}

// W x, W of (x.size(), out) in GGUF order: one row of x.size() per output.
Vec Reference::matvec(const std::string& name, const Vec& x) const {
  const gguf::TensorInfo& t = f_.tensor(name);
  const float* w = data(name);
  Vec y(t.ne[1]);
  for (size_t o = 0; o < y.size(); ++o) {
    for (size_t i = 0; i < x.size(); ++i) y[o] += double{w[o * x.size() + i]} * x[i];
  }
  return y;
}

Vec Reference::norm(const Vec& x, const std::string& weight, size_t offset, size_t n) const {
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
void Reference::head(Vec& v, uint32_t h, const std::string& norm_weight, const engine::AttentionSpec& a,
                     size_t pos) const {
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

double worst(const std::vector<float>& got, const std::vector<Vec>& want) {
  size_t n = 0;
  for (const Vec& w : want) n += w.size();
  if (got.size() != n) return INFINITY;  // a missing or extra row is the worst difference
  double worst = 0;
  for (size_t t = 0; t < want.size(); ++t) {
    for (size_t v = 0; v < want[t].size(); ++v) {
      worst = std::max(worst, std::abs(got[t * want[t].size() + v] - want[t][v]) / (1 + std::abs(want[t][v])));
    }
  }
  return worst;
}

}  // namespace toy
