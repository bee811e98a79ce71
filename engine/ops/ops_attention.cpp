// The two products of attention over many positions (ops.h: dot_rows,
// weighted_rows), register-tiled: several queries of one KV head share every
// load of a key or value row, and the sums stay in registers across the head
// dimension. Against one dot product or axpy per (query, position), which
// reloaded the query or the output for each position and reduced every dot
// horizontally, a prefill token's attention under qemu (-cpu max, dim 1024,
// 8 layers, 96-token prompt) went from 2.6 M to ~0.6 M instructions.
//
// Each output element is summed in the same order whatever the number of
// queries or positions in a call (the tiles only choose which sums run side
// by side), so a token's result does not depend on the batch it came in.
//
// This file is compiled once per instruction set the engine dispatches to
// (ops_isa.h): for the target's baseline everywhere, and on x86-64 also for
// AVX2 (+FMA, F16C) and AVX-512 (F, BW, DQ, VL, CD), each into its own
// namespace, ENGINE_OPS_ISA. The baseline alone is SSE2 on x86-64: 4 lanes
// without FMA, while the matmuls run AVX-512; at a KV depth of 1024 attention
// was 9.5 ms of a 43.7 ms TinyLlama decode token (bench --profile, 2 threads).
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cmath>

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"

namespace engine::ops::ENGINE_OPS_ISA {
namespace {

// Queries per tile: 4 x kLanes sums fit the 32 registers of NEON and AVX-512;
// SSE2 and AVX2 have 16, so 2 there.
#if defined(__aarch64__) || defined(__AVX512F__)
constexpr size_t kQueryTile = 4;
#else
constexpr size_t kQueryTile = 2;
#endif

#if defined(__AVX512F__)
// The sum of a vector's 16 lanes as halves of halves: lanes l + l+8, then
// l + l+4, l + l+2, l + l+1. hsum16 below reduces 16 vectors at once by the
// same tree, so a sum does not depend on which of the two computed it.
inline float hsum(const Batch& acc) {
  const __m512 v = acc;
  const __m256 x = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  const __m128 y = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  const __m128 z = _mm_add_ps(y, _mm_movehl_ps(y, y));
  return _mm_cvtss_f32(_mm_add_ss(z, _mm_shuffle_ps(z, z, 1)));
}

// The 16 sums of a[0..15] in one vector: lane 4r + c holds the sum of
// a[4c + r]. Reducing each accumulator alone took 16 horizontal sums of about
// 9 instructions for 4 queries x 4 positions over 64 dimensions, more than
// their 64 FMAs (perf annotate); this is 30 shuffles and adds.
inline __m512 hsum16(const __m512* a) {
  __m512 b[8], c[4], d[2];
  for (int j = 0; j < 8; ++j) {
    b[j] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * j], a[2 * j + 1], 0x44),
                         _mm512_shuffle_f32x4(a[2 * j], a[2 * j + 1], 0xEE));  // l + l+8
  }
  for (int j = 0; j < 4; ++j) {
    c[j] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * j], b[2 * j + 1], 0x88),
                         _mm512_shuffle_f32x4(b[2 * j], b[2 * j + 1], 0xDD));  // l + l+4
  }
  for (int j = 0; j < 2; ++j) {
    const __m512d lo = _mm512_unpacklo_pd(_mm512_castps_pd(c[2 * j]), _mm512_castps_pd(c[2 * j + 1]));
    const __m512d hi = _mm512_unpackhi_pd(_mm512_castps_pd(c[2 * j]), _mm512_castps_pd(c[2 * j + 1]));
    d[j] = _mm512_add_ps(_mm512_castpd_ps(lo), _mm512_castpd_ps(hi));  // l + l+2
  }
  return _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], 0x88), _mm512_shuffle_ps(d[0], d[1], 0xDD));  // l + l+1
}
#else
inline float hsum(const Batch& acc) { return xsimd::hadd(acc); }
#endif

