// LFM2's hybrid layers (engine/arch/lfm2.cpp, engine/mixers/shortconv.h):
// the short convolution against a plain one over the whole sequence, however
// the tokens and channels are cut; a session's prefill, decode and truncation
// over the convolution state; the layer list and keys synth writes and the
// loader reads (the logits against llama.cpp's are in
// tests/reference/llamacpp, model lfm2-d256).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "engine/mixers/shortconv.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/support/error.h"
#include "gguf/file.h"
#include "tests/engine/hybrid_session.h"
#include "tests/engine/model_edit.h"
#include "tests/engine/synth_files.h"
#include "tools/common/model_writing/synth_shapes.h"
#include "tools/common/model_writing/synth_tensors.h"

namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// y[t, ch] = C[t, ch] * sum_i k[ch, i] * (B * x)[t - taps + 1 + i, ch], with
// zeros before the first token: the convolution written from its definition.
std::vector<float> plain_conv(const std::vector<float>& kernel, uint32_t taps, uint32_t d,
                              const std::vector<float>& bcx, uint32_t n) {
  std::vector<float> y(size_t{n} * d);
  for (uint32_t t = 0; t < n; ++t) {
    for (uint32_t ch = 0; ch < d; ++ch) {
      float sum = 0.0f;
      for (uint32_t i = 0; i < taps; ++i) {
        const int64_t src = int64_t{t} - (taps - 1) + i;
        if (src < 0) continue;
        const float* row = &bcx[static_cast<size_t>(src) * 3 * d];
        sum += kernel[size_t{ch} * taps + i] * row[ch] * row[2 * d + ch];
      }
      y[size_t{t} * d + ch] = bcx[size_t{t} * 3 * d + d + ch] * sum;
    }
  }
  return y;
}

// The sequence in batches of `batch` tokens, each batch's channels cut in
// two ranges at `split`, the state carried between batches.
std::vector<float> batched_conv(const std::vector<float>& kernel, uint32_t taps, uint32_t d, std::vector<float> bcx,
                                uint32_t n, uint32_t batch, uint32_t split) {
  std::vector<float> state(size_t{taps - 1} * d, 0.0f);
  std::vector<float> y(size_t{n} * d);
  for (uint32_t t = 0; t < n; t += batch) {
    const uint32_t m = std::min(batch, n - t);
    float* rows = &bcx[size_t{t} * 3 * d];
    engine::shortconv_rows_ref(kernel.data(), taps, d, 0, split, state.data(), rows, m, &y[size_t{t} * d]);
    engine::shortconv_rows_ref(kernel.data(), taps, d, split, d, state.data(), rows, m, &y[size_t{t} * d]);
  }
  return y;
}

TEST(ShortConv, BatchesOfAnySizeAgreeWithTheWholeSequenceConvolution) {
  constexpr uint32_t d = 37, n = 23;
  for (const uint32_t taps : {2u, 3u, 4u, 6u}) {
    const std::vector<float> kernel = random_values(size_t{d} * taps, taps);
    const std::vector<float> bcx = random_values(size_t{n} * 3 * d, 100 + taps);
    const std::vector<float> want = plain_conv(kernel, taps, d, bcx, n);
    // Batches shorter than the state (1, 2), as long, longer, and all at once.
    for (const uint32_t batch : {1u, 2u, 3u, 5u, 8u, n}) {
      for (const uint32_t split : {0u, 16u, d}) {
        SCOPED_TRACE("taps " + std::to_string(taps) + ", batch " + std::to_string(batch) + ", split " +
                     std::to_string(split));
        const std::vector<float> got = batched_conv(kernel, taps, d, bcx, n, batch, split);
        for (size_t i = 0; i < want.size(); ++i) {
          // The same products summed in the same order: equal up to the
          // rounding of B * x (once, either way) and FMA contraction.
          ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << "at " << i;
        }
      }
    }
  }
}

// d64, 6 layers: convolutions in 0, 1, 3, 4, attention in 2 and 5.
tools::SynthShape small_lfm2() {
  tools::SynthShape s = *tools::find_shape("lfm2-350m");
  s.name = "custom";
  s.n_embd = 64;
  s.n_layer = 6;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 16;
  s.n_ff = 128;
  s.n_vocab = 300;
  s.n_ctx = 256;
  s.attention_layers = tools::hybrid_attention_layers(s.n_layer);
  return s;
}

