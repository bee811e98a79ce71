// The README's table of supported architectures says what the descriptions
// (engine/arch/) say: one row per registered family, in registration order;
// the shapes synth writes for it; and what sets it apart, each trait named in
// the row exactly when the family's layer spec has it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/arch/registry.h"
#include "engine/model/model_config.h"
#include "tools/common/model_writing/synth_shapes.h"
#include "tools/common/model_writing/synth_tensors.h"

namespace {

using engine::ops::RopeStyle;

struct Row {
  std::string arch, shapes, traits;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) {
    const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return out;
}

// The rows of the table under "### Supported architectures".
std::vector<Row> readme_rows() {
  std::ifstream in(ENGINE_README);
  EXPECT_TRUE(in) << "cannot read " << ENGINE_README;
  std::vector<Row> rows;
  bool section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) section = line == "### Supported architectures";
    if (!section || line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> c = cells(line);
    if (c.size() < 3) continue;
    rows.push_back({c[0].substr(1, c[0].size() - 2), c[1], c[2]});
  }
  return rows;
}

// The family's first named shape (its real model's keys: a sliding window
// the file gives, ...), else a small model with the family's defaults.
engine::ModelConfig config_of(const engine::arch::Architecture& a) {
  if (const tools::SynthShape* s = tools::default_shape(a.name)) return tools::synth_config(*s, s->n_vocab);
  engine::ModelConfig c;
  c.arch = &a;
  c.n_layer = 2;
  c.n_embd = 64;
  c.n_head = c.n_head_kv = 4;
  c.head_dim_k = c.head_dim_v = c.n_rot = 16;
  c.n_ff = 128;
  c.layer_n_ff.assign(c.n_layer, c.n_ff);
  c.layer_n_head = c.layer_n_head_kv = std::vector<uint32_t>(c.n_layer, c.n_head);
  engine::arch::finish_config(c);
  return c;
}

// What may set a family apart, and the words the README uses for it.
using engine::LayerSpec;
using engine::arch::Architecture;
using engine::ModelConfig;
struct Trait {
  const char* words;
  bool (*has)(const LayerSpec&, const ModelConfig&);
  // A trait of the attention: only the layers that attend have it or not
  // (a hybrid's other layers have no RoPE to speak of).
  bool of_attention = false;
};

const Trait kTraits[] = {
    {"normal RoPE",
     [](const LayerSpec& l, const ModelConfig&) { return l.attention.rope.style == RopeStyle::normal; }, true},
    {"NeoX RoPE", [](const LayerSpec& l, const ModelConfig&) { return l.attention.rope.style == RopeStyle::neox; }, true},
    {"biases on Q, K and V", [](const LayerSpec& l, const ModelConfig&) { return l.attention.qkv_bias; }, true},
    {"RMSNorm over each head of Q and K", [](const LayerSpec& l, const ModelConfig&) { return l.attention.qk_norm; }, true},
    {"sliding window", [](const LayerSpec& l, const ModelConfig&) { return l.attention.window != 0; }, true},
    {"soft-cap", [](const LayerSpec& l, const ModelConfig& c) {
       return l.attention.softcap != 0.0f || c.final_softcap != 0.0f;
     }},
    {"GeGLU", [](const LayerSpec& l, const ModelConfig&) { return l.activation == engine::Activation::gelu; }},
    {"post-norms", [](const LayerSpec& l, const ModelConfig&) { return l.post_mixer_norm || l.post_ffn_norm; }},
    {"scaled embeddings", [](const LayerSpec&, const ModelConfig& c) { return c.embed_scale != 1.0f; }},
    {"per-layer inputs", [](const LayerSpec& l, const ModelConfig&) { return l.per_layer_input; }},
    {"KV shared", [](const LayerSpec& l, const ModelConfig&) { return l.attention.shares_kv(); }, true},
    {"fused QKV", [](const LayerSpec& l, const ModelConfig&) { return l.attention.fused_qkv; }, true},
    {"gate fused into ffn_up", [](const LayerSpec& l, const ModelConfig&) { return l.fused_gate_up; }},
    {"LongRoPE", [](const LayerSpec&, const ModelConfig& c) {
       return engine::arch::find_key(*c.arch, engine::arch::Param::rope_attn_factor) != nullptr;
     }},
    {"layers without RoPE", [](const LayerSpec& l, const ModelConfig&) { return l.attention.rope.n_rot == 0; }, true},
    {"multipliers", [](const LayerSpec&, const ModelConfig& c) {
       return engine::arch::find_key(*c.arch, engine::arch::Param::residual_scale) != nullptr;
     }},
    {"gated short convolutions",
     [](const LayerSpec& l, const ModelConfig&) { return l.mixer == engine::MixerKind::shortconv; }},
    {"gated DeltaNet", [](const LayerSpec& l, const ModelConfig&) { return l.mixer == engine::MixerKind::delta_net; }},
    {"output gate", [](const LayerSpec& l, const ModelConfig&) { return l.attention.output_gate; }, true},
};

// The `names` in a cell, sorted.
std::vector<std::string> quoted(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t b = cell.find('`'); b != std::string::npos; b = cell.find('`', b + 1)) {
    const size_t e = cell.find('`', b + 1);
    if (e == std::string::npos) break;
    out.push_back(cell.substr(b + 1, e - b - 1));
    b = e;
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ArchReadme, TheTableListsEveryRegisteredFamilyInOrder) {
  const std::vector<Row> rows = readme_rows();
  const auto archs = engine::arch::architectures();
  ASSERT_EQ(rows.size(), archs.size()) << "README rows vs registered families: " << engine::arch::architecture_names();
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].arch, archs[i]->name) << "row " << i;
}

TEST(ArchReadme, EachRowNamesTheShapesSynthWritesForIt) {
  for (const Row& r : readme_rows()) {
    SCOPED_TRACE(r.arch);
    std::vector<std::string> want;
    for (const tools::SynthShape& s : tools::named_shapes()) {
      if (s.arch == r.arch) want.push_back(s.name);
    }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(quoted(r.shapes), want);
  }
}

TEST(ArchReadme, EachRowNamesExactlyTheTraitsOfItsLayerSpec) {
  for (const Row& r : readme_rows()) {
    SCOPED_TRACE(r.arch);
    const engine::arch::Architecture* a = engine::arch::find_architecture(r.arch);
    ASSERT_NE(a, nullptr);
    const ModelConfig c = config_of(*a);
    for (const Trait& t : kTraits) {
      const bool has = std::any_of(c.layers.begin(), c.layers.end(), [&](const LayerSpec& l) {
        return (!t.of_attention || l.mixer == engine::MixerKind::attention) && t.has(l, c);
      });
      EXPECT_EQ(r.traits.find(t.words) != std::string::npos, has) << "\"" << t.words << "\"";
    }
  }
}

}  // namespace
