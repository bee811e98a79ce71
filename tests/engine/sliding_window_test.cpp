// Sliding-window layers keep only their window in a ring (engine/runtime/
// kv_cache.h): the logits are those of a full cache with the window applied as
// a mask (toy::Reference keeps every position's keys) for a prefill in one
// batch larger than the window, a prefill across the window's edge, decoding
// to several times the window, small batches and a reset; and the cache, the
// scratch and the session's memory estimate hold the windows, not the context.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_memory.h"
#include "engine/support/error.h"
#include "tests/engine/toy_family.h"
#include "tests/engine/gemma3_shape.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_model.h"
#include "tools/common/model_writing/synth_tensors.h"

namespace {

using engine::KvType;
using engine::LayerSpec;
using toy::Vec;

// Window 8 on every other layer (8 < the mixer's 16-token chunk); window 20
// on every layer (a chunk's tokens see into the window of the previous one).
constexpr uint32_t kSmall = 8, kLarge = 20;
const bool kRegistered = (engine::arch::register_architecture(toy::architecture("toy-w8", toy::layer<kSmall, 2>)),
                          engine::arch::register_architecture(toy::architecture("toy-w20", toy::layer<kLarge, 0>)),
                          true);

struct Family {
  const char* arch;
  uint32_t window;
  uint32_t n_layer;
};
constexpr Family kFamilies[] = {{"toy-w8", kSmall, 4}, {"toy-w20", kLarge, 3}};
constexpr uint32_t kCtx = 128;

// F32 weights and cache: float rounding over a few layers of width 64 to 96
// (toy_arch_test measures 2.0e-6 of 1 + |logit|); an F16 cache rounds every
// key and value to 11 bits (2.4e-3 there).
constexpr double kF32 = 2e-5, kF16 = 1e-2;

class SlidingWindow : public testing::TestWithParam<Family> {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kRegistered);
    dir_ = new quantize_test::TempDir("sliding-window");
    for (const Family& f : kFamilies) {
      tools::SynthOptions o;
      o.shape = toy::shape(f.arch, f.n_layer, kCtx);
      o.type = "F32";
      o.output = path(f);
      o.out = nullptr;
      tools::synth_model(o);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const Family& f) { return *dir_ / (std::string(f.arch) + ".gguf"); }

  void SetUp() override {
    model_ = engine::Model::load(path(GetParam()));
    ref_ = std::make_unique<toy::Reference>(path(GetParam()), model_->config());
  }

  // 5 windows and a bit: decoding goes far past the window.
  std::vector<int32_t> tokens() const {
    std::vector<int32_t> t;
    for (uint32_t i = 0; i < 5 * GetParam().window + 3; ++i) t.push_back(static_cast<int32_t>((i * 37 + 5) % 300));
    return t;
  }

  engine::Session session(uint32_t n_batch, KvType kv) const {
    engine::SessionParams sp;
    sp.n_ctx = kCtx;
    sp.n_batch = n_batch;
    sp.kv_type = kv;
    return engine::Session(*model_, sp);
  }

  // Evaluates `tokens` in the given pieces (the last piece repeats until all
  // are in), keeping the logits of every token.
  static std::vector<float> run(engine::Session& s, const std::vector<int32_t>& tokens, std::vector<size_t> pieces) {
    std::vector<float> got;
    for (size_t done = 0, i = 0; done < tokens.size(); ++i) {
      const size_t n = std::min(pieces[std::min(i, pieces.size() - 1)], tokens.size() - done);
      s.eval(std::span<const int32_t>(tokens.data() + done, n), /*all_logits=*/true);
      got.insert(got.end(), s.logits().begin(), s.logits().end());
      done += n;
    }
    return got;
  }

  static quantize_test::TempDir* dir_;
  std::unique_ptr<engine::Model> model_;
  std::unique_ptr<toy::Reference> ref_;
};

quantize_test::TempDir* SlidingWindow::dir_ = nullptr;

TEST_P(SlidingWindow, OnePrefillLargerThanTheWindow) {
  const std::vector<Vec> want = ref_->logits(tokens());
  for (KvType kv : {KvType::f32, KvType::f16}) {
    SCOPED_TRACE(engine::kv_type_name(kv));
    engine::Session s = session(kCtx, kv);
    EXPECT_LT(toy::worst(run(s, tokens(), {tokens().size()}), want), kv == KvType::f32 ? kF32 : kF16);
  }
}

// A prompt that ends inside the first window, one that crosses its edge, then
// one token at a time to 5 windows; the ring is window + 16 - 1 rows.
TEST_P(SlidingWindow, PrefillAcrossTheEdgeThenDecodeFarPastIt) {
  const uint32_t w = GetParam().window;
  const std::vector<Vec> want = ref_->logits(tokens());
  for (KvType kv : {KvType::f32, KvType::f16}) {
    SCOPED_TRACE(engine::kv_type_name(kv));
    engine::Session s = session(16, kv);
    EXPECT_LT(toy::worst(run(s, tokens(), {w - 3, 7, 1}), want), kv == KvType::f32 ? kF32 : kF16);
  }
}

// Batches smaller than the window (a ring of window + 2 rows), and the same
// again after a reset reuses the ring from position 0.
TEST_P(SlidingWindow, SmallBatchesAndAReset) {
  const std::vector<Vec> want = ref_->logits(tokens());
  engine::Session s = session(3, KvType::f32);
  EXPECT_LT(toy::worst(run(s, tokens(), {5, 2, 3}), want), kF32);
  s.reset();
  EXPECT_LT(toy::worst(run(s, tokens(), {11, 1}), want), kF32);
}

