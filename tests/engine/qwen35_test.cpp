// Qwen3.5's hybrid layers (engine/arch/qwen35.cpp, engine/mixers/delta_net.h):
// the chunked delta rule against the token-by-token recurrence, the DeltaNet's
// convolution however the tokens and channels are cut; a session's prefill,
// decode, truncation, saved file and stop over the recurrent state; the keys
// and tensors synth writes and the loader reads, multi-token-prediction
// blocks passed over, and what is refused by name (the logits against
// llama.cpp's are in tests/reference/llamacpp, model qwen35-d256).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/mixers/delta_net.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/support/error.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "tests/engine/hybrid_session.h"
#include "tests/engine/model_edit.h"
#include "tests/engine/synth_files.h"
#include "tools/common/model_writing/synth_shapes.h"
#include "tools/common/model_writing/synth_tensors.h"

namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Per token q, k (unit length, as the mixer makes them), v, a gate in (0, 1)
// and a log-decay in [-1.5, 0): the inputs of one value head.
struct HeadInputs {
  uint32_t n, dk, dv;
  std::vector<float> q, k, v, beta, g;
  HeadInputs(uint32_t n_, uint32_t dk_, uint32_t dv_, uint32_t seed) : n(n_), dk(dk_), dv(dv_) {
    q = random_values(size_t{n} * dk, seed);
    k = random_values(size_t{n} * dk, seed + 1);
    v = random_values(size_t{n} * dv, seed + 2);
    for (uint32_t t = 0; t < n; ++t) {
      for (std::vector<float>* x : {&q, &k}) {
        float* row = x->data() + size_t{t} * dk;
        double ss = 0;
        for (uint32_t i = 0; i < dk; ++i) ss += double{row[i]} * row[i];
        for (uint32_t i = 0; i < dk; ++i) row[i] = static_cast<float>(row[i] / std::sqrt(ss));
      }
    }
    std::mt19937 rng(seed + 3);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (uint32_t t = 0; t < n; ++t) {
      beta.push_back(unit(rng));
      g.push_back(-1.5f * unit(rng) - 1e-3f);
    }
  }
  engine::DeltaRuleRows rows(uint32_t from, std::vector<float>& out) const {
    return {q.data() + size_t{from} * dk, k.data() + size_t{from} * dk, dk,  v.data() + size_t{from} * dv, dv,
            beta.data() + from,          g.data() + from,               1,   out.data() + size_t{from} * dv, dv};
  }
};

TEST(DeltaRule, TheChunkedFormAgreesWithTheRecurrenceInCallsOfAnySize) {
  for (const auto& [dk, chunk] : {std::pair{16u, 64u}, std::pair{32u, 5u}, std::pair{8u, 1u}}) {
    const uint32_t n = 150, dv = dk;
    const HeadInputs in(n, dk, dv, dk + chunk);
    const std::vector<float> start = random_values(size_t{dk} * dv, 7, 0.3f);
    std::vector<float> want(size_t{n} * dv);
    std::vector<float> want_state = start;
    engine::delta_rule_token_ref(in.rows(0, want), n, dk, dv, want_state.data());
    std::vector<float> scratch(engine::delta_rule_chunk_scratch(chunk, dk, dv));
    // One call, and calls of 1, 7 and 64 tokens carrying the state.
    for (const uint32_t call : {n, 1u, 7u, 64u}) {
      SCOPED_TRACE("dk " + std::to_string(dk) + ", chunk " + std::to_string(chunk) + ", calls of " +
                   std::to_string(call));
      std::vector<float> got(size_t{n} * dv);
      std::vector<float> state = start;
      for (uint32_t t = 0; t < n; t += call) {
        engine::delta_rule_chunk_ref(in.rows(t, got), std::min(call, n - t), dk, dv, chunk, state.data(),
                                     scratch.data());
      }
      // The same sums in another order: a few float roundings apart.
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f * (1.0f + std::fabs(want[i]))) << i;
      for (size_t i = 0; i < state.size(); ++i) {
        ASSERT_NEAR(state[i], want_state[i], 2e-5f * (1.0f + std::fabs(want_state[i]))) << i;
      }
    }
  }
}

