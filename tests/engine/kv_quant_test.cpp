// A quantized KV cache (q8_0, q4_0) over whole models: logits against an F32
// cache within the tolerances derived below, prefill and decode across a
// sliding window's ring on a synth gemma3 model, sessions saved and loaded,
// and a head dimension the blocks do not fit refused.
//
// Tolerances. Q8_0 rounds each value to the nearest of 255 steps of
// d = amax / 127 of its 32-value block: an error of at most d / 2 = amax / 254
// (0.39% of the block's largest magnitude). F16 rounds to 11 bits of the value
// itself: at most |x| / 4096. For a value half the block's maximum (the mean
// of uniform random values, what synth's weights give) Q8_0's error is then
// 2 x 4096 / 254 = 32x F16's. Q4_0 has 16 steps of d = amax / 8: at most
// amax / 16, 16x Q8_0's. The errors enter every score (q . k) and output
// (sum of p v) of every layer; the logits grow them by the same gain whatever
// the type, so the whole-model error scales as the per-value one. F16 against
// F32 measures 1.8e-3 and 2.1e-3 of (1 + |logit|) on these models (printed by
// the test): Q8_0 is then expected near 32 x 2.1e-3 = 0.07 and Q4_0 near
// 16 x 0.07 = 1.1 (measured: 0.059 / 0.071 and 0.89 / 0.71; the scores'
// queries are rounded to Q8_0 too, as llama.cpp's, which moved Q8_0's from
// 0.056 / 0.049). The tolerances are those with a margin of 1.4 and 1.6: 0.1
// and 1.4. That they still catch a
// broken attention is shown by each test: F32 logits of a history of other
// tokens are further off (3.5 to 3.7) than either tolerance.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/support/error.h"
#include "tests/engine/gemma3_shape.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_model.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace {

using engine::KvType;

constexpr double kQ8 = 0.1, kQ4 = 1.4;
double tolerance(KvType t) { return t == KvType::q8_0 ? kQ8 : kQ4; }

// max |got - want| / (1 + |want|), as the other whole-model tests measure.
double worst(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double w = 0;
  for (size_t i = 0; i < got.size(); ++i) w = std::max(w, std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i])));
  return w;
}

// The models: a llama with heads of 32 (one block) and 2 KV heads for 4 query
// heads, and gemma3's cache shape (heads of 256) cut to 6 layers (5 windowed,
// 1 global) with a window of 24 positions.
struct Case {
  const char* name;
  uint32_t window;  // 0: none
};
constexpr Case kCases[] = {{"llama", 0}, {"gemma3", 24}};

class KvQuant : public testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new quantize_test::TempDir("kv-quant");
    for (const Case& c : kCases) {
      tools::SynthOptions o;
      if (c.window == 0) {
        o.shape = *tools::find_shape("llama-2-7b");
        o.shape.name = "custom";
        o.shape.n_embd = 128, o.shape.n_layer = 3, o.shape.n_head = 4, o.shape.n_head_kv = 2;
        o.shape.head_dim = 32, o.shape.n_ff = 128, o.shape.n_vocab = 320, o.shape.n_ctx = 256;
      } else {
        o.shape = engine_test::gemma3_1b_cache_shape();
        o.shape.n_layer = 6;
        o.shape.values[engine::arch::Param::sliding_window] = c.window;
      }
      o.type = "F32";
      o.output = path(c);
      o.out = nullptr;
      tools::synth_model(o);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const Case& c) { return *dir_ / (std::string(c.name) + ".gguf"); }
  void SetUp() override { model_ = engine::Model::load(path(GetParam())); }

  engine::Session session(KvType kv, uint32_t n_batch = 64) const {
    engine::SessionParams sp;
    sp.n_ctx = 128;
    sp.n_batch = n_batch;
    sp.kv_type = kv;
    return engine::Session(*model_, sp);
  }
  // 70 tokens: with a window of 24, the prefill of 40 crosses the ring's
  // edge, and so does the decode of the other 30, token by token.
  static std::vector<int32_t> tokens(int32_t salt = 0) {
    std::vector<int32_t> t;
    for (int32_t i = 0; i < 70; ++i) t.push_back((i * 37 + 5 + salt) % 250);
    return t;
  }
  // Prefill of the first 40 (in batches of n_batch), then one token at a time;
  // every token's logits.
  static std::vector<float> run(engine::Session& s, const std::vector<int32_t>& t) {
    std::vector<float> got;
    s.eval(std::span<const int32_t>(t.data(), 40), /*all_logits=*/true);
    got.assign(s.logits().begin(), s.logits().end());
    for (size_t i = 40; i < t.size(); ++i) {
      s.eval(std::span<const int32_t>(&t[i], 1));
      got.insert(got.end(), s.logits().begin(), s.logits().end());
    }
    return got;
  }

  static quantize_test::TempDir* dir_;
  std::unique_ptr<engine::Model> model_;
};

quantize_test::TempDir* KvQuant::dir_ = nullptr;

