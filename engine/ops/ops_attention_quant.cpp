// The two products of attention over a quantized KV cache (ops.h:
// dot_rows_quant, weighted_rows_quant): each row is ggml's Q8_0 or Q4_0
// blocks (32 codes and an fp16 scale d), read in place: no F32 copy of the
// history is ever written (the weighted sums stage 32 rows at a time).
//
// Scores: the queries are rounded to Q8_0 blocks first (as llama.cpp's flash
// attention does), and each score is a sum over the row's blocks of an
// integer dot of 32 codes times both scales, in block order: bit for bit the
// scalar twin's (ops.cpp: dot_rows_quant_ref, kernels::ref::vec_dot_*_q8_0).
// The integer dots are exact whatever the instruction set; the file is
// compiled without FP contraction (engine/CMakeLists.txt) so the float steps
// are the twin's too. A key block's codes are loaded (Q4_0: unpacked) once
// for every query of the group.
//
// Weighted sums: each block dequantized (codes widened to float and
// multiplied by d) into a scratch of 32 rows, then summed for every weight
// row. The floats reaching the FMAs are exactly dequantize_row_q8_0 / q4_0's
// and each output's sum runs over the positions in order, as the twin's; only
// the FMAs' single rounding differs.
//
// Compiled once per instruction set like ops_attention.cpp (ops_isa.h): NEON
// on aarch64 widens 16 codes per load by two SXTL steps and multiplies codes
// by SMULL / SMLAL2, AVX2 / AVX-512 widen with VPMOVSXBD and multiply by
// VPMADDUBSW on absolute values; the x86 baseline (SSE2) unpacks Q4_0's
// nibbles in registers, widens through memory and sums the integer dots in a
// plain loop.
#ifndef ENGINE_OPS_ISA
#define ENGINE_OPS_ISA baseline
#endif

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "engine/ops/ops_isa.h"
#include "engine/ops/ops_vector.h"
#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quants.h"

namespace engine::ops::ENGINE_OPS_ISA {
namespace {

using kernels::ref::QK;
constexpr size_t kBlockVectors = QK / kLanes;  // float vectors per block
static_assert(QK % kLanes == 0);

// weighted_rows dequantizes kChunk positions at a time into a per-thread
// scratch (kChunk x d floats: 8 KiB at d = 64, read back from L1), once for
// every weight row, then adds them up a block of the output at a time for
// kWeightedTile weight rows: their sums take kBlockVectors registers each,
// beside the block's (AVX2's 16 hold 2 x 4 + 4, AVX-512's 32 hold 4 x 2 + 2,
// NEON's 32 hold 2 x 8 + 8; the SSE2 baseline's 16 hold 1 x 8 + 8).
// Dequantizing in the tile loop instead, once per tile, cost 4.6x the F16
// cache's time (AVX2, d 64, 8 weight rows over 4096 positions: 489 us
// against 105 us; four rows' sums spilled out of the 16 registers).
constexpr size_t kChunk = 32;
#if defined(__AVX512F__) || defined(__AVX2__)
constexpr size_t kWeightedTile = 4;
#elif defined(__aarch64__)
constexpr size_t kWeightedTile = 2;
#else
constexpr size_t kWeightedTile = 1;
#endif

// A block's fp16 scale as float, inline (one VCVTPH2PS or FCVT where the CPU
// has them; the library's out-of-line conversion cost as much as the F16
// cache's whole weighted sum): exact, the same float as fp16_to_fp32's.
inline float block_scale(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#elif defined(__aarch64__)
  return static_cast<float>(std::bit_cast<__fp16>(h));
#else
  return kernels::ref::fp16_to_fp32(h);
#endif
}

// The 32 codes of a block as signed bytes: Q8_0's as stored, Q4_0's nibbles
// minus 8 (element j in the low nibble of byte j, j + 16 in its high one).
// The baseline's path; an ISA build with its own key loads leaves these and
// widen() unused (clang warns about that, GCC does not).
[[maybe_unused]] inline void codes(const kernels::ref::BlockQ8_0& b, int8_t* out) { std::memcpy(out, b.qs, QK); }
[[maybe_unused]] inline void codes(const kernels::ref::BlockQ4_0& b, int8_t* out) {
#if defined(__aarch64__)
  const uint8x16_t x = vld1q_u8(b.qs);
  const int8x16_t eight = vdupq_n_s8(8);
  vst1q_s8(out, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(x, vdupq_n_u8(0x0F))), eight));
  vst1q_s8(out + 16, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), eight));