// The recurrence as written: S = e^g S; d = beta (v - S^T k); S += k d^T;
// o = S^T q, in double.
TEST(DeltaRule, TheRecurrenceIsTheGatedDeltaRule) {
  const uint32_t n = 9, dk = 4, dv = 4;
  const HeadInputs in(n, dk, dv, 3);
  std::vector<double> s(size_t{dk} * dv, 0.0);
  std::vector<float> got(size_t{n} * dv), state(size_t{dk} * dv, 0.0f);
  engine::delta_rule_token_ref(in.rows(0, got), n, dk, dv, state.data());
  for (uint32_t t = 0; t < n; ++t) {
    const float* q = &in.q[size_t{t} * dk];
    const float* k = &in.k[size_t{t} * dk];
    for (double& x : s) x *= std::exp(double{in.g[t]});
    for (uint32_t j = 0; j < dv; ++j) {
      double sk = 0;
      for (uint32_t i = 0; i < dk; ++i) sk += s[i * dv + j] * k[i];
      const double d = in.beta[t] * (in.v[size_t{t} * dv + j] - sk);
      for (uint32_t i = 0; i < dk; ++i) s[i * dv + j] += k[i] * d;
    }
    for (uint32_t j = 0; j < dv; ++j) {
      double o = 0;
      for (uint32_t i = 0; i < dk; ++i) o += s[i * dv + j] * q[i];
      EXPECT_NEAR(got[size_t{t} * dv + j], o, 1e-5 * (1 + std::fabs(o))) << t << " " << j;
    }
  }
}

// out[t, ch] = silu(sum_i k[ch, i] x[t - taps + 1 + i, ch]), zeros before the
// first token.
TEST(DeltaNetConv, BatchesOfAnySizeAgreeWithTheWholeSequenceConvolution) {
  constexpr uint32_t d = 37, n = 23;
  for (const uint32_t taps : {2u, 4u, 6u}) {
    const std::vector<float> kernel = random_values(size_t{d} * taps, taps);
    const std::vector<float> x = random_values(size_t{n} * d, 100 + taps);
    std::vector<float> want(size_t{n} * d);
    for (uint32_t t = 0; t < n; ++t) {
      for (uint32_t ch = 0; ch < d; ++ch) {
        float sum = 0.0f;
        for (uint32_t i = 0; i < taps; ++i) {
          const int64_t src = int64_t{t} - (taps - 1) + i;
          if (src >= 0) sum += kernel[size_t{ch} * taps + i] * x[static_cast<size_t>(src) * d + ch];
        }
        want[size_t{t} * d + ch] = sum / (1.0f + std::exp(-sum));
      }
    }
    for (const uint32_t batch : {1u, 2u, 3u, 5u, 8u, n}) {
      for (const uint32_t split : {0u, 16u, d}) {
        SCOPED_TRACE("taps " + std::to_string(taps) + ", batch " + std::to_string(batch) + ", split " +
                     std::to_string(split));
        std::vector<float> window(size_t{taps - 1} * d, 0.0f), got(size_t{n} * d);
        for (uint32_t t = 0; t < n; t += batch) {
          const uint32_t m = std::min(batch, n - t);
          engine::delta_net_conv_ref(kernel.data(), taps, d, 0, split, window.data(), &x[size_t{t} * d], m,
                                     &got[size_t{t} * d]);
          engine::delta_net_conv_ref(kernel.data(), taps, d, split, d, window.data(), &x[size_t{t} * d], m,
                                     &got[size_t{t} * d]);
        }
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << i;
      }
    }
  }
}

// d64, 4 layers: gated DeltaNets in 0 and 2 (2 key heads, 4 value heads of
// 16), gated attention in 1 and 3.
tools::SynthShape small_qwen35() {
  using P = engine::arch::Param;
  tools::SynthShape s = *tools::find_shape("qwen3.5-0.8b");
  s.name = "custom";
  s.n_embd = 64;
  s.n_layer = 4;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 16;
  s.n_rot = 8;
  s.n_ff = 128;
  s.n_vocab = 300;
  s.n_ctx = 512;
  s.values[P::ssm_group_count] = 2;
  s.values[P::ssm_time_step_rank] = 4;
  s.values[P::ssm_state_size] = 16;
  s.values[P::ssm_inner_size] = 64;
  s.values[P::full_attention_interval] = 2;
  s.arrays[P::rope_dimension_sections] = {2, 1, 1, 0};
  return s;
}

constexpr engine_test::HybridModel kQwen35{"qwen35", small_qwen35, 256};

