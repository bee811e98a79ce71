#include "engine/mixers/delta_net.h"

#include <algorithm>
#include <cmath>

#include "engine/model/model_config.h"
#include "engine/ops/ops.h"

namespace engine {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// As ggml's softplus: x itself above 20.
float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

// x /= max(|x|, eps), the sum of squares in double as ggml_l2_norm.
void l2_normalize(float* x, uint32_t n, float eps) {
  double sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::max(std::sqrt(static_cast<float>(sum)), eps);
  ops::scale(x, scale, n);
}

// The scalar twins' sums, one value at a time in index order.
void axpy_scalar(float* y, float a, const float* x, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] += a * x[i];
}
float dot_scalar(const float* x, const float* y, uint32_t n) {
  float sum = 0.0f;
  for (uint32_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// The widest DeltaNet layer's sizes, which the scratch is sized by (all 0
// without one).
struct Widest {
  uint64_t conv = 0, value = 0, heads = 0, chunk_scratch = 0;
};
Widest widest(const ModelConfig& c) {
  Widest w;
  for (const LayerSpec& l : c.layers) {
    if (l.mixer != MixerKind::delta_net) continue;
    const DeltaNetSpec& d = l.delta_net;
    w.conv = std::max<uint64_t>(w.conv, d.conv_dim());
    w.value = std::max<uint64_t>(w.value, d.value_dim());
    w.heads = std::max<uint64_t>(w.heads, d.n_v_heads);
    w.chunk_scratch =
        std::max<uint64_t>(w.chunk_scratch, delta_rule_chunk_scratch(DeltaNetMixer::kChunk, d.head_k_dim, d.head_v_dim));
  }
  return w;
}

}  // namespace

void delta_net_conv_ref(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                        float* window, const float* in, uint32_t n, float* out) {
  const uint32_t past = taps - 1;  // rows of the window
  // Row j of the sequence window ++ batch.
  const auto row = [&](uint32_t j) { return j < past ? window + size_t{j} * channels : in + size_t{j - past} * channels; };
  for (uint32_t t = 0; t < n; ++t) {
    for (uint32_t ch = first; ch < last; ++ch) {
      const float* k = kernel + size_t{ch} * taps;
      float sum = 0.0f;
      for (uint32_t i = 0; i < taps; ++i) sum += k[i] * row(t + i)[ch];
      out[size_t{t} * channels + ch] = sum / (1.0f + std::exp(-sum));
    }
  }
  // The new window: the last `past` rows of window ++ batch, moved forward in
  // place (row r reads row r + n, which is later: not yet overwritten).
  for (uint32_t r = 0; r < past; ++r) {
    const float* from = row(r + n);
    std::copy(from + first, from + last, window + size_t{r} * channels + first);
  }
}

void delta_rule_token_ref(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state) {
  for (uint32_t t = 0; t < n; ++t) {
    const float* q = r.q + t * r.qk_stride;
    const float* k = r.k + t * r.qk_stride;
    const float* v = r.v + t * r.v_stride;
    const float beta = r.beta[t * r.gate_stride];
    const float decay = std::exp(r.g[t * r.gate_stride]);
    float* o = r.out + t * r.out_stride;
    // S^T k of the decayed state: e^g (S^T k); then d = beta (v - that).
    std::fill(o, o + dv, 0.0f);
    for (uint32_t i = 0; i < dk; ++i) axpy_scalar(o, k[i], state + size_t{i} * dv, dv);
    for (uint32_t j = 0; j < dv; ++j) o[j] = beta * (v[j] - decay * o[j]);
    // S = e^g S + k d^T, and o = S^T q from the new rows as they are written.
    std::vector<float> d(o, o + dv);
    std::fill(o, o + dv, 0.0f);
    for (uint32_t i = 0; i < dk; ++i) {
      float* s = state + size_t{i} * dv;
      for (uint32_t j = 0; j < dv; ++j) s[j] *= decay;
      axpy_scalar(s, k[i], d.data(), dv);
      axpy_scalar(o, q[i], s, dv);
    }
  }
}

size_t delta_rule_chunk_scratch(uint32_t chunk, uint32_t dk, uint32_t dv) {
  // S^T k, S^T q and the updates (chunk x dv each), k . k and q . k (chunk x
  // chunk each), G (chunk), and the vector twin's weighted keys (dk x chunk).
  return size_t{chunk} * (3 * size_t{dv} + 2 * size_t{chunk} + 1 + dk);
}

void delta_rule_chunk_ref(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                          float* scratch) {
  float* sk = scratch;                     // (chunk, dv) S^T k_t of the chunk's starting state
  float* sq = sk + size_t{chunk} * dv;     // (chunk, dv) S^T q_t
  float* d = sq + size_t{chunk} * dv;      // (chunk, dv) the updates
  float* kk = d + size_t{chunk} * dv;      // (chunk, chunk) k_t . k_s, s < t
  float* qk = kk + size_t{chunk} * chunk;  // (chunk, chunk) q_t . k_s, s <= t
  float* cum = qk + size_t{chunk} * chunk;  // (chunk) G_t
  for (uint32_t t0 = 0; t0 < n; t0 += chunk) {
    const uint32_t c = std::min(chunk, n - t0);
    const auto q = [&](uint32_t t) { return r.q + (t0 + t) * r.qk_stride; };
    const auto k = [&](uint32_t t) { return r.k + (t0 + t) * r.qk_stride; };
    float running = 0.0f;
    for (uint32_t t = 0; t < c; ++t) cum[t] = running += r.g[(t0 + t) * r.gate_stride];
    // S^T k and S^T q, the state's rows read once for the whole chunk.
    std::fill(sk, sk + size_t{c} * dv, 0.0f);
    std::fill(sq, sq + size_t{c} * dv, 0.0f);
    for (uint32_t i = 0; i < dk; ++i) {
      const float* s = state + size_t{i} * dv;
      for (uint32_t t = 0; t < c; ++t) {
        axpy_scalar(sk + size_t{t} * dv, k(t)[i], s, dv);
        axpy_scalar(sq + size_t{t} * dv, q(t)[i], s, dv);
      }
    }
    for (uint32_t t = 0; t < c; ++t) {
      for (uint32_t s = 0; s <= t; ++s) {
        const float decay = std::exp(cum[t] - cum[s]);
        if (s < t) kk[size_t{t} * chunk + s] = decay * dot_scalar(k(t), k(s), dk);
        qk[size_t{t} * chunk + s] = decay * dot_scalar(q(t), k(s), dk);
      }
    }
    // The updates by forward substitution, each output as soon as its
    // updates are known.
    for (uint32_t t = 0; t < c; ++t) {
      const float beta = r.beta[(t0 + t) * r.gate_stride];
      const float start = std::exp(cum[t]);
      const float* v = r.v + (t0 + t) * r.v_stride;
      float* dt = d + size_t{t} * dv;
      for (uint32_t j = 0; j < dv; ++j) dt[j] = v[j] - start * sk[size_t{t} * dv + j];
      for (uint32_t s = 0; s < t; ++s) axpy_scalar(dt, -kk[size_t{t} * chunk + s], d + size_t{s} * dv, dv);
      for (uint32_t j = 0; j < dv; ++j) dt[j] *= beta;
      float* o = r.out + (t0 + t) * r.out_stride;
      for (uint32_t j = 0; j < dv; ++j) o[j] = start * sq[size_t{t} * dv + j];
      for (uint32_t s = 0; s <= t; ++s) axpy_scalar(o, qk[size_t{t} * chunk + s], d + size_t{s} * dv, dv);
    }
    // S = e^G_c S + sum_s e^(G_c - G_s) k_s d_s^T.
    const float end = std::exp(cum[c - 1]);
    for (uint32_t s = 0; s < c; ++s) kk[s] = std::exp(cum[c - 1] - cum[s]);  // row 0 of kk is not read again
    for (uint32_t i = 0; i < dk; ++i) {
      float* row = state + size_t{i} * dv;
      for (uint32_t j = 0; j < dv; ++j) row[j] *= end;
      for (uint32_t s = 0; s < c; ++s) axpy_scalar(row, kk[s] * k(s)[i], d + size_t{s} * dv, dv);
    }
  }
}

uint64_t DeltaNetMixer::row_floats(const ModelConfig& c) {
  const Widest w = widest(c);
  return 2 * w.conv + 2 * w.value + 2 * w.heads;  // mixed_, qkv_, z_, out_, beta_, g_
}

uint64_t DeltaNetMixer::thread_floats(const ModelConfig& c) { return widest(c).chunk_scratch; }

DeltaNetMixer::DeltaNetMixer(const ModelConfig& c, uint32_t n_batch, size_t n_threads) {
  const Widest w = widest(c);
  const size_t b = n_batch;
  mixed_.resize(b * w.conv);
  qkv_.resize(b * w.conv);
  z_.resize(b * w.value);
  out_.resize(b * w.value);
  beta_.resize(b * w.heads);
  g_.resize(b * w.heads);
  thread_floats_ = w.chunk_scratch;
  scratch_.resize(n_threads * thread_floats_);
}

void DeltaNetMixer::forward(Compute& compute, const LayerSpec& spec, const LayerWeights& w, float* window,
                            float* state, float rms_eps, uint32_t n, float* xn) {
  const DeltaNetSpec& d = spec.delta_net;
  const uint32_t conv_dim = d.conv_dim(), key_dim = d.key_dim(), value_dim = d.value_dim();
  const uint32_t heads = d.n_v_heads, dk = d.head_k_dim, dv = d.head_v_dim;
  compute.linear_same_input(xn, n, {{&w.dn_qkv, mixed_.data()}, {&w.dn_gate, z_.data()},
                                    {&w.dn_beta, beta_.data()}, {&w.dn_alpha, g_.data()}});
  compute.profiled(&Profile::delta_net, [&] {
    // The convolution, channels being independent.
    compute.parallel_range(conv_dim, 64, [&](size_t first, size_t last) {
      ops::delta_net_conv(w.conv_kernel.data(), spec.conv_kernel, conv_dim, static_cast<uint32_t>(first),
                          static_cast<uint32_t>(last), window, mixed_.data(), n, qkv_.data());
    });
    // Per token: the gates, and q and k normalized (q also scaled).
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    compute.parallel_range(n, 1, [&](size_t first, size_t last) {
      for (size_t t = first; t < last; ++t) {
        float* row = &qkv_[t * conv_dim];
        for (uint32_t h = 0; h < d.n_k_heads; ++h) {
          float* q = row + size_t{h} * dk;
          float* k = row + key_dim + size_t{h} * dk;
          l2_normalize(q, dk, rms_eps);
          ops::scale(q, q_scale, dk);
          l2_normalize(k, dk, rms_eps);
        }
        for (uint32_t h = 0; h < heads; ++h) {
          float& beta = beta_[t * heads + h];
          float& g = g_[t * heads + h];
          beta = sigmoid(beta);
          g = softplus(g + w.dn_dt_bias[h]) * w.dn_a[h];
        }
      }
    });
    // The delta rule, one task per value head; value head h reads key head
    // h % n_k_heads.
    compute.parallel(heads, [&](size_t h, size_t thread) {
      const size_t kh = h % d.n_k_heads;
      const DeltaRuleRows rows{&qkv_[kh * dk],        &qkv_[key_dim + kh * dk], conv_dim, &qkv_[2 * size_t{key_dim} + h * dv],
                               conv_dim,              &beta_[h],                &g_[h],   heads,
                               &out_[h * dv],         value_dim};
      float* s = state + h * size_t{dk} * dv;
      if (n == 1) {
        ops::delta_rule_token(rows, n, dk, dv, s);
      } else {
        ops::delta_rule_chunk(rows, n, dk, dv, kChunk, s, &scratch_[thread * thread_floats_]);
      }
    });
    // rmsnorm(o) * silu(z), per head.
    compute.parallel_range(n, 1, [&](size_t first, size_t last) {
      for (size_t t = first; t < last; ++t) {
        for (uint32_t h = 0; h < heads; ++h) {
          float* o = &out_[t * value_dim + size_t{h} * dv];
          ops::rmsnorm(o, o, w.dn_norm.data(), dv, rms_eps);
          ops::silu_mul(o, &z_[t * value_dim + size_t{h} * dv], o, dv);
        }
      }
    });
  });
  compute.linear(w.dn_out, out_.data(), n, xn);
}

}  // namespace engine