constexpr engine_test::HybridModel kLfm2{"lfm2", small_lfm2, 64};

class Lfm2 : public engine_test::HybridSession<kLfm2> {
 protected:
  static std::vector<int32_t> prompt() { return {1, 40, 90, 7, 250, 13, 77, 5, 199, 42, 8, 160}; }
};

TEST_F(Lfm2, TheFileDescribesTheLayerListAsLlamaCppReadsIt) {
  const gguf::File& f = model_->file();
  const gguf::Value* kv = f.find_array("lfm2.attention.head_count_kv");
  ASSERT_NE(kv, nullptr);
  std::vector<uint64_t> heads;
  for (size_t i = 0; i < kv->array_size(); ++i) heads.push_back(*kv->at(i).to_uint());
  EXPECT_EQ(heads, (std::vector<uint64_t>{0, 0, 2, 0, 0, 2}));
  EXPECT_EQ(f.get_uint("lfm2.shortconv.l_cache"), 3u);
  EXPECT_NE(f.find_tensor("token_embd_norm.weight"), nullptr);
  EXPECT_NE(f.find_tensor("blk.0.shortconv.in_proj.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight"), nullptr);
  EXPECT_NE(f.find_tensor("blk.2.attn_k_norm.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.2.shortconv.conv.weight"), nullptr);

  const engine::ModelConfig& c = model_->config();
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    const engine::LayerSpec& l = c.layers[il];
    if (il % 3 == 2) {
      EXPECT_EQ(l.mixer, engine::MixerKind::attention) << il;
      EXPECT_EQ(l.attention.rope.style, engine::ops::RopeStyle::neox);
      EXPECT_TRUE(l.attention.qk_norm);
    } else {
      EXPECT_EQ(l.mixer, engine::MixerKind::shortconv) << il;
      EXPECT_EQ(l.conv_kernel, 3u);
    }
  }
  EXPECT_NE(c.describe().find("4 layers short convolutions of 3 taps"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("neox"), std::string::npos) << c.describe();
}

TEST_F(Lfm2, PrefillInOneBatchInSmallBatchesAndTokenByTokenAgree) {
  engine::Session whole = session();
  whole.eval(prompt(), /*all_logits=*/true);
  const size_t n_vocab = model_->config().n_vocab;
  for (const uint32_t n_batch : {1u, 2u, 5u}) {
    SCOPED_TRACE("n_batch " + std::to_string(n_batch));
    engine::Session s = session(n_batch);
    s.eval(prompt());
    expect_close(last_row(s), last_row(whole));
  }
  // Decoding one token at a time gives each row of the prefill.
  engine::Session decode = session();
  for (size_t i = 0; i < prompt().size(); ++i) {
    decode.eval(std::vector<int32_t>{prompt()[i]});
    const std::vector<float> row(whole.logits().begin() + static_cast<std::ptrdiff_t>(i * n_vocab),
                                 whole.logits().begin() + static_cast<std::ptrdiff_t>((i + 1) * n_vocab));
    expect_close(last_row(decode), row);
  }
}

TEST_F(Lfm2, TheConvolutionStateIsCountedAsTheSessionsCache) {
  const engine::Session s = session();
  const engine::KvCache& kv = s.kv_cache();
  EXPECT_TRUE(kv.has_recurrent_state());
  // 4 layers of 2 rows x 64 floats beside 2 attention layers of 64 positions
  // x (32 + 32) F32 values.
  EXPECT_EQ(kv.bytes(), 4u * 2 * 64 * 4 + 2u * 64 * 64 * 4);
  EXPECT_NE(kv.describe().find("4 short convolution layers"), std::string::npos) << kv.describe();
  EXPECT_EQ(kv.size().bytes, kv.bytes());
}

