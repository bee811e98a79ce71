// The two products of attention over a quantized KV cache (ops.h:
// dot_rows_quant, weighted_rows_quant): each row is ggml's Q8_0 or Q4_0
// blocks (32 codes and an fp16 scale d), read in place and dequantized one
// block at a time into registers, codes widened to float and multiplied by d,
// so no F32 copy of the history is ever written. The floats reaching the FMAs
// are exactly dequantize_row_q8_0 / q4_0's; only the order of the sums differs
// from the scalar twin (ops.cpp: dot_rows_quant_ref), one accumulator vector
// per query across the row's blocks, reduced once at its end.
//
// Compiled once per instruction set like ops_attention.cpp (ops_isa.h): NEON
// on aarch64 widens 16 codes per load by two SXTL steps, AVX2 / AVX-512 with VPMOVSXBD; the
// x86 baseline (SSE2, without a sign-extending load) widens through memory.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cstring>

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"

namespace engine::ops::ENGINE_OPS_ISA {
namespace {

using kernels::ref::QK;
constexpr size_t kBlockVectors = QK / kLanes;  // float vectors per block
static_assert(QK % kLanes == 0);

// Queries (or weight rows) sharing each dequantized block: their sums take
// kBlockVectors registers each in weighted_rows (2 x 8 of NEON's 32; AVX2's
// 16 hold 4 x 4 and the block; AVX-512 4 x 2), one each in dot_rows.
#if defined(__AVX512F__) || defined(__AVX2__)
constexpr size_t kTile = 4;
#else
constexpr size_t kTile = 2;
#endif

// The 32 codes of a block as signed bytes: Q8_0's as stored, Q4_0's nibbles
// minus 8 (element j in the low nibble of byte j, j + 16 in its high one).
inline void codes(const kernels::ref::BlockQ8_0& b, int8_t* out) { std::memcpy(out, b.qs, QK); }
inline void codes(const kernels::ref::BlockQ4_0& b, int8_t* out) {
#if defined(__aarch64__)
  const uint8x16_t x = vld1q_u8(b.qs);
  const int8x16_t eight = vdupq_n_s8(8);
  vst1q_s8(out, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(x, vdupq_n_u8(0x0F))), eight));
  vst1q_s8(out + 16, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), eight));
#else
  for (size_t j = 0; j < QK / 2; ++j) {
    out[j] = static_cast<int8_t>((b.qs[j] & 0x0F) - 8);
    out[j + QK / 2] = static_cast<int8_t>((b.qs[j] >> 4) - 8);
  }
#endif
}

// Codes c[0 .. kLanes - 1] times d, as floats (x86; NEON widens 16 at a time
// in dequantize).
inline Batch widen(const int8_t* c, const Batch& d) {
#if defined(__AVX512F__)
  const __m512i i = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
  return Batch(_mm512_cvtepi32_ps(i)) * d;
#elif defined(__AVX2__)
  const __m256i i = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c)));
  return Batch(_mm256_cvtepi32_ps(i)) * d;
#else
  alignas(16) float f[kLanes];
  for (size_t l = 0; l < kLanes; ++l) f[l] = static_cast<float>(c[l]);
  return Batch::load_aligned(f) * d;
#endif
}

// One block dequantized into registers: v[j] holds its values j * kLanes ...
template <class Block>
inline void dequantize(const Block& b, Batch* v) {
  alignas(16) int8_t c[QK];
  codes(b, c);
  const Batch d(kernels::ref::fp16_to_fp32(b.d));
#if defined(__aarch64__)
  // 16 codes a load, widened twice (SXTL to 16 bits, then to 32): 4 vectors.
  for (size_t j = 0; j < kBlockVectors; j += 4) {
    const int8x16_t x = vld1q_s8(c + j * kLanes);
    const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_s8(vget_high_s8(x));
    v[j] = Batch(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)))) * d;
    v[j + 1] = Batch(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)))) * d;
    v[j + 2] = Batch(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)))) * d;
    v[j + 3] = Batch(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)))) * d;
  }
#else
  for (size_t j = 0; j < kBlockVectors; ++j) v[j] = widen(c + j * kLanes, d);
