#include "engine/mixers/attention.h"

#include <algorithm>
#include <cmath>

#include "engine/model/model_config.h"
#include "engine/ops/ops.h"
#include "engine/support/saturating.h"

namespace engine {
namespace {

// The first position a token at `pos` attends to: 0, or with a window of w
// the last w positions up to its own.
uint32_t first_visible(const AttentionSpec& a, uint32_t pos) {
  return a.window != 0 && pos + 1 > a.window ? pos + 1 - a.window : 0;
}

uint32_t group_size(const ModelConfig& c) {
  uint32_t group = 1;
  for (const LayerSpec& l : c.layers) {
    if (l.mixer == MixerKind::attention) group = std::max(group, l.attention.n_head / l.attention.n_head_kv);
  }
  return group;
}

}  // namespace

uint64_t AttentionMixer::gated_q_rows(const ModelConfig& c) {
  const bool gated = std::any_of(c.layers.begin(), c.layers.end(), [](const LayerSpec& l) {
    return l.mixer == MixerKind::attention && l.attention.output_gate;
  });
  return gated ? 2 * uint64_t{c.q_dim()} : c.q_dim();
}

uint32_t AttentionMixer::rows_attended(const ModelConfig& c, uint32_t n_ctx) {
  // A chunk's tokens at n_past + first .. n_past + last - 1 see from the
  // first one's window start to the last one: window - 1 + (last - first).
  uint64_t rows = 0;
  for (const LayerSpec& l : c.layers) {
    const uint32_t w = l.attention.window;
    rows = std::max(rows, w != 0 ? uint64_t{w} + kChunk - 1 : n_ctx);
  }
  return static_cast<uint32_t>(std::min<uint64_t>(rows, n_ctx));
}

uint64_t AttentionMixer::thread_scratch_floats(const ModelConfig& c, uint32_t n_ctx) {
  const uint64_t per_row = saturating_add(group_size(c), saturating_add(c.head_dim_k, c.head_dim_v));
  return saturating_mul(rows_attended(c, n_ctx), per_row);
}

AttentionMixer::AttentionMixer(const ModelConfig& c, uint32_t n_batch, uint32_t n_ctx, KvType kv_type,
                               size_t n_threads)
    : rows_(rows_attended(c, n_ctx)) {
  const size_t b = n_batch;
  qkv_.resize(b * (gated_q_rows(c) + c.kv_dim_k() + c.kv_dim_v()));
  if (gated_q_rows(c) != c.q_dim()) gate_.resize(b * c.q_dim());
  att_.resize(b * c.n_head * c.head_dim_v);
  scores_.resize(n_threads * group_size(c) * rows_);
  const bool windowed = std::any_of(c.layers.begin(), c.layers.end(), [](const LayerSpec& l) {
    return l.mixer == MixerKind::attention && l.attention.window != 0;
  });
  // A quantized cache is read in place, windows included.
  if (kv_type == KvType::f16 || (kv_type == KvType::f32 && windowed)) kv_rows_.resize(n_threads * rows_ * (c.head_dim_k + c.head_dim_v));
  ones_.assign(c.head_dim_v, 1.0f);
}

void AttentionMixer::forward(Compute& compute, const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache,
                             const float* rope, float rms_eps, uint32_t n_past, uint32_t n, float* xn) {
  // q, k, v = xn Wq^T, xn Wk^T, xn Wv^T (k and v only for a layer with a
  // cache of its own, v only with a V projection; all three from one matmul
  // with a fused attn_qkv), then per token biases, norms, RoPE and the cache;
  // attention over the cache; the output projection into xn.
  const size_t q_dim = a.q_dim(), k_dim = a.kv_dim_k(), v_dim = a.kv_dim_v();
  if (a.fused_qkv) {
    const size_t stride = q_dim + k_dim + v_dim;
    q_ = {qkv_.data(), stride};
    k_ = {qkv_.data() + q_dim, stride};
    v_ = {qkv_.data() + q_dim + k_dim, stride};
    compute.linear(w.wqkv, xn, n, qkv_.data());
  } else {
    // With an output gate each token's row holds its heads' queries and
    // gates; finish_q moves the queries to its first q_dim values.
    q_ = {qkv_.data(), a.q_rows()};
    k_ = {q_.base + size_t{n} * a.q_rows(), k_dim};
    v_ = {k_.base + n * k_dim, v_dim};
    if (a.shares_kv()) {
      compute.linear(w.wq, xn, n, q_.base);
    } else if (a.v_from_k) {
      compute.linear_same_input(xn, n, {{&w.wq, q_.base}, {&w.wk, k_.base}});
    } else {
      compute.linear_same_input(xn, n, {{&w.wq, q_.base}, {&w.wk, k_.base}, {&w.wv, v_.base}});
    }
  }
  compute.parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      const auto pos = n_past + static_cast<uint32_t>(i);
      finish_q(a, w, rope, rms_eps, static_cast<uint32_t>(i));
      if (!a.shares_kv()) finish_kv(a, w, cache, rope, rms_eps, pos, static_cast<uint32_t>(i));
    }
  });
  compute.profiled(&Profile::attention, [&] { attend(compute, a, cache, n_past, n); });  // att: (n, n_head * head_dim_v)
  if (a.output_gate) {
    // att *= sigmoid(gate), as llama.cpp's qwen35 does before the output projection.
    compute.parallel_range(size_t{n} * q_dim, 1024, [&](size_t first, size_t last) {
      for (size_t at = first; at < last; ++at) att_[at] *= 1.0f / (1.0f + std::exp(-gate_[at]));
    });
  }
  compute.linear(w.wo, att_.data(), n, xn);
}