// A convolution state holds only the end of what was evaluated: a session cut
// short of it goes back to its newest checkpoint at or before the cut, and
// evaluates only the kept tokens after it again; with none, all of them. It
// then matches a new session of the same tokens.
TEST_F(Lfm2, TruncationShortOfTheEndEvaluatesTheKeptTokensAfterACheckpointAgain) {
  const std::vector<int32_t> p = prompt();
  engine::Session fresh = session();
  fresh.eval(p);
  std::vector<int32_t> longer = p;
  longer.insert(longer.end(), {9, 10, 11});
  engine::Session fresh_longer = session();
  fresh_longer.eval(longer);

  engine::Session s = session();
  s.eval(p);                                 // checkpoint at 12: a prompt
  s.eval(std::vector<int32_t>{9, 10, 11});   // and at 15
  EXPECT_EQ(s.checkpoints().size(), 2u);
  s.truncate(static_cast<uint32_t>(p.size() + 3));  // the end: nothing to redo
  EXPECT_EQ(s.n_past(), p.size() + 3);
  // Between the checkpoints: back to 12, and one token evaluated again.
  s.truncate(static_cast<uint32_t>(p.size() + 1));
  EXPECT_EQ(s.n_past(), p.size());
  EXPECT_EQ(s.checkpoints().size(), 1u);  // the one at 15 went with its tokens
  uint64_t before = s.n_evaluated();
  s.eval(std::vector<int32_t>{10, 11});
  EXPECT_EQ(s.n_evaluated() - before, 3u);
  expect_close(last_row(s), last_row(fresh_longer));
  // At a checkpoint: nothing to evaluate again but the new token.
  s.truncate(static_cast<uint32_t>(p.size() - 1));  // before every checkpoint: from 0
  EXPECT_EQ(s.n_past(), 0u);
  before = s.n_evaluated();
  s.eval(std::vector<int32_t>{p.back()});
  EXPECT_EQ(s.n_evaluated() - before, p.size());
  expect_close(last_row(s), last_row(fresh));
  s.eval(std::vector<int32_t>{9});
  s.truncate(static_cast<uint32_t>(p.size()));
  EXPECT_EQ(s.n_past(), p.size());
  before = s.n_evaluated();
  s.eval(std::vector<int32_t>{9, 10, 11});
  EXPECT_EQ(s.n_evaluated() - before, 3u);
  expect_close(last_row(s), last_row(fresh_longer));
  s.truncate(5);
  EXPECT_EQ(s.n_past(), 0u);
  EXPECT_EQ(s.tokens().size(), 5u);
  s.eval(std::span<const int32_t>(p).subspan(5));
  EXPECT_EQ(s.n_past(), p.size());
  expect_close(last_row(s), last_row(fresh));

  // eval_prompt with a shared beginning and another ending, and a reset.
  engine::Session edited = session();
  edited.eval_prompt(std::vector<int32_t>{1, 40, 90, 7, 3, 3, 3});
  edited.eval_prompt(p);
  expect_close(last_row(edited), last_row(fresh));
  edited.reset();
  edited.eval(p);
  expect_close(last_row(edited), last_row(fresh));
}

