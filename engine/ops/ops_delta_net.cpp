// The delta rule of Qwen3.5's gated DeltaNet (engine/mixers/delta_net.h),
// compiled once per instruction set like the other row operations
// (ops_isa.h; its convolution is in ops_conv.cpp), in vectors over a head's
// values with several rows or tokens per pass so that each vector loaded
// feeds several multiply-adds. The scalar twins (delta_rule_token_ref,
// delta_rule_chunk_ref) sum the same products in another order: the tests
// compare within float rounding.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#include <algorithm>
#include <cmath>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"

namespace engine::ops::ENGINE_OPS_ISA {
namespace {

// acc + w[0] x0 + w[1] x1 + w[2] x2 + w[3] x3: the delta rule's matrix
// products four terms at a time. On NEON the four weights are one load and
// each term one multiply-add by lane, where broadcasting each weight took a
// load of its own.
inline Batch fma4(Batch acc, const float* w, const Batch& x0, const Batch& x1, const Batch& x2, const Batch& x3) {
#if defined(ENGINE_OPS_FIXED_SVE)
  // The same by SVE's indexed FMLA, which takes its lane within each 128-bit
  // segment: the four weights replicated to every segment (LD1RQW).
  const SveFloats wv = svld1rq_f32(all_lanes(), w);
  SveFloats a = svmla_lane_f32(acc.data, x0.data, wv, 0);
  a = svmla_lane_f32(a, x1.data, wv, 1);
  a = svmla_lane_f32(a, x2.data, wv, 2);
  return Batch(svmla_lane_f32(a, x3.data, wv, 3));
#elif defined(__aarch64__)
  const float32x4_t wv = vld1q_f32(w);
  float32x4_t a = vfmaq_laneq_f32(acc.data, x0.data, wv, 0);
  a = vfmaq_laneq_f32(a, x1.data, wv, 1);
  a = vfmaq_laneq_f32(a, x2.data, wv, 2);
  return Batch(vfmaq_laneq_f32(a, x3.data, wv, 3));
#else
  acc = fma(Batch(w[0]), x0, acc);
  acc = fma(Batch(w[1]), x1, acc);
  acc = fma(Batch(w[2]), x2, acc);
  return fma(Batch(w[3]), x3, acc);
#endif
}

inline float dot(const float* x, const float* y, uint32_t n) {
  Batch acc(0.0f);
  each_vector(n, [&](size_t i, auto count) { acc = fma(load_n(x + i, count), load_n(y + i, count), acc); });
  return hadd(acc);
}

// out[m][t] (dv) = sum_i a[m][t][i] S[i] for Tokens rows of both a[0] (k)
// and a[1] (q) at a[m] + t * a_stride, for the state's rows i < dk: each row
// of S loaded once per vector of values for all of them. Accumulator e is
// input e / Tokens, token e % Tokens.
template <size_t Tokens>
void rows_times_state(const float* const (&a)[2], size_t a_stride, const float* state, uint32_t dk, uint32_t dv,
                      float* const (&out)[2], size_t out_stride, size_t t0) {
  constexpr size_t kAcc = 2 * Tokens;
  const float* rows[kAcc];
  unrolled<kAcc>([&]<size_t e>() { rows[e] = a[e / Tokens] + (t0 + e % Tokens) * a_stride; });
  each_vector(dv, [&](size_t j, auto count) {
    Batch acc[kAcc];
    unrolled<kAcc>([&]<size_t e>() { acc[e] = Batch(0.0f); });
    uint32_t i = 0;
    for (; i + 4 <= dk; i += 4) {
      const float* s = state + size_t{i} * dv + j;
      const Batch s0 = load_n(s, count), s1 = load_n(s + dv, count), s2 = load_n(s + 2 * size_t{dv}, count),
                  s3 = load_n(s + 3 * size_t{dv}, count);
      unrolled<kAcc>([&]<size_t e>() { acc[e] = fma4(acc[e], rows[e] + i, s0, s1, s2, s3); });
    }
    for (; i < dk; ++i) {
      const Batch s = load_n(state + size_t{i} * dv + j, count);
      unrolled<kAcc>([&]<size_t e>() { acc[e] = fma(Batch(rows[e][i]), s, acc[e]); });
    }
    unrolled<kAcc>([&]<size_t e>() { store_n(acc[e], out[e / Tokens] + (t0 + e % Tokens) * out_stride + j, count); });
  });
}

}  // namespace

namespace {

// One token's two passes over the values j0 .. j0 + V vectors of S: d =
// beta (v - e^g S^T k) reading it, then S = e^g S + k d^T writing it and o =
// S^T q from the rows just written, the V vectors of d and o in registers
// across the rows. Count: whole vectors (Whole) or the tail's size (V = 1).
template <size_t V, class Count>
inline void token_pass(const float* q, const float* k, const float* v, Batch beta, Batch decay, float* state, uint32_t dk,
                       uint32_t dv, size_t j0, float* o, Count count) {
  Batch acc[V];
  unrolled<V>([&]<size_t b>() { acc[b] = Batch(0.0f); });
  for (uint32_t i = 0; i < dk; ++i) {
    const Batch ki(k[i]);
    const float* s = state + size_t{i} * dv + j0;
    unrolled<V>([&]<size_t b>() { acc[b] = fma(ki, load_n(s + b * kLanes, count), acc[b]); });
  }
  Batch d[V], out[V];
  unrolled<V>([&]<size_t b>() {
    d[b] = beta * (load_n(v + j0 + b * kLanes, count) - decay * acc[b]);
    out[b] = Batch(0.0f);
  });
  for (uint32_t i = 0; i < dk; ++i) {
    const Batch ki(k[i]), qi(q[i]);
    float* s = state + size_t{i} * dv + j0;
    unrolled<V>([&]<size_t b>() {
      const Batch updated = fma(ki, d[b], decay * load_n(s + b * kLanes, count));
      store_n(updated, s + b * kLanes, count);
      out[b] = fma(qi, updated, out[b]);
    });
  }
  unrolled<V>([&]<size_t b>() { store_n(out[b], o + j0 + b * kLanes, count); });
}

}  // namespace

// Per token two passes over S (token_pass), 4 whole vectors of values at a
// time, then single vectors and the tail.
void delta_rule_token(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state) {
  for (uint32_t t = 0; t < n; ++t) {
    const float* q = r.q + t * r.qk_stride;
    const float* k = r.k + t * r.qk_stride;
    const float* v = r.v + t * r.v_stride;
    const Batch beta(r.beta[t * r.gate_stride]);
    const Batch decay(std::exp(r.g[t * r.gate_stride]));
    float* o = r.out + t * r.out_stride;
    size_t j = 0;
    for (; j + 4 * kLanes <= dv; j += 4 * kLanes) token_pass<4>(q, k, v, beta, decay, state, dk, dv, j, o, Whole{});
    for (; j + kLanes <= dv; j += kLanes) token_pass<1>(q, k, v, beta, decay, state, dk, dv, j, o, Whole{});
    if (j < dv) token_pass<1>(q, k, v, beta, decay, state, dk, dv, j, o, dv - j);
  }
}

void delta_rule_chunk(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                      float* scratch) {
  float* sk = scratch;                        // (chunk, dv) S^T k_t of the chunk's starting state
  float* sq = sk + size_t{chunk} * dv;        // (chunk, dv) S^T q_t
  float* d = sq + size_t{chunk} * dv;         // (chunk, dv) the updates
  float* kk = d + size_t{chunk} * dv;         // (chunk, chunk) e^(G_t - G_s) k_t . k_s, s < t
  float* qk = kk + size_t{chunk} * chunk;     // (chunk, chunk) e^(G_t - G_s) q_t . k_s, s <= t
  float* cum = qk + size_t{chunk} * chunk;    // (chunk) G_t
  float* kw = cum + chunk;                    // (dk, chunk) e^(G_c - G_s) k_s[i]
  for (uint32_t t0 = 0; t0 < n; t0 += chunk) {
    const uint32_t c = std::min(chunk, n - t0);
    const float* q0 = r.q + t0 * r.qk_stride;
    const float* k0 = r.k + t0 * r.qk_stride;
    const auto q = [&](uint32_t t) { return q0 + t * r.qk_stride; };
    const auto k = [&](uint32_t t) { return k0 + t * r.qk_stride; };
    float running = 0.0f;
    for (uint32_t t = 0; t < c; ++t) cum[t] = running += r.g[(t0 + t) * r.gate_stride];
    // S^T k and S^T q for 4 tokens per pass over the state.
    const float* a[2] = {k0, q0};
    float* outs[2] = {sk, sq};
    by_tiles<4>(c, [&]<size_t Tokens>(size_t t) { rows_times_state<Tokens>(a, r.qk_stride, state, dk, dv, outs, dv, t); });
    for (uint32_t t = 0; t < c; ++t) {
      for (uint32_t s = 0; s <= t; ++s) {
        const float decay = std::exp(cum[t] - cum[s]);
        if (s < t) kk[size_t{t} * chunk + s] = -decay * dot(k(t), k(s), dk);  // negated: subtracted below
        qk[size_t{t} * chunk + s] = decay * dot(q(t), k(s), dk);
      }
    }
    // The updates by forward substitution, each output as soon as its
    // updates are known; one vector of values at a time over all earlier tokens.
    for (uint32_t t = 0; t < c; ++t) {
      const Batch beta(r.beta[(t0 + t) * r.gate_stride]);
      const Batch start(std::exp(cum[t]));
      const float* v = r.v + (t0 + t) * r.v_stride;
      float* dt = d + size_t{t} * dv;
      float* o = r.out + (t0 + t) * r.out_stride;
      const float* kk_t = kk + size_t{t} * chunk;
      const float* qk_t = qk + size_t{t} * chunk;
      each_vector(dv, [&](size_t j, auto count) {
        Batch acc = load_n(v + j, count) - start * load_n(sk + size_t{t} * dv + j, count);
        Batch out = start * load_n(sq + size_t{t} * dv + j, count);
        // Each earlier update loaded once for both sums, four at a time.
        uint32_t s = 0;
        for (; s + 4 <= t; s += 4) {
          const float* ds = d + size_t{s} * dv + j;
          const Batch d0 = load_n(ds, count), d1 = load_n(ds + dv, count), d2 = load_n(ds + 2 * size_t{dv}, count),
                      d3 = load_n(ds + 3 * size_t{dv}, count);
          acc = fma4(acc, kk_t + s, d0, d1, d2, d3);
          out = fma4(out, qk_t + s, d0, d1, d2, d3);
        }
        for (; s < t; ++s) {
          const Batch ds = load_n(d + size_t{s} * dv + j, count);
          acc = fma(Batch(kk_t[s]), ds, acc);
          out = fma(Batch(qk_t[s]), ds, out);
        }
        const Batch dtj = beta * acc;
        store_n(dtj, dt + j, count);
        store_n(fma(Batch(qk_t[t]), dtj, out), o + j, count);
      });
    }
    // S = e^G_c S + sum_s e^(G_c - G_s) k_s d_s^T, 4 rows of S per pass over d.
    const float end = std::exp(cum[c - 1]);
    for (uint32_t s = 0; s < c; ++s) {
      const float w = std::exp(cum[c - 1] - cum[s]);
      for (uint32_t i = 0; i < dk; ++i) kw[size_t{i} * chunk + s] = w * k(s)[i];
    }
    by_tiles<4>(dk, [&]<size_t Rows>(size_t i0) {
      each_vector(dv, [&](size_t j, auto count) {
        Batch acc[Rows];
        unrolled<Rows>([&]<size_t m>() { acc[m] = Batch(end) * load_n(state + (i0 + m) * dv + j, count); });
        uint32_t s = 0;
        for (; s + 4 <= c; s += 4) {
          const float* ds = d + size_t{s} * dv + j;
          const Batch d0 = load_n(ds, count), d1 = load_n(ds + dv, count), d2 = load_n(ds + 2 * size_t{dv}, count),
                      d3 = load_n(ds + 3 * size_t{dv}, count);
          unrolled<Rows>([&]<size_t m>() { acc[m] = fma4(acc[m], kw + (i0 + m) * chunk + s, d0, d1, d2, d3); });
        }
        for (; s < c; ++s) {
          const Batch ds = load_n(d + size_t{s} * dv + j, count);
          unrolled<Rows>([&]<size_t m>() { acc[m] = fma(Batch(kw[(i0 + m) * chunk + s]), ds, acc[m]); });
        }
        unrolled<Rows>([&]<size_t m>() { store_n(acc[m], state + (i0 + m) * dv + j, count); });
      });
    });
  }
}

#if defined(ENGINE_OPS_FIXED_SVE)
// What a fixed SVE length variant has of its own (ops_dispatch.cpp).
extern const RecurrentOps kRecurrentOps{shortconv_rows, delta_net_conv, delta_rule_token, delta_rule_chunk};
#endif

}  // namespace engine::ops::ENGINE_OPS_ISA