// Token i's Q after its matmul: bias, RMSNorm per head, RoPE.
void AttentionMixer::finish_q(const AttentionSpec& a, const LayerWeights& w, const float* rope, float rms_eps,
                              uint32_t i) {
  float* q = q_.row(i);
  if (a.output_gate) {
    // Head h's query at 2 h hd and its gate after it: the gate is copied out,
    // the query moved down to h hd (each before a later head's move writes there).
    const uint32_t hd = a.head_dim_k;
    for (uint32_t h = 0; h < a.n_head; ++h) {
      const float* gate = q + (2 * size_t{h} + 1) * hd;
      std::copy(gate, gate + hd, &gate_[size_t{i} * a.q_dim() + size_t{h} * hd]);
      if (h != 0) std::copy(q + 2 * size_t{h} * hd, q + (2 * size_t{h} + 1) * hd, q + size_t{h} * hd);
    }
  }
  if (a.qkv_bias) ops::add(q, w.q_bias.data(), a.q_dim());
  const float* cs = rope + size_t{i} * a.rope.n_rot;  // the table is empty when n_rot is 0
  for (uint32_t h = 0; h < a.n_head; ++h) {
    float* qh = q + size_t{h} * a.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(qh, qh, w.q_norm.data(), a.head_dim_k, rms_eps);
    ops::rope(qh, a.rope.n_rot, cs, a.rope.style);
  }
}

// Token i's K and V after the matmuls: biases, V from K's projection where
// the layer has no V projection, the norms, RoPE on K, then both into the
// cache at the token's position.
void AttentionMixer::finish_kv(const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache,
                               const float* rope, float rms_eps, uint32_t pos, uint32_t i) {
  float* k = k_.row(i);
  float* v = v_.row(i);
  if (a.qkv_bias) {
    ops::add(k, w.k_bias.data(), a.kv_dim_k());
    ops::add(v, w.v_bias.data(), a.kv_dim_v());
  }
  if (a.v_from_k) std::copy(k, k + a.kv_dim_k(), v);
  const float* cs = rope + size_t{i} * a.rope.n_rot;
  for (uint32_t h = 0; h < a.n_head_kv; ++h) {
    float* kh = k + size_t{h} * a.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(kh, kh, w.k_norm.data(), a.head_dim_k, rms_eps);
    ops::rope(kh, a.rope.n_rot, cs, a.rope.style);
    float* vh = v + size_t{h} * a.head_dim_v;
    if (a.v_norm) ops::rmsnorm(vh, vh, ones_.data(), a.head_dim_v, rms_eps);
  }
  cache.store(pos, k, v);
}