// A saved session holds the convolution states beside the attention caches:
// the loaded session goes on without evaluating its tokens again, and gives
// the saved one's logits bit for bit. A version 1 file (from before the
// states were saved) still loads: its tokens are evaluated again.
TEST_F(Lfm2, ALoadedSessionGoesOnFromItsSavedState) {
  const std::vector<int32_t> p = prompt();
  engine::Session saved = session();
  const std::string file = expect_a_loaded_session_goes_on(p, saved);

  // Version 1: the same bytes without the states' section (a float count and
  // the floats, before the checksum).
  const auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::vector<uint8_t> bytes = read(file);
  const size_t n_state = 4u * 2 * 64;  // 4 convolution layers of 2 rows x 64 floats
  const size_t section = sizeof(uint64_t) + n_state * sizeof(float);
  ASSERT_GT(bytes.size(), section + 8 + 12);
  uint64_t count = 0;
  std::memcpy(&count, bytes.data() + bytes.size() - 8 - section, sizeof count);
  ASSERT_EQ(count, n_state);
  bytes.erase(bytes.end() - 8 - static_cast<std::ptrdiff_t>(section), bytes.end() - 8);
  const uint32_t version = 1;
  std::memcpy(bytes.data() + 8, &version, sizeof version);
  engine::reseal_session_bytes(bytes);
  engine::Session old = session();
  engine::load_session_bytes(old, bytes, "v1");
  EXPECT_EQ(old.tokens().size(), p.size());
  EXPECT_EQ(old.n_past(), 0u);
  old.eval(std::vector<int32_t>{17});
  EXPECT_EQ(old.n_evaluated(), p.size() + 1);
  expect_close(last_row(old), last_row(saved));

  // A file whose state count does not match the model is refused by name.
  std::vector<uint8_t> wrong = read(file);
  const uint64_t more = n_state + 1;
  std::memcpy(wrong.data() + wrong.size() - 8 - section, &more, sizeof more);
  wrong.insert(wrong.end() - 8, {0, 0, 0, 0});
  engine::reseal_session_bytes(wrong);
  engine::Session refused = session();
  try {
    engine::load_session_bytes(refused, wrong, "wrong");
    FAIL() << "loaded";
  } catch (const engine::SessionFileError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 513 recurrent state values; this session's model has 512"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(refused.tokens().empty());
}

// A stop half-way through a batch leaves the states of the layers before it
// a batch ahead of the others: the session starts again from 0 and still
// gives the logits of one that was never stopped.
TEST_F(Lfm2, AnAbortedBatchLeavesNoHalfAdvancedState) {
  expect_an_aborted_batch_leaves_no_half_advanced_state(prompt(), 6 + 4);  // the first batch, four layers into the second
}

TEST_F(Lfm2, AConvolutionLayerWithoutShortconvLCacheIsRefusedByName) {
  const std::string edited = *dir_ / "no-l-cache.gguf";
  engine_test::write_edited(*path_, edited, {.metadata = [](gguf::Writer& w) { w.remove("lfm2.shortconv.l_cache"); }});
  try {
    engine::Model::load(edited);
    FAIL() << "loaded";
  } catch (const engine::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("lfm2.shortconv.l_cache is missing"), std::string::npos) << e.what();
  }
  // Zero KV heads mark a layer without attention in lfm2 only.
  const quantize_test::TempDir dir("lfm2-llama");
  tools::SynthShape s = small_lfm2();
  s.arch = "llama";
  s.values.clear();
  s.attention_layers.clear();
  const std::string llama = engine_test::write_synth(dir, s, "llama.gguf");
  const std::string zero = dir / "zero-kv.gguf";
  engine_test::write_edited(llama, zero, {.metadata = [](gguf::Writer& w) {
                              const std::vector<uint32_t> kv = {2, 0, 2, 2, 2, 2};
                              w.set_array_u32("llama.attention.head_count_kv", kv);
                            }});
  EXPECT_THROW(engine::Model::load(zero), engine::ModelError);
}

TEST(Lfm2Shapes, TheRealShapesHaveTheirPublishedSizes) {
  const tools::SynthShape* small = tools::find_shape("lfm2-350m");
  const tools::SynthShape* large = tools::find_shape("lfm2-1.2b");
  const tools::SynthShape* v25 = tools::find_shape("lfm2.5-1.2b");
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  ASSERT_NE(v25, nullptr);
  for (const tools::SynthShape* s : {small, large, v25}) {
    const engine::ModelConfig c = tools::synth_config(*s, s->n_vocab);
    std::vector<uint32_t> attention;
    for (uint32_t il = 0; il < c.n_layer; ++il) {
      if (c.layers[il].mixer == engine::MixerKind::attention) attention.push_back(il);
    }
    EXPECT_EQ(attention, (std::vector<uint32_t>{2, 5, 8, 10, 12, 14})) << s->name;
    EXPECT_EQ(c.layers[0].conv_kernel, 3u);
  }
  // Model cards: 354M and 1.17B parameters (tied embeddings).
  EXPECT_NEAR(static_cast<double>(small->n_params()), 354e6, 1e6);
  EXPECT_NEAR(static_cast<double>(large->n_params()), 1.17e9, 0.01e9);
  EXPECT_NEAR(static_cast<double>(v25->n_params()), 1.17e9, 0.01e9);
  EXPECT_EQ(v25->n_ctx, 32768u);
  EXPECT_EQ(v25->n_vocab, 65536u);
}

}  // namespace
