// synth: deterministic random models of real shapes that load in the engine
// and decode with finite logits; its types follow quantize's rules exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/quantize_model.h"
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"

namespace {

using quantize_test::TempDir;

tools::SynthShape small(const std::string& arch) {
  tools::SynthShape s;
  s.name = "small-" + arch;
  s.arch = arch;
  s.n_embd = 256;
  s.n_layer = 2;
  s.n_head = 8;
  s.n_head_kv = arch == "llama" ? 4 : 2;
  s.head_dim = arch == "qwen3" ? 64 : 32;  // qwen3: head_dim != n_embd / n_head, as in the real models
  s.n_ff = 768;
  s.n_vocab = 512;
  s.n_ctx = 256;
  s.tied = arch == "qwen3";
  if (arch == "phi3") {  // Phi-4-mini's kind: LongRoPE, a partial rotation, a stated window
    s.longrope = true;
    s.rope_original_ctx = 64;
    s.n_rot = 24;
    s.values[engine::arch::Param::sliding_window] = 16;
  }
  if (arch == "granite") {
    s.embedding_scale = 12.0f;
    s.residual_scale = 0.22f;
    s.attention_scale = 1.0f / 32;
    s.logit_scale = 8.0f;
  }
  return s;
}

tools::SynthResult synth(const tools::SynthShape& shape, const std::string& type, const std::string& out,
                         uint64_t seed = 1, size_t threads = 0, bool dry_run = false, bool pure = false) {
  tools::SynthOptions o;
  o.pure = pure;
  o.shape = shape;
  o.type = type;
  o.output = out;
  o.seed = seed;
  o.n_threads = threads;
  o.dry_run = dry_run;
  o.out = nullptr;
  return tools::synth_model(o);
}

std::vector<uint8_t> tensor_bytes(const std::string& path, const std::string& name) {
  const gguf::File f = gguf::File::open(path);
  const gguf::TensorInfo& t = f.tensor(name);
  return {f.tensor_data(t), f.tensor_data(t) + t.n_bytes};
}

// Loads the file, checks its config against the shape, evaluates BOS and 4
// greedy decode steps: every logit finite, with a real spread.
void expect_runs(const std::string& path, const tools::SynthShape& s, uint32_t n_vocab) {
  const auto model = engine::Model::load(path);
  const engine::ModelConfig& c = model->config();
  EXPECT_EQ(c.arch_name, s.arch);
  EXPECT_EQ(c.n_embd, s.n_embd);
  EXPECT_EQ(c.n_layer, s.n_layer);
  EXPECT_EQ(c.n_head, s.n_head);
  EXPECT_EQ(c.n_head_kv, s.n_head_kv);
  EXPECT_EQ(c.head_dim_k, s.head_dim);
  EXPECT_EQ(c.n_ff, s.n_ff);
  EXPECT_EQ(c.n_vocab, n_vocab);
  EXPECT_EQ(c.n_ctx_train, s.n_ctx);
  EXPECT_EQ(c.rope_freq_base, s.rope_base);
  EXPECT_EQ(c.rms_eps, s.rms_eps);
  EXPECT_EQ(model->rope_freq_factors(16).empty(), s.rope_factor == 0.0f && !s.longrope);
  EXPECT_EQ(c.n_rot, s.n_rot != 0 ? s.n_rot : s.head_dim);
  EXPECT_EQ(c.values, s.values);
  EXPECT_FLOAT_EQ(c.rope_attn_factor, s.longrope_attn_factor());
  EXPECT_FLOAT_EQ(c.embed_scale, s.embedding_scale != 0.0f ? s.embedding_scale : 1.0f);
  EXPECT_FLOAT_EQ(c.logit_scale, s.logit_scale != 0.0f ? s.logit_scale : 1.0f);
  EXPECT_EQ(engine::Tokenizer::from_gguf(model->file()).n_vocab(), static_cast<int32_t>(n_vocab));

  engine::Session session(*model, {.n_ctx = 16, .n_batch = 8, .kv_type = engine::KvType::f16});
  int32_t token = 1;  // BOS
  for (int step = 0; step < 5; ++step) {  // the BOS, then 4 decode steps
    session.eval({&token, 1});
    const auto logits = session.logits();
    double sum = 0, sum2 = 0;
    for (float x : logits) {
      ASSERT_TRUE(std::isfinite(x)) << path << " step " << step;
      sum += x;
      sum2 += static_cast<double>(x) * x;
    }
    const double mean = sum / static_cast<double>(logits.size());
    // The spread before granite's logit scale divides it.
    const double sd = std::sqrt(sum2 / static_cast<double>(logits.size()) - mean * mean) * c.logit_scale;
    EXPECT_GT(sd, 0.2) << "step " << step << ": the logits have no spread";
    EXPECT_LT(sd, 5.0) << "step " << step;
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
}

TEST(Synth, SameSeedSameBytesWhateverTheThreads) {
  TempDir dir("synth-determinism");
  const tools::SynthShape s = small("qwen2");
  synth(s, "Q8_0", dir / "a.gguf", 7, 1);
  synth(s, "Q8_0", dir / "b.gguf", 7, 3);
  synth(s, "Q8_0", dir / "c.gguf", 8, 2);
  EXPECT_TRUE(quantize_test::read_bytes(dir / "a.gguf") == quantize_test::read_bytes(dir / "b.gguf"));
  EXPECT_NE(tensor_bytes(dir / "a.gguf", "blk.0.attn_q.weight"), tensor_bytes(dir / "c.gguf", "blk.0.attn_q.weight"));
  // A tensor's values depend on the seed and its name only, not the layer count.
  tools::SynthShape one = s;
  one.n_layer = 1;
  synth(one, "Q8_0", dir / "d.gguf", 7);
  EXPECT_EQ(tensor_bytes(dir / "a.gguf", "blk.0.ffn_up.weight"), tensor_bytes(dir / "d.gguf", "blk.0.ffn_up.weight"));
}

// Synth in F32 then quantize gives the bytes synth writes directly: one set of
// rules, one set of quantizers. n_embd 320 exercises the fallbacks.
TEST(Synth, DirectTypesEqualQuantizingTheF32Model) {
  TempDir dir("synth-vs-quantize");
  tools::SynthShape s = small("qwen2");
  s.n_embd = 320;
  s.n_head = 10;
  synth(s, "F32", dir / "f32.gguf");
  for (const char* type : {"Q4_K_M", "Q4_0", "Q6_K", "BF16"}) {
    const bool k = std::string(type) == "Q4_K_M" || std::string(type) == "Q6_K";
    if (quantize_test::k_types_too_slow() && k) continue;
    synth(s, type, dir / "direct.gguf");
    tools::QuantizeOptions o;
    o.input = dir / "f32.gguf";
    o.output = dir / "quantized.gguf";
    o.type = type;
    o.out = nullptr;
    tools::quantize_model(o);
    // quantize copies synth's keys and appends the file type as synth does: the headers match too.
    EXPECT_TRUE(quantize_test::read_bytes(dir / "direct.gguf") == quantize_test::read_bytes(dir / "quantized.gguf"))
        << type;
  }
}

TEST(Synth, WeightsHaveTheStatedDistributions) {
  // The deviates: mean 0, variance 1, within +-3.47.
  double sum = 0, sum2 = 0, mx = 0;
  const uint64_t key = tools::tensor_key(1, "x");
  const int n = 1 << 20;
  for (int i = 0; i < n; ++i) {
    const double z = tools::synth_normal(key, static_cast<uint64_t>(i) / 1024, static_cast<uint64_t>(i) % 1024);
    sum += z;
    sum2 += z * z;
    mx = std::max(mx, std::fabs(z));
  }
  EXPECT_NEAR(sum / n, 0.0, 0.005);
  EXPECT_NEAR(sum2 / n, 1.0, 0.005);
  EXPECT_LE(mx, 3.465);

  TempDir dir("synth-stats");
  synth(small("qwen2"), "F32", dir / "f32.gguf");
  const gguf::File f = gguf::File::open(dir / "f32.gguf");
  auto stats = [&](const char* name) {
    const gguf::TensorInfo& t = f.tensor(name);
    const auto* x = reinterpret_cast<const float*>(f.tensor_data(t));
    double s = 0, s2 = 0;
    for (uint64_t i = 0; i < t.n_elements; ++i) {
      s += x[i];
      s2 += static_cast<double>(x[i]) * x[i];
    }
    const double mean = s / static_cast<double>(t.n_elements);
    return std::pair{mean, std::sqrt(s2 / static_cast<double>(t.n_elements) - mean * mean)};
  };
  EXPECT_NEAR(stats("blk.0.attn_q.weight").second, 1.0 / 16, 0.002);   // 1/sqrt(256)
  EXPECT_NEAR(stats("blk.1.ffn_down.weight").second, 1.0 / std::sqrt(768.0), 0.001);
  EXPECT_NEAR(stats("token_embd.weight").second, 1.0 / 16, 0.002);
  EXPECT_NEAR(stats("blk.0.attn_norm.weight").first, 1.0, 0.02);
  EXPECT_NEAR(stats("blk.0.attn_norm.weight").second, 0.1, 0.015);
  EXPECT_NEAR(stats("blk.0.attn_q.bias").second, 0.5, 0.05);
}

TEST(Synth, CopiesAVocabularyFromAnotherFile) {
  const std::filesystem::path vocab = ::engine_test::default_model();
  TempDir dir("synth-vocab");
  tools::SynthOptions o;
  o.shape = small("llama");
  o.shape.n_vocab = 100000;  // replaced by the vocab file's size
  o.type = "Q8_0";
  o.output = dir / "v.gguf";
  o.vocab_file = vocab.string();
  o.out = nullptr;
  EXPECT_EQ(tools::synth_model(o).n_vocab, 512u);
  const gguf::File src = gguf::File::open(vocab.string());
  const gguf::File out = gguf::File::open(dir / "v.gguf");
  for (const gguf::KeyValue& kv : src.metadata()) {
    if (kv.key.substr(0, 10) != "tokenizer.") continue;
    const gguf::KeyValue* copy = out.find(kv.key);
    ASSERT_NE(copy, nullptr) << kv.key;
    EXPECT_TRUE(std::equal(kv.raw_value.begin(), kv.raw_value.end(), copy->raw_value.begin(), copy->raw_value.end()))
        << kv.key;
  }
  const engine::Tokenizer tok = engine::Tokenizer::from_gguf(out);
  EXPECT_EQ(tok.decode(tok.encode("Once upon a time", true, false)), "Once upon a time");
  tools::SynthShape s = o.shape;
  expect_runs(dir / "v.gguf", s, 512);
}

TEST(Synth, RefusesInconsistentShapes) {
  tools::SynthShape s = small("llama");
  s.n_head_kv = 3;
  EXPECT_THROW(tools::validate_shape(s, false), tools::SynthError);
  s = small("llama");
  s.n_vocab = 100;
  EXPECT_THROW(tools::validate_shape(s, false), tools::SynthError);
  EXPECT_NO_THROW(tools::validate_shape(s, true));
  s = small("mamba");
  EXPECT_THROW(tools::validate_shape(s, false), tools::SynthError);
  EXPECT_THROW(synth(small("llama"), "Q3_X", "/nonexistent/x.gguf"), tools::SynthError);
}

class SmallShapes : public testing::TestWithParam<std::pair<const char*, const char*>> {};

// Every architecture, fully, everywhere (qemu included).
TEST_P(SmallShapes, LoadAndDecode) {
  TempDir dir("synth-small");
  const tools::SynthShape s = small(GetParam().first);
  const std::string type = GetParam().second;
  synth(s, quantize_test::k_types_too_slow() && type == "Q4_K_M" ? "Q5_1" : type, dir / "m.gguf");
  expect_runs(dir / "m.gguf", s, s.n_vocab);
}

INSTANTIATE_TEST_SUITE_P(Arch, SmallShapes,
                         testing::Values(std::pair{"llama", "Q4_K_M"}, std::pair{"qwen2", "Q4_0"},
                                         std::pair{"qwen3", "Q8_0"}, std::pair{"phi3", "Q4_0"},
                                         std::pair{"smollm3", "Q8_0"}, std::pair{"granite", "Q4_K_M"}),
                         [](const auto& p) { return std::string(p.param.first); });

struct Named {
  const char* name;
  const char* type;
  bool pure;  // the reference K quantizers take ~30-60 ns a weight: no Q6_K LM head of 0.5G weights in a test
};

class NamedShapes : public testing::TestWithParam<Named> {};

// The real shapes with one layer and the real vocabulary. The plan is checked
// everywhere; all are written and run natively, the smallest under the
// sanitizers, none under qemu (0.1-1.3 G weights each).
TEST_P(NamedShapes, OneLayerLoadsAndDecodes) {
  const Named p = GetParam();
  tools::SynthShape s = *tools::find_shape(p.name);
  const tools::SynthResult full = synth(s, p.type, "", 1, 0, /*dry_run=*/true, p.pure);
  // phi3: attn_qkv for attn_q/k/v, ffn_up holding the gate.
  const size_t per_layer = 9 + (s.arch == "qwen2" ? 3 : 0) + (s.arch == "qwen3" ? 2 : 0) - (s.arch == "phi3" ? 3 : 0);
  EXPECT_EQ(full.plan.size(), 2 + !s.tied + (s.rope_factor > 0) + 2 * s.longrope + per_layer * s.n_layer);
  uint64_t weights = 0;
  for (const tools::PlannedTensor& t : full.plan) weights += t.n_elements();
  EXPECT_EQ(weights, s.n_params());

  s.n_layer = 1;
  if (quantize_test::under_qemu()) GTEST_SKIP() << "writing " << s.name << " runs natively only (plan checked)";
  if (quantize_test::sanitized() && s.name != "qwen2.5-0.5b") {
    GTEST_SKIP() << "writing " << s.name << " runs without sanitizers only (plan checked)";
  }
  TempDir dir("synth-named");
  synth(s, p.type, dir / "m.gguf", 1, 0, false, p.pure);
  std::printf("%s --layers 1 --type %s%s: %.1f MiB\n", p.name, p.type, p.pure ? " --pure" : "",
              static_cast<double>(std::filesystem::file_size(dir / "m.gguf")) / (1 << 20));
  expect_runs(dir / "m.gguf", s, s.n_vocab);
}

INSTANTIATE_TEST_SUITE_P(Real, NamedShapes,
                         testing::Values(Named{"tinyllama-1.1b", "Q4_0", true}, Named{"llama-3.2-1b", "Q4_0", true},
                                         Named{"llama-3.2-3b", "Q4_0", true}, Named{"llama-2-7b", "Q4_0", true},
                                         Named{"llama-3-8b", "Q4_0", true}, Named{"qwen2.5-0.5b", "Q4_K_M", false},
                                         Named{"qwen2.5-1.5b", "Q8_0", true}, Named{"qwen3-0.6b", "Q4_0", true},
                                         Named{"qwen3-1.7b", "Q4_0", true}, Named{"qwen3-4b", "Q4_0", true},
                                         Named{"phi-4-mini", "Q4_0", true}, Named{"smollm3-3b", "Q4_0", true},
                                         Named{"granite-3.3-2b", "Q4_0", true}),
                         [](const testing::TestParamInfo<Named>& p) {
                           std::string s = p.param.name;
                           for (char& c : s) {
                             if (c == '-' || c == '.') c = '_';
                           }
                           return s;
                         });

// --set KEY=VALUE sets one of the family's further keys; KEY=none leaves out
// one the named shape has (phi-4-mini states a sliding window).
TEST(SynthArgs, SetAddsAndRemovesAFamilyKey) {
  auto parse = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return tools::parse_synth_command(static_cast<int>(argv.size()), argv.data()).options.shape;
  };
  const auto window = engine::arch::Param::sliding_window;
  EXPECT_EQ(parse({"synth", "phi-4-mini", "--type", "Q4_0", "--dry-run"}).values.at(window), 262144);
  EXPECT_EQ(parse({"synth", "phi-4-mini", "--set", "attention.sliding_window=8", "--type", "Q4_0", "--dry-run"}).values.at(window), 8);
  EXPECT_EQ(parse({"synth", "phi-4-mini", "--set", "attention.sliding_window=none", "--type", "Q4_0", "--dry-run"}).values.count(window),
            0u);
  EXPECT_THROW(parse({"synth", "phi-4-mini", "--set", "attention.sliding_window=-1", "--type", "Q4_0", "--dry-run"}), tools::ArgError);
}

}  // namespace
