// matmul_f32_bf16_bf16_8x48_avx512bf16: BF16 weights x activations rounded to
// BF16, with VDPBF16PS (AVX512-BF16), f32 sums (kernels/matmul.h). x86 only.
//
// Features: avx512f avx512bw avx512vl avx512bf16 (the functions carry the target
// attribute; the file's other code stays at the tier's baseline). Listed in
// the hwy table before the widening kernel (matmul_f32_f32_bf16_8x32_hwy,
// matmul_float.cpp), which a CPU without AVX512-BF16 gets, the rejection
// logged as every other. The ARM twin of this kernel is BFMMLA's
// (arm/i8mm/matmul_bf16_bfmmla.cpp): both round the activations once and
// multiply bf16 by bf16 with no widening of the weights.
//
// VDPBF16PS adds to each of 16 f32 lanes the products of one pair of bf16 of
// each operand: acc[r] += a[2r] b[2r] + a[2r+1] b[2r+1]. The products are
// exact in f32; each of the two additions rounds to nearest even, denormal
// inputs and outputs are flushed (MXCSR is ignored). Two weights per lane per
// instruction where the widening kernel's FMA does one, and the weights are
// read as they are stored (no conversion pass).
//
// RHS (pack_rhs, at load): groups of 16 weight rows; per pair of elements
// (2p, 2p+1) 64 bytes, row r's two bf16 in 32-bit lane r: one load is a
// VDPBF16PS operand whose lanes are the 16 rows. Zeros past k (odd k) and
// for rows past n. LHS (pack_lhs): each row's k activations rounded to bf16
// (to nearest, ties to even, as ggml rounds them for its BF16 dot products),
// as pairs: one 32-bit word per pair, zero-padded, broadcast to every lane.
// lhs_type is BF16, so the tier test's tolerance counts half a bf16 ulp per
// element.
//
// run: outer-product form as matmul_float.cpp: lanes are weight rows, each
// activation pair broadcast (folded into the instruction, {1to16}). Prefill
// runs 8 rows x 3 groups (24 accumulators, 3 weight loads and 8 broadcasts
// per 24 VDPBF16PS) over K in blocks of kBlockPairs pairs, so a block of
// weights stays in L1 for the kChunkM rows it serves; decode (m = 1) streams
// kDecodeG groups at once, prefetching ahead. Every output is the same chain
// of VDPBF16PS over its pairs, in order, whatever the tile (partial sums
// wait in f32 between K blocks), so split calls equal one call.
//
// matmul_bench, 1 thread, Zen 5 (2 vCPUs, another process on the second),
// medians of 3: prefill 128 x 4096 x 4096 275 GOP/s against the widening
// kernel's 155 (8 x 3 tiles; 12 x 2 gave 213); decode 1 x 4096 x 4096 from
// cold memory 30.8 GB/s of weights against 25.3.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/hwy/kernel_defs.h"
#include "kernels/ref/fp16.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define ENGINE_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace kernels::hwy_tier {
namespace {

constexpr size_t kPairBytes = kRows * 2 * sizeof(uint16_t);  // 64: one vector of a group
constexpr size_t kTileM = 8;        // activation rows per prefill tile
constexpr size_t kTileG = 3;        // groups per prefill tile (24 accumulators)
constexpr size_t kDecodeG = 4;      // groups streamed at once in decode
constexpr size_t kChunkM = 64;      // activation rows per pass over the weights
constexpr size_t kBlockPairs = 64;  // prefill: pairs of K per pass (128 elements)
constexpr size_t kPrefetchBytes = 1024;  // decode: how far ahead each stream asks

size_t pairs_of(size_t k) { return (k + 1) / 2; }

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const auto* w = static_cast<const uint16_t*>(rhs);
  auto* out = static_cast<uint16_t*>(rhs_packed);
  const size_t pairs = pairs_of(k);
  for (size_t g = 0; g < groups(n); ++g, out += pairs * kRows * 2) {
    const size_t rows = std::min(kRows, n - g * kRows);
    if (rows < kRows || k % 2 != 0) std::memset(out, 0, pairs * kPairBytes);
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* row = w + (g * kRows + r) * k;
      for (size_t e = 0; e < k; ++e) out[(e / 2) * kRows * 2 + r * 2 + e % 2] = row[e];
    }
  }
}

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<uint16_t*>(lhs_packed);
  const size_t padded = 2 * pairs_of(k);
  for (size_t i = 0; i < m; ++i, out += padded) {
    for (size_t e = 0; e < k; ++e) out[e] = ref::fp32_to_bf16(lhs[i * lhs_stride + e]);
    if (padded != k) out[k] = 0;
  }
}

// The first `count` (1..16) lanes of v to dst.
ENGINE_AVX512BF16 inline void store_first(__m512 v, size_t count, float* dst) {
  const __mmask16 mask = count >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << count) - 1);
  _mm512_mask_storeu_ps(dst, mask, v);
}

