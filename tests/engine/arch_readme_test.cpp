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

// A family's layer il of an 8-layer model.
engine::LayerSpec layer_of(const engine::arch::Architecture& a, uint32_t il = 0) {
  engine::ModelConfig c;
  c.arch = &a;
  c.n_layer = 8;
  c.n_embd = 64;
  c.n_head = c.n_head_kv = 4;
  c.head_dim_k = c.head_dim_v = c.n_rot = 16;
  c.n_ff = 128;
  c.layer_n_ff.assign(c.n_layer, c.n_ff);
  c.layer_n_head.assign(c.n_layer, c.n_head);
  c.layer_n_head_kv.assign(c.n_layer, c.n_head);
  return a.layer(c, il);
}

// What may set a family apart, and the words the README uses for it.
using engine::LayerSpec;
using engine::arch::Architecture;
struct Trait {
  const char* words;
  bool (*has)(const LayerSpec&, const Architecture&);
};

const Trait kTraits[] = {
    {"normal RoPE",
     [](const LayerSpec& l, const Architecture&) { return l.attention.rope.style == RopeStyle::normal; }},
    {"NeoX RoPE", [](const LayerSpec& l, const Architecture&) { return l.attention.rope.style == RopeStyle::neox; }},
    {"biases on Q, K and V", [](const LayerSpec& l, const Architecture&) { return l.attention.qkv_bias; }},
    {"RMSNorm over each head of Q and K", [](const LayerSpec& l, const Architecture&) { return l.attention.qk_norm; }},
    {"sliding window", [](const LayerSpec& l, const Architecture&) { return l.attention.window != 0; }},
    {"soft-cap", [](const LayerSpec& l, const Architecture& a) {
       return l.attention.softcap != 0.0f || a.final_softcap != 0.0f;
     }},
    {"GeGLU", [](const LayerSpec& l, const Architecture&) { return l.activation == engine::Activation::gelu; }},
    {"post-norms", [](const LayerSpec& l, const Architecture&) { return l.post_mixer_norm || l.post_ffn_norm; }},
    {"scaled embeddings", [](const LayerSpec&, const Architecture& a) { return a.embed_scale != 1.0f; }},
    {"fused QKV", [](const LayerSpec& l, const Architecture&) { return l.attention.fused_qkv; }},
    {"gate fused into ffn_up", [](const LayerSpec& l, const Architecture&) { return l.fused_gate_up; }},
    {"LongRoPE", [](const LayerSpec&, const Architecture& a) {
       return engine::arch::find_key(a, engine::arch::Param::rope_attn_factor) != nullptr;
     }},
    {"layers without RoPE", [](const LayerSpec&, const Architecture& a) {
       for (uint32_t il = 0; il < 8; ++il) {
         if (layer_of(a, il).attention.rope.n_rot == 0) return true;
       }
       return false;
     }},
    {"multipliers", [](const LayerSpec&, const Architecture& a) {
       return engine::arch::find_key(a, engine::arch::Param::residual_scale) != nullptr;
     }},
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
    const LayerSpec l = layer_of(*a);
    for (const Trait& t : kTraits) {
      EXPECT_EQ(r.traits.find(t.words) != std::string::npos, t.has(l, *a)) << "\"" << t.words << "\"";
    }
  }
}

}  // namespace