TEST_P(KvQuant, LogitsStayWithinTheirToleranceOfAnF32Cache) {
  engine::Session f32 = session(KvType::f32);
  const std::vector<float> want = run(f32, tokens());
  // A history of other tokens: what attention to the wrong positions looks like.
  engine::Session other = session(KvType::f32);
  std::vector<int32_t> t = tokens();
  for (size_t i = 0; i < 60; ++i) t[i] = (t[i] + 101) % 250;
  const double wrong = worst(run(other, t), want);
  engine::Session f16 = session(KvType::f16);
  const double f16_error = worst(run(f16, tokens()), want);
  for (KvType kv : {KvType::q8_0, KvType::q4_0}) {
    SCOPED_TRACE(engine::kv_type_name(kv));
    for (uint32_t n_batch : {64u, 7u}) {  // one prefill batch, and batches across the window's edge
      engine::Session s = session(kv, n_batch);
      const double got = worst(run(s, tokens()), want);
      std::printf("%s %s batch %u: worst %.3g of (1 + |logit|) (tolerance %.3g; f16 %.3g; other tokens %.3g)\n",
                  GetParam().name, engine::kv_type_name(kv), n_batch, got, tolerance(kv), f16_error, wrong);
      EXPECT_LT(got, tolerance(kv));
    }
    EXPECT_GT(wrong, tolerance(kv)) << "the tolerance would not see a broken attention";
  }
}

TEST_P(KvQuant, TheCacheHoldsBlocksAndItsReportsSaySo) {
  engine::Session f16 = session(KvType::f16);
  for (KvType kv : {KvType::q8_0, KvType::q4_0}) {
    engine::Session s = session(kv);
    const engine::KvCache& cache = s.kv_cache();
    // 34 (18) bytes for every 32 values, where F16 takes 64.
    const uint64_t per_block = kv == KvType::q8_0 ? 34 : 18;
    EXPECT_EQ(cache.bytes() * 64, f16.kv_cache().bytes() * per_block);
    EXPECT_EQ(cache.size().bytes, cache.bytes());
    EXPECT_NE(cache.size().describe().find(engine::kv_type_name(kv)), std::string::npos) << cache.size().describe();
  }
}

TEST_P(KvQuant, ASavedSessionLoadsAndGoesOnAsIfNeverSaved) {
  for (KvType kv : {KvType::q8_0, KvType::q4_0}) {
    SCOPED_TRACE(engine::kv_type_name(kv));
    const std::vector<int32_t> t = tokens();
    engine::Session a = session(kv);
    a.eval(std::span<const int32_t>(t.data(), 50));
    const std::string file = *dir_ / "s.session";
    engine::save_session(a, file);
    a.eval(std::span<const int32_t>(&t[50], 1));
    const std::vector<float> want(a.logits().begin(), a.logits().end());

    engine::Session b = session(kv);
    engine::load_session(b, file);
    b.eval(std::span<const int32_t>(&t[50], 1));
    EXPECT_EQ(std::vector<float>(b.logits().begin(), b.logits().end()), want);

    const KvType other = kv == KvType::q8_0 ? KvType::q4_0 : KvType::q8_0;
    for (KvType wrong : {KvType::f16, other}) {
      engine::Session c = session(wrong);
      try {
        engine::load_session(c, file);
        ADD_FAILURE() << "loaded into a " << engine::kv_type_name(wrong) << " cache";
      } catch (const engine::Error& e) {
        EXPECT_NE(std::string(e.what()).find(std::string("saved with a ") + engine::kv_type_name(kv) +
                                             " KV cache; this session's is " + engine::kv_type_name(wrong)),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(KvQuantShape, AHeadDimensionTheBlocksDoNotFitIsRefusedSayingSo) {
  quantize_test::TempDir dir("kv-quant-hd");
  tools::SynthOptions o;
  o.shape = *tools::find_shape("llama-2-7b");
  o.shape.name = "custom";
  o.shape.n_embd = 64, o.shape.n_layer = 1, o.shape.n_head = 4, o.shape.n_head_kv = 4;
  o.shape.head_dim = 16, o.shape.n_ff = 64, o.shape.n_vocab = 320, o.shape.n_ctx = 64;
  o.type = "F32";
  o.output = dir / "hd16.gguf";
  o.out = nullptr;
  tools::synth_model(o);
  const auto model = engine::Model::load(o.output);
  engine::SessionParams sp;
  sp.n_ctx = 32;
  sp.kv_type = KvType::q8_0;
  try {
    engine::Session s(*model, sp);
    ADD_FAILURE() << "a q8_0 cache of heads of 16";
  } catch (const engine::Error& e) {
    EXPECT_NE(std::string(e.what()).find("blocks of 32 values; layer 0 has a head dimension of 16"), std::string::npos)
        << e.what();
  }
  sp.kv_type = KvType::f16;
  EXPECT_NO_THROW(engine::Session(*model, sp));
}

INSTANTIATE_TEST_SUITE_P(Models, KvQuant, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