// The test can tell: attending past the window changes the logits by far more
// than the tolerance.
TEST_P(SlidingWindow, TheWindowChangesTheLogits) {
  engine::Session s = session(16, KvType::f32);
  EXPECT_GT(toy::worst(run(s, tokens(), {16}), ref_->logits(tokens(), /*windows=*/false)), 100 * kF16);
}

// Each windowed layer's ring holds its window and a batch less one row, the
// other layers the whole context; the estimate is what is allocated.
TEST_P(SlidingWindow, TheRingHoldsTheWindowAndABatch) {
  const Family f = GetParam();
  for (uint32_t n_batch : {1u, 3u, 16u, kCtx}) {
    SCOPED_TRACE("n_batch " + std::to_string(n_batch));
    const engine::Session s = session(n_batch, KvType::f16);
    const engine::ModelConfig& c = model_->config();
    uint64_t bytes = 0, full = 0;
    uint32_t windowed = 0;
    for (uint32_t l = 0; l < c.n_layer; ++l) {
      const bool has_window = engine::arch::is_sliding_layer(l, f.window == kSmall ? 2 : 0);
      const uint32_t rows = has_window ? std::min(f.window + n_batch - 1, kCtx) : kCtx;
      EXPECT_EQ(s.kv_cache().attention(l).n_pos(), rows) << "layer " << l;
      bytes += uint64_t{rows} * 2 * 32 * 2;  // 2 KV heads of 16, keys and values, 2 bytes
      full += uint64_t{kCtx} * 2 * 32 * 2;
      windowed += has_window ? 1 : 0;
    }
    const engine::KvSize& size = s.kv_cache().size();
    EXPECT_EQ(s.kv_cache().bytes(), bytes);
    EXPECT_EQ(size.bytes, bytes);
    EXPECT_EQ(size.full_bytes, full);
    EXPECT_EQ(size.n_layers, c.n_layer);
    EXPECT_EQ(size.n_windowed, windowed);
    EXPECT_EQ(size.windows, std::vector<uint32_t>{f.window});
    EXPECT_EQ(engine::session_memory_needed(c, kCtx, n_batch, KvType::f16, 1).kv_bytes, bytes);
    EXPECT_EQ(engine::session_memory_needed(c, kCtx, n_batch, KvType::f16, 1).kv_full_bytes, full);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, SlidingWindow, testing::ValuesIn(kFamilies),
                         [](const testing::TestParamInfo<Family>& i) { return "window" + std::to_string(i.param.window); });

// When every layer has a window, no buffer grows with the context: the
// scratch of a 32k context is that of a 1k one. With a global layer it does.
TEST(SlidingWindowMemory, TheScratchOfWindowedLayersDoesNotGrowWithTheContext) {
  ASSERT_TRUE(kRegistered);
  for (const Family& f : kFamilies) {
    SCOPED_TRACE(f.arch);
    const engine::ModelConfig c = tools::synth_config(toy::shape(f.arch, f.n_layer, 32768), 300);
    const uint64_t at_1k = engine::session_memory_needed(c, 1024, 512, KvType::f16, 4).scratch_bytes;
    const uint64_t at_32k = engine::session_memory_needed(c, 32768, 512, KvType::f16, 4).scratch_bytes;
    if (f.window == kLarge) {
      EXPECT_EQ(at_32k, at_1k);
    } else {
      EXPECT_GT(at_32k, at_1k);
    }
  }
}

// A Gemma 3 1B-shape session at 32k context (synth's gemma-3-1b,
// gemma3_shape.h): the session is real and allocates its cache.
TEST(SlidingWindowMemory, AGemma3Shaped32kSessionHoldsUnderAFifthOfAFullCache) {
  quantize_test::TempDir dir("gemma3-shape");
  const std::string path = dir / "g.gguf";
  engine_test::write_gemma3_1b_cache_model(path);
  const auto model = engine::Model::load(path);
  ASSERT_EQ(model->config().arch_name, "gemma3");
  for (uint32_t l = 0; l < 26; ++l) EXPECT_EQ(model->config().layers[l].attention.window, l % 6 == 5 ? 0u : 512u);

  // Per layer and position 256 keys and 256 values of 2 bytes: 1 KiB. The 4
  // global layers (5, 11, 17, 23) keep 32768 positions, the 22 local ones a
  // ring of 512 + 512 - 1 (the default batch of 512).
  constexpr uint64_t kPerPosition = 1024;
  constexpr uint64_t kWindowed = 4 * 32768 * kPerPosition + 22 * 1023 * kPerPosition;
  constexpr uint64_t kFull = 26 * 32768 * kPerPosition;
  // Under 400 MiB; a full cache alone is 832 MiB.
  const engine::Session s(*model, {.n_ctx = 32768, .memory_limit = 400u << 20});
  const engine::KvSize& size = s.kv_cache().size();
  EXPECT_EQ(s.kv_cache().bytes(), kWindowed);
  EXPECT_EQ(size.bytes, kWindowed);
  EXPECT_EQ(size.full_bytes, kFull);
  EXPECT_LT(size.bytes * 5, size.full_bytes);
  EXPECT_EQ(size.describe(), "150.0 MiB (f16; 22 of 26 layers windowed to 512 positions; a full cache would be 832.0 MiB)");

  // Without the windows the same session does not fit in 400 MiB.
  engine::ModelConfig full = model->config();
  for (LayerSpec& l : full.layers) l.attention.window = 0;
  EXPECT_THROW(engine::reserve_session_memory(full, 32768, 512, KvType::f16, 1, 400u << 20), engine::ResourceError);
}

}  // namespace