class Qwen35 : public engine_test::HybridSession<kQwen35> {
 protected:
  static std::vector<int32_t> prompt(size_t n = 12) {
    std::vector<int32_t> p{1};
    for (size_t i = 1; i < n; ++i) p.push_back(static_cast<int32_t>(3 + (7 * i + 13 * i * i) % 290));
    return p;
  }
};

TEST_F(Qwen35, TheFileDescribesTheLayersAsLlamaCppReadsThem) {
  const gguf::File& f = model_->file();
  EXPECT_EQ(f.get_uint("qwen35.ssm.group_count"), 2u);
  EXPECT_EQ(f.get_uint("qwen35.ssm.time_step_rank"), 4u);
  EXPECT_EQ(f.get_uint("qwen35.ssm.conv_kernel"), 4u);
  EXPECT_EQ(f.get_uint("qwen35.full_attention_interval"), 2u);
  EXPECT_EQ(f.find_array("qwen35.rope.dimension_sections")->array_size(), 4u);
  EXPECT_NE(f.find_tensor("blk.0.attn_qkv.weight"), nullptr);
  EXPECT_NE(f.find_tensor("blk.0.ssm_a"), nullptr);
  EXPECT_NE(f.find_tensor("blk.0.post_attention_norm.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.0.ffn_norm.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight"), nullptr);
  EXPECT_EQ(f.tensor("blk.1.attn_q.weight").ne[1], 2u * 4 * 16);  // each head's query and gate
  EXPECT_EQ(f.find_tensor("blk.1.ssm_a"), nullptr);
  // ssm_a = -exp(A_log): every decay rate negative.
  for (float a : engine_test::f32_values(f, "blk.0.ssm_a")) EXPECT_LT(a, 0.0f);

  const engine::ModelConfig& c = model_->config();
  for (uint32_t il = 0; il < c.n_layer; ++il) {
    const engine::LayerSpec& l = c.layers[il];
    if (il % 2 == 1) {
      EXPECT_EQ(l.mixer, engine::MixerKind::attention) << il;
      EXPECT_TRUE(l.attention.output_gate);
      EXPECT_TRUE(l.attention.qk_norm);
      EXPECT_EQ(l.attention.rope.style, engine::ops::RopeStyle::neox);
      EXPECT_EQ(l.attention.rope.n_rot, 8u);
    } else {
      EXPECT_EQ(l.mixer, engine::MixerKind::delta_net) << il;
      EXPECT_EQ(l.conv_kernel, 4u);
      EXPECT_EQ(l.delta_net.n_k_heads, 2u);
      EXPECT_EQ(l.delta_net.n_v_heads, 4u);
      EXPECT_EQ(l.delta_net.head_k_dim, 16u);
      EXPECT_EQ(l.delta_net.head_v_dim, 16u);
    }
  }
}

TEST_F(Qwen35, PrefillInOneBatchInSmallBatchesAndTokenByTokenAgree) {
  // 150 tokens: three chunks of the delta rule in one batch.
  const std::vector<int32_t> p = prompt(150);
  engine::Session whole = session();
  whole.eval(p, /*all_logits=*/true);
  const size_t n_vocab = model_->config().n_vocab;
  for (const uint32_t n_batch : {1u, 7u, 64u}) {
    SCOPED_TRACE("n_batch " + std::to_string(n_batch));
    engine::Session s = session(n_batch);
    s.eval(p);
    expect_close(last_row(s), last_row(whole));
  }
  engine::Session decode = session();
  for (size_t i = 0; i < p.size(); ++i) {
    decode.eval(std::vector<int32_t>{p[i]});
    const std::vector<float> row(whole.logits().begin() + static_cast<std::ptrdiff_t>(i * n_vocab),
                                 whole.logits().begin() + static_cast<std::ptrdiff_t>((i + 1) * n_vocab));
    expect_close(last_row(decode), row);
  }
}

TEST_F(Qwen35, TheRecurrentStateIsCountedAsTheSessionsCache) {
  const engine::Session s = session();
  const engine::KvCache& kv = s.kv_cache();
  EXPECT_TRUE(kv.has_recurrent_state());
  // 2 DeltaNet layers of 3 rows x (2 x 32 + 64) channels and 4 matrices of
  // 16 x 16, beside 2 attention layers of 256 positions x (32 + 32) F32 values.
  EXPECT_EQ(kv.bytes(), 2u * (3 * 128 + 4 * 16 * 16) * 4 + 2u * 256 * 64 * 4);
  EXPECT_NE(kv.describe().find("2 gated delta net layers"), std::string::npos) << kv.describe();
  EXPECT_EQ(kv.size().bytes, kv.bytes());
}