// Causal attention of the n new tokens over every cached position up to their
// own (or the last `window` of them), fp32 softmax, grouped-query heads sharing a KV head. Token i sits at
// position n_past + i. One task per (KV head, chunk of tokens): the head's
// keys and values are read (converted from F16) once per task and serve every
// query head of its group and every token of the chunk. Each thread has its
// own rows of scores and converted keys.
void AttentionMixer::attend(Compute& compute, const AttentionSpec& a, const AttentionCache& cache, uint32_t n_past,
                            uint32_t n) {
  const uint32_t hd = a.head_dim_k;
  const uint32_t hv = a.head_dim_v;
  const uint32_t group = a.n_head / a.n_head_kv;
  const uint32_t n_chunks = (n + kChunk - 1) / kChunk;
  compute.parallel(size_t{n_chunks} * a.n_head_kv, [&](size_t task, size_t thread) {
    const auto kvh = static_cast<uint32_t>(task % a.n_head_kv);
    const auto first = static_cast<uint32_t>(task / a.n_head_kv) * kChunk;
    const uint32_t last = std::min(n, first + kChunk);  // tokens first .. last - 1
    const uint32_t n_pos = n_past + last;               // positions they see
    float* scores = &scores_[thread * group * rows_];  // one row per query head of the group
    // keys and values hold positions from `lo` on, one row each.
    const auto normalize = [&](uint32_t n_seen) {
      for (uint32_t h = 0; h < group; ++h) {
        float* row = scores + size_t{h} * rows_;
        if (a.softcap > 0.0f) ops::softcap(row, a.softcap, n_seen);
        ops::softmax(row, n_seen);
      }
    };
    const auto attend_rows = [&](const auto* keys, const auto* values, uint32_t lo) {
      for (uint32_t i = first; i < last; ++i) {
        const uint32_t from = first_visible(a, n_past + i);
        const uint32_t n_seen = n_past + i + 1 - from;  // positions token i attends to
        const float* q = q_.row(i) + size_t{kvh} * group * hd;
        ops::dot_rows(q, hd, group, keys + size_t{from - lo} * hd, hd, n_seen, hd, a.scale, scores, rows_);
        normalize(n_seen);
        float* out = &att_[size_t{i} * a.out_dim() + size_t{kvh} * group * hv];
        ops::weighted_rows(scores, rows_, group, values + size_t{from - lo} * hv, hv, n_seen, hv, out, hv);
      }
    };
    if (kv_quantized(cache.type())) {
      // The blocks are read where they are, a window's ring in its (at most
      // two) runs of rows: nothing of the history is copied or converted.
      const auto rq = cache.type() == KvType::q8_0 ? ops::RowQuant::q8_0 : ops::RowQuant::q4_0;
      for (uint32_t i = first; i < last; ++i) {
        const uint32_t from = first_visible(a, n_past + i);
        const uint32_t n_seen = n_past + i + 1 - from;
        const float* q = q_.row(i) + size_t{kvh} * group * hd;
        cache.for_runs(from, n_seen, [&](uint32_t row, uint32_t done, uint32_t run) {
          ops::dot_rows_quant(rq, q, hd, group, cache.key_row(kvh, row), cache.key_row_bytes(), run, hd, a.scale,
                              scores + done, rows_);
        });
        normalize(n_seen);
        float* out = &att_[size_t{i} * a.out_dim() + size_t{kvh} * group * hv];
        std::fill(out, out + size_t{group} * hv, 0.0f);
        cache.for_runs(from, n_seen, [&](uint32_t row, uint32_t done, uint32_t run) {
          ops::weighted_rows_quant(rq, scores + done, rows_, group, cache.value_row(kvh, row), cache.value_row_bytes(),
                                   run, hv, out, hv);
        });
      }
      return;
    }
    float* converted = kv_rows_.empty() ? nullptr : &kv_rows_[thread * rows_ * (hd + hv)];
    if (a.window != 0) {
      // The chunk's window, in position order out of the ring: at most
      // rows_attended rows, which the scratch holds.
      const uint32_t lo = first_visible(a, n_past + first);
      const uint32_t count = n_pos - lo;
      cache.gather(kvh, lo, count, converted, converted + size_t{count} * hd);
      attend_rows(converted, converted + size_t{count} * hd, lo);
      return;
    }
    if (cache.type() == KvType::f16 && last - first == 1 && ops::f16_rows_in_place()) {
      // One token (decode) reads the F16 history in place: a converted copy
      // costs writing and reading twice its bytes for `group` queries only.
      attend_rows(cache.keys_f16(kvh), cache.values_f16(kvh), 0);
      return;
    }
    float* converted_values = converted == nullptr ? nullptr : converted + size_t{rows_} * hd;
    attend_rows(cache.keys(kvh, n_pos, converted), cache.values(kvh, n_pos, converted_values), 0);
  });
}

}  // namespace engine
