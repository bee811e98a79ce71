// llama.cpp's per-tensor type rules (tools/common/model_writing/quant_mix.h) on
// model shapes built in memory: the Q4_K_M/Q5_K_M layer pattern, the LM head,
// tied embeddings, fallbacks, the 70B and 8-expert cases, the tensor order.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tools/common/model_writing/quant_mix.h"

namespace {

using gguf::GgmlType;
using tools::TensorDesc;

TensorDesc desc(std::string name, std::initializer_list<uint64_t> ne, GgmlType type = GgmlType::F32) {
  TensorDesc d;
  d.name = std::move(name);
  d.n_dims = static_cast<uint32_t>(ne.size());
  std::copy(ne.begin(), ne.end(), d.ne.begin());
  d.type = type;
  return d;
}

// A llama-style model's tensors, in llama.cpp's order.
std::vector<TensorDesc> model(uint32_t n_layer, uint64_t n_embd, uint64_t n_ff, uint64_t kv_dim, bool tied) {
  std::vector<TensorDesc> t;
  t.push_back(desc("token_embd.weight", {n_embd, 1000}));
  t.push_back(desc("output_norm.weight", {n_embd}));
  if (!tied) t.push_back(desc("output.weight", {n_embd, 1000}));
  for (uint32_t l = 0; l < n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    t.push_back(desc(b + "attn_norm.weight", {n_embd}));
    t.push_back(desc(b + "attn_q.weight", {n_embd, n_embd}));
    t.push_back(desc(b + "attn_k.weight", {n_embd, kv_dim}));
    t.push_back(desc(b + "attn_v.weight", {n_embd, kv_dim}));
    t.push_back(desc(b + "attn_output.weight", {n_embd, n_embd}));
    t.push_back(desc(b + "ffn_norm.weight", {n_embd}));
    t.push_back(desc(b + "ffn_gate.weight", {n_embd, n_ff}));
    t.push_back(desc(b + "ffn_up.weight", {n_embd, n_ff}));
    t.push_back(desc(b + "ffn_down.weight", {n_ff, n_embd}));
  }
  std::vector<TensorDesc> ordered;
  for (size_t i : tools::llama_cpp_order(t)) ordered.push_back(t[i]);
  return ordered;
}

std::map<std::string, GgmlType> types(const char* target, bool pure, const tools::MixModel& m,
                                      const std::vector<TensorDesc>& t) {
  const auto choices = tools::choose_types(*tools::find_target(target), pure, m, t);
  std::map<std::string, GgmlType> out;
  for (size_t i = 0; i < t.size(); ++i) out[t[i].name] = choices[i].type;
  return out;
}

TEST(QuantMix, Q4KMGivesQ6KToAttnVAndFfnDownOfTheUseMoreBitsLayers) {
  // use_more_bits(i, 32): i < 4 || i >= 28 || (i - 4) % 3 == 2.
  const std::set<int> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  const auto t = model(32, 4096, 11008, 4096, false);
  for (const char* target : {"Q4_K_M", "Q5_K_M"}) {
    const GgmlType base = std::string(target) == "Q4_K_M" ? GgmlType::Q4_K : GgmlType::Q5_K;
    const auto ty = types(target, false, {"llama", 32, 32, 32, 0}, t);
    EXPECT_EQ(ty.at("output.weight"), GgmlType::Q6_K) << target;
    EXPECT_EQ(ty.at("token_embd.weight"), base) << target;
    EXPECT_EQ(ty.at("output_norm.weight"), GgmlType::F32) << target;
    for (int l = 0; l < 32; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      const GgmlType want = more.count(l) ? GgmlType::Q6_K : base;
      EXPECT_EQ(ty.at(b + "attn_v.weight"), want) << target << " layer " << l;
      EXPECT_EQ(ty.at(b + "ffn_down.weight"), want) << target << " layer " << l;
      for (const char* n : {"attn_q.weight", "attn_k.weight", "attn_output.weight", "ffn_gate.weight", "ffn_up.weight"}) {
        EXPECT_EQ(ty.at(b + n), base) << target << " " << b << n;
      }
      EXPECT_EQ(ty.at(b + "attn_norm.weight"), GgmlType::F32);
    }
  }
}

TEST(QuantMix, FourLayersGiveQ6KToLayersTwoAndThreeAsInTheReferenceFile) {
  const auto ty = types("Q4_K_M", false, {"llama", 4, 8, 4, 0}, model(4, 256, 768, 128, false));
  size_t q6 = 0;
  for (const auto& [name, type] : ty) q6 += type == GgmlType::Q6_K;
  EXPECT_EQ(q6, 5u);
  for (const char* n : {"output.weight", "blk.2.attn_v.weight", "blk.3.attn_v.weight", "blk.2.ffn_down.weight",
                        "blk.3.ffn_down.weight"}) {
    EXPECT_EQ(ty.at(n), GgmlType::Q6_K) << n;
  }
}

TEST(QuantMix, TiedEmbeddingsMakeTokenEmbdTheLmHead) {
  const auto t = model(2, 256, 768, 128, true);
  const tools::MixModel m{"qwen3", 2, 8, 2, 0};
  EXPECT_EQ(types("Q4_K_M", false, m, t).at("token_embd.weight"), GgmlType::Q6_K);
  EXPECT_EQ(types("Q4_0", false, m, t).at("token_embd.weight"), GgmlType::Q6_K);
  EXPECT_EQ(types("Q8_0", false, m, t).at("token_embd.weight"), GgmlType::Q8_0);
  EXPECT_EQ(types("Q4_0", true, m, t).at("token_embd.weight"), GgmlType::Q4_0);
  // Untied: the embedding keeps the base type, the output gets Q6_K.
  const auto u = types("Q4_0", false, m, model(2, 256, 768, 128, false));
  EXPECT_EQ(u.at("token_embd.weight"), GgmlType::Q4_0);
  EXPECT_EQ(u.at("output.weight"), GgmlType::Q6_K);
}

TEST(QuantMix, PureGivesEveryMatrixTheTargetType) {
  const auto t = model(8, 256, 768, 128, false);
  for (const char* target : {"Q4_K_M", "Q4_0", "Q6_K"}) {
    const GgmlType base = tools::find_target(target)->default_type;
    for (const auto& [name, type] : types(target, true, {"llama", 8, 8, 4, 0}, t)) {
      EXPECT_EQ(type, name.find("norm") != std::string::npos ? GgmlType::F32 : base) << target << " " << name;
    }
  }
}

TEST(QuantMix, FloatTargetsConvertEveryMatrixAndNothingElse) {
  const auto t = model(2, 96, 200, 96, false);  // row lengths fit no quantized block: no fallback for floats
  for (const char* target : {"F16", "BF16", "F32"}) {
    const GgmlType want = tools::find_target(target)->default_type;
    for (const auto& [name, type] : types(target, false, {"llama", 2, 2, 2, 0}, t)) {
      EXPECT_EQ(type, name.find("norm") != std::string::npos ? GgmlType::F32 : want) << target << " " << name;
    }
  }
}

TEST(QuantMix, RowLengthsThatBlocksDoNotDivideFallBackAsInLlamaCpp) {
  // n_embd 896 (Qwen2.5-0.5B): 896 % 256 != 0, 896 % 32 == 0; n_ff 4864 = 19 * 256.
  const auto t = model(24, 896, 4864, 128, true);
  const tools::MixModel m{"qwen2", 24, 14, 2, 0};
  const auto choices = tools::choose_types(*tools::find_target("Q4_K_M"), false, m, t);
  std::map<std::string, tools::TypeChoice> c;
  for (size_t i = 0; i < t.size(); ++i) c[t[i].name] = choices[i];
  EXPECT_EQ(c.at("blk.0.attn_q.weight").type, GgmlType::Q5_0);  // Q4_K -> Q5_0
  EXPECT_NE(c.at("blk.0.attn_q.weight").fallback.find("Q4_K -> Q5_0"), std::string::npos);
  EXPECT_EQ(c.at("blk.0.attn_v.weight").type, GgmlType::Q8_0);  // Q6_K -> Q8_0
  EXPECT_EQ(c.at("blk.0.ffn_down.weight").type, GgmlType::Q6_K);  // 4864 fits
  EXPECT_EQ(c.at("blk.4.ffn_down.weight").type, GgmlType::Q4_K);  // use_more_bits(4, 24) is false
  EXPECT_EQ(c.at("token_embd.weight").type, GgmlType::Q8_0);  // LM head with a row that Q6_K cannot take
  EXPECT_TRUE(c.at("token_embd.weight").fallback.empty());   // decided by the LM head rule, not a fallback
  EXPECT_EQ(types("Q5_K_M", false, m, t).at("blk.0.attn_q.weight"), GgmlType::Q5_1);  // Q5_K -> Q5_1

  // 80 % 32 != 0: K types end at F16, the legacy types have no fallback (and
  // neither has the Q8_0 the LM head rule picks, so only --pure works).
  const auto odd = model(1, 80, 256, 80, false);
  EXPECT_EQ(types("Q4_K", true, {"llama", 1, 1, 1, 0}, odd).at("blk.0.attn_q.weight"), GgmlType::F16);
  EXPECT_THROW(types("Q4_K", false, {"llama", 1, 1, 1, 0}, odd), tools::MixError);
  EXPECT_THROW(types("Q4_0", true, {"llama", 1, 1, 1, 0}, odd), tools::MixError);
}

TEST(QuantMix, Llama70BGivesAttnVQ5K) {
  const auto ty = types("Q4_K_M", false, {"llama", 80, 64, 8, 0}, model(80, 256, 768, 256, false));
  EXPECT_EQ(ty.at("blk.0.attn_v.weight"), GgmlType::Q6_K);   // use_more_bits first
  EXPECT_EQ(ty.at("blk.10.attn_v.weight"), GgmlType::Q5_K);  // then Q4_K -> Q5_K
  EXPECT_EQ(ty.at("blk.10.ffn_down.weight"), GgmlType::Q4_K);
  // Same layer count without GQA (65B) is not the 70B rule.
  EXPECT_EQ(types("Q4_K_M", false, {"llama", 80, 64, 64, 0}, model(80, 256, 768, 256, false)).at("blk.10.attn_v.weight"),
            GgmlType::Q4_K);
}

// falcon's rules (engine/arch/quant_quirks.h): its LM head stays Q8_0, and
// ffn_down is Q6_K in the first 16th of the layers, then Q5_K where llama's
// would be Q6_K; the 70B rule is llama's alone.
TEST(QuantMix, FalconKeepsItsOwnRules) {
  const auto t = model(32, 256, 768, 256, false);
  const auto falcon = types("Q4_K_M", false, {"falcon", 32, 8, 8, 0}, t);
  const auto llama = types("Q4_K_M", false, {"llama", 32, 8, 8, 0}, t);
  EXPECT_EQ(falcon.at("output.weight"), GgmlType::Q8_0);
  EXPECT_EQ(llama.at("output.weight"), GgmlType::Q6_K);
  EXPECT_EQ(falcon.at("blk.1.ffn_down.weight"), GgmlType::Q6_K);   // layer 1 < 32 / 16
  EXPECT_EQ(falcon.at("blk.6.ffn_down.weight"), GgmlType::Q5_K);   // use_more_bits(6, 32)
  EXPECT_EQ(llama.at("blk.6.ffn_down.weight"), GgmlType::Q6_K);
  EXPECT_EQ(falcon.at("blk.5.ffn_down.weight"), GgmlType::Q4_K);
  const auto falcon_80 = types("Q4_K_M", false, {"falcon", 80, 64, 8, 0}, model(80, 256, 768, 256, false));
  EXPECT_EQ(falcon_80.at("blk.10.attn_v.weight"), GgmlType::Q4_K);
}

TEST(QuantMix, EightExpertModelsGetQ8_0AttentionKV) {
  const auto ty = types("Q4_K_M", false, {"llama", 4, 8, 8, 8}, model(4, 256, 768, 256, false));
  EXPECT_EQ(ty.at("blk.0.attn_v.weight"), GgmlType::Q8_0);
  EXPECT_EQ(ty.at("blk.0.attn_k.weight"), GgmlType::Q8_0);
  EXPECT_EQ(ty.at("blk.0.attn_output.weight"), GgmlType::Q5_K);
}

TEST(QuantMix, NonQuantizableTensorsKeepTheirType) {
  std::vector<TensorDesc> t = {desc("blk.0.ffn_gate_inp.weight", {256, 8}), desc("blk.0.attn_q.bias", {256}),
                               desc("blk.0.attn_q_norm.weight", {64}), desc("blk.0.ffn_up.weight", {256, 1}),
                               desc("blk.0.attn_q.weight", {256, 256}, GgmlType::F16)};
  const auto c = tools::choose_types(*tools::find_target("Q4_0"), false, {"llama", 1, 1, 1, 0}, t);
  EXPECT_EQ(c[0].type, GgmlType::F32);  // expert router
  EXPECT_EQ(c[1].type, GgmlType::F32);  // bias
  EXPECT_EQ(c[2].type, GgmlType::F32);  // norm
  EXPECT_EQ(c[3].type, GgmlType::F32);  // [256, 1] counts as 1-D, as ggml_n_dims says
  EXPECT_FALSE(c[3].quantizable);
  EXPECT_EQ(c[4].type, GgmlType::Q4_0);
}

TEST(QuantMix, TensorOrderIsLlamaCppsLayerThenName) {
  std::vector<TensorDesc> t = {desc("blk.10.a.weight", {32}), desc("token_embd.weight", {32}),
                               desc("blk.2.b.weight", {32}), desc("output.weight", {32}), desc("blk.2.a.weight", {32})};
  std::vector<std::string> names;
  for (size_t i : tools::llama_cpp_order(t)) names.push_back(t[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"output.weight", "token_embd.weight", "blk.2.a.weight", "blk.2.b.weight",
                                             "blk.10.a.weight"}));
}

