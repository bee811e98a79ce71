// Vector helpers of the row operations compiled once per instruction set
// (ops_isa.h): xsimd's batch for the flags of the including file, inside the
// namespace of that instruction set (ENGINE_OPS_ISA, defined before the
// include), so the differently compiled copies never meet at link time. At a
// fixed SVE length (-msve-vector-bits), which xsimd 8 does not know, the
// vector is ops_vector_sve.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#ifndef ENGINE_OPS_ISA
#error "define ENGINE_OPS_ISA (the instruction set's namespace) before including engine/ops/ops_vector.h"
#endif

#if defined(__ARM_FEATURE_SVE_BITS) && __ARM_FEATURE_SVE_BITS > 0
#include "engine/ops/ops_vector_sve.h"
#else
#include <xsimd/xsimd.hpp>

namespace engine::ops::ENGINE_OPS_ISA {

using Batch = xsimd::batch<float>;
using IntBatch = xsimd::batch<int32_t>;
constexpr size_t kLanes = Batch::size;
// Called unqualified, so that the fixed-length SVE vector (ops_vector_sve.h)
// brings its own.
using xsimd::fma;
using xsimd::fnma;
using xsimd::hadd;
using xsimd::isnan;
using xsimd::max;
using xsimd::min;
using xsimd::select;
using xsimd::to_int;

// The bits of a float vector as int32 lanes and back. xsimd's bitwise_cast
// goes through out-of-line wrapper calls on NEON; the casts themselves cost
// no instruction.
inline IntBatch float_bits(Batch v) {
#if defined(__aarch64__)
  return IntBatch(vreinterpretq_s32_f32(v.data));
#elif defined(__AVX512F__)
  return IntBatch(_mm512_castps_si512(v.data));
#elif defined(__AVX__)
  return IntBatch(_mm256_castps_si256(v.data));
#elif defined(__SSE2__)
  return IntBatch(_mm_castps_si128(v.data));
#else
  return xsimd::bitwise_cast<IntBatch>(v);
#endif
}
inline Batch from_bits(IntBatch v) {
#if defined(__aarch64__)
  return Batch(vreinterpretq_f32_s32(v.data));
#elif defined(__AVX512F__)
  return Batch(_mm512_castsi512_ps(v.data));
#elif defined(__AVX__)
  return Batch(_mm256_castsi256_ps(v.data));
#elif defined(__SSE2__)
  return Batch(_mm_castsi128_ps(v.data));
#else
  return xsimd::bitwise_cast<Batch>(v);
#endif
}

inline Batch load_part(const float* x, size_t count) {
  if (count == kLanes) return Batch::load_unaligned(x);
  alignas(64) float lanes[kLanes] = {};
  for (size_t j = 0; j < count; ++j) lanes[j] = x[j];
  return Batch::load_aligned(lanes);
}

inline void store_part(const Batch& v, float* x, size_t count) {
  if (count == kLanes) return v.store_unaligned(x);
  alignas(64) float lanes[kLanes];
  v.store_aligned(lanes);
  for (size_t j = 0; j < count; ++j) x[j] = lanes[j];
}

}  // namespace engine::ops::ENGINE_OPS_ISA
#endif

namespace engine::ops::ENGINE_OPS_ISA {

// e^x for the activations and the softmax, within 2 ulp of expf on
// [-87.3, 88.7] (below: 0; above: clamped to e^88.7; NaN stays NaN, so a bad
// model is still caught downstream): 2^n from rounding
// x / ln 2, then a degree-6 polynomial of the remainder (Cephes' expf
// coefficients). About 28 instructions per vector of 4 on NEON, 7 per value
// (objdump of silu_mul's loop): xsimd::exp, with its out-of-line helpers, took
// 18 per value, and SwiGLU alone was 0.42 M instructions of a 10 M prefill
// token under qemu (dim 1024, FFN 2816; 0.26 M now).
inline __attribute__((always_inline)) Batch exp_approx(Batch x) {
  const Batch hi(88.7f), lo(-87.3f);
  const auto underflow = x < lo;
  // Not x != x: xsimd 8 compares AVX and AVX-512 lanes with an ordered "not
  // equal", false for NaN (ops_test caught it).
  const auto nan = isnan(x);
  const Batch input = x;
  x = min(x, hi);
  x = max(x, lo);
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (|x / ln 2| < 2^22).
  const Batch magic(12582912.0f);
  const Batch n = fma(x, Batch(1.44269504088896341f), magic) - magic;
  Batch r = fnma(n, Batch(0.693359375f), x);  // x - n ln 2 in two parts
  r = fnma(n, Batch(-2.12194440e-4f), r);
  Batch p(1.9875691500e-4f);
  p = fma(p, r, Batch(1.3981999507e-3f));
  p = fma(p, r, Batch(8.3334519073e-3f));
  p = fma(p, r, Batch(4.1665795894e-2f));
  p = fma(p, r, Batch(1.6666665459e-1f));
  p = fma(p, r, Batch(5.0000001201e-1f));
  p = fma(p, r * r, r + Batch(1.0f));
  // Times 2^n: n added to the exponent field.
  const IntBatch scaled = float_bits(p) + (to_int(n) << 23);
  return select(nan, input, select(underflow, Batch(0.0f), from_bits(scaled)));
}

// f applied to the n floats at x in vectors, the tail through a padded one.
template <class F>
inline void for_each_vector(size_t n, F&& f) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) f(i, kLanes);
  if (i < n) f(i, n - i);
}

// for_each_vector with the whole vectors' count a compile-time constant: the
// loads and stores of a whole vector (load_n, store_n) then carry no branch
// on the count (NEON, the delta rule of one token: 6.0 instructions per state
// value with load_part's test on every load; see docs/kernels.md).
using Whole = std::integral_constant<size_t, kLanes>;
template <class F>
inline void each_vector(size_t n, F&& f) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) f(i, Whole{});
  if (i < n) f(i, n - i);
}
inline Batch load_n(const float* x, Whole) { return Batch::load_unaligned(x); }
inline Batch load_n(const float* x, size_t count) { return load_part(x, count); }
inline void store_n(const Batch& v, float* x, Whole) { v.store_unaligned(x); }
inline void store_n(const Batch& v, float* x, size_t count) { store_part(v, x, count); }

// f.template operator()<i>() for i = 0 .. N - 1, written out: an array of
// vectors indexed by these constants stays in registers. Indexed by a loop
// counter, GCC 12 kept a fixed-length SVE array in memory (ops_vector_sve.h;
// the delta rule of one token at 256 bits: 1.56 instructions per state value
// with the loops, 1.31 without).
template <size_t N, class F>
inline __attribute__((always_inline)) void unrolled(F&& f) {
  [&]<size_t... i>(std::index_sequence<i...>) { (f.template operator()<i>(), ...); }(std::make_index_sequence<N>{});
}

// Runs f.template operator()<Q> over n rows in tiles of Tile rows, then 1 by 1
// (the attention products' query tiles).
template <size_t Tile, class F>
inline void by_tiles(size_t n, F&& f) {
  size_t i = 0;
  for (; i + Tile <= n; i += Tile) f.template operator()<Tile>(i);
  for (; i < n; ++i) f.template operator()<1>(i);
}

}  // namespace engine::ops::ENGINE_OPS_ISA