#elif defined(__SSE2__)
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m128i low = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_sub_epi8(_mm_and_si128(x, low), eight));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), low), eight));
#else
  for (size_t j = 0; j < QK / 2; ++j) {
    out[j] = static_cast<int8_t>((b.qs[j] & 0x0F) - 8);
    out[j + QK / 2] = static_cast<int8_t>((b.qs[j] >> 4) - 8);
  }
#endif
}

// Codes c[0 .. kLanes - 1] times d, as floats, through memory (the SSE2
// baseline, without a sign-extending load; AVX2, AVX-512 and NEON widen in
// registers in dequantize).
[[maybe_unused]] inline Batch widen(const int8_t* c, const Batch& d) {
  alignas(16) float f[kLanes];
  for (size_t l = 0; l < kLanes; ++l) f[l] = static_cast<float>(c[l]);
  return Batch::load_aligned(f) * d;
}

// Q weight rows x one block of the output over a chunk of m dequantized rows
// (rows, d floats apart): out_i[block] += sum_p w_i[p] rows_p[block], the
// positions in order.
template <size_t Q>
void weighted_tile(const float* w, size_t w_stride, const float* rows, size_t d, size_t m, size_t block, float* out,
                   size_t out_stride) {
  Batch acc[Q][kBlockVectors];
  for (size_t i = 0; i < Q; ++i) {
    for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j] = Batch::load_unaligned(out + i * out_stride + block * QK + j * kLanes);
  }
  for (size_t p = 0; p < m; ++p) {
    Batch vv[kBlockVectors];
    for (size_t j = 0; j < kBlockVectors; ++j) vv[j] = Batch::load_aligned(rows + p * d + block * QK + j * kLanes);
    for (size_t i = 0; i < Q; ++i) {
      const Batch wi(w[i * w_stride + p]);
      for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j] = xsimd::fma(wi, vv[j], acc[i][j]);
    }
  }
  for (size_t i = 0; i < Q; ++i) {
    for (size_t j = 0; j < kBlockVectors; ++j) acc[i][j].store_unaligned(out + i * out_stride + block * QK + j * kLanes);
  }
}