TEST(QuantMix, TargetsAreFoundByNameAndRecordLlamaCppFileTypes) {
  EXPECT_EQ(tools::find_target("q4_k_m")->file_type, 15u);
  EXPECT_EQ(tools::find_target("Q5_K_M")->file_type, 17u);
  EXPECT_EQ(tools::find_target("Q8_0")->file_type, 7u);
  EXPECT_EQ(tools::find_target("Q4_0")->file_type, 2u);
  EXPECT_EQ(tools::find_target("F16")->file_type, 1u);
  EXPECT_EQ(tools::find_target("BF16")->file_type, 32u);
  EXPECT_EQ(tools::find_target("Q6_K")->file_type, 18u);
  EXPECT_EQ(tools::find_target("Q3_K_XL"), nullptr);
  EXPECT_EQ(tools::find_target(""), nullptr);
}

}  // namespace

namespace {

// The low-bit mixes on an 8-layer llama (n_gqa 1, then 4), rule by rule from
// llama.cpp's llama_tensor_get_type_impl (quant_mix.h lists them).
TEST(QuantMix, LowBitMixesFollowLlamaCppPerTensor) {
  using T = GgmlType;
  const auto t = model(8, 512, 1536, 512, false);
  struct Case {
    const char* target;
    int n_head_kv;
    T base, attn_v_first2, attn_v_rest, attn_output, ffn_down_first, ffn_down_rest;
  };
  // ffn_down_first: layer 0 (n/16 = 0 layers for Q3_K_M's Q5_K; n/8 = 1 for IQ4).
  const Case cases[] = {
      {"Q2_K", 8, T::Q2_K, T::Q3_K, T::Q3_K, T::Q3_K, T::Q3_K, T::Q3_K},
      {"Q2_K", 2, T::Q2_K, T::Q4_K, T::Q4_K, T::Q3_K, T::Q3_K, T::Q3_K},
      {"Q3_K_S", 8, T::Q3_K, T::Q3_K, T::Q3_K, T::Q3_K, T::Q3_K, T::Q3_K},
      {"Q3_K_M", 8, T::Q3_K, T::Q5_K, T::Q4_K, T::Q4_K, T::Q4_K, T::Q4_K},
      {"Q3_K_L", 8, T::Q3_K, T::Q5_K, T::Q5_K, T::Q5_K, T::Q5_K, T::Q5_K},
      {"IQ4_NL", 8, T::IQ4_NL, T::IQ4_NL, T::IQ4_NL, T::IQ4_NL, T::Q5_K, T::IQ4_NL},
      {"IQ4_XS", 2, T::IQ4_XS, T::Q5_K, T::Q5_K, T::IQ4_XS, T::Q5_K, T::IQ4_XS},
  };
  for (const Case& c : cases) {
    const auto ty = types(c.target, false, {"llama", 8, 8, static_cast<uint32_t>(c.n_head_kv), 0}, t);
    const std::string what = std::string(c.target) + " n_head_kv " + std::to_string(c.n_head_kv);
    EXPECT_EQ(ty.at("output.weight"), T::Q6_K) << what;
    EXPECT_EQ(ty.at("token_embd.weight"), c.base) << what;
    for (int l = 0; l < 8; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      EXPECT_EQ(ty.at(b + "attn_v.weight"), l < 2 ? c.attn_v_first2 : c.attn_v_rest) << what << " layer " << l;
      EXPECT_EQ(ty.at(b + "attn_output.weight"), c.attn_output) << what << " layer " << l;
      EXPECT_EQ(ty.at(b + "ffn_down.weight"), l < 1 ? c.ffn_down_first : c.ffn_down_rest) << what << " layer " << l;
      for (const char* n : {"attn_q.weight", "attn_k.weight", "ffn_gate.weight", "ffn_up.weight"}) {
        EXPECT_EQ(ty.at(b + n), c.base) << what << " " << b << n;
      }
    }
  }
  // Q3_K_M's ffn_down is Q5_K in the first n/16 layers: 2 of 32.
  const auto ty32 = types("Q3_K_M", false, {"llama", 32, 32, 32, 0}, model(32, 512, 1536, 512, false));
  EXPECT_EQ(ty32.at("blk.1.ffn_down.weight"), T::Q5_K);
  EXPECT_EQ(ty32.at("blk.2.ffn_down.weight"), T::Q4_K);
}

TEST(QuantMix, LowBitTypesFallBackAsInLlamaCpp) {
  const auto t = model(4, 512, 1408, 512, false);  // ffn_down rows of 1408: 32 divides, 256 does not
  const tools::MixModel m{"llama", 4, 8, 8, 0};
  EXPECT_EQ(types("IQ4_XS", true, m, t).at("blk.0.ffn_down.weight"), GgmlType::IQ4_NL);
  EXPECT_EQ(types("Q2_K", true, m, t).at("blk.0.ffn_down.weight"), GgmlType::Q4_0);
  EXPECT_EQ(types("Q3_K", true, m, t).at("blk.0.ffn_down.weight"), GgmlType::Q4_0);
  EXPECT_EQ(types("IQ4_NL", true, m, t).at("blk.0.ffn_down.weight"), GgmlType::IQ4_NL);
  EXPECT_EQ(tools::find_target("Q3_K_M")->file_type, 12u);
  EXPECT_EQ(tools::find_target("iq4_xs")->file_type, 30u);
  EXPECT_EQ(tools::find_target("Q2_K")->file_type, 10u);
}

}  // namespace