// Key and value rows are F32, or F16 straight from the KV cache, widened in
// registers: exactly what fp16_to_fp32 gives, so both sum the same floats.
inline Batch load_row(const float* p) { return Batch::load_unaligned(p); }
inline float row_value(const float* p) { return *p; }
inline float row_value(const uint16_t* p) {
  float f;
  fp16_to_fp32_portable(p, &f, 1);
  return f;
}
inline Batch load_row(const uint16_t* p) {
#if defined(__AVX512F__)
  return Batch(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#elif defined(__F16C__)
  return Batch(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__aarch64__)
  return Batch(vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))));
#else
  alignas(16) float f[kLanes];
  fp16_to_fp32_portable(p, f, kLanes);
  return Batch::load_aligned(f);
#endif
}

// A decode token's attention reads each KV head's F16 history from DRAM (the
// weights streamed since evict it): the lines of the next `n` values are asked
// for kRowsAhead bytes ahead, into L2, like the matmul kernels' weights
// (kernels/hwy/dot-inl.h). F32 rows are the converted copy, already in cache.
constexpr size_t kRowsAhead = 8192;
template <class T>
inline void prefetch_ahead(const T* p, size_t n) {
  if constexpr (sizeof(T) == 2) {
    const auto* first = reinterpret_cast<const char*>(p);
    for (const char* line = first; line < reinterpret_cast<const char*>(p + n); line += 64) {
      __builtin_prefetch(line + kRowsAhead, 0, 2);
    }
  }
}

// out_i[p] = scale * (q_i . k_p) + the scalar tail past the last full vector.
template <class T>
inline void store_dot(const Batch& acc, const float* q, const T* k, size_t t, size_t d, float scale, float* out) {
  float s = hsum(acc);
  for (size_t r = t; r < d; ++r) s = std::fma(q[r], row_value(k + r), s);
  *out = s * scale;
}

// One query per position: the tail of the positions.
template <size_t Q, class T>
void dot_one_position(const float* q, size_t q_stride, const T* k, size_t d, float scale, float* out,
                      size_t out_stride) {
  for (size_t i = 0; i < Q; ++i) {
    Batch acc(0.0f);
    size_t t = 0;
    for (; t + kLanes <= d; t += kLanes) acc = xsimd::fma(Batch::load_unaligned(q + i * q_stride + t), load_row(k + t), acc);
    store_dot(acc, q + i * q_stride, k, t, d, scale, out + i * out_stride);
  }
}