// As for LFM2 (lfm2_test.cpp): a cut short of the end goes on from the newest
// checkpoint at or before it, and matches a new session of the same tokens.
TEST_F(Qwen35, TruncationGoesOnFromACheckpoint) {
  const std::vector<int32_t> p = prompt();
  std::vector<int32_t> longer = p;
  longer.insert(longer.end(), {9, 10, 11});
  engine::Session fresh_longer = session();
  fresh_longer.eval(longer);

  engine::Session s = session();
  s.eval(p);
  s.eval(std::vector<int32_t>{9, 10, 11});
  EXPECT_EQ(s.checkpoints().size(), 2u);
  s.truncate(static_cast<uint32_t>(p.size() + 1));
  EXPECT_EQ(s.n_past(), p.size());
  const uint64_t before = s.n_evaluated();
  s.eval(std::vector<int32_t>{10, 11});
  EXPECT_EQ(s.n_evaluated() - before, 3u);
  expect_close(last_row(s), last_row(fresh_longer));
  s.truncate(5);
  EXPECT_EQ(s.n_past(), 0u);
  s.eval(std::span<const int32_t>(longer).subspan(5));
  expect_close(last_row(s), last_row(fresh_longer));
}

TEST_F(Qwen35, ALoadedSessionGoesOnFromItsSavedState) {
  engine::Session saved = session();
  expect_a_loaded_session_goes_on(prompt(), saved);
}

TEST_F(Qwen35, AnAbortedBatchLeavesNoHalfAdvancedState) {
  expect_an_aborted_batch_leaves_no_half_advanced_state(prompt(), 4 + 2);  // the first batch, two layers into the second
}

// A file with a multi-token-prediction block after the model's own (as the
// converter writes Qwen3.5 checkpoints: block_count 5 with
// nextn_predict_layers 1) loads, runs the first four blocks only, and gives
// the same logits as the file without it.
TEST_F(Qwen35, AMultiTokenPredictionBlockIsLoadedAndNotRun) {
  const std::string with_mtp = *dir_ / "mtp.gguf";
  {
    const gguf::File f = gguf::File::open(*path_);
    gguf::Writer w;
    w.copy_metadata(f);
    w.set_u32("qwen35.block_count", 5);
    w.set_u32("qwen35.nextn_predict_layers", 1);
    // A layer list covers every block, the MTP block's flag last (dropped).
    const std::vector<uint8_t> flags = {1, 0, 1, 0, 0};
    w.set_array_bool("qwen35.attention.recurrent_layers", flags);
    for (const gguf::TensorInfo& t : f.tensors()) {
      const std::vector<uint64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
      w.add_tensor(t.name, t.type, ne, std::span<const uint8_t>(f.tensor_data(t), t.n_bytes));
    }
    const std::vector<float> eh(size_t{128} * 64, 0.01f), norm(64, 1.0f);
    w.add_tensor("blk.4.nextn.eh_proj.weight", gguf::GgmlType::F32, std::vector<uint64_t>{128, 64},
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(eh.data()), eh.size() * 4));
    w.add_tensor("blk.4.attn_norm.weight", gguf::GgmlType::F32, std::vector<uint64_t>{64},
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(norm.data()), norm.size() * 4));
    w.write(with_mtp);
  }
  const std::unique_ptr<engine::Model> m = engine::Model::load(with_mtp);
  EXPECT_EQ(m->config().n_layer, 4u);
  engine::Session a = session();
  engine::Session b(*m, {.n_ctx = 256, .n_batch = 512, .kv_type = engine::KvType::f32});
  a.eval(prompt());
  b.eval(prompt());
  EXPECT_EQ(last_row(a), last_row(b));
}