// kM activation rows (x: pairs per row, row stride x_stride words) against kG
// groups (w: the first group at pair p0, groups group_stride bytes apart),
// over pairs p0..p1 of `pairs`. The accumulators start at zero (p0 == 0) or
// from `partial` and end in dst (p1 == pairs: the first n_valid columns) or
// back in `partial` (row stride kRows * kTileG floats). kWholeK: p0 == 0 and
// p1 == pairs, no partial sums (decode).
template <size_t kM, size_t kG, bool kWholeK = false>
ENGINE_AVX512BF16 inline void tile(size_t pairs, size_t p0, size_t p1, const uint32_t* x, size_t x_stride,
                                   const uint8_t* w, size_t group_stride, float* partial, float* dst,
                                   size_t dst_stride, size_t n_valid) {
  constexpr size_t kPartialStride = kRows * kTileG;
  __m512 acc[kM][kG];
  for (size_t i = 0; i < kM; ++i) {
    for (size_t g = 0; g < kG; ++g) {
      acc[i][g] = kWholeK || p0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(partial + i * kPartialStride + g * kRows);
    }
  }
  for (size_t p = p0; p < p1; ++p, w += kPairBytes) {
    __m512bh wg[kG];
    for (size_t g = 0; g < kG; ++g) {
      // Decode streams the weights from DRAM: ask for them early.
      if constexpr (kM == 1) _mm_prefetch(reinterpret_cast<const char*>(w + g * group_stride) + kPrefetchBytes, _MM_HINT_T0);
      wg[g] = (__m512bh)_mm512_loadu_si512(w + g * group_stride);
    }
    for (size_t i = 0; i < kM; ++i) {
      const __m512bh xi = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[i * x_stride + p]));
      for (size_t g = 0; g < kG; ++g) acc[i][g] = _mm512_dpbf16_ps(acc[i][g], xi, wg[g]);
    }
  }
  for (size_t i = 0; i < kM; ++i) {
    for (size_t g = 0; g < kG; ++g) {
      if (g * kRows >= n_valid) continue;
      if (kWholeK || p1 == pairs) {
        store_first(acc[i][g], n_valid - g * kRows, dst + i * dst_stride + g * kRows);
      } else {
        _mm512_storeu_ps(partial + i * kPartialStride + g * kRows, acc[i][g]);
      }
    }
  }
}

// Rows i0..i1 against kG groups from group g (all of K, in blocks).
template <size_t kG>
ENGINE_AVX512BF16 void rows_against_groups(size_t i0, size_t i1, size_t g, size_t n, size_t pairs, const uint32_t* x,
                                           const uint8_t* w, float* dst, size_t dst_stride) {
  constexpr size_t kPartialStride = kRows * kTileG;
  alignas(64) float partial[kChunkM * kPartialStride];
  const size_t group_stride = pairs * kPairBytes;
  const size_t n_valid = n - g * kRows;
  for (size_t p0 = 0; p0 < pairs; p0 += kBlockPairs) {
    const size_t p1 = std::min(pairs, p0 + kBlockPairs);
    const uint8_t* wp = w + g * group_stride + p0 * kPairBytes;
    size_t i = i0;
    for (; i + kTileM <= i1; i += kTileM) {
      tile<kTileM, kG>(pairs, p0, p1, x + i * pairs, pairs, wp, group_stride, partial + (i - i0) * kPartialStride,
                       dst + i * dst_stride + g * kRows, dst_stride, n_valid);
    }
    for (; i < i1; ++i) {
      tile<1, kG>(pairs, p0, p1, x + i * pairs, pairs, wp, group_stride, partial + (i - i0) * kPartialStride,
                  dst + i * dst_stride + g * kRows, dst_stride, n_valid);
    }
  }
}

ENGINE_AVX512BF16 void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
                           size_t dst_stride) {
  const auto* x = static_cast<const uint32_t*>(lhs_packed);
  const auto* w = static_cast<const uint8_t*>(rhs_packed);
  const size_t pairs = pairs_of(k);
  const size_t group_stride = pairs * kPairBytes;
  const size_t groups_n = groups(n);
  if (m == 1) {  // decode: whole K per pass, kDecodeG groups at a time
    size_t g = 0;
    for (; g + kDecodeG <= groups_n; g += kDecodeG) {
      tile<1, kDecodeG, true>(pairs, 0, pairs, x, pairs, w + g * group_stride, group_stride, nullptr, dst + g * kRows,
                        dst_stride, n - g * kRows);
    }
    for (; g < groups_n; ++g) {
      tile<1, 1, true>(pairs, 0, pairs, x, pairs, w + g * group_stride, group_stride, nullptr, dst + g * kRows, dst_stride,
                 n - g * kRows);
    }
    return;
  }
  for (size_t m0 = 0; m0 < m; m0 += kChunkM) {
    const size_t m1 = std::min(m, m0 + kChunkM);
    for (size_t g = 0; g < groups_n; g += kTileG) {
      switch (std::min(kTileG, groups_n - g)) {
        case 3: rows_against_groups<3>(m0, m1, g, n, pairs, x, w, dst, dst_stride); break;
        case 2: rows_against_groups<2>(m0, m1, g, n, pairs, x, w, dst, dst_stride); break;
        default: rows_against_groups<1>(m0, m1, g, n, pairs, x, w, dst, dst_stride); break;
      }
    }
  }
}

}  // namespace

constinit const MatmulKernel kMatmulBF16Dpbf16{
    .name = "matmul_f32_bf16_bf16_8x48_avx512bf16",
    .tier = Tier::hwy,
    .arch = Arch::x86_64,
    .required_features = feature_bits({Feature::avx512f, Feature::avx512bw, Feature::avx512vl, Feature::avx512bf16}),
    .rhs_type = gguf::GgmlType::BF16,
    .lhs_type = gguf::GgmlType::BF16,
    .m_step = 1,
    .n_step = kRows,
    .rhs_packed_size = [](size_t n, size_t k) { return groups(n) * pairs_of(k) * kPairBytes; },
    .rhs_packed_offset = [](size_t n_idx, size_t k) { return n_idx / kRows * pairs_of(k) * kPairBytes; },
    .pack_rhs = pack_rhs,
    .lhs_packed_size = [](size_t m, size_t k) { return m * pairs_of(k) * 4; },
    .lhs_packed_offset = [](size_t m_idx, size_t k) { return m_idx * pairs_of(k) * 4; },
    .pack_lhs = pack_lhs,
    .run = run,
};

}  // namespace kernels::hwy_tier
#endif  // __x86_64__