// Q (1, 2 or 4) queries x 4 positions, the 4Q sums as named variables: held in
// an array, GCC 12 stored the whole array to the stack on every step.
template <size_t Q, class T>
void dot_four_positions(const float* q, size_t q_stride, const T* k, size_t k_stride, size_t d, float scale,
                        float* out, size_t out_stride) {
  static_assert(Q == 1 || Q == 2 || Q == 4);
  Batch a00(0.0f), a01(0.0f), a02(0.0f), a03(0.0f), a10(0.0f), a11(0.0f), a12(0.0f), a13(0.0f);
  Batch a20(0.0f), a21(0.0f), a22(0.0f), a23(0.0f), a30(0.0f), a31(0.0f), a32(0.0f), a33(0.0f);
  const T *k0 = k, *k1 = k + k_stride, *k2 = k + 2 * k_stride, *k3 = k + 3 * k_stride;
  const float *q0 = q, *q1 = q + q_stride, *q2 = q + 2 * q_stride, *q3 = q + 3 * q_stride;
  size_t t = 0;
  for (; t + kLanes <= d; t += kLanes) {
    const Batch v0 = load_row(k0 + t), v1 = load_row(k1 + t);
    const Batch v2 = load_row(k2 + t), v3 = load_row(k3 + t);
    const Batch x0 = Batch::load_unaligned(q0 + t);
    a00 = xsimd::fma(x0, v0, a00), a01 = xsimd::fma(x0, v1, a01), a02 = xsimd::fma(x0, v2, a02), a03 = xsimd::fma(x0, v3, a03);
    if constexpr (Q >= 2) {
      const Batch x1 = Batch::load_unaligned(q1 + t);
      a10 = xsimd::fma(x1, v0, a10), a11 = xsimd::fma(x1, v1, a11), a12 = xsimd::fma(x1, v2, a12), a13 = xsimd::fma(x1, v3, a13);
    }
    if constexpr (Q == 4) {
      const Batch x2 = Batch::load_unaligned(q2 + t), x3 = Batch::load_unaligned(q3 + t);
      a20 = xsimd::fma(x2, v0, a20), a21 = xsimd::fma(x2, v1, a21), a22 = xsimd::fma(x2, v2, a22), a23 = xsimd::fma(x2, v3, a23);
      a30 = xsimd::fma(x3, v0, a30), a31 = xsimd::fma(x3, v1, a31), a32 = xsimd::fma(x3, v2, a32), a33 = xsimd::fma(x3, v3, a33);
    }
  }
#if defined(__AVX512F__)
  if constexpr (Q == 4) {
    // Accumulator of query i and position p at 4p + i: lane 4i + p of the sums.
    const __m512 acc[16] = {a00, a10, a20, a30, a01, a11, a21, a31, a02, a12, a22, a32, a03, a13, a23, a33};
    const __m512 sums = hsum16(acc);
    if (t == d) {
      const __m512 scaled = _mm512_mul_ps(sums, _mm512_set1_ps(scale));
      _mm_storeu_ps(out, _mm512_extractf32x4_ps(scaled, 0));
      _mm_storeu_ps(out + out_stride, _mm512_extractf32x4_ps(scaled, 1));
      _mm_storeu_ps(out + 2 * out_stride, _mm512_extractf32x4_ps(scaled, 2));
      _mm_storeu_ps(out + 3 * out_stride, _mm512_extractf32x4_ps(scaled, 3));
      return;
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, sums);
    const float* qs[4] = {q0, q1, q2, q3};
    const T* ks[4] = {k0, k1, k2, k3};
    for (size_t i = 0; i < 4; ++i) {
      for (size_t p = 0; p < 4; ++p) {
        float s = lanes[4 * i + p];
        for (size_t r = t; r < d; ++r) s = std::fma(qs[i][r], row_value(ks[p] + r), s);
        out[i * out_stride + p] = s * scale;
      }
    }
    return;
  }
#endif
  const auto store = [&](const float* qi, float* o, const Batch& b0, const Batch& b1, const Batch& b2, const Batch& b3) {
    store_dot(b0, qi, k0, t, d, scale, o);
    store_dot(b1, qi, k1, t, d, scale, o + 1);
    store_dot(b2, qi, k2, t, d, scale, o + 2);
    store_dot(b3, qi, k3, t, d, scale, o + 3);
  };
  store(q0, out, a00, a01, a02, a03);
  if constexpr (Q >= 2) store(q1, out + out_stride, a10, a11, a12, a13);
  if constexpr (Q == 4) {
    store(q2, out + 2 * out_stride, a20, a21, a22, a23);
    store(q3, out + 3 * out_stride, a30, a31, a32, a33);
  }
}

template <size_t Q, class T>
void dot_queries(const float* q, size_t q_stride, const T* k, size_t k_stride, size_t n_k, size_t d, float scale,
                 float* out, size_t out_stride) {
  size_t p = 0;
  for (; p + 4 <= n_k; p += 4) {
    prefetch_ahead(k + p * k_stride, 4 * k_stride);
    dot_four_positions<Q>(q, q_stride, k + p * k_stride, k_stride, d, scale, out + p, out_stride);
  }
  for (; p < n_k; ++p) dot_one_position<Q>(q, q_stride, k + p * k_stride, d, scale, out + p, out_stride);
}