// The scores of a tile of kDotQueries queries against one key: for each of
// the key's blocks, the integer dots of its codes with the queries' (queries
// past the last are zero blocks), reduced to one integer per query and added
// as sum_i += (d_k * d_q_i) * float(dot_i), lane i holding query i: the twin's
// steps, lane by lane.
#if defined(__AVX2__)
constexpr size_t kDotQueries = 8;
using KeyCodes = __m256i;
inline KeyCodes key_codes(const kernels::ref::BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
inline KeyCodes key_codes(const kernels::ref::BlockQ4_0& b) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m256i nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(0x0F));
  return _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
}
struct ScoreSums {
  __m256 sum = _mm256_setzero_ps();
  // VPMADDUBSW multiplies unsigned by signed bytes: |k| times q with k's
  // sign. Codes are within -127..127 (Q8_0's quantizer never makes -128;
  // Q4_0's are -8..7), so a pair's sum, at most 2 x 127 x 127, fits 16 bits.
  // Eight queries' eight partial sums reduce by VPHADDD in three rounds.
  void add(const KeyCodes& k, float dk, const int8_t* const* q, const float* dq) {
    const __m256i k_abs = _mm256_sign_epi8(k, k), ones = _mm256_set1_epi16(1);
    __m256i v[kDotQueries];
    for (size_t i = 0; i < kDotQueries; ++i) {
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[i]));
      v[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(k_abs, _mm256_sign_epi8(y, k)), ones);
    }
    const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
    const __m256i dots =
        _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
    const __m256 both = _mm256_mul_ps(_mm256_set1_ps(dk), _mm256_loadu_ps(dq));
    sum = _mm256_add_ps(sum, _mm256_mul_ps(both, _mm256_cvtepi32_ps(dots)));
  }
  void store(float* lanes) const { _mm256_storeu_ps(lanes, sum); }
};
#elif defined(__aarch64__)
constexpr size_t kDotQueries = 4;
struct KeyCodes {
  int8x16_t lo, hi;  // codes 0-15, 16-31
};
inline KeyCodes key_codes(const kernels::ref::BlockQ8_0& b) { return {vld1q_s8(b.qs), vld1q_s8(b.qs + 16)}; }
inline KeyCodes key_codes(const kernels::ref::BlockQ4_0& b) {
  const uint8x16_t x = vld1q_u8(b.qs);
  const int8x16_t eight = vdupq_n_s8(8);
  return {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(x, vdupq_n_u8(0x0F))), eight),
          vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), eight)};
}
struct ScoreSums {
  float32x4_t sum = vdupq_n_f32(0.0f);
  // SMULL + SMLAL2: two products per 16-bit lane, at most 2 x 127 x 127;
  // four queries' partial sums reduce by ADDP in two rounds.
  void add(const KeyCodes& k, float dk, const int8_t* const* q, const float* dq) {
    int32x4_t v[kDotQueries];
    for (size_t i = 0; i < kDotQueries; ++i) {
      const int8x16_t y0 = vld1q_s8(q[i]), y1 = vld1q_s8(q[i] + 16);
      const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(k.lo), vget_low_s8(y0)), k.lo, y0);
      const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(k.hi), vget_low_s8(y1)), k.hi, y1);
      v[i] = vpadalq_s16(vpaddlq_s16(p0), p1);
    }
    const int32x4_t dots = vpaddq_s32(vpaddq_s32(v[0], v[1]), vpaddq_s32(v[2], v[3]));
    const float32x4_t both = vmulq_f32(vdupq_n_f32(dk), vld1q_f32(dq));
    sum = vaddq_f32(sum, vmulq_f32(both, vcvtq_f32_s32(dots)));
  }
  void store(float* lanes) const { vst1q_f32(lanes, sum); }
};
#else
constexpr size_t kDotQueries = 4;
struct KeyCodes {
  alignas(16) int8_t c[QK];
};
template <class Block>
inline KeyCodes key_codes(const Block& b) {
  KeyCodes k;
  codes(b, k.c);
  return k;
}
struct ScoreSums {
  float sum[kDotQueries] = {};
  void add(const KeyCodes& k, float dk, const int8_t* const* q, const float* dq) {
    for (size_t i = 0; i < kDotQueries; ++i) {
      int32_t dot = 0;
      for (size_t j = 0; j < QK; ++j) dot += int32_t{k.c[j]} * int32_t{q[i][j]};
      sum[i] += (dk * dq[i]) * static_cast<float>(dot);
    }
  }
  void store(float* lanes) const { std::memcpy(lanes, sum, sizeof sum); }
};
#endif

// One block dequantized into registers: v[j] holds its values j * kLanes ...
// (j + 1) * kLanes - 1, each code widened to float and multiplied by d, from
// the codes key_codes loaded into registers.
template <class Block>
inline void dequantize(const Block& b, Batch* v) {
  const KeyCodes k = key_codes(b);
  const Batch d(block_scale(b.d));
#if defined(__AVX2__)
  const __m128i lo = _mm256_castsi256_si128(k), hi = _mm256_extracti128_si256(k, 1);
#if defined(__AVX512F__)
  v[0] = Batch(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(lo))) * d;
  v[1] = Batch(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(hi))) * d;
#else
  v[0] = Batch(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))) * d;
  v[1] = Batch(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))) * d;
  v[2] = Batch(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))) * d;
  v[3] = Batch(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))) * d;
#endif
#elif defined(__aarch64__)
  // 16 codes a register, widened twice (SXTL to 16 bits, then to 32): 4 vectors.
  for (const int8x16_t x : {k.lo, k.hi}) {
    const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_s8(vget_high_s8(x));
    *v++ = Batch(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)))) * d;
    *v++ = Batch(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)))) * d;
    *v++ = Batch(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)))) * d;
    *v++ = Batch(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)))) * d;
  }
