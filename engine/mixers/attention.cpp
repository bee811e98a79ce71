#include "engine/mixers/attention.h"

#include <algorithm>
#include <cmath>

#include "engine/model/model_config.h"
#include "engine/ops/ops.h"

namespace engine {
namespace {

// The first position a token at `pos` attends to: 0, or with a window of w
// the last w positions up to its own.
uint32_t first_visible(const AttentionSpec& a, uint32_t pos) {
  return a.window != 0 && pos + 1 > a.window ? pos + 1 - a.window : 0;
}

}  // namespace

AttentionMixer::AttentionMixer(const ModelConfig& c, uint32_t n_batch, uint32_t n_ctx, KvType kv_type,
                               size_t n_threads)
    : n_ctx_(n_ctx) {
  uint32_t group = 1;
  for (const LayerSpec& l : c.layers) group = std::max(group, l.attention.n_head / l.attention.n_head_kv);
  const size_t b = n_batch;
  qkv_.resize(b * (c.q_dim() + c.kv_dim_k() + c.kv_dim_v()));
  att_.resize(b * c.n_head * c.head_dim_v);
  scores_.resize(n_threads * group * n_ctx);
  const bool windowed = std::any_of(c.layers.begin(), c.layers.end(), [](const LayerSpec& l) {
    return l.mixer == MixerKind::attention && l.attention.window != 0;
  });
  if (kv_type == KvType::f16 || windowed) kv_rows_.resize(n_threads * n_ctx * (c.head_dim_k + c.head_dim_v));
}

void AttentionMixer::forward(Compute& compute, const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache,
                             const float* rope, float rms_eps, uint32_t n_past, uint32_t n, float* xn) {
  // q, k, v = xn Wq^T, xn Wk^T, xn Wv^T, then per token biases, norms, RoPE
  // and the cache; attention over the cache; the output projection into xn.
  const size_t q_dim = a.q_dim(), k_dim = a.kv_dim_k(), v_dim = a.kv_dim_v();
  if (a.fused_qkv) {
    const size_t stride = q_dim + k_dim + v_dim;
    q_ = {qkv_.data(), stride};
    k_ = {qkv_.data() + q_dim, stride};
    v_ = {qkv_.data() + q_dim + k_dim, stride};
    compute.linear(w.wqkv, xn, n, qkv_.data());
  } else {
    q_ = {qkv_.data(), q_dim};
    k_ = {q_.base + n * q_dim, k_dim};
    v_ = {k_.base + n * k_dim, v_dim};
    compute.linear_same_input(xn, n, {{&w.wq, q_.base}, {&w.wk, k_.base}, {&w.wv, v_.base}});
  }
  compute.parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      finish_qkv(a, w, cache, rope, rms_eps, n_past + static_cast<uint32_t>(i), static_cast<uint32_t>(i));
    }
  });
  compute.profiled(nullptr, [&] { attend(compute, a, cache, n_past, n); });  // att: (n, n_head * head_dim_v)
  compute.linear(w.wo, att_.data(), n, xn);
}

// Token i's Q, K and V after the matmuls: biases, Q/K RMSNorm, RoPE, then K
// and V into the cache at the token's position.
void AttentionMixer::finish_qkv(const AttentionSpec& a, const LayerWeights& w, AttentionCache& cache,
                                const float* rope, float rms_eps, uint32_t pos, uint32_t i) {
  float* q = q_.row(i);
  float* k = k_.row(i);
  float* v = v_.row(i);
  if (a.qkv_bias) {
    ops::add(q, w.q_bias.data(), a.q_dim());
    ops::add(k, w.k_bias.data(), a.kv_dim_k());
    ops::add(v, w.v_bias.data(), a.kv_dim_v());
  }
  const uint32_t n_rot = a.rope.n_rot;
  const float* cs = rope + size_t{i} * n_rot;  // the table is empty when n_rot is 0
  for (uint32_t h = 0; h < a.n_head; ++h) {
    float* qh = q + size_t{h} * a.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(qh, qh, w.q_norm.data(), a.head_dim_k, rms_eps);
    ops::rope(qh, n_rot, cs, a.rope.style);
  }
  for (uint32_t h = 0; h < a.n_head_kv; ++h) {
    float* kh = k + size_t{h} * a.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(kh, kh, w.k_norm.data(), a.head_dim_k, rms_eps);
    ops::rope(kh, n_rot, cs, a.rope.style);
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
  // Chunks of 16 tokens: with the 4 KV heads of TinyLlama a 128-token prompt is
  // 32 tasks, enough to keep 8 threads busy, and each F16 history is converted
  // for 16 x group queries instead of one.
  constexpr uint32_t kChunk = 16;
  const uint32_t n_chunks = (n + kChunk - 1) / kChunk;
  compute.parallel(size_t{n_chunks} * a.n_head_kv, [&](size_t task, size_t thread) {
    const auto kvh = static_cast<uint32_t>(task % a.n_head_kv);
    const auto first = static_cast<uint32_t>(task / a.n_head_kv) * kChunk;
    const uint32_t last = std::min(n, first + kChunk);  // tokens first .. last - 1
    const uint32_t n_pos = n_past + last;               // positions they see
    float* scores = &scores_[thread * group * n_ctx_];  // one row per query head of the group
    // keys and values hold positions from `lo` on, one row each.
    const auto attend_rows = [&](const auto* keys, const auto* values, uint32_t lo) {
      for (uint32_t i = first; i < last; ++i) {
        const uint32_t from = first_visible(a, n_past + i);
        const uint32_t n_seen = n_past + i + 1 - from;  // positions token i attends to
        const float* q = q_.row(i) + size_t{kvh} * group * hd;
        ops::dot_rows(q, hd, group, keys + size_t{from - lo} * hd, hd, n_seen, hd, a.scale, scores, n_ctx_);
        for (uint32_t h = 0; h < group; ++h) {
          float* row = scores + size_t{h} * n_ctx_;
          if (a.softcap > 0.0f) ops::softcap(row, a.softcap, n_seen);
          ops::softmax(row, n_seen);
        }
        float* out = &att_[size_t{i} * a.out_dim() + size_t{kvh} * group * hv];
        ops::weighted_rows(scores, n_ctx_, group, values + size_t{from - lo} * hv, hv, n_seen, hv, out, hv);
      }
    };
    float* converted = kv_rows_.empty() ? nullptr : &kv_rows_[thread * n_ctx_ * (hd + hv)];
    if (a.window != 0) {
      // The chunk's window, in position order out of the ring: at most
      // n_pos <= n_ctx rows, which the scratch holds.
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
    float* converted_values = converted == nullptr ? nullptr : converted + size_t{n_ctx_} * hd;
    attend_rows(cache.keys(kvh, n_pos, converted), cache.values(kvh, n_pos, converted_values), 0);
  });
}

}  // namespace engine