// Q weight rows x C vectors of the output: out_i[c] = sum_p w_i[p] v_p[c].
// The first pass over the positions prefetches each row's `ahead` values.
template <size_t Q, size_t C, class T>
void weighted_tile(const float* w, size_t w_stride, const T* v, size_t v_stride, size_t n_v, float* out,
                   size_t out_stride, size_t ahead) {
  Batch acc[Q][C];
  for (auto& row : acc) {
    for (auto& a : row) a = Batch(0.0f);
  }
  for (size_t p = 0; p < n_v; ++p) {
    prefetch_ahead(v + p * v_stride, ahead);
    Batch vv[C];
    for (size_t c = 0; c < C; ++c) vv[c] = load_row(v + p * v_stride + c * kLanes);
    for (size_t i = 0; i < Q; ++i) {
      const Batch wi(w[i * w_stride + p]);
      for (size_t c = 0; c < C; ++c) acc[i][c] = xsimd::fma(wi, vv[c], acc[i][c]);
    }
  }
  for (size_t i = 0; i < Q; ++i) {
    for (size_t c = 0; c < C; ++c) acc[i][c].store_unaligned(out + i * out_stride + c * kLanes);
  }
}

template <size_t Q, class T>
void weighted_queries(const float* w, size_t w_stride, const T* v, size_t v_stride, size_t n_v, size_t d,
                      float* out, size_t out_stride) {
  constexpr size_t kChunk = 4;  // vectors of the output per pass over the positions
  size_t t = 0;
  for (; t + kChunk * kLanes <= d; t += kChunk * kLanes) {
    weighted_tile<Q, kChunk>(w, w_stride, v + t, v_stride, n_v, out + t, out_stride, t == 0 ? d : 0);
  }
  for (; t + kLanes <= d; t += kLanes) {
    weighted_tile<Q, 1>(w, w_stride, v + t, v_stride, n_v, out + t, out_stride, t == 0 ? d : 0);
  }
  for (; t < d; ++t) {
    for (size_t i = 0; i < Q; ++i) {
      float s = 0.0f;
      for (size_t p = 0; p < n_v; ++p) s = std::fma(w[i * w_stride + p], row_value(v + p * v_stride + t), s);
      out[i * out_stride + t] = s;
    }
  }
}

template <class T>
void dot_rows_of(const float* q, size_t q_stride, size_t n_q, const T* k, size_t k_stride, size_t n_k, size_t d,
                 float scale, float* out, size_t out_stride) {
  by_tiles<kQueryTile>(n_q, [&]<size_t Q>(size_t i) {
    dot_queries<Q>(q + i * q_stride, q_stride, k, k_stride, n_k, d, scale, out + i * out_stride, out_stride);
  });
}

template <class T>
void weighted_rows_of(const float* w, size_t w_stride, size_t n_w, const T* v, size_t v_stride, size_t n_v, size_t d,
                      float* out, size_t out_stride) {
  by_tiles<kQueryTile>(n_w, [&]<size_t Q>(size_t i) {
    weighted_queries<Q>(w + i * w_stride, w_stride, v, v_stride, n_v, d, out + i * out_stride, out_stride);
  });
}

}  // namespace

void dot_rows(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride) {
  dot_rows_of(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void dot_rows_f16(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k,
                  size_t d, float scale, float* out, size_t out_stride) {
  dot_rows_of(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void weighted_rows(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v, size_t d,
                   float* out, size_t out_stride) {
  weighted_rows_of(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

void weighted_rows_f16(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride, size_t n_v,
                       size_t d, float* out, size_t out_stride) {
  weighted_rows_of(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

// Where the widening is one instruction per vector (F16C, AVX-512), reading
// the rows in place is faster: TinyLlama Q4_0 decode at 2 threads, attention
// 3.9-4.6 -> 2.3-3.1 ms a token at a KV depth of 1024 and 7.1-9.4 -> 4.2-5.2 ms
// at 2048 (bench --profile, three alternating pairs each). NEON widens 4
// halves per instruction, and in place widens each row once per tile of 4
// queries where the copy converts it once: 3% more instructions for 4 queries
// per KV head and 20% more for 8 (qemu, neoverse-n1, 1024 positions), so ARM
// keeps the copy.
#if defined(__F16C__)
extern const bool kF16RowsInPlace = true;
#else
extern const bool kF16RowsInPlace = false;
#endif

void fp16_to_fp32(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  // VCVTPH2PS: exact, NaNs quieted with their payload, as the reference.
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
#endif
  fp16_to_fp32_portable(x + i, y + i, n - i);
}

}  // namespace engine::ops::ENGINE_OPS_ISA