#else
  for (size_t j = 0; j < kBlockVectors; ++j) v[j] = widen(k.c + j * kLanes, d);
#endif
}

// The queries as Q8_0 blocks, laid out per tile of kDotQueries and block:
// each block's code pointers and scales, queries past n_q pointing at zeros.
struct QueryTiles {
  std::vector<kernels::ref::BlockQ8_0> blocks;
  std::vector<const int8_t*> codes;  // [tile][block][query]
  std::vector<float> scales;         // the same, d as float
};
const QueryTiles& quantized_queries(const float* q, size_t q_stride, size_t n_q, size_t d) {
  static constexpr int8_t kZeros[QK] = {};
  thread_local QueryTiles t;
  const size_t n_blocks = d / QK, n_tiles = (n_q + kDotQueries - 1) / kDotQueries;
  t.blocks.resize(n_q * n_blocks);
  t.codes.resize(n_tiles * n_blocks * kDotQueries);
  t.scales.resize(t.codes.size());
  for (size_t i = 0; i < n_q; ++i) kernels::ref::quantize_row_q8_0(q + i * q_stride, &t.blocks[i * n_blocks], d);
  for (size_t tile = 0; tile < n_tiles; ++tile) {
    for (size_t b = 0; b < n_blocks; ++b) {
      for (size_t j = 0; j < kDotQueries; ++j) {
        const size_t i = tile * kDotQueries + j, at = (tile * n_blocks + b) * kDotQueries + j;
        t.codes[at] = i < n_q ? t.blocks[i * n_blocks + b].qs : kZeros;
        t.scales[at] = i < n_q ? block_scale(t.blocks[i * n_blocks + b].d) : 0.0f;
      }
    }
  }
  return t;
}

template <class Block>
void dot_rows_of(const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes, size_t n_k,
                 size_t d, float scale, float* out, size_t out_stride) {
  const size_t n_blocks = d / QK;
  const QueryTiles& t = quantized_queries(q, q_stride, n_q, d);
  for (size_t first = 0; first < n_q; first += kDotQueries) {
    const size_t n = std::min(kDotQueries, n_q - first), tile = first / kDotQueries * n_blocks * kDotQueries;
    for (size_t p = 0; p < n_k; ++p) {
      const auto* row = reinterpret_cast<const Block*>(k + p * k_row_bytes);
      ScoreSums sums;
      for (size_t b = 0; b < n_blocks; ++b) {
        const size_t at = tile + b * kDotQueries;
        sums.add(key_codes(row[b]), block_scale(row[b].d), &t.codes[at], &t.scales[at]);
      }
      alignas(32) float lanes[kDotQueries];
      sums.store(lanes);
      for (size_t i = 0; i < n; ++i) out[(first + i) * out_stride + p] = lanes[i] * scale;
    }
  }
}

template <class Block>
void weighted_rows_of(const float* w, size_t w_stride, size_t n_w, const uint8_t* v, size_t v_row_bytes, size_t n_v,
                      size_t d, float* out, size_t out_stride) {
  thread_local std::vector<float, xsimd::aligned_allocator<float>> rows;
  if (rows.size() < kChunk * d) rows.resize(kChunk * d);
  const size_t n_blocks = d / QK;
  for (size_t first = 0; first < n_v; first += kChunk) {
    const size_t m = std::min(kChunk, n_v - first);
    for (size_t p = 0; p < m; ++p) {
      const auto* row = reinterpret_cast<const Block*>(v + (first + p) * v_row_bytes);
      for (size_t b = 0; b < n_blocks; ++b) {
        Batch vv[kBlockVectors];
        dequantize(row[b], vv);
        for (size_t j = 0; j < kBlockVectors; ++j) vv[j].store_aligned(rows.data() + p * d + b * QK + j * kLanes);
      }
    }
    by_tiles<kWeightedTile>(n_w, [&]<size_t Q>(size_t i) {
      for (size_t b = 0; b < n_blocks; ++b) {
        weighted_tile<Q>(w + i * w_stride + first, w_stride, rows.data(), d, m, b, out + i * out_stride, out_stride);
      }
    });
  }
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