// llama.cpp reads the layer list from attention.recurrent_layers first (one
// flag per block, the multi-token-prediction blocks' included), then from
// full_attention_interval: a list that agrees with the interval gives the
// same model, one that moves attention to layer 0 places its tensors there.
TEST_F(Qwen35, TheRecurrentLayersListComesBeforeTheInterval) {
  const std::string same = *dir_ / "listed.gguf";
  engine_test::write_edited(*path_, same, {.metadata = [](gguf::Writer& w) {
                              const std::vector<uint8_t> flags = {1, 0, 1, 0};
                              w.set_array_bool("qwen35.attention.recurrent_layers", flags);
                              w.set_u32("qwen35.full_attention_interval", 3);  // overridden by the list
                            }});
  const std::unique_ptr<engine::Model> m = engine::Model::load(same);
  for (uint32_t il = 0; il < 4; ++il) {
    EXPECT_EQ(m->config().layers[il].mixer,
              il % 2 == 1 ? engine::MixerKind::attention : engine::MixerKind::delta_net) << il;
  }
  const std::string moved = *dir_ / "moved.gguf";
  engine_test::write_edited(*path_, moved, {.metadata = [](gguf::Writer& w) {
                              const std::vector<uint8_t> flags = {0, 1, 1, 0};
                              w.set_array_bool("qwen35.attention.recurrent_layers", flags);
                            }});
  try {
    engine::Model::load(moved);
    FAIL() << "loaded";
  } catch (const engine::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight"), std::string::npos) << e.what();
  }
}

TEST_F(Qwen35, WhatTheEngineCannotRunIsRefusedByName) {
  const auto refused = [&](const char* name, const engine_test::ModelEdit& edit, const std::string& message) {
    const std::string edited = *dir_ / name;
    engine_test::write_edited(*path_, edited, edit);
    try {
      engine::Model::load(edited);
      ADD_FAILURE() << name << " loaded";
    } catch (const engine::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused("no-state-size.gguf", {.metadata = [](gguf::Writer& w) { w.remove("qwen35.ssm.state_size"); }},
          "qwen35.ssm.state_size is missing");
  // A pair turned by the fourth (image) position, which text does not have.
  refused("sections.gguf", {.metadata = [](gguf::Writer& w) {
            const std::vector<uint32_t> s = {1, 1, 0, 1};
            w.set_array_u32("qwen35.rope.dimension_sections", s);
          }},
          "fourth (image) position");
  refused("ratio.gguf", {.metadata = [](gguf::Writer& w) { w.set_u32("qwen35.ssm.time_step_rank", 3); }},
          "value heads must be a positive multiple of the key heads");
  refused("huge-heads.gguf", {.metadata = [](gguf::Writer& w) {
            w.set_u32("qwen35.ssm.group_count", 1u << 20);
            w.set_u32("qwen35.ssm.time_step_rank", 1u << 20);
            w.set_u32("qwen35.ssm.inner_size", 1u << 24);
          }},
          "has 16777216 key and 16777216 value channels (at most 1048576 each)");
  refused("huge-sections.gguf", {.metadata = [](gguf::Writer& w) {
            const std::vector<float> s = {3e38f, 1, 1, 0};
            w.set_array_f32("qwen35.rope.dimension_sections", s);
          }},
          "rope.dimension_sections value");
  refused("mtp-all.gguf", {.metadata = [](gguf::Writer& w) { w.set_u32("qwen35.nextn_predict_layers", 4); }},
          "nextn_predict_layers 4 leaves no layer");
}

TEST(Qwen35Shapes, TheRealShapesHaveTheirPublishedSizes) {
  for (const char* name : {"qwen3.5-0.8b", "qwen3.5-2b", "qwen3.5-4b"}) {
    const tools::SynthShape* s = tools::find_shape(name);
    ASSERT_NE(s, nullptr) << name;
    const engine::ModelConfig c = tools::synth_config(*s, s->n_vocab);
    uint32_t attention = 0;
    for (uint32_t il = 0; il < c.n_layer; ++il) {
      const bool attends = c.layers[il].mixer == engine::MixerKind::attention;
      EXPECT_EQ(attends, il % 4 == 3) << name << " layer " << il;
      attention += attends;
    }
    EXPECT_EQ(attention, c.n_layer / 4) << name;
    EXPECT_EQ(c.layers[0].delta_net.head_k_dim, 128u);
    EXPECT_EQ(c.layers[3].attention.rope.n_rot, 64u);
    EXPECT_EQ(c.layers[3].attention.head_dim_k, 256u);
  }
  EXPECT_EQ(tools::find_shape("qwen3.5-4b")->values.at(engine::arch::Param::ssm_time_step_rank), 32);
}

}  // namespace