#endif
}

// Q queries x one key row: out_i = scale * (q_i . k).
template <size_t Q, class Block>
void dot_tile(const float* q, size_t q_stride, const Block* k, size_t n_blocks, float scale, float* out,
              size_t out_stride) {
  Batch acc[Q];
  for (auto& a : acc) a = Batch(0.0f);
  for (size_t b = 0; b < n_blocks; ++b) {
    Batch v[kBlockVectors];
    dequantize(k[b], v);
    for (size_t i = 0; i < Q; ++i) {
      const float* qi = q + i * q_stride + b * QK;
      for (size_t j = 0; j < kBlockVectors; ++j) acc[i] = xsimd::fma(Batch::load_unaligned(qi + j * kLanes), v[j], acc[i]);
    }
  }
  for (size_t i = 0; i < Q; ++i) out[i * out_stride] = xsimd::hadd(acc[i]) * scale;
}

// Q weight rows x one block of the output: out_i[block] += sum_p w_i[p] v_p[block].
template <size_t Q, class Block>
void weighted_tile(const float* w, size_t w_stride, const uint8_t* v, size_t v_row_bytes, size_t n_v, size_t block,
                   float* out, size_t out_stride) {
  Batch acc[Q][kBlockVectors];
  for (size_t i = 0; i < Q; ++i) {
    for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j] = Batch::load_unaligned(out + i * out_stride + block * QK + j * kLanes);
  }
  for (size_t p = 0; p < n_v; ++p) {
    Batch vv[kBlockVectors];
    dequantize(reinterpret_cast<const Block*>(v + p * v_row_bytes)[block], vv);
    for (size_t i = 0; i < Q; ++i) {
      const Batch wi(w[i * w_stride + p]);
      for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j] = xsimd::fma(wi, vv[j], acc[i][j]);
    }
  }
  for (size_t i = 0; i < Q; ++i) {
    for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j].store_unaligned(out + i * out_stride + block * QK + j * kLanes);
  }
}

template <class Block>
void dot_rows_of(const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes, size_t n_k,
                 size_t d, float scale, float* out, size_t out_stride) {
  for (size_t p = 0; p < n_k; ++p) {
    const auto* row = reinterpret_cast<const Block*>(k + p * k_row_bytes);
    by_tiles<kTile>(n_q, [&]<size_t Q>(size_t i) {
      dot_tile<Q>(q + i * q_stride, q_stride, row, d / QK, scale, out + i * out_stride + p, out_stride);
    });
  }
}

template <class Block>
void weighted_rows_of(const float* w, size_t w_stride, size_t n_w, const uint8_t* v, size_t v_row_bytes, size_t n_v,
                      size_t d, float* out, size_t out_stride) {
  by_tiles<kTile>(n_w, [&]<size_t Q>(size_t i) {
    for (size_t b = 0; b < d / QK; ++b) {
      weighted_tile<Q, Block>(w + i * w_stride, w_stride, v, v_row_bytes, n_v, b, out + i * out_stride, out_stride);
    }
  });
}

}  // namespace

void dot_rows_quant(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes,
                    size_t n_k, size_t d, float scale, float* out, size_t out_stride) {
  if (t == RowQuant::q8_0) {
    dot_rows_of<kernels::ref::BlockQ8_0>(q, q_stride, n_q, k, k_row_bytes, n_k, d, scale, out, out_stride);
  } else {
    dot_rows_of<kernels::ref::BlockQ4_0>(q, q_stride, n_q, k, k_row_bytes, n_k, d, scale, out, out_stride);
  }
}

void weighted_rows_quant(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                         size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride) {
  if (t == RowQuant::q8_0) {
    weighted_rows_of<kernels::ref::BlockQ8_0>(w, w_stride, n_w, v, v_row_bytes, n_v, d, out, out_stride);
  } else {
    weighted_rows_of<kernels::ref::BlockQ4_0>(w, w_stride, n_w, v, v_row_bytes, n_v, d, out, out_stride);
  }
}

}  // namespace engine::ops::ENGINE_OPS_ISA
